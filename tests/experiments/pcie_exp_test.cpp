// `canopy exp ats-cost` (platform/pcie_rig.hpp): the CCIX-vs-PCIe paper's ATS trends
// (seeds/003 Sec. IV Exp. 2, CALIBRATION.md E2) and its anchor within 15%. Each TEST runs in
// its own process.
#include <gtest/gtest.h>

#include <cmath>
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

std::map<std::string, Row> run_exp(const std::string& name, const std::string& d) {
    return canopy_test::run_experiment(name, d);
}

TEST(PlatformPcieExp, AtsCostTrendsAndAnchors) {
    const auto d = scratch("pcie-exp-ats");
    auto rows = run_exp("ats-cost", d);
    for (const char* id : {"E2.1", "E2.2", "E2.4", "E2.5", "E2.6", "E2.7", "E2.8", "E2.10", "E2.11",
                           "E2.12", "E2.17", "E2.18", "E2.19"})
        ASSERT_TRUE(rows.count(id)) << id;

    // A 64-B read with an ATC miss costs more than twice one with a hit (paper: ~3x).
    EXPECT_GT(rows["E2.1"].simulated, 2 * rows["E2.2"].simulated);
    // The first access to a buffer is the longest; later 4 KiB crossings are cheaper (the
    // IOMMU prefetches the next page's translation).
    EXPECT_GT(rows["E2.7"].simulated, rows["E2.8"].simulated);
    EXPECT_GE(rows["E2.7"].simulated, rows["E2.9"].simulated);
    // >= 32 KiB the transfer dominates (paper): the DMA engine requests the 8 pages'
    // translations ahead, each back before the piece ahead of it has moved, so a cold 32 KiB read
    // exposes one 64-B miss's worth of translation (E2.1 - E2.2), not eight.
    const double one_miss = rows["E2.1"].simulated - rows["E2.2"].simulated;
    EXPECT_NEAR(rows["E2.4"].simulated - rows["E2.5"].simulated, one_miss, 0.1 * one_miss);
    // The engine streams 32 KiB at the link's rate (pieces in flight), so that one exposed miss
    // is a visible share of the cold read, but less than half of it, and its relative cost is
    // well below the 64-B read's.
    EXPECT_LT(rows["E2.17"].simulated, 0.5);       // ATS share of the cold read
    canopy_test::expect_within(rows, "E2.17", 0);  // inside its published bound
    EXPECT_LT(rows["E2.6"].simulated - 1, (rows["E2.3"].simulated - 1) / 2);
    // A blocking ATC (E2.18) waits for every page's translation in turn: against its own warm
    // read (E2.18 / E2.19), the first miss, then for each of the 7 later pages a miss whose walk
    // the IOMMU prefetch saved (E2.8 - E2.2).
    const double later_miss = rows["E2.8"].simulated - rows["E2.2"].simulated;
    const double blocking_warm = rows["E2.18"].simulated / rows["E2.19"].simulated;
    EXPECT_NEAR(rows["E2.18"].simulated - blocking_warm, one_miss + 7 * later_miss,
                0.05 * (one_miss + 7 * later_miss));
    // Overlapping the translations at least halves their overhead on a cold 32 KiB read.
    EXPECT_GT(rows["E2.19"].simulated - 1, 2 * (rows["E2.6"].simulated - 1));
    // 2 MiB pages need fewer translations than 4 KiB pages for the same sweep.
    EXPECT_LT(rows["E2.12"].simulated, rows["E2.11"].simulated);
    EXPECT_GE(rows["E2.12"].simulated, 1);
    canopy_test::expect_within(rows, "E2.13", 0);  // the ratio: at least 1
    // The published anchor of the DMA path: the IOMMU's answer, 617 ns. The paper's 2453 and
    // 700 ns are CCIX reads (E2.20, E2.21); the DMA rows carry no published value.
    const Row& iommu = rows["E2.10"];
    ASSERT_TRUE(iommu.published);
    EXPECT_LE(std::fabs(iommu.simulated - *iommu.published), 0.15 * *iommu.published);
    for (const char* id : {"E2.1", "E2.2", "E2.7", "E2.8", "E2.9"}) {
        EXPECT_FALSE(rows[id].published) << id;
        EXPECT_FALSE(rows[id].error_pct) << id;  // nothing to score against
    }
    // The CSV and the paper's Fig. 3 (ATC miss against hit, with the published CCIX latencies)
    // are written beside the JSON.
    EXPECT_NE(slurp(d + "/ats-cost.csv").find("E2.1,"), std::string::npos);
    const std::string svg = slurp(d + "/ats-cost.atc.svg");
    EXPECT_NE(svg.find("Fig. 3"), std::string::npos);
    EXPECT_NE(svg.find("latency (ns)"), std::string::npos);
    EXPECT_NE(svg.find("published"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(d + "/ats-cost.atc.png"));
}

}  // namespace

namespace {

// --set reaches the rig: 10 ns more physical-layer pipeline in each direction is 20 ns more on a
// DMA read (the MemRd up, its completion down) and 10 ns more on a posted write (up only).
TEST(PlatformPcieExp, SetReachesTheRig) {
    auto plain = run_exp("pcie-latency", scratch("pcie-exp-plain"));
    auto slower = canopy_test::run_experiment(
        "pcie-latency", scratch("pcie-exp-set"),
        "--set link.pcie.upstream.physical_ns=90 --set link.pcie.downstream.physical_ns=90");
    EXPECT_NEAR(slower["E1.r1"].simulated - plain["E1.r1"].simulated, 20.0, 1e-6);
    EXPECT_NEAR(slower["E1.w1"].simulated - plain["E1.w1"].simulated, 10.0, 1e-6);
}

TEST(PlatformPcieExp, PcieLatencySweep) {
    const auto d = scratch("pcie-exp-lat");
    auto rows = run_exp("pcie-latency", d);
    // 32 B .. 16 KiB latencies (10 sizes) in both directions, throughput to 32 KiB (11 sizes).
    for (int i = 1; i <= 10; ++i) {
        const std::string n = std::to_string(i);
        ASSERT_TRUE(rows.count("E1.r" + n) && rows.count("E1.w" + n)) << n;
        EXPECT_FALSE(rows["E1.r" + n].published);  // the paper gives CCIX/PCIe ratios only
        // Latency grows with size.
        if (i > 1) {
            EXPECT_GT(rows["E1.r" + n].simulated, rows["E1.r" + std::to_string(i - 1)].simulated);
            EXPECT_GT(rows["E1.w" + n].simulated, rows["E1.w" + std::to_string(i - 1)].simulated);
        }
        // A posted write returns sooner than a read waits for its completions.
        EXPECT_LT(rows["E1.w" + n].simulated, rows["E1.r" + n].simulated);
    }
    ASSERT_TRUE(rows.count("E1.tr11") && rows.count("E1.tw11"));
    EXPECT_GT(rows["E1.tr11"].simulated, rows["E1.tr1"].simulated);
    EXPECT_EQ(rows.count("E1.r11"), 0u);
}

}  // namespace
