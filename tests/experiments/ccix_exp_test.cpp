// `canopy exp locality`, `atomics` and `lock-table` (experiments/ (atomics.cpp, locality.cpp, lock-table.cpp)): the
// CCIX-vs-PCIe paper's published values (CALIBRATION.md E3, E5, lock table) within 15% and its
// trends; --config/--set reaching the experiments' machines. Each TEST runs in its own process;
// each experiment forks one child per configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "../canopy_process.hpp"

namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;

using Row = canopy_test::ExpRow;

std::map<std::string, Row> run_exp(const std::string& name) {
    return canopy_test::run_experiment(name, scratch("ccix-exp-" + name));
}

using canopy_test::expect_within;

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

// --set reaches every machine of the experiment and is recorded: the host's AtomicCompare on a
// line in the SLC is the home's request_ns + slc_hit_ns, so 30 ns more of the latter is 30 ns
// more per compare. NAME.config.json holds the configuration the rows came from.
TEST(PlatformCcixExp, SetReachesTheMachinesAndIsRecorded) {
    const auto plain = run_exp("atomics");
    const std::string dir = scratch("ccix-exp-set");
    const auto slower =
        canopy_test::run_experiment("atomics", dir, "--set host.home.slc_hit_ns=60");
    EXPECT_NEAR(slower.at("E5.1").simulated - plain.at("E5.1").simulated, 30.0, 0.01);
    EXPECT_NE(slurp(dir + "/stdout.txt").find("--set host.home.slc_hit_ns=60"), std::string::npos);
    const auto cfg = nlohmann::json::parse(slurp(dir + "/atomics.config.json"));
    EXPECT_EQ(cfg["host"]["home"]["slc_hit_ns"].get<double>(), 60.0);
    EXPECT_EQ(cfg["host"]["home"]["request_ns"].get<double>(), 20.0);  // the rest: defaults
}

// A bad key is refused before anything runs (no outputs), naming the key.
TEST(PlatformCcixExp, BadKeyRefusedBeforeRunning) {
    const std::string dir = scratch("ccix-exp-refused");
    auto r = run_canopy("exp atomics --quick --set link.ccix.ra.bogus_ns=1 --out " + dir, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("link.ccix.ra.bogus_ns"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/atomics.csv"));
}

}  // namespace
