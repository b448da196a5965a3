// Bulk bitwise operations of Flash-Cosmos (Sections 4.1 and 6.1) against a software oracle:
// intra-block MWS = AND, inter-block MWS = OR of ANDs, inverse = NAND/NOR/NOT, latch XOR and
// XNOR, De Morgan OR over inverted pages, for 1..48 operands and 1..4 blocks, and the worked
// example of Figure 16. Operands are ESP pages (tESP = 2 tPROG: no raw bit errors).
#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

class NandLogic : public ::testing::Test {
  protected:
    // Blocks 0..3: pages for AND; blocks 4..7: sparse originals stored inverted (De Morgan).
    static constexpr uint32_t kAndBlocks = 4, kInvBlock = 4, kInvBlocks = 4, kWl = 48;

    NandLogic() {
        bench.program_blocks(
            stored, 0, 0, 0, kAndBlocks, kWl, CellMode::Esp,
            [&](uint32_t, uint32_t wl) { return random_page(g, n, and_friendly(wl)); });
        bench.program_blocks(stored, 0, 0, kInvBlock, kInvBlocks, kWl, CellMode::Esp,
                             [&](uint32_t b, uint32_t wl) {
                                 std::vector<Page>& o = originals[b];
                                 o.resize(kWl);
                                 o[wl] = random_page(g, n, 1.0 - and_friendly(wl));
                                 return page_not(o[wl]);
                             });
    }

    Page oracle(const Slots& s) const { return sense_oracle(stored, s, n); }
    const Page& page(uint32_t block, uint32_t wl) const { return stored.at(block).at(wl); }
    // `count` distinct blocks of the AND blocks (or of the inverted ones), in random order.
    std::vector<uint32_t> random_blocks(uint32_t count, uint32_t first = 0) {
        std::vector<uint32_t> b = {first, first + 1, first + 2, first + 3};
        std::shuffle(b.begin(), b.end(), g);
        b.resize(count);
        return b;
    }

    Bench bench;
    std::mt19937_64 g{2024};
    const size_t n = bench.page_bytes();
    Stored stored;
    Stored originals;  // of blocks 4..7, as the user sees them
};

TEST_F(NandLogic, NormalReadReturnsEachProgrammedPage) {
    for (uint32_t b = 0; b <= kInvBlock; ++b)
        for (uint32_t wl = 0; wl < kWl; wl += 7)
            EXPECT_EQ(bench.read_page(pa(0, 0, b, wl)), page(b, wl));
    EXPECT_EQ(bench.counter(0, "bit_errors"), 0u);
}

TEST_F(NandLogic, IntraBlockMwsIsAndForEveryOperandCount) {
    int mixed_results = 0;
    for (uint32_t k = 1; k <= kWl; ++k) {
        const uint32_t b = k % kAndBlocks;
        for (uint64_t pbm : {wl_range(0, k), random_pbm(g, k, kWl)}) {
            Slots s = {{b, pbm}};
            Page want = oracle(s);
            EXPECT_EQ(bench.mws_result(0, 0, kRead, s), want) << k << " wordlines of block " << b;
            mixed_results += mixed(want);
        }
    }
    EXPECT_GE(mixed_results, 90);  // the results can tell AND from anything else
}

TEST_F(NandLogic, InverseIntraBlockMwsIsNandForEveryOperandCount) {
    for (uint32_t k = 1; k <= kWl; ++k) {
        Slots s = {{k % kAndBlocks, random_pbm(g, k, kWl)}};
        EXPECT_EQ(bench.mws_result(0, 0, kInverseRead, s), page_not(oracle(s)))
            << k << " wordlines";
    }
}

TEST_F(NandLogic, InterBlockMwsIsOrForEveryBlockCount) {
    for (uint32_t nb = 1; nb <= 4; ++nb)
        for (int trial = 0; trial < 8; ++trial) {
            Slots s;
            Page want(n, 0);
            for (uint32_t b : random_blocks(nb)) {
                const uint32_t wl = uint32_t(g() % 3);  // the densest zeros: OR stays mixed
                s.push_back({b, wl_bit(wl)});
                want = page_or(want, page(b, wl));
            }
            ASSERT_TRUE(mixed(want));
            EXPECT_EQ(bench.mws_result(0, 0, kRead, s), want) << nb << " blocks";
            EXPECT_EQ(bench.mws_result(0, 0, kInverseRead, s), page_not(want))
                << nb << " blocks (NOR)";
        }
}

TEST_F(NandLogic, InterBlockOfIntraBlockIsOrOfAndsForEveryCount) {
    int mixed_results = 0;
    for (uint32_t nb = 1; nb <= 4; ++nb)
        for (uint32_t k = 1; k <= kWl; ++k) {
            Slots s;
            for (uint32_t b : random_blocks(nb))
                s.push_back({b, random_pbm(g, s.empty() ? k : 1 + uint32_t(g() % k), kWl)});
            Page want = oracle(s);
            mixed_results += mixed(want);
            const bool inverse = k % 2;
            EXPECT_EQ(bench.mws_result(0, 0, inverse ? kInverseRead : kRead, s),
                      inverse ? page_not(want) : want)
                << nb << " blocks, " << k << " wordlines" << (inverse ? ", inverse" : "");
        }
    EXPECT_GE(mixed_results, 150);
}

TEST_F(NandLogic, InverseSingleWordlineIsNot) {
    for (uint32_t wl = 0; wl < kWl; wl += 3) {
        EXPECT_EQ(bench.mws_result(0, 0, kInverseRead, {{1, wl_bit(wl)}}), page_not(page(1, wl)));
        EXPECT_EQ(bench.mws_result(0, 0, kRead, {{1, wl_bit(wl)}}), page(1, wl));
    }
}

TEST_F(NandLogic, DeMorganOrOfInvertedPagesInOneBlock) {
    int mixed_results = 0;
    for (uint32_t k = 1; k <= kWl; ++k) {
        const uint64_t pbm = k % 2 ? wl_range(0, k) : random_pbm(g, k, kWl);
        const uint32_t b = kInvBlock + k % kInvBlocks;
        Page want(n, 0);
        for (uint32_t wl = 0; wl < kWl; ++wl)
            if (pbm >> wl & 1) want = page_or(want, originals[b][wl]);
        mixed_results += mixed(want);
        EXPECT_EQ(bench.mws_result(0, 0, kInverseRead, {{b, pbm}}), want) << k << " operands";
        // Without inverse the same sensing is the NOR of the originals.
        if (k % 8 == 0) {
            EXPECT_EQ(bench.mws_result(0, 0, kRead, {{b, pbm}}), page_not(want)) << k;
        }
    }
    EXPECT_GE(mixed_results, 44);
}

TEST_F(NandLogic, DeMorganAcrossBlocksIsAndOfOrs) {
    // Inverse inter-block MWS over inverted pages: NOT(OR_b AND_i ~x_bi) = AND_b OR_i x_bi, the
    // form of Figure 16's first command, for 1..4 blocks and 1..48 operands per block.
    int mixed_results = 0;
    for (uint32_t nb = 1; nb <= kInvBlocks; ++nb)
        for (uint32_t k = 1; k <= kWl; ++k) {
            Slots s;
            Page want(n, 0xFF);
            for (uint32_t b : random_blocks(nb, kInvBlock)) {
                s.push_back({b, random_pbm(g, s.empty() ? k : 1 + uint32_t(g() % k), kWl)});
                Page any(n, 0);
                for (uint32_t wl = 0; wl < kWl; ++wl)
                    if (s.back().pbm >> wl & 1) any = page_or(any, originals[b][wl]);
                want = page_and(want, any);
            }
            mixed_results += mixed(want);
            EXPECT_EQ(bench.mws_result(0, 0, kInverseRead, s), want) << nb << " blocks, " << k;
        }
    EXPECT_GE(mixed_results, 150);
}

TEST_F(NandLogic, XorOfLatches) {
    for (int trial = 0; trial < 16; ++trial) {
        const uint32_t wa = uint32_t(g() % kWl), wb = uint32_t(g() % kWl);
        const Page& a = page(0, wa);
        const Page& b = page(1, wb);
        // C = B by a normal read, S = A by an MWS that initialises S only, then C = S XOR C.
        bench.load_latches(pa(0, 0, 0, wa), pa(0, 0, 1, wb));
        ASSERT_TRUE(bench.xor_latches(0, 0).ok());
        EXPECT_EQ(bench.c_latch(), page_xor(a, b)) << "A = wl " << wa << ", B = wl " << wb;
    }
}

TEST_F(NandLogic, XorAndXnorOfMultiOperandResultsForEveryCount) {
    // C = X by one MWS (normal latch functions), S = Y or NOT Y by a second that initialises S
    // only, then C = S XOR C: X XOR Y, or X XNOR Y when the second sensing is inverse.
    int mixed_results = 0;
    for (uint32_t nb = 1; nb <= 4; ++nb)
        for (uint32_t k = 1; k <= kWl; ++k) {
            Slots x, y;
            for (uint32_t b : random_blocks(nb)) x.push_back({b, random_pbm(g, k, kWl)});
            for (uint32_t b : random_blocks(1 + uint32_t(g() % 4)))
                y.push_back({b, random_pbm(g, k, kWl)});
            const bool xnor = k % 2 == 0;
            ASSERT_TRUE(bench.mws(0, 0, kRead, x).ok());
            ASSERT_TRUE(
                bench.mws(0, 0, uint8_t(iscm::kInitS | (xnor ? iscm::kInverse : 0)), y).ok());
            ASSERT_TRUE(bench.xor_latches(0, 0).ok());
            Page want = page_xor(oracle(x), oracle(y));
            if (xnor) want = page_not(want);
            mixed_results += mixed(want);
            EXPECT_EQ(bench.c_latch(), want)
                << (xnor ? "XNOR, " : "XOR, ") << nb << " blocks, " << k;
        }
    EXPECT_GE(mixed_results, 150);
}

TEST_F(NandLogic, AccumulatesIntraBlockResultsBeyondOneBlock) {
    // AND of 4 x 8 operands (Section 6.1: more operands than a block's wordlines): one MWS per
    // block, the first initialising S and C, the following ones AND-accumulating in S, the last
    // transferring to C.
    const uint64_t pbm = wl_range(40, 8);
    Page want(n, 0xFF);
    for (uint32_t b = 0; b < kAndBlocks; ++b) want = page_and(want, oracle({{b, pbm}}));
    ASSERT_TRUE(mixed(want));
    for (uint32_t b = 0; b < kAndBlocks; ++b) {
        uint8_t f = b == 0 ? iscm::kInitS | iscm::kInitC : 0;
        if (b + 1 == kAndBlocks) f |= iscm::kTransfer;
        ASSERT_TRUE(bench.mws(0, 0, f, {{b, pbm}}).ok());
    }
    EXPECT_EQ(bench.c_latch(), want);
    // The same four slots in one inter-block MWS give the OR instead.
    Slots all;
    for (uint32_t b = 0; b < kAndBlocks; ++b) all.push_back({b, pbm});
    EXPECT_NE(bench.mws_result(0, 0, kRead, all), want);
}

TEST_F(NandLogic, ErasedWordlinesAreTheIdentityOfAnd) {
    // Wordlines never programmed conduct (read 1): selecting them changes no AND.
    Stored partial;
    bench.program_blocks(partial, 0, 0, 9, 1, 4, CellMode::Esp, [&](uint32_t, uint32_t wl) {
        return random_page(g, n, and_friendly(wl));
    });
    Page want = sense_oracle(partial, {{9, wl_range(0, 4)}}, n);
    EXPECT_EQ(bench.mws_result(0, 0, kRead, {{9, wl_range(0, 10)}}), want);
    EXPECT_EQ(bench.mws_result(0, 0, kRead, {{bench.spare_block(), wl_range(0, 48)}}),
              filled(n, 0xFF));
    // ...and an erased slot makes any OR all ones.
    EXPECT_EQ(bench.mws_result(0, 0, kRead, {{0, wl_range(0, 4)}, {bench.spare_block(), 1}}),
              filled(n, 0xFF));
}

TEST_F(NandLogic, OtherDieAndPlaneComputeIndependently) {
    // Die 1 plane 1 gets its own operands; die 0 plane 0 keeps its C-latch meanwhile.
    Stored other;
    bench.program_blocks(other, 1, 1, 5, 2, 16, CellMode::Esp, [&](uint32_t, uint32_t wl) {
        return random_page(g, n, and_friendly(wl));
    });
    Slots s0 = {{2, wl_range(0, 5)}};
    Page keep = bench.mws_result(0, 0, kRead, s0);
    for (uint32_t k = 1; k <= 16; k += 3) {
        Slots s = {{5, random_pbm(g, k, 16)}, {6, random_pbm(g, k, 16)}};
        EXPECT_EQ(bench.mws_result(1, 1, kRead, s), sense_oracle(other, s, n)) << k;
    }
    EXPECT_EQ(bench.c_latch(0, 0), keep);
    EXPECT_EQ(bench.c_latch(0, 0), oracle(s0));
}

// --- Figure 16 --------------------------------------------------------------------------------

// Blocks B1..B4 (here 8..11) with four pages each: A_i in B1, B_i in B2, C_i stored inverted in
// B3, D_i stored inverted in B4, all ESP.
struct Figure16 {
    static constexpr uint32_t B1 = 8, B2 = 9, B3 = 10, B4 = 11;
    explicit Figure16(Bench& bench) {
        std::mt19937_64 g(16);
        const size_t n = bench.page_bytes();
        for (int i = 0; i < 4; ++i) {
            // Densities that keep (C1+C3)(D2+D4)(A1 + B1B2B3B4) mixed.
            A[i] = random_page(g, n, 0.5);
            B[i] = random_page(g, n, 0.85);
            C[i] = random_page(g, n, 0.4);
            D[i] = random_page(g, n, 0.4);
            bench.must_program(pa(0, 1, B1, i), A[i], CellMode::Esp);
            bench.must_program(pa(0, 1, B2, i), B[i], CellMode::Esp);
            bench.must_program(pa(0, 1, B3, i), page_not(C[i]), CellMode::Esp);
            bench.must_program(pa(0, 1, B4, i), page_not(D[i]), CellMode::Esp);
        }
    }
    Page first() const { return page_and(page_or(C[0], C[2]), page_or(D[1], D[3])); }
    Page second() const {
        return page_or(A[0], page_and(page_and(B[0], B[1]), page_and(B[2], B[3])));
    }
    Page want() const { return page_and(first(), second()); }
    Slots cmd1() const { return {{B3, wl_bit(0) | wl_bit(2)}, {B4, wl_bit(1) | wl_bit(3)}}; }
    Slots cmd2() const { return {{B1, wl_bit(0)}, {B2, wl_range(0, 4)}}; }
    Page A[4], B[4], C[4], D[4];
};

TEST(NandFigure16, TwoMwsCommandsComputeTheExample) {
    Bench bench;
    Figure16 f(bench);
    ASSERT_TRUE(mixed(f.want()));
    // Command 1: inverse read, init S and C, no transfer.
    ASSERT_TRUE(bench.mws(0, 1, iscm::kInverse | iscm::kInitS | iscm::kInitC, f.cmd1()).ok());
    EXPECT_EQ(bench.s_latch(0, 1), f.first());  // the peek leaves S as it was
    ASSERT_TRUE(bench.mws(0, 1, iscm::kInverse | iscm::kInitS | iscm::kInitC, f.cmd1()).ok());
    EXPECT_EQ(bench.c_latch(0, 1), filled(bench.page_bytes(), 0));  // C = 0
    // Command 2: no inverse, no init, transfer: S = S AND (A1 + B1B2B3B4), C = C OR S.
    ASSERT_TRUE(bench.mws(0, 1, iscm::kTransfer, f.cmd2()).ok());
    EXPECT_EQ(bench.c_latch(0, 1), f.want());
}

TEST(NandFigure16, SwappedOrderGivesAWrongResult) {
    Bench bench;
    Figure16 f(bench);
    // Command 2 first (it now has to initialise), then command 1 without S init: refused,
    // because an inverse read initialises the S-latch and cannot accumulate.
    ASSERT_TRUE(bench.mws(0, 1, kRead, f.cmd2()).ok());
    Outcome o = bench.mws(0, 1, iscm::kInverse | iscm::kTransfer, f.cmd1());
    EXPECT_TRUE(bench.refused(o, 0, "S-latch"));
    // With the S init it is accepted, but the init discards command 2's result: C ends as
    // (A1 + B1B2B3B4) OR (C1+C3)(D2+D4), not the AND.
    ASSERT_TRUE(bench.mws(0, 1, iscm::kInverse | iscm::kInitS | iscm::kTransfer, f.cmd1()).ok());
    Page got = bench.c_latch(0, 1);
    EXPECT_NE(got, f.want());
    EXPECT_EQ(got, page_or(f.first(), f.second()));
}

// --- SLC pages without injected errors --------------------------------------------------------

TEST(NandLogicSlc, PureLogicOnSlcPagesWithoutInjectedErrors) {
    NandConfig cfg = small_config();
    cfg.reliability.inject_errors = false;
    cfg.reliability.initial_pe_cycles = 100000;  // would be very noisy with errors on
    Bench bench(cfg);
    std::mt19937_64 g(7);
    const size_t n = bench.page_bytes();
    Stored stored;
    bench.program_blocks(stored, 1, 0, 0, 4, 48, CellMode::Slc, [&](uint32_t, uint32_t wl) {
        return random_page(g, n, and_friendly(wl));
    });
    for (uint32_t nb = 1; nb <= 4; ++nb)
        for (uint32_t k = 1; k <= 48; k += 4) {
            Slots s;
            for (uint32_t b = 0; b < nb; ++b) s.push_back({b, random_pbm(g, k, 48)});
            EXPECT_EQ(bench.mws_result(1, 0, kRead, s), sense_oracle(stored, s, n));
            EXPECT_EQ(bench.mws_result(1, 0, kInverseRead, s),
                      page_not(sense_oracle(stored, s, n)));
        }
    EXPECT_EQ(bench.counter(1, "bit_errors"), 0u);
}

}  // namespace
}  // namespace canopy::nand::test
