// `canopy exp ftl` (experiments/ftl.cpp): the FTL on the modelled flash. Write
// amplification of greedy GC under uniform random writes follows the first-principles estimate
// and falls as over-provisioning grows; every host write costs at least one TLC program, and GC
// makes the tail far longer than the mean.
#include <gtest/gtest.h>

#include "../canopy_process.hpp"

namespace {

TEST(PlatformFtlExp, WriteAmplificationAndLatencyUnderRandomWrites) {
    auto rows = canopy_test::run_experiment("ftl", canopy_test::scratch("ftl-exp"));
    // Within 25% of the analytic greedy-GC estimate (Flash-Cosmos publishes no FTL figure).
    for (const char* id : {"F7.wa_greedy", "F28.wa_greedy"}) {
        EXPECT_NEAR(rows[id].simulated, 1.0, 0.25) << id;
        EXPECT_FALSE(rows[id].published) << id;
    }
    EXPECT_GT(rows["F7.wa"].simulated, rows["F28.wa"].simulated);
    EXPECT_GT(rows["F28.wa"].simulated, 1.0);
    EXPECT_GT(rows["F7.gc"].simulated, rows["F28.gc"].simulated);
    // Each write programs a TLC page (700 us, Flash-Cosmos Table 1) and waits for it; with WA
    // copies and erases the mean grows with WA.
    for (const char* op : {"F7", "F28"}) {
        const double mean = rows[std::string(op) + ".mean"].simulated;
        const double p99 = rows[std::string(op) + ".p99"].simulated;
        EXPECT_GT(mean, 700.0) << op;
        EXPECT_GT(p99, 2 * mean) << op;
    }
    EXPECT_GT(rows["F7.mean"].simulated, rows["F28.mean"].simulated);
}

// --set reaches the dies: a TLC program of 1,400 us instead of 700 makes every host write wait
// at least that long, and the same writes (the same seed) leave the same write amplification.
TEST(PlatformFtlExp, SlowerProgramsReachTheWrites) {
    auto plain = canopy_test::run_experiment("ftl", canopy_test::scratch("ftl-exp-plain"));
    auto slow = canopy_test::run_experiment("ftl", canopy_test::scratch("ftl-exp-slow"),
                                            "--set nand.timing.t_prog_tlc_us=1400");
    for (const char* op : {"F7", "F28"}) {
        const std::string o(op);
        EXPECT_GT(slow[o + ".mean"].simulated, 1400.0) << op;
        EXPECT_GT(slow[o + ".mean"].simulated, 1.8 * plain[o + ".mean"].simulated) << op;
        EXPECT_DOUBLE_EQ(slow[o + ".wa"].simulated, plain[o + ".wa"].simulated) << op;
    }
}

}  // namespace
