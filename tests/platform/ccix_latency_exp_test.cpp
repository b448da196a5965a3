// `canopy exp ccix-latency` (E1, platform/ccix_latency.cpp) and the CCIX side of `ats-cost`
// (E2): published values and trends.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "canopy_process.hpp"

namespace {

using canopy_test::expect_within;
using Row = canopy_test::ExpRow;

std::map<std::string, Row> run_exp(const std::string& name) {
    return canopy_test::run_experiment(name, canopy_test::scratch("ccix-exp-" + name));
}

}  // namespace

namespace {

// E1 runs both paths on the platform; its read side is not calibrated yet (see the issue):
// asserted are the small-write ratio the paper gives (CCIX ~32% longer: write-allocate fetches
// the line first) and that larger CCIX transfers overlap their lines (sub-linear growth).
TEST(PlatformCcixExp, CcixLatencySmallWritesLongerThanPcieAndTransfersOverlap) {
    auto rows = run_exp("ccix-latency");
    expect_within(rows, "E1.4", 15);  // 64 B write ratio in the quick sweep (64, 1K, 16K, 32K)
    ASSERT_TRUE(rows.count("E1.1") && rows.count("E1.5"));
    const double r64 = rows["E1.1"].simulated, r1k = rows["E1.5"].simulated;
    EXPECT_LT(r1k, 16 * r64 / 4);  // 16 lines in far less than 16 one-line reads
}

}  // namespace

namespace {

// E2's anchors measured where the paper measured them: the request agent's 64 B read, system
// cache missing, with the ATC missing (an ATS request over VC0 to the IOMMU) and hitting.
TEST(PlatformCcixExp, AtsCostCcixSideMeetsTheAnchors) {
    auto rows = run_exp("ats-cost");
    expect_within(rows, "E2.20", 15);
    expect_within(rows, "E2.21", 15);
    EXPECT_GT(rows["E2.22"].simulated, 2.5);  // "about 3x"
}

}  // namespace
