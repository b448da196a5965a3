// The host-to-SSD path end to end on the whole platform (Willow Section 3.1-3.2): host programs
// open HREs through the Willow driver, send RPCs through the bridge's queues over the PCIe link to
// an SPU running real firmware (sw/firmware/tests/hre_echo.c), receive the SPU's requests and
// answer them. Checked: payloads (inline and in the DMA window) arrive intact, results come
// back, the originating HRE the SPU sees is the sending process's own (stamped by the bridge,
// not forgeable), and requests pay the link both ways. The same over coherent queues (CCIX): no
// doorbell at all, queues that wrap, the bridge reading the host's heads when it runs out of room.
// Each TEST elaborates once.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/services.hpp"
#include "platform/platform.hpp"
#include "ssd/hre_queue.h"
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
    double stat(const std::string& module, const std::string& name) const {
        auto* c = dynamic_cast<const core::Counter*>(services.stats.find(module, name));
        if (!c) throw std::runtime_error("no counter " + module + "." + name);
        return double(c->value());
    }
};

sw::WillowDriverConfig coherent_queues() {
    sw::WillowDriverConfig c;
    c.coherent_queues = true;
    return c;
}

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

TEST(PlatformWillowHost, CoherentQueuesCarryRpcsBothWaysWithoutADoorbell) {
    SsdMachine m;
    sw::WillowDriver driver(m.platform->device.willow_device(), sw::HreLayout(), coherent_queues());
    auto& a = m.platform->host.kernel.create_process("a");
    bool done = false;
    double mmio_writes = -1, snoops = 0, fetched = 0;
    const std::string core0 = m.platform->host.cores[0]->name();
    m.platform->host.cores[0]->run(a, [&](host::HostCore& cpu) {
        const sw::HreEndpoint ep = driver.open(cpu);
        EXPECT_TRUE(ep.coherent);
        sw::Hre hre(cpu, ep);
        const double writes0 = m.stat(core0, "mmio.writes"),
                     snoops0 = m.stat("device.ra", "snoops");
        const auto big = pattern(1000, 7), small = pattern(20, 3);
        EXPECT_EQ(hre.call(0, 0x0101, big.data(), uint32_t(big.size())).result, checksum(big));
        EXPECT_EQ(hre.call(0, 0x0101, small.data(), uint32_t(small.size())).result,
                  checksum(small));
        const auto back = pattern(300, 5);
        const uint16_t tag = hre.send(0, 0x0102, back.data(), uint32_t(back.size()));
        const sw::Hre::Request req = hre.receive();
        EXPECT_EQ(req.origin, ep.hre);
        EXPECT_EQ(req.payload, std::vector<uint8_t>(back.rbegin(), back.rend()));
        hre.respond(req, 0xabc);
        EXPECT_EQ(hre.wait(tag).result, 0xabcu);
        mmio_writes = m.stat(core0, "mmio.writes") - writes0;
        snoops = m.stat("device.ra", "snoops") - snoops0;
        fetched = m.stat("device.ssd.bridge", "fetched");
        // A coherent queue has no SQ tail doorbell: ringing it is refused and fetches nothing.
        cpu.store<uint32_t>(ep.doorbell_va + HRE_DOORBELL_SQ_TAIL, 1);
        cpu.compute_ns(5000);
        EXPECT_EQ(m.stat("device.ssd.bridge", "bad_doorbells"), 1);
        EXPECT_EQ(m.stat("device.ssd.bridge", "fetched"), fetched);
        EXPECT_TRUE(hre.call(0, 0x0103, nullptr, 0).ok());
        done = true;
    });
    sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
    EXPECT_EQ(m.platform->host.first_fault(), "");
    ASSERT_TRUE(done);
    EXPECT_EQ(m.ssd().spus[0]->exit.code(), 0u);
    // No doorbell (nor any other device write) while the RPCs ran; the host's writes of the
    // entries took the watched lines from the request agent: a snoop each at least.
    EXPECT_EQ(mmio_writes, 0);
    EXPECT_GE(snoops, 4);
    EXPECT_EQ(fetched, 4);  // three requests and the response to the SPU's request
}

TEST(PlatformWillowHost, CoherentQueuesWrapAndTheBridgeReadsTheHostsHeadsWhenFull) {
    SsdMachine m;
    sw::WillowDriver driver(m.platform->device.willow_device(), sw::HreLayout(), coherent_queues());
    auto& a = m.platform->host.kernel.create_process("a");
    const sw::HreLayout layout;
    const unsigned calls = 2 * layout.cq_entries + 10;  // the CQ wraps twice, the SQ 4 times
    unsigned right = 0, back_right = 0;
    bool done = false;
    m.platform->host.cores[0]->run(a, [&](host::HostCore& cpu) {
        sw::Hre hre(cpu, driver.open(cpu));
        for (unsigned i = 0; i < calls; i += 8) {  // 8 in flight
            std::vector<std::pair<uint16_t, uint32_t>> sent;
            for (unsigned k = i; k < std::min(calls, i + 8); ++k) {
                const auto p = pattern(24 + k % 100, k + 1);  // inline and window payloads
                sent.push_back({hre.send(0, 0x0101, p.data(), uint32_t(p.size())), checksum(p)});
            }
            for (auto [tag, sum] : sent) right += hre.wait(tag).result == sum;
        }
        // SPU requests fill the receive buffer's ring more than once: its head comes back
        // through the shadow line.
        for (unsigned k = 0; k < 40; ++k) {
            const auto p = pattern(4000, k + 3);
            const uint16_t tag = hre.send(0, 0x0102, p.data(), uint32_t(p.size()));
            const sw::Hre::Request req = hre.receive();
            back_right += req.payload == std::vector<uint8_t>(p.rbegin(), p.rend());
            hre.respond(req, k);
            EXPECT_EQ(hre.wait(tag).result, k);
        }
        EXPECT_TRUE(hre.call(0, 0x0103, nullptr, 0).ok());
        done = true;
    });
    sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_MS));
    EXPECT_EQ(m.platform->host.first_fault(), "");
    ASSERT_TRUE(done) << right << " calls and " << back_right
                      << " SPU requests came back right, at " << sc_core::sc_time_stamp();
    EXPECT_EQ(right, calls);
    EXPECT_EQ(back_right, 40u);
    EXPECT_EQ(m.stat("device.ssd.bridge", "nacked"), 0);
    EXPECT_EQ(m.stat("device.ssd.bridge", "bad_doorbells"), 0);
}
#endif

}  // namespace
}  // namespace canopy::platform
