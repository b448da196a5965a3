// The elaborated platform as one machine: host programs reaching the device through the link,
// and the host kernel's unmaps reaching the device's ATC. Each TEST elaborates its own platform.
#include <gtest/gtest.h>

#include "platform/platform.hpp"
#include "sw/host/dma_driver.hpp"

namespace canopy::platform {
namespace {

PlatformConfig small() {
    PlatformConfig c;
    c.nand.geometry.channels = 1;
    c.nand.geometry.dies_per_channel = 1;
    c.nand.geometry.blocks_per_plane = 16;
    c.host.cores = 2;
    return c;
}

double ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }

TEST(Platform, UnmappingHostMemoryInvalidatesTheDevicesAtc) {
    PlatformConfig cfg = small();
    cfg.device.dma.translate = true;
    core::Services services;
    Platform p(cfg, services);
    bool cached_before = false, cached_after = true;
    sw::DmaDriver::Result r;
    auto& proc = p.host.kernel.create_process("t");
    p.host.cores[0]->run(proc, [&](host::HostCore& cpu) {
        const uint64_t va = cpu.mmap(8192);
        cpu.store<uint64_t>(va, 42);
        sw::DmaDriver dma(cpu, cfg.device.bar0_address);
        r = dma.copy_to_device(va, 0, 8192, true);
        cached_before = p.device.atc.contains(va) && p.device.atc.contains(va + 4096);
        cpu.munmap(va, 8192);
        cached_after = p.device.atc.contains(va) || p.device.atc.contains(va + 4096);
    });
    sc_core::sc_start();
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(cached_before);
    EXPECT_FALSE(cached_after);
    EXPECT_EQ(p.host.cores[0]->fault(), "");
}

TEST(Platform, ABarReadCrossesTheLinkBothWays) {
    PlatformConfig cfg = small();
    core::Services services;
    Platform p(cfg, services);
    double read_ns = 0;
    auto& proc = p.host.kernel.create_process("t");
    p.host.cores[1]->run(proc, [&](host::HostCore& cpu) {
        const uint64_t bar = cpu.map_device(cfg.device.bar0_address, 4096);
        cpu.load<uint32_t>(bar + 0x18);  // TLB warm
        const sc_core::sc_time t0 = cpu.now();
        cpu.load<uint32_t>(bar + 0x18);
        read_ns = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    // A non-posted read: request down, completion up, each at least the layers' pipelines.
    const double pipelines = cfg.pcie.downstream.total_ns() + cfg.pcie.upstream.total_ns();
    EXPECT_GT(read_ns, pipelines + cfg.device.dma_regs.bank.access_ns);
    EXPECT_LT(read_ns, pipelines + 100.0);  // plus two small TLPs' serialisation
    EXPECT_EQ(p.host.cores[1]->fault(), "");
}

}  // namespace
}  // namespace canopy::platform
