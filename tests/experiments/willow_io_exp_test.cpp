// `canopy exp willow-io` (Willow Sections 4.1-4.2, experiments/willow-io.cpp): the published values
// it reaches and the relations it must keep whatever the calibration.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../canopy_process.hpp"

namespace {

using canopy_test::expect_within;

#ifdef CANOPY_FIRMWARE_DIR
TEST(PlatformWillowIoExp, BaseIoAndDirectIoAgainstThePaper) {
    auto rows = canopy_test::run_experiment("willow-io", canopy_test::scratch("willow-io-exp"));
    auto sim = [&](const std::string& id) {
        EXPECT_TRUE(rows.count(id)) << id;
        return rows[id].simulated;
    };
    // Within 15%: Base-IO writes use 73% of PCIe 1.1 x8; Direct-IO's gains over the file
    // system (small reads +66%, small writes 8x, 4 KiB read latency -35%).
    for (const char* id : {"W.2", "W.4", "W.5", "W.6"}) expect_within(rows, id, 15);
    // Within issue #27's band (20%): Base-IO reads use 78% of the link in the paper (0.69
    // here), and 388 K 4 KiB reads a second (330 K here; 245 K while SPU-OS copied a handler's
    // state and frame on every suspend and resume).
    for (const char* id : {"W.1", "W.3"}) expect_within(rows, id, 20);
    // Base-IO cannot beat the link, and reads and writes both use most of it.
    EXPECT_DOUBLE_EQ(sim("W.9"), 2.0);  // PCIe 1.1 x8: 2.5 GT/s x 8 lanes, 8b/10b
    for (const char* id : {"W.1", "W.2"}) {
        EXPECT_LT(sim(id), 1.0) << id;
        EXPECT_GT(sim(id), 0.5) << id;
    }
    // Both paths of a 4 KiB read share the device: the same PCIe, ring and storage time; the
    // file system's extra time is on the host.
    EXPECT_DOUBLE_EQ(sim("W.12"), sim("W.18"));  // PCIe
    EXPECT_DOUBLE_EQ(sim("W.13"), sim("W.19"));  // ring
    EXPECT_DOUBLE_EQ(sim("W.15"), sim("W.21"));  // storage
    EXPECT_GT(sim("W.11"), sim("W.17") + 5000);  // host
    // A 4 KiB transfer keeps its bank busy for 4 KiB at 3.2 GB/s (ssd.dram defaults; the 48 ns
    // access latency overlaps the bursts).
    EXPECT_NEAR(sim("W.15"), 4096 / 3.2, 60);

    // On the NAND array through the SPUs' FTL (no published values: Willow stored in emulated
    // PCM). Base-IO's 8 KiB stripe units are two of a 16 KiB page's four 4 KiB mapping units;
    // the write cache (the default) packs streaming writes into whole pages: 1 byte programmed
    // per byte, and nothing else (no GC on a fresh array; what the buffers hold at the end is
    // not counted).
    EXPECT_LE(sim("W.N4"), 1.0);
    EXPECT_GT(sim("W.N4"), 0.99);
    // The medium bounds the bandwidth now: below the memory store's, and writes (a TLC program,
    // 700 us, per 16 KiB page) well below reads (a partial read, tR = 60 us, per 8 KiB piece).
    EXPECT_LT(sim("W.N1"), sim("W.7"));
    EXPECT_LT(sim("W.N2") * 2, sim("W.N1"));
    // A 4 KiB read keeps the die busy for at least its sensing, tR(TLC) = 60 us, and takes that
    // much longer than from memory, on both paths alike.
    EXPECT_GT(sim("W.27"), 60000);
    EXPECT_NEAR(sim("W.27"), sim("W.33"), 0.01);
    EXPECT_GT(sim("W.22"), sim("W.10") + 55000);
    EXPECT_GT(sim("W.28"), sim("W.16") + 55000);
}

// --set changes the prototype's machine: on PCIe 2.0 x8 (5 GT/s x 8 lanes, 8b/10b) the link
// carries 4 GB/s each way, which the row names; the paper's 2 GB/s was the prototype's PCIe 1.1
// x8, so no row is scored against the paper then (the published values stay beside them).
TEST(PlatformWillowIoExp, SetChangesThePrototypesLink) {
    const std::string dir = canopy_test::scratch("willow-io-gen2");
    auto rows = canopy_test::run_experiment("willow-io", dir, "--set link.pcie.generation=2");
    EXPECT_DOUBLE_EQ(rows.at("W.9").simulated, 4.0);
    EXPECT_EQ(rows.at("W.9").published, 2.0);
    for (const auto& [id, r] : rows) {
        EXPECT_FALSE(r.paper_machine) << id;
        EXPECT_FALSE(r.error_pct) << id;
    }
    const auto j = nlohmann::json::parse(canopy_test::slurp(dir + "/willow-io.json"));
    EXPECT_EQ(j.at("paper_machine"), false);
    EXPECT_EQ(j.at("changed"), nlohmann::json({"link.pcie.generation=2"}));
    EXPECT_NE(canopy_test::slurp(dir + "/willow-io.csv").find("PCIe 2.0 x8"), std::string::npos);
    for (const char* id : {"W.1", "W.2"}) EXPECT_LT(rows.at(id).simulated, 1.0) << id;
}
#endif

}  // namespace
