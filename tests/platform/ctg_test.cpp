// The CCIX Traffic Generator's startTrans registers in BAR0 (models/link/ctg_registers.hpp),
// driven by a host program through sw/host/ctg_driver as the CCIX-vs-PCIe paper's software API
// drives its CTG (seeds/003 Section IV-A): reads and writes of host memory through the request
// agent, the captured latency, refusals. Each TEST elaborates its own platform.
#include <gtest/gtest.h>

#include "platform/ccix_machine.hpp"
#include "sw/host/ctg_driver.hpp"
#include "sw/host/dma_driver.hpp"

namespace canopy::platform {
namespace {

TEST(PlatformCtg, BlocksFitTheirBarWindows) {
    EXPECT_LE(link::CtgRegisters::register_map().size_bytes(), Device::kRegsWindowBytes);
    EXPECT_LE(link::DmaRegisters::register_map().size_bytes(), Device::kRegsWindowBytes);
    EXPECT_LE(Device::kCtgRegsOffset + Device::kRegsWindowBytes, Device::kBar0Bytes);
}

TEST(PlatformCtg, HostStartTransMovesHostMemoryOverCcix) {
    Machine m;
    const uint64_t buf = m.shared(2 << 20);
    const uint64_t ctg_pa = m.cfg.device.bar0_address + Device::kCtgRegsOffset;
    sw::CtgDriver::Result first, kib, write, empty;
    uint64_t after_write = 1;
    m.host(0, [&](host::HostCore& cpu) {
        sw::CtgDriver ctg(cpu, ctg_pa);
        first = ctg.start_trans(false, buf, 64);  // ATC miss
        kib = ctg.start_trans(false, buf + 4096, 1024);
        cpu.store<uint64_t>(buf + 8192, ~0ull);  // in the host's cache, then written by the CTG
        write = ctg.start_trans(true, buf + 8192, 64);
        after_write = cpu.load<uint64_t>(buf + 8192);
        empty = ctg.start_trans(false, buf, 0);
    });
    sc_core::sc_start();
    m.check_host();
    EXPECT_TRUE(first.ok && kib.ok && write.ok);
    // The CTG's own capture is the transfer alone; the program also saw its MMIO round trips.
    EXPECT_GT(first.latency_ns, kib.latency_ns / 4);
    EXPECT_GT(kib.latency_ns, 0u);
    EXPECT_LT(double(kib.latency_ns), kib.elapsed_ns);
    EXPECT_GE(kib.polls, 1u);
    // The request agent's write took the line from the host's cache: the host reads its bytes
    // (the CTG's buffer, zeros).
    EXPECT_EQ(after_write, 0u);
    EXPECT_FALSE(empty.ok);
    EXPECT_EQ(empty.error_code, uint32_t(link::CtgErrorCode::Length));
    EXPECT_EQ(m.platform->device.ctg_regs.bank().read("completed"), 4u);
}

// The DMA block still answers at BAR0's start, beside the CTG's window.
TEST(PlatformCtg, DmaBlockStillAtBarStart) {
    Machine m;
    const uint64_t buf = m.shared(2 << 20);
    sw::DmaDriver::Result r;
    m.host(0, [&](host::HostCore& cpu) {
        sw::DmaDriver dma(cpu, m.cfg.device.bar0_address);
        r = dma.copy_to_device(m.proc->space->translate(buf)->pa, 0, 256);
    });
    sc_core::sc_start();
    m.check_host();
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(m.platform->device.dma_regs.bank().read("completed"), 1u);
    EXPECT_EQ(m.platform->device.ctg_regs.bank().read("completed"), 0u);
}

}  // namespace
}  // namespace canopy::platform
