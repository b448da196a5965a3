// The page buffer latches (Flash-Cosmos Sections 2.1 and 3.1, Figures 3 and 6; MWS command of
// Figure 15a): S-latch init -> S = sensed, else S = S AND sensed; C-latch init -> C = 0;
// transfer -> C = C OR S; XOR -> C = S XOR C. Program data goes through the C-latch, DATA OUT
// reads it, a normal READ initialises both latches and transfers. ParaBit's serial AND and OR.
#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

class NandLatch : public ::testing::Test {
  protected:
    Bench bench;
    std::mt19937_64 g{99};
    const size_t n = bench.page_bytes();
    Page random() { return random_page(g, n); }
    // Programs a random ESP page and returns it.
    Page put(const PageAddress& a, double p_one = 0.5) {
        Page p = random_page(g, n, p_one);
        bench.must_program(a, p, CellMode::Esp);
        return p;
    }
    // A hand-built sequence's row cycles.
    void row(CommandExt& c, uint32_t die, uint32_t plane, uint32_t block, uint32_t wl) {
        const uint32_t r = bench.codec().encode(plane, block, wl, die);
        c.addr(uint8_t(r)).addr(uint8_t(r >> 8)).addr(uint8_t(r >> 16));
    }
};

TEST_F(NandLatch, PowerOnLatchesAsTheirInitsLeaveThem) {
    EXPECT_EQ(bench.c_latch(0, 0), filled(n, 0x00));
    EXPECT_EQ(bench.s_latch(0, 1), filled(n, 0xFF));
}

TEST_F(NandLatch, NormalReadInitialisesBothLatchesAndTransfers) {
    Page x = put(pa(0, 0, 0, 0)), y = put(pa(0, 0, 0, 1)), p = put(pa(0, 0, 0, 2));
    bench.load_latches(pa(0, 0, 0, 0), pa(0, 0, 0, 1));
    ASSERT_EQ(bench.c_latch(), y);
    ASSERT_TRUE(bench.read(pa(0, 0, 0, 2)).ok());
    EXPECT_EQ(bench.c_latch(), p);
    EXPECT_EQ(bench.s_latch(), p);
    // An erased page reads all ones.
    EXPECT_EQ(bench.read_page(pa(0, 0, 3, 7)), filled(n, 0xFF));
}

TEST_F(NandLatch, EveryIscmFlagCombinationFollowsTheLatchEquations) {
    const Page x = put(pa(0, 0, 0, 0)), y = put(pa(0, 0, 0, 1));
    const Page z2 = put(pa(0, 0, 0, 2), 0.8), z3 = put(pa(0, 0, 0, 3), 0.8);
    const Slots sensing = {{0, wl_bit(2) | wl_bit(3)}};
    const Page z = page_and(z2, z3);
    for (uint8_t f = 0; f < 16; ++f) {
        SCOPED_TRACE("ISCM flags " + std::to_string(f));
        bench.load_latches(pa(0, 0, 0, 0), pa(0, 0, 0, 1));
        const bool inverse = f & iscm::kInverse, init_s = f & iscm::kInitS;
        const bool init_c = f & iscm::kInitC, transfer = f & iscm::kTransfer;
        Outcome o = bench.mws(0, 0, f, sensing);
        if (inverse && !init_s) {
            EXPECT_TRUE(bench.refused(o, 0, "S-latch init"));
            EXPECT_EQ(bench.c_latch(), y);  // nothing changed
            EXPECT_EQ(bench.s_latch(), x);
            continue;
        }
        ASSERT_TRUE(o.ok()) << o.error;
        const Page sensed = inverse ? page_not(z) : z;
        const Page s = init_s ? sensed : page_and(x, sensed);
        Page c = init_c ? filled(n, 0) : y;
        if (transfer) c = page_or(c, s);
        EXPECT_EQ(bench.c_latch(), c);
        EXPECT_EQ(bench.s_latch(), s);
    }
}

TEST_F(NandLatch, XorWritesTheCacheLatchAndKeepsTheSensingLatch) {
    const Page x = put(pa(0, 0, 1, 0)), y = put(pa(0, 0, 1, 1));
    bench.load_latches(pa(0, 0, 1, 0), pa(0, 0, 1, 1));
    ASSERT_TRUE(bench.xor_latches(0, 0).ok());
    EXPECT_EQ(bench.c_latch(), page_xor(x, y));
    ASSERT_TRUE(bench.xor_latches(0, 0).ok());
    EXPECT_EQ(bench.c_latch(), y);  // XOR twice restores C
    EXPECT_EQ(bench.s_latch(), x);
    // Equal latches XOR to zero.
    ASSERT_TRUE(bench.read(pa(0, 0, 1, 0)).ok());
    ASSERT_TRUE(bench.xor_latches(0, 0).ok());
    EXPECT_EQ(bench.c_latch(), filled(n, 0));
}

TEST_F(NandLatch, ProgramDataGoesThroughTheCacheLatch) {
    // A full page: after the program the C-latch still holds it.
    const Page p = random();
    bench.must_program(pa(0, 0, 2, 0), p, CellMode::Esp);
    EXPECT_EQ(bench.c_latch(), p);
    EXPECT_EQ(bench.read_page(pa(0, 0, 2, 0)), p);

    // Partial data at a column: 80h resets the C-latch to all ones first, so the rest of the page
    // is programmed as ones, whatever the latch held.
    bench.read(pa(0, 0, 2, 0));  // C = p, not ones
    const Page part = random_page(g, 50);
    CommandExt c;
    c.chip_enable = 0;
    c.cmd(op::kPrefixEsp).cmd(op::kProgram1).addr(100).addr(0);
    row(c, 0, 0, 2, 1);
    c.data_in(50).cmd(op::kProgram2);
    ASSERT_TRUE(bench.send(c, part).ok()) << c.error;
    Page want = filled(n, 0xFF);
    std::copy(part.begin(), part.end(), want.begin() + 100);
    EXPECT_EQ(bench.c_latch(), want);
    EXPECT_EQ(bench.read_page(pa(0, 0, 2, 1)), want);

    // Data in the spare area only.
    c.clear();
    c.cmd(op::kPrefixEsp).cmd(op::kProgram1).addr(uint8_t(512)).addr(uint8_t(512 >> 8));
    row(c, 0, 0, 2, 2);
    c.data_in(64).cmd(op::kProgram2);
    const Page spare = random_page(g, 64);
    ASSERT_TRUE(bench.send(c, spare).ok()) << c.error;
    want = filled(n, 0xFF);
    std::copy(spare.begin(), spare.end(), want.begin() + 512);
    EXPECT_EQ(bench.read_page(pa(0, 0, 2, 2)), want);

    // No data phase at all: the page is programmed all ones.
    bench.read(pa(0, 0, 2, 0));
    CommandExt e;
    seq::program(e, bench.codec(), {pa(0, 0, 2, 3)}, CellMode::Esp, false, 0);
    ASSERT_TRUE(bench.send(e).ok()) << e.error;
    EXPECT_EQ(bench.read_page(pa(0, 0, 2, 3)), filled(n, 0xFF));
}

TEST_F(NandLatch, DataOutReadsTheCacheLatchFromAColumn) {
    const Page p0 = put(pa(0, 0, 3, 0)), p1 = put(pa(0, 1, 3, 0));
    ASSERT_TRUE(bench.read(pa(0, 0, 3, 0)).ok());
    Outcome o = bench.data_out(0, 0, 200, 100);
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(o.data, Page(p0.begin() + 200, p0.begin() + 300));
    o = bench.data_out(0, 0, n - 10, 10);  // up to the last spare byte
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(o.data, Page(p0.end() - 10, p0.end()));

    // CHANGE READ COLUMN 05h-E0h names no plane: it reads the plane of the last read.
    ASSERT_TRUE(bench.read(pa(0, 1, 3, 0)).ok());
    CommandExt c;
    c.chip_enable = 0;
    c.cmd(op::kChangeReadColumn1).addr(32).addr(0).cmd(op::kChangeReadColumn2).data_out(64);
    o = bench.send(c, Page(64, 0));
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(o.data, Page(p1.begin() + 32, p1.begin() + 96));
    // Two data-out phases after one E0h are refused and move no data.
    c.data_out(8);
    o = bench.send(c, Page(72, 0));
    EXPECT_TRUE(bench.refused(o, 0, "unexpected cycles after the end of the command"));
    EXPECT_EQ(o.data, Page(72, 0));
}

TEST_F(NandLatch, CacheReadPipelinesThePreviousPageToTheCacheLatch) {
    const Page p0 = put(pa(0, 0, 4, 0)), p1 = put(pa(0, 0, 4, 1)), p2 = put(pa(0, 0, 4, 2));
    CommandExt c;
    seq::cache_read(c, bench.codec(), pa(0, 0, 4, 0));
    ASSERT_TRUE(bench.send(c).ok()) << c.error;  // S = p0
    seq::cache_read(c, bench.codec(), pa(0, 0, 4, 1));
    ASSERT_TRUE(bench.send(c).ok()) << c.error;  // C = p0, S = p1
    EXPECT_EQ(bench.c_latch(), p0);
    seq::cache_read(c, bench.codec(), pa(0, 0, 4, 2));
    ASSERT_TRUE(bench.send(c).ok()) << c.error;  // C = p1, S = p2
    EXPECT_EQ(bench.c_latch(), p1);
    seq::cache_read_end(c, 0);
    ASSERT_TRUE(bench.send(c).ok()) << c.error;  // C = p2
    EXPECT_EQ(bench.c_latch(), p2);
}

TEST_F(NandLatch, ParaBitSerialSensingWithoutSInitIsAnd) {
    // ParaBit (Figure 6b): operands of one bitline read one after another without re-initialising
    // the S-latch, then moved to the C-latch.
    Stored s;
    bench.program_blocks(s, 0, 0, 5, 1, 8, CellMode::Esp, [&](uint32_t, uint32_t wl) {
        return random_page(g, n, and_friendly(wl + 8));
    });
    for (uint32_t k = 1; k <= 8; ++k) {
        for (uint32_t wl = 0; wl < k; ++wl) {
            uint8_t f = wl == 0 ? iscm::kInitS | iscm::kInitC : 0;
            if (wl + 1 == k) f |= iscm::kTransfer;
            ASSERT_TRUE(bench.mws(0, 0, f, {{5, wl_bit(wl)}}).ok());
        }
        const Page want = sense_oracle(s, {{5, wl_range(0, k)}}, n);
        EXPECT_TRUE(mixed(want));
        EXPECT_EQ(bench.c_latch(), want) << k << " operands";
        // One intra-block MWS gives the same in a single sensing.
        EXPECT_EQ(bench.mws_result(0, 0, kRead, {{5, wl_range(0, k)}}), want);
    }
}

TEST_F(NandLatch, ParaBitSerialSensingWithSInitAndTransferIsOr) {
    // ParaBit (Figure 6c): S initialised before each operand, transferred after each; C
    // initialised only before the first. Works for operands in one block, where MWS gives AND.
    Stored s;
    bench.program_blocks(s, 0, 1, 6, 1, 8, CellMode::Esp,
                         [&](uint32_t, uint32_t wl) { return random_page(g, n, 0.08 * (wl + 1)); });
    for (uint32_t k = 1; k <= 8; ++k) {
        Page want(n, 0);
        for (uint32_t wl = 0; wl < k; ++wl) {
            uint8_t f = iscm::kInitS | iscm::kTransfer | (wl == 0 ? iscm::kInitC : 0);
            ASSERT_TRUE(bench.mws(0, 1, f, {{6, wl_bit(wl)}}).ok());
            want = page_or(want, s[6][wl]);
        }
        EXPECT_TRUE(mixed(want));
        EXPECT_EQ(bench.c_latch(0, 1), want) << k << " operands";
    }
}

TEST_F(NandLatch, MultiPlaneCommandsUseEachPlanesLatches) {
    const Page p0 = random(), p1 = random();
    Outcome o = bench.program_planes({pa(1, 0, 7, 0), pa(1, 1, 7, 0)}, {p0, p1}, CellMode::Esp);
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(bench.c_latch(1, 0), p0);
    EXPECT_EQ(bench.c_latch(1, 1), p1);
    EXPECT_EQ(bench.read_page(pa(1, 0, 7, 0)), p0);
    EXPECT_EQ(bench.read_page(pa(1, 1, 7, 0)), p1);
    // A multi-plane read fills both cache latches.
    bench.read(pa(1, 0, 8, 0));
    bench.read(pa(1, 1, 8, 0));  // both C = ones (erased)
    CommandExt c;
    seq::read(c, bench.codec(), {pa(1, 0, 7, 0), pa(1, 1, 7, 0)});
    ASSERT_TRUE(bench.send(c).ok()) << c.error;
    EXPECT_EQ(bench.c_latch(1, 0), p0);
    EXPECT_EQ(bench.c_latch(1, 1), p1);
}

TEST_F(NandLatch, LatchesBelongToTheirPlaneAndDie) {
    const Page x = put(pa(0, 1, 9, 0)), y = put(pa(0, 1, 9, 1));
    bench.load_latches(pa(0, 1, 9, 0), pa(0, 1, 9, 1));
    // Work in plane 0 of die 0 and in die 1.
    put(pa(0, 0, 9, 0));
    put(pa(1, 1, 9, 0));
    bench.read(pa(0, 0, 9, 0));
    bench.read(pa(1, 1, 9, 0));
    bench.xor_latches(0, 0);
    bench.mws(1, 1, kInverseRead, {{9, 1}});
    EXPECT_EQ(bench.c_latch(0, 1), y);
    EXPECT_EQ(bench.s_latch(0, 1), x);
}

TEST_F(NandLatch, EraseReturnsPagesToOnesAndCountsACycle) {
    const Page p = put(pa(0, 0, 10, 0));
    put(pa(0, 0, 10, 1));
    EXPECT_EQ(bench.die(0).plane(0).pe_cycles(10), 0u);
    ASSERT_TRUE(bench.erase(pa(0, 0, 10, 0)).ok());
    EXPECT_EQ(bench.die(0).plane(0).pe_cycles(10), 1u);
    EXPECT_EQ(bench.read_page(pa(0, 0, 10, 0)), filled(n, 0xFF));
    EXPECT_EQ(bench.read_page(pa(0, 0, 10, 1)), filled(n, 0xFF));
    // The block can be programmed again, in another mode (TLC pages carry raw bit errors: about
    // 2.4e-3 x 4608 = 11 per read here).
    bench.must_program(pa(0, 0, 10, 0), page_not(p), CellMode::Tlc);
    EXPECT_EQ(bench.die(0).plane(0).page(10, 0)->mode, CellMode::Tlc);
    EXPECT_LT(bit_diff(bench.read_page(pa(0, 0, 10, 0)), page_not(p)), 60u);
    // Multi-plane erase.
    put(pa(0, 1, 10, 0));
    CommandExt c;
    seq::erase(c, bench.codec(), {pa(0, 0, 10, 0), pa(0, 1, 10, 0)});
    ASSERT_TRUE(bench.send(c).ok()) << c.error;
    EXPECT_EQ(bench.read_page(pa(0, 0, 10, 0)), filled(n, 0xFF));
    EXPECT_EQ(bench.read_page(pa(0, 1, 10, 0)), filled(n, 0xFF));
    EXPECT_EQ(bench.die(0).plane(1).pe_cycles(10), 1u);
}

TEST_F(NandLatch, ResetAndStatus) {
    uint8_t s = bench.status();
    EXPECT_EQ(s, status::kWriteProtectOff | status::kReady | status::kArrayReady);
    CommandExt c;
    seq::reset(c, 0);
    ASSERT_TRUE(bench.send(c).ok());
    EXPECT_EQ(c.op, OpKind::Reset);
    EXPECT_EQ(bench.status(), s);
}

TEST_F(NandLatch, FeaturesAreStoredAndReturned) {
    Outcome o = bench.get_feature(0, feature::kEspFactor);
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_EQ(o.data, Page({20, 0, 0, 0}));  // esp_factor 2.0 x 10
    ASSERT_TRUE(bench.set_feature(0, feature::kTimingMode, {4, 1, 2, 3}).ok());
    o = bench.get_feature(0, feature::kTimingMode);
    EXPECT_EQ(o.data, Page({4, 1, 2, 3}));
    bench.set_esp_factor(1, 1.6);
    EXPECT_DOUBLE_EQ(bench.die(1).esp_factor(), 1.6);
    EXPECT_DOUBLE_EQ(bench.die(0).esp_factor(), 2.0);  // per die
}

}  // namespace
}  // namespace canopy::nand::test
