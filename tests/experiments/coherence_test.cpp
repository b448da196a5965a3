// `canopy exp coherence` (E4, experiments/coherence.cpp): published values and trends of the
// CCIX-vs-PCIe paper's Experiment 4 (seeds/003 Sec. IV) on the quick configuration.
//
// The host side of E4 is not reproduced yet (docs/host.md, "E4: what is not reproduced"): its
// published means and the host's trends are not asserted here until the model reaches them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "../canopy_process.hpp"

namespace {

using Row = canopy_test::ExpRow;

// One run of the experiment serves every test of this file (each test is its own process, but
// the rows are the same: the experiment is deterministic).
const std::string& dir() {
    static const std::string d = canopy_test::scratch("ccix-exp-coherence");
    return d;
}
const std::map<std::string, Row>& rows() {
    static const std::map<std::string, Row> r = canopy_test::run_experiment("coherence", dir());
    return r;
}

double sim(const std::string& id) {
    const auto& r = rows();
    auto it = r.find(id);
    EXPECT_NE(it, r.end()) << id;
    return it == r.end() ? 0.0 : it->second.simulated;
}

// Device mean latency per buffer size, 1 host core: 2 MiB, 512 KiB, 128 KiB, 32 KiB.
constexpr const char* kDeviceMeans[] = {"E4.2", "E4.4", "E4.6", "E4.8"};

TEST(PlatformCcixExp, CoherenceDeviceLatencyNearlyFlatOverBufferSizes) {
    double lo = 1e9, hi = 0;
    for (const char* id : kDeviceMeans) {
        lo = std::min(lo, sim(id));
        hi = std::max(hi, sim(id));
    }
    EXPECT_GT(lo, 400.0);  // most device accesses miss and cross the link both ways
    EXPECT_LT(hi / lo, 1.25);
}

// The paper: from 1 to 3 host cores on 32 KiB the device mean rises (more misses).
TEST(PlatformCcixExp, CoherenceDeviceMeanRisesWithThreeHostCores) {
    EXPECT_GT(sim("E4.10"), sim("E4.8"));
}

// Host accesses that meet a line the device holds pay a snoop over the link.
TEST(PlatformCcixExp, CoherenceHostSnoopsTheDeviceOnTheSmallBuffer) {
    EXPECT_GT(sim("E4.13"), 0.0);
    EXPECT_LT(sim("E4.13"), 100.0);
}

// The histograms (the paper's Fig. 6B) are of the same samples as the rows: each side's bins add
// up to its count, at least the 2,000 accesses of --quick, and its mean is the row's.
TEST(PlatformCcixExp, CoherenceHistogramsHoldEverySampleOfTheRows) {
    rows();
    const auto h = nlohmann::json::parse(canopy_test::slurp(dir() + "/coherence.histograms.json"));
    const std::map<std::string, std::pair<const char*, const char*>> means = {
        {"2 MiB, 1 host core", {"E4.1", "E4.2"}},
        {"32 KiB, 1 host core", {"E4.7", "E4.8"}},
        {"32 KiB, 3 host cores", {"E4.9", "E4.10"}}};
    ASSERT_EQ(h.size(), means.size());
    for (const auto& [where, ids] : means) {
        SCOPED_TRACE(where);
        for (const char* who : {"host", "device"}) {
            const auto& d = h.at(where).at(who);
            double n = 0;
            for (const auto& b : d["histogram"]["bins"]) {
                EXPECT_LT(b[0].get<double>(), b[1].get<double>());
                n += b[2].get<double>();
            }
            EXPECT_EQ(n, d["count"].get<double>()) << who;
            EXPECT_GE(n, 2000.0) << who;
            const char* id = std::string(who) == "host" ? ids.first : ids.second;
            EXPECT_NEAR(d["mean"].get<double>(), sim(id), 1e-6 * sim(id)) << who;
        }
    }
    // Drawn beside the means against buffer size, the published means marked (the paper's Fig. 6).
    const std::string svg = canopy_test::slurp(dir() + "/coherence.contention.svg");
    EXPECT_NE(svg.find("Fig. 6"), std::string::npos);
    EXPECT_NE(svg.find("latency histogram, 32 KiB, 1 host core"), std::string::npos);
    EXPECT_NE(svg.find("published host mean 333 ns"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir() + "/coherence.contention.png"));
}

}  // namespace
