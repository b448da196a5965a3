// `canopy exp locality`, `atomics` and `lock-table` (platform/ccix_experiments.cpp): the
// CCIX-vs-PCIe paper's published values (CALIBRATION.md E3, E5, lock table) within 15% and its
// trends. Each TEST runs in its own process; each experiment forks one child per configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "canopy_process.hpp"

namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;

using Row = canopy_test::ExpRow;

std::map<std::string, Row> run_exp(const std::string& name) {
    return canopy_test::run_experiment(name, scratch("ccix-exp-" + name));
}

void expect_within(const std::map<std::string, Row>& rows, const std::string& id, double pct) {
    ASSERT_TRUE(rows.count(id)) << id;
    const Row& r = rows.at(id);
    EXPECT_NEAR(r.simulated, r.published, r.published * pct / 100.0) << id;
}

TEST(PlatformCcixExp, LocalityHitsOfBothProfilesAndTheLargerL2) {
    auto rows = run_exp("locality");
    for (const char* id : {"E3.1", "E3.2", "E3.3", "E3.4"}) expect_within(rows, id, 15);
    // Reads cost more than writes by the read return; the two-level vck5000 is slower on a hit,
    EXPECT_GT(rows["E3.2"].simulated, rows["E3.1"].simulated);
    EXPECT_GT(rows["E3.3"].simulated, rows["E3.1"].simulated);
    // but its 1 MiB L2 holds the 512 KiB working set the u280's system cache cannot.
    EXPECT_LT(rows["E3.7"].simulated, 1.0);
    EXPECT_GT(rows["E3.5"].simulated, 500.0);  // u280 re-reads go over the link
}

TEST(PlatformCcixExp, AtomicCompareFromHostAndDevice) {
    auto rows = run_exp("atomics");
    expect_within(rows, "E5.1", 15);
    // The paper's range is 740-800 ns.
    EXPECT_GE(rows["E5.2"].simulated, 740.0);
    EXPECT_LE(rows["E5.2"].simulated, 800.0);
}

TEST(PlatformCcixExp, LockTableHostRisesWithContentionDeviceStaysNear) {
    auto rows = run_exp("lock-table");
    for (const char* id : {"DB.1", "DB.2", "DB.3", "DB.4", "DB.5"}) expect_within(rows, id, 15);
    EXPECT_GT(rows["DB.3"].simulated, 2.0 * rows["DB.1"].simulated);   // host: contention costs
    EXPECT_LT(rows["DB.5"].simulated, 1.15 * rows["DB.4"].simulated);  // device: barely
    EXPECT_EQ(rows["DB.6"].simulated, 0.0);                            // never two holders
}

}  // namespace

namespace {

// E4 is not calibrated yet (see the issue); what holds already: the device's latency stays
// nearly flat from 2 MiB down to 32 KiB, and each row is a real latency.
TEST(PlatformCcixExp, CoherenceDeviceLatencyNearlyFlatOverBufferSizes) {
    auto rows = run_exp("coherence");
    double lo = 1e9, hi = 0;
    for (const char* id : {"E4.2", "E4.4", "E4.6", "E4.8"}) {
        ASSERT_TRUE(rows.count(id)) << id;
        lo = std::min(lo, rows[id].simulated);
        hi = std::max(hi, rows[id].simulated);
    }
    EXPECT_GT(lo, 400.0);  // every device access that misses crosses the link both ways
    EXPECT_LT(hi / lo, 1.25);
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
