// Illegal command sequences are refused: TLM_COMMAND_ERROR_RESPONSE, an error naming the die and
// the reason, FAIL in READ STATUS, and no state changed (pages stay erased, latches keep their
// contents). A chip enable beyond the channel's dies is an address error.
#include <functional>

#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

class NandIllegal : public ::testing::Test {
  protected:
    explicit NandIllegal(const NandConfig& cfg = small_config()) : bench(cfg) {}

    CommandExt start(uint32_t die = 0) {
        CommandExt c;
        c.chip_enable = uint8_t(die);
        return c;
    }
    void row(CommandExt& c, uint32_t die, uint32_t plane, uint32_t block, uint32_t wl) {
        const uint32_t r = bench.codec().encode(plane, block, wl, die);
        c.addr(uint8_t(r)).addr(uint8_t(r >> 8)).addr(uint8_t(r >> 16));
    }
    void column(CommandExt& c, uint32_t col) { c.addr(uint8_t(col)).addr(uint8_t(col >> 8)); }
    void pbm(CommandExt& c, uint64_t bits, int bytes = 6) {
        for (int i = 0; i < bytes; ++i) c.addr(uint8_t(bits >> (8 * i)));
    }
    Page put(const PageAddress& a, CellMode m = CellMode::Esp) {
        Page p = random_page(g, n);
        bench.must_program(a, p, m);
        return p;
    }
    bool erased(const PageAddress& a) {
        const PageState* p = bench.die(a.die).plane(a.plane).page(a.block, a.page);
        return !p || p->mode == CellMode::Erased;
    }

    Bench bench;
    std::mt19937_64 g{5};
    const size_t n = bench.page_bytes();
};

TEST_F(NandIllegal, MoreBlockSlotsThanThePowerCap) {
    Slots five;
    for (uint32_t b = 0; b < 5; ++b) {
        put(pa(0, 0, b, 0));
        five.push_back({b, 1});
    }
    const Page y = put(pa(0, 0, 6, 0));
    bench.read(pa(0, 0, 6, 0));  // C = y
    Outcome o = bench.mws(0, 0, kRead, five);
    EXPECT_TRUE(bench.refused(o, 0, "5 block slots exceed the limit of 4"));
    EXPECT_EQ(o.op, OpKind::Mws);
    EXPECT_EQ(bench.c_latch(), y);
    five.pop_back();
    EXPECT_TRUE(bench.mws(0, 0, kRead, five).ok());
}

TEST(NandIllegalCap, ConfiguredPowerCapIsEnforced) {
    NandConfig cfg = small_config();
    cfg.power.mws_max_blocks = 2;
    Bench bench(cfg);
    EXPECT_TRUE(bench.mws(1, 0, kRead, {{0, 1}, {1, 1}}).ok());
    EXPECT_TRUE(bench.refused(bench.mws(1, 0, kRead, {{0, 1}, {1, 1}, {2, 1}}), 1,
                              "3 block slots exceed the limit of 2"));
}

TEST_F(NandIllegal, OperandInAnotherPlaneThanSlotZero) {
    put(pa(0, 0, 0, 0));
    put(pa(0, 1, 1, 0));
    CommandExt c = start();
    c.cmd(op::kIscm | kRead);
    row(c, 0, 0, 0, 0);
    pbm(c, 1);
    c.cmd(op::kCont);
    row(c, 0, 1, 1, 0);
    pbm(c, 1);
    c.cmd(op::kConf);
    EXPECT_TRUE(bench.refused(bench.send(c), 0, "is in plane 1 but slot 0 is in plane 0"));
}

TEST_F(NandIllegal, OperandInAnotherDie) {
    const Page p = put(pa(1, 0, 0, 0));
    bench.read(pa(0, 0, 0, 0));
    const Page before = bench.c_latch(0, 0);
    // MWS rows naming die 1 sent to die 0, and the other way round.
    CommandExt c;
    seq::mws(c, bench.codec(), 1, 0, kRead, {{0, 1}});
    c.chip_enable = 0;
    EXPECT_TRUE(bench.refused(bench.send(c), 0, "operand in die 1 but the command went to die 0"));
    seq::mws(c, bench.codec(), 0, 0, kRead, {{0, 1}});
    c.chip_enable = 1;
    EXPECT_TRUE(bench.refused(bench.send(c), 1, "operand in die 0 but the command went to die 1"));
    // The same for READ, PROGRAM, ERASE and XOR addresses.
    seq::read(c, bench.codec(), {pa(1, 0, 0, 0)});
    c.chip_enable = 0;
    EXPECT_TRUE(bench.refused(bench.send(c), 0, "address in die 1"));
    seq::program(c, bench.codec(), {pa(1, 0, 0, 1)}, CellMode::Esp, false, uint32_t(n));
    c.chip_enable = 0;
    EXPECT_TRUE(bench.refused(bench.send(c, random_page(g, n)), 0, "address in die 1"));
    seq::erase(c, bench.codec(), {pa(1, 0, 0, 0)});
    c.chip_enable = 0;
    EXPECT_TRUE(bench.refused(bench.send(c), 0, "address in die 1"));
    seq::xor_latches(c, bench.codec(), 1, 0);
    c.chip_enable = 0;
    EXPECT_TRUE(bench.refused(bench.send(c), 0, "address in die 1"));
    // Nothing changed in either die.
    EXPECT_EQ(bench.c_latch(0, 0), before);
    EXPECT_TRUE(erased(pa(1, 0, 0, 1)) && erased(pa(0, 0, 0, 1)));
    EXPECT_EQ(bench.read_page(pa(1, 0, 0, 0)), p);
}

TEST_F(NandIllegal, ProgramToANonErasedPage) {
    const Page p = put(pa(0, 0, 2, 3));
    Outcome o = bench.program(pa(0, 0, 2, 3), random_page(g, n), CellMode::Esp);
    EXPECT_TRUE(bench.refused(o, 0, "wordline 3 of block 2 is not erased (programmed ESP)"));
    EXPECT_EQ(o.op, OpKind::Program);
    EXPECT_EQ(bench.read_page(pa(0, 0, 2, 3)), p);
    // Multi-plane: one programmed page refuses the whole command, the other plane stays erased.
    o = bench.program_planes({pa(0, 0, 2, 3), pa(0, 1, 2, 3)},
                             {random_page(g, n), random_page(g, n)}, CellMode::Esp);
    EXPECT_TRUE(bench.refused(o, 0, "plane 0: wordline 3 of block 2 is not erased"));
    EXPECT_TRUE(erased(pa(0, 1, 2, 3)));
}

TEST_F(NandIllegal, MultiLevelProgramOutOfWordlineOrder) {
    for (CellMode m : {CellMode::Mlc, CellMode::Tlc}) {
        const uint32_t b = m == CellMode::Mlc ? 3 : 4;
        SCOPED_TRACE(mode_name(m));
        put(pa(0, 0, b, 5), m);
        Outcome o = bench.program(pa(0, 0, b, 3), random_page(g, n), m);
        EXPECT_TRUE(bench.refused(
            o, 0, std::string(mode_name(m)) + " programs wordlines in order: wordline 3 after 5"));
        EXPECT_TRUE(erased(pa(0, 0, b, 3)));
        EXPECT_TRUE(bench.program(pa(0, 0, b, 6), random_page(g, n), m).ok());
    }
    // SLC and ESP may program in any order.
    put(pa(0, 0, 5, 5), CellMode::Slc);
    EXPECT_TRUE(bench.program(pa(0, 0, 5, 3), random_page(g, n), CellMode::Slc).ok());
    EXPECT_TRUE(bench.program(pa(0, 0, 5, 1), random_page(g, n), CellMode::Esp).ok());
}

TEST_F(NandIllegal, ProgramModeMismatchWithinABlock) {
    // SLC block: a TLC or MLC page is refused, an ESP page (also one bit per cell) is not.
    put(pa(0, 0, 6, 0), CellMode::Slc);
    EXPECT_TRUE(
        bench.refused(bench.program(pa(0, 0, 6, 1), random_page(g, n), CellMode::Tlc), 0,
                      "block 6 holds SLC pages since its erase; erase it before programming TLC"));
    EXPECT_TRUE(bench.refused(bench.program(pa(0, 0, 6, 1), random_page(g, n), CellMode::Mlc), 0,
                              "erase it before programming MLC"));
    EXPECT_TRUE(erased(pa(0, 0, 6, 1)));
    EXPECT_TRUE(bench.program(pa(0, 0, 6, 1), random_page(g, n), CellMode::Esp).ok());
    // MLC block: TLC and SLC pages are refused.
    put(pa(0, 0, 7, 0), CellMode::Mlc);
    EXPECT_TRUE(
        bench.refused(bench.program(pa(0, 0, 7, 1), random_page(g, n), CellMode::Tlc), 0,
                      "block 7 holds MLC pages since its erase; erase it before programming TLC"));
    EXPECT_TRUE(bench.refused(bench.program(pa(0, 0, 7, 1), random_page(g, n), CellMode::Slc), 0,
                              "erase it before programming SLC"));
    EXPECT_TRUE(erased(pa(0, 0, 7, 1)));
    // TLC block: MLC refused.
    put(pa(0, 0, 8, 0), CellMode::Tlc);
    EXPECT_TRUE(bench.refused(bench.program(pa(0, 0, 8, 1), random_page(g, n), CellMode::Mlc), 0,
                              "holds TLC pages"));
    // After an erase the first program sets the mode again: TLC after SLC is fine, then SLC not.
    ASSERT_TRUE(bench.erase(pa(0, 0, 6, 0)).ok());
    EXPECT_TRUE(bench.program(pa(0, 0, 6, 0), random_page(g, n), CellMode::Tlc).ok());
    EXPECT_TRUE(bench.refused(bench.program(pa(0, 0, 6, 1), random_page(g, n), CellMode::Slc), 0,
                              "holds TLC pages"));
}

TEST_F(NandIllegal, InverseMwsWithoutSensingLatchInit) {
    put(pa(0, 0, 0, 0));
    const Page y = put(pa(0, 0, 0, 1));
    bench.read(pa(0, 0, 0, 1));
    for (uint8_t f : {iscm::kInverse, uint8_t(iscm::kInverse | iscm::kInitC | iscm::kTransfer)}) {
        Outcome o = bench.mws(0, 0, f, {{0, 1}});
        EXPECT_TRUE(bench.refused(o, 0, "MWS: an inverse read initialises the S-latch"));
    }
    EXPECT_EQ(bench.c_latch(), y);
}

TEST_F(NandIllegal, MultiWordlineSensingOfMultiLevelPages) {
    put(pa(0, 0, 11, 0));
    for (CellMode m : {CellMode::Mlc, CellMode::Tlc}) {
        SCOPED_TRACE(mode_name(m));
        const uint32_t b = m == CellMode::Mlc ? 9 : 10;
        put(pa(0, 0, b, 0), m);
        put(pa(0, 0, b, 1), m);
        const Page y = bench.read_page(pa(0, 0, 11, 0));
        EXPECT_TRUE(bench.refused(bench.mws(0, 0, kRead, {{b, 3}}), 0,
                                  "multi-wordline sensing needs SLC or ESP pages"));
        // One multi-level wordline in an inter-block MWS is refused too.
        EXPECT_TRUE(
            bench.refused(bench.mws(0, 0, kRead, {{11, 1}, {b, 1}}), 0, "needs SLC or ESP"));
        EXPECT_EQ(bench.c_latch(), y);
        // A single wordline is an ordinary (inverse) read.
        EXPECT_TRUE(bench.mws(0, 0, kInverseRead, {{b, 2}}).ok());
    }
}

TEST_F(NandIllegal, MwsSlotRules) {
    put(pa(0, 0, 0, 0));
    EXPECT_TRUE(bench.refused(bench.mws(0, 0, kRead, {{0, 1}, {0, 2}}), 0,
                              "block 0 appears in two MWS slots"));
    EXPECT_TRUE(
        bench.refused(bench.mws(0, 0, kRead, {{0, 0}}), 0, "slot 0 (block 0) selects no wordline"));
}

TEST_F(NandIllegal, UnsupportedFeatureAndInvalidEspFactor) {
    EXPECT_TRUE(bench.refused(bench.set_feature(0, 0x42, {1, 0, 0, 0}), 0,
                              "feature address 42h is not supported"));
    EXPECT_TRUE(
        bench.refused(bench.get_feature(0, 0x42), 0, "feature address 42h is not supported"));
    for (uint8_t p1 : {uint8_t(0), uint8_t(9), uint8_t(41), uint8_t(255)}) {
        Outcome o = bench.set_feature(0, feature::kEspFactor, {p1, 7, 7, 7});
        EXPECT_TRUE(bench.refused(o, 0, "ESP factor P1 = " + std::to_string(p1)));
    }
    Outcome o = bench.get_feature(0, feature::kEspFactor);
    EXPECT_EQ(o.data, Page({20, 0, 0, 0}));  // unchanged
    EXPECT_DOUBLE_EQ(bench.die(0).esp_factor(), 2.0);
}

TEST_F(NandIllegal, ChipEnableBeyondTheChannelsDies) {
    CommandExt c;
    seq::read_status(c, 2);
    Outcome o = bench.send(c, Page(1, 0));
    EXPECT_EQ(o.response, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_NE(o.error.find("chip enable 2 selects no die (the channel has 2)"), std::string::npos)
        << o.error;
    EXPECT_TRUE(o.status & status::kFail);
    // A payload without a command is a generic error.
    tlm::tlm_generic_payload gp;
    EXPECT_EQ(bench.raw(gp), tlm::TLM_GENERIC_ERROR_RESPONSE);
}

TEST_F(NandIllegal, FailBitReportsTheLastOperation) {
    Outcome o = bench.program(pa(0, 0, 0, 0), random_page(g, n), CellMode::Esp);
    ASSERT_TRUE(o.ok());
    EXPECT_FALSE(o.status & status::kFail);
    o = bench.program(pa(0, 0, 0, 0), random_page(g, n), CellMode::Esp);
    ASSERT_TRUE(bench.refused(o, 0, "not erased"));
    EXPECT_TRUE(bench.status() & status::kFail);  // status reads keep it
    EXPECT_TRUE(bench.read(pa(0, 0, 0, 0)).ok());
    EXPECT_FALSE(bench.status() & status::kFail);  // cleared by the next operation
    EXPECT_FALSE(bench.program(pa(0, 0, 0, 0), random_page(g, n), CellMode::Esp).ok());
    CommandExt c;
    seq::reset(c, 0);
    ASSERT_TRUE(bench.send(c).ok());
    EXPECT_FALSE(bench.status() & status::kFail);
    // The other die never failed.
    EXPECT_FALSE(bench.status(1) & status::kFail);
    EXPECT_EQ(bench.counter(0, "refused"), 2u);
    EXPECT_EQ(bench.counter(1, "refused"), 0u);
}

TEST_F(NandIllegal, RefusedCommandOnlyTakesItsBusPhase) {
    put(pa(0, 0, 0, 0));
    const Timing& t = bench.cfg().timing;
    // A program refused at its confirm cycle: its 8 cycles and 576 data bytes were on the bus.
    CommandExt c;
    seq::program(c, bench.codec(), {pa(0, 0, 0, 0)}, CellMode::Esp, false, uint32_t(n));
    sc_core::sc_time at = bench.now + sc_core::sc_time(1, sc_core::SC_MS);
    Outcome o = bench.send_at(c, random_page(g, n), at);
    ASSERT_FALSE(o.ok());
    EXPECT_NEAR(o.latency_ns(), bus_ns(t, 8, n), 1e-3);
    EXPECT_EQ(o.energy_pj, 0.0);
    // Data phases longer than the payload: only the bytes the payload had.
    at = o.done + sc_core::sc_time(1, sc_core::SC_MS);
    o = bench.send_at(c, Page(100), at);
    ASSERT_FALSE(o.ok());
    EXPECT_NEAR(o.latency_ns(), bus_ns(t, 8, 100), 1e-3);
    // An MWS: command and address cycles only.
    seq::mws(c, bench.codec(), 0, 0, kRead, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}});
    at = o.done + sc_core::sc_time(1, sc_core::SC_MS);
    o = bench.send_at(c, {}, at);
    ASSERT_FALSE(o.ok());
    EXPECT_NEAR(o.latency_ns(), bus_ns(t, 51, 0), 1e-3);
    // The array stays free: a read right after completes in its normal time.
    CommandExt r;
    seq::read(r, bench.codec(), {pa(0, 0, 0, 0)});
    Outcome rd = bench.send_at(r, {}, o.done);
    EXPECT_NEAR(rd.latency_us(), 22.5 + 0.1 + 0.07, 1e-6);
}

// --- malformed sequences ----------------------------------------------------------------------

struct Malformed {
    const char* what;
    std::function<void(CommandExt&)> build;
    uint32_t payload;
    std::string reason;
    PageAddress must_stay_erased = pa(0, 0, 12, 0);
};

TEST_F(NandIllegal, MalformedSequences) {
    const Page x = put(pa(0, 0, 0, 0)), y = put(pa(0, 0, 0, 1));
    bench.load_latches(pa(0, 0, 0, 0), pa(0, 0, 0, 1));  // S = x, C = y
    auto prog = [&](CommandExt& c, uint32_t wl) {
        c.cmd(op::kPrefixEsp).cmd(op::kProgram1);
        column(c, 0);
        row(c, 0, 0, 12, wl);
    };
    const std::vector<Malformed> cases = {
        {"empty", [](CommandExt&) {}, 0, "empty command sequence"},
        {"address first", [](CommandExt& c) { c.addr(0).cmd(op::kReadStatus); }, 0,
         "cycle 0: a sequence must start with a command cycle"},
        {"unknown opcode", [](CommandExt& c) { c.cmd(0x42); }, 0, "cycle 0: unknown command 42h"},
        {"read without 30h",
         [&](CommandExt& c) {
             c.cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 0, 0, 0);
         },
         0, "expected 30h, 31h or 32h to end the read address"},
        {"read with 4 address cycles",
         [&](CommandExt& c) {
             c.cmd(op::kRead1);
             column(c, 0);
             c.addr(0).addr(0).cmd(op::kRead2);
         },
         0, "cycle 5: expected 5 address cycles after 00h, got 4"},
        {"multi-plane read without the second 00h",
         [&](CommandExt& c) {
             c.cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kReadMultiPlane).cmd(op::kRead2);
         },
         0, "expected command 00h after 32h"},
        {"cache read over two planes",
         [&](CommandExt& c) {
             c.cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kReadMultiPlane).cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 1, 0, 0);
             c.cmd(op::kReadCacheRandom);
         },
         0, "expected 30h, 31h or 32h"},
        {"program without 10h",
         [&](CommandExt& c) {
             prog(c, 0);
             c.data_in(uint32_t(n));
         },
         uint32_t(n), "expected command 10h after the program data"},
        {"program with 3 address cycles",
         [&](CommandExt& c) {
             c.cmd(op::kProgram1);
             column(c, 0);
             c.addr(0).data_in(8).cmd(op::kProgram2);
         },
         8, "expected 5 address cycles after 80h, got 3"},
        {"program data longer than the payload",
         [&](CommandExt& c) {
             prog(c, 1);
             c.data_in(uint32_t(n)).cmd(op::kProgram2);
         },
         100, "data phases need 576 bytes but the payload has 100"},
        {"program data past the page end",
         [&](CommandExt& c) {
             c.cmd(op::kProgram1);
             column(c, 550);
             row(c, 0, 0, 12, 2);
             c.data_in(50).cmd(op::kProgram2);
         },
         50, "data in of 50 bytes at column 550 runs past the 576-byte page"},
        {"multi-plane program naming plane 0 twice",
         [&](CommandExt& c) {
             prog(c, 3);
             c.data_in(8).cmd(op::kProgramMultiPlane).cmd(op::kProgram1);
             column(c, 0);
             row(c, 0, 0, 13, 3);
             c.data_in(8).cmd(op::kProgram2);
         },
         16, "multi-plane operation names plane 0 twice", pa(0, 0, 12, 3)},
        {"multi-plane program at different wordlines",
         [&](CommandExt& c) {
             prog(c, 3);
             c.data_in(8).cmd(op::kProgramMultiPlane).cmd(op::kProgram1);
             column(c, 0);
             row(c, 0, 1, 12, 4);
             c.data_in(8).cmd(op::kProgram2);
         },
         16, "multi-plane operation must address the same wordline in every plane (3 and 4)",
         pa(0, 0, 12, 3)},
        {"three planes on a two-plane die",
         [&](CommandExt& c) {
             for (uint32_t p = 0; p < 3; ++p) {
                 if (p) c.cmd(op::kEraseMultiPlane);
                 c.cmd(op::kErase1);
                 row(c, 0, p % 2, 0, 0);
             }
             c.cmd(op::kErase2);
         },
         0, "more plane addresses than the die has planes (2)"},
        {"erase without D0h",
         [&](CommandExt& c) {
             c.cmd(op::kErase1);
             row(c, 0, 0, 0, 0);
         },
         0, "expected command D0h after the block address"},
        {"erase with 2 address cycles",
         [&](CommandExt& c) { c.cmd(op::kErase1).addr(0).addr(0).cmd(op::kErase2); }, 0,
         "expected 3 address cycles after 60h, got 2"},
        {"mode prefix before a read",
         [&](CommandExt& c) {
             c.cmd(op::kPrefixSlc).cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kRead2);
         },
         0, "cycle 1: mode prefixes apply to PROGRAM (80h) only, not 00h"},
        {"randomise prefix before an erase",
         [&](CommandExt& c) {
             c.cmd(op::kPrefixRandomise).cmd(op::kErase1);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kErase2);
         },
         0, "mode prefixes apply to PROGRAM (80h) only, not 60h"},
        {"ESP prefix before an MWS",
         [&](CommandExt& c) {
             c.cmd(op::kPrefixEsp).cmd(op::kIscm | kRead);
             row(c, 0, 0, 0, 0);
             pbm(c, 1);
             c.cmd(op::kConf);
         },
         0, "mode prefixes apply to PROGRAM (80h) only, not BEh"},
        {"MWS without CONF",
         [&](CommandExt& c) {
             c.cmd(op::kIscm | kRead);
             row(c, 0, 0, 0, 0);
             pbm(c, 1);
         },
         0, "expected command C0h after the block address (CONT or CONF)"},
        {"MWS with a short page bitmap",
         [&](CommandExt& c) {
             c.cmd(op::kIscm | kRead);
             row(c, 0, 0, 0, 0);
             pbm(c, 1, 5);
             c.cmd(op::kConf);
         },
         0, "expected 6 address cycles after the block address (page bitmap), got 5"},
        {"MWS with a short row after CONT",
         [&](CommandExt& c) {
             c.cmd(op::kIscm | kRead);
             row(c, 0, 0, 0, 0);
             pbm(c, 1);
             c.cmd(op::kCont).addr(0).addr(0).cmd(op::kConf);
         },
         0, "expected 3 address cycles after the ISCM/CONT slot, got 2"},
        {"read status with trailing command",
         [](CommandExt& c) { c.cmd(op::kReadStatus).data_out(1).cmd(op::kReset); }, 1,
         "cycle 2: unexpected cycles after the end of the command"},
        {"read with a trailing address",
         [&](CommandExt& c) {
             c.cmd(op::kRead1);
             column(c, 0);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kRead2).addr(0);
         },
         0, "unexpected cycles after the end of the command"},
        {"reset with data", [](CommandExt& c) { c.cmd(op::kReset).data_in(4); }, 4,
         "unexpected cycles after the end of the command"},
        {"XOR with trailing confirm",
         [&](CommandExt& c) {
             c.cmd(op::kXor);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kConf);
         },
         0, "unexpected cycles after the end"},
        {"XOR with 1 address cycle", [&](CommandExt& c) { c.cmd(op::kXor).addr(0); }, 0,
         "expected 3 address cycles after C5h, got 1"},
        {"data out without a data phase",
         [&](CommandExt& c) {
             c.cmd(op::kChangeReadColumnEnh);
             column(c, 0);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kChangeReadColumn2);
         },
         0, "expected a data-out phase after E0h"},
        {"data out past the page end",
         [&](CommandExt& c) {
             c.cmd(op::kChangeReadColumnEnh);
             column(c, 500);
             row(c, 0, 0, 0, 0);
             c.cmd(op::kChangeReadColumn2).data_out(100);
         },
         100, "data out of 100 bytes from column 500 runs past the 576-byte page"},
        {"data out longer than the payload",
         [&](CommandExt& c) {
             c.cmd(op::kChangeReadColumn1);
             column(c, 0);
             c.cmd(op::kChangeReadColumn2).data_out(64);
         },
         10, "data phases need 64 bytes but the payload has 10"},
        {"set features with 2 parameter bytes",
         [](CommandExt& c) { c.cmd(op::kSetFeatures).addr(feature::kTimingMode).data_in(2); }, 2,
         "expected a 4-byte data phase (P1-P4)"},
        {"get features without a feature address",
         [](CommandExt& c) { c.cmd(op::kGetFeatures).data_out(4); }, 4,
         "expected 1 address cycles after EEh, got 0"},
    };
    const uint64_t refused_before = bench.counter(0, "refused");
    for (const Malformed& m : cases) {
        SCOPED_TRACE(m.what);
        CommandExt c = start();
        m.build(c);
        Page payload = random_page(g, m.payload);
        const Page sent = payload;
        Outcome o = bench.send(c, payload);
        EXPECT_TRUE(bench.refused(o, 0, m.reason));
        EXPECT_EQ(o.data, sent);  // no data out on a refusal
        EXPECT_TRUE(erased(m.must_stay_erased));
    }
    EXPECT_EQ(bench.counter(0, "refused"), refused_before + cases.size());
    // Latches untouched by all of it.
    EXPECT_EQ(bench.c_latch(), y);
    EXPECT_EQ(bench.s_latch(), x);
    for (uint32_t wl = 0; wl < 4; ++wl) EXPECT_TRUE(erased(pa(0, 0, 12, wl)));
}

// --- addresses out of range -------------------------------------------------------------------

// Three planes, twelve blocks and 44 wordlines leave unused codes in the plane, block and
// wordline fields and in the page bitmap's last byte.
NandConfig odd_geometry() {
    NandConfig cfg = small_config();
    cfg.geometry.dies_per_channel = 1;
    cfg.geometry.planes_per_die = 3;
    cfg.geometry.blocks_per_plane = 12;
    cfg.geometry.wordlines_per_block = 44;
    return cfg;
}

class NandIllegalRange : public NandIllegal {
  protected:
    NandIllegalRange() : NandIllegal(odd_geometry()) {}
};

TEST_F(NandIllegalRange, AddressesOutOfRange) {
    bench.read(pa(0, 0, 0, 0));
    const Page c_before = bench.c_latch();
    struct Bad {
        PageAddress a;
        std::string reason;
    };
    const std::vector<Bad> bad = {
        {pa(0, 0, 12, 0), "block 12 out of range (0..11)"},
        {pa(0, 0, 15, 0), "block 15 out of range (0..11)"},
        {pa(0, 3, 0, 0), "plane 3 out of range (0..2)"},
        {pa(0, 0, 0, 44), "wordline 44 out of range (0..43)"},
        {pa(0, 1, 3, 63), "wordline 63 out of range (0..43)"},
    };
    for (const Bad& b : bad) {
        SCOPED_TRACE(to_string(b.a));
        CommandExt c;
        seq::read(c, bench.codec(), {b.a});
        EXPECT_TRUE(bench.refused(bench.send(c), 0, b.reason));
        EXPECT_TRUE(
            bench.refused(bench.program(b.a, random_page(g, n), CellMode::Esp), 0, b.reason));
        if (b.a.page == 0) {  // erase and MWS rows carry no wordline
            seq::erase(c, bench.codec(), {b.a});
            EXPECT_TRUE(bench.refused(bench.send(c), 0, b.reason));
            seq::mws(c, bench.codec(), 0, b.a.plane, kRead, {{b.a.block, 1}});
            EXPECT_TRUE(bench.refused(bench.send(c), 0, "MWS: slot 0: " + b.reason));
            if (b.a.plane >= 3) {
                seq::xor_latches(c, bench.codec(), 0, b.a.plane);
                EXPECT_TRUE(bench.refused(bench.send(c), 0, b.reason));
                seq::data_out(c, bench.codec(), 0, b.a.plane, 0, 8);
                EXPECT_TRUE(bench.refused(bench.send(c, Page(8)), 0, b.reason));
            }
        }
    }
    // A page bitmap naming wordlines 44..47 of a 44-wordline string.
    EXPECT_TRUE(bench.refused(bench.mws(0, 0, kRead, {{0, 1ull << 45}}), 0,
                              "MWS: slot 0: page bitmap selects wordlines past 43"));
    EXPECT_TRUE(bench.mws(0, 0, kRead, {{0, 1ull << 43}}).ok());
    for (uint32_t p = 0; p < 3; ++p) EXPECT_EQ(bench.die(0).plane(p).blocks_in_use(), 0u);
    EXPECT_EQ(bench.c_latch(), c_before);
}

}  // namespace
}  // namespace canopy::nand::test
