// The host program of `canopy run` (dma-check): a host core maps BAR0, programs the device's DMA
// engine over the PCIe link and checks the bytes that came back, with physical addresses and
// with virtual ones translated by ATS; a program fault is reported and fails the run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../canopy_process.hpp"

namespace {

using namespace canopy_test;

const std::string kNoLocks = " --set scenario.lock_table_locks=0";

nlohmann::json stats_of(const std::string& dir) {
    return nlohmann::json::parse(slurp(dir + "/stats.json"));
}

// The lock table of the default run is off in these two: its device side translates through the
// ATC and the IOMMU too.
TEST(HostProgram, DmaCheckRoundTripIsCorrectWithPhysicalAddresses) {
    const std::string dir = scratch("dma-phys");
    canopy_test::Run r = run_canopy(std::string("run --quiet --out ") + dir + " " + kSmall +
                                        " --set scenario.dma_bytes=16384" + kNoLocks,
                                    dir);
    ASSERT_EQ(r.status, 0) << r.err;
    auto s = stats_of(dir)["modules"];
    EXPECT_EQ(s["scenario.host"]["wrong_bytes"], 0);
    EXPECT_EQ(s["device.dma"]["descriptors"], 2);
    EXPECT_EQ(s["device.dma"]["bytes"], 2 * 16384);
    EXPECT_EQ(s["device.atc"]["lookups"], 0);  // physical: no translation
    // Every BAR access (5 register writes and 2 status clears per descriptor) crossed the link.
    EXPECT_GE(s["link"]["writes"].get<int>(), 2 * 7);
}

TEST(HostProgram, DmaCheckWithVirtualAddressesTranslatesByAts) {
    const std::string dir = scratch("dma-virt");
    canopy_test::Run r =
        run_canopy(std::string("run --quiet --out ") + dir + " " + kSmall +
                       " --set scenario.dma_bytes=16384 --set link.dma.translate=true" + kNoLocks,
                   dir);
    ASSERT_EQ(r.status, 0) << r.err;
    auto s = stats_of(dir)["modules"];
    EXPECT_EQ(s["scenario.host"]["wrong_bytes"], 0);
    // Two 2 MiB huge pages: one ATS request each, the second descriptor's page missing too.
    EXPECT_EQ(s["host.iommu"]["requests"], 2);
    EXPECT_EQ(s["host.root_port"]["ats_failures"], 0);
}

TEST(HostProgram, AFaultingProgramIsReportedAndFailsTheRun) {
    const std::string dir = scratch("dma-fault");
    // 4 MiB of host memory cannot give two aligned 2 MiB huge pages besides the page tables.
    // (Willow's host programs need more than that: off.)
    canopy_test::Run r =
        run_canopy(std::string("run --out ") + dir + " " + kSmall +
                       " --set host.memory.size_bytes=4194304 --set scenario.willow=false",
                   dir);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAULT: host.core0: mmap"), std::string::npos) << r.out;
}

}  // namespace
