// The host-to-SSD path end to end on the whole platform (Willow Section 3.1-3.2): host programs
// open HREs through the Willow driver, send RPCs through the bridge's queues over the PCIe link to
// an SPU running real firmware (sw/firmware/tests/hre_echo.c), receive the SPU's requests and
// answer them. Checked: payloads (inline and in the DMA window) arrive intact, results come
// back, the originating HRE the SPU sees is the sending process's own (stamped by the bridge,
// not forgeable), and requests pay the link both ways. Each TEST elaborates once.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/services.hpp"
#include "platform/platform.hpp"
#include "sw/host/hre.hpp"
#include "sw/host/willow_driver.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
uint32_t checksum(const std::vector<uint8_t>& p) {
    uint32_t s = 0;
    for (uint8_t b : p) s = s * 31 + b;
    return s;
}

std::vector<uint8_t> pattern(size_t n, unsigned seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * seed + 1);
    return v;
}

struct SsdMachine {
    PlatformConfig cfg;
    core::Services services;
    std::unique_ptr<Platform> platform;
    SsdMachine() {
        cfg.nand.geometry.channels = 1;
        cfg.nand.geometry.dies_per_channel = 1;
        cfg.nand.geometry.blocks_per_plane = 16;
        cfg.ssd.spus = 2;
        cfg.ssd.firmware = std::string(CANOPY_FIRMWARE_DIR) + "/hre_echo.elf";
        platform = std::make_unique<Platform>(cfg, services);
    }
    Willow& ssd() { return platform->device.ssd; }
};

TEST(PlatformWillowHost, RpcsCrossTheLinkBothWaysWithTheSendersOriginStamped) {
    SsdMachine m;
    sw::WillowDriver driver(m.platform->device.willow_device());
    auto& a = m.platform->host.kernel.create_process("a");
    auto& b = m.platform->host.kernel.create_process("b");
    uint32_t hre_a = 0, hre_b = 0, seen_a = 0, seen_b = 0;
    bool a_done = false;
    double call_ns = 0;
    m.platform->host.cores[0]->run(a, [&](host::HostCore& cpu) {
        const sw::HreEndpoint ep = driver.open(cpu);
        hre_a = ep.hre;
        sw::Hre hre(cpu, ep);
        const auto big = pattern(1000, 7), small = pattern(20, 3);
        const sc_core::sc_time t0 = cpu.now();
        auto r = hre.call(0, 0x0101, big.data(), uint32_t(big.size()));
        call_ns = (cpu.now() - t0).to_seconds() * 1e9;
        EXPECT_TRUE(r.ok());
        EXPECT_EQ(r.result, checksum(big));
        EXPECT_EQ(r.node, 0);
        r = hre.call(0, 0x0101, small.data(), uint32_t(small.size()));  // inline payload
        EXPECT_EQ(r.result, checksum(small));
        const auto back = pattern(300, 5);
        const uint16_t tag = hre.send(0, 0x0102, back.data(), uint32_t(back.size()));
        const sw::Hre::Request req = hre.receive();
        seen_a = req.origin;
        EXPECT_EQ(req.rpc_id, 0x0909);
        EXPECT_EQ(req.payload, std::vector<uint8_t>(back.rbegin(), back.rend()));
        hre.respond(req, 0xabc);
        EXPECT_EQ(hre.wait(tag).result, 0xabcu);
        a_done = true;
    });
    m.platform->host.cores[1]->run(b, [&](host::HostCore& cpu) {
        cpu.compute_ns(2000);  // after a's HRE is open: queue pairs in a fixed order
        const sw::HreEndpoint ep = driver.open(cpu);
        hre_b = ep.hre;
        sw::Hre hre(cpu, ep);
        while (!a_done) cpu.compute_ns(1000);  // the echo serves one request at a time
        const auto data = pattern(64, 9);
        const uint16_t tag = hre.send(0, 0x0102, data.data(), uint32_t(data.size()));
        const sw::Hre::Request req = hre.receive();
        seen_b = req.origin;
        hre.respond(req, 1);
        hre.wait(tag);
        EXPECT_TRUE(hre.call(0, 0x0103, nullptr, 0).ok());  // ends the firmware
    });
    sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
    EXPECT_EQ(m.platform->host.first_fault(), "");
    ASSERT_TRUE(m.ssd().spus[0]->exited());
    EXPECT_EQ(m.ssd().spus[0]->exit.code(), 0u);
    // The HRE IDs carry the process in the high bits and the queue pair in the low ten.
    EXPECT_EQ(hre_a >> 10, a.pid);
    EXPECT_EQ(hre_b >> 10, b.pid);
    EXPECT_NE(hre_a & 0x3ff, hre_b & 0x3ff);
    // What the SPU saw as originating HRE is each sender's own.
    EXPECT_EQ(seen_a, hre_a);
    EXPECT_EQ(seen_b, hre_b);
    // A call crosses the link four times at least (doorbell, fetch, payload, completion).
    EXPECT_GT(call_ns, 4 * 300.0);
}
#endif

}  // namespace
}  // namespace canopy::platform
