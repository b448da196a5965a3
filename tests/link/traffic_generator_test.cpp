// The CTG traffic generator (models/link/traffic_generator.hpp): direct and DMA requests, one
// after another or with a gap, each latency recorded in samples and in the distributions.
#include <gtest/gtest.h>

#include <systemc>

#include "core/services.hpp"
#include "device_fakes.hpp"
#include "link/traffic_generator.hpp"

namespace canopy::link {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using testing::FakeMemory;
using testing::ns;

constexpr uint64_t kHost = 0x1000'0000, kDev = 0x2000'0000;

// The CTG's direct socket and the DMA engine's host socket on one host memory (50 ns each).
struct Bench {
    core::Services services;
    DmaEngine dma;
    TrafficGenerator ctg;
    FakeMemory host_mem, dev_mem, host_mem_direct;
    Bench()
        : dma("dma", dma_config(), services),
          ctg("ctg", config(), services, &dma),
          host_mem("host_mem", kHost, 64 * 1024, 50),
          dev_mem("dev_mem", kDev, 16 * 1024, 10),
          host_mem_direct("host_mem_direct", kHost, 64 * 1024, 50) {
        dma.host_initiator.bind(host_mem.socket);
        dma.device_initiator.bind(dev_mem.socket);
        ctg.direct_initiator.bind(host_mem_direct.socket);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    // The engine's setup fixed at 50 ns so the expected times below stay simple.
    static DmaConfig dma_config() {
        DmaConfig c;
        c.setup_ns = 50;
        return c;
    }
    static CtgConfig config() {
        CtgConfig c;
        c.device_buffer_address = kDev;
        return c;
    }
    const core::Distribution& dist(const char* name) const {
        return *static_cast<const core::Distribution*>(services.stats.find("ctg", name));
    }
};

TEST(LinkCtg, DirectReadsWithGap) {
    Bench b;
    CtgRequest req;
    req.access = CtgAccess::Direct;
    req.address = kHost + 0x100;
    req.bytes = 64;
    req.count = 5;
    req.gap = sc_time(100, SC_NS);
    req.stride_bytes = 64;
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(b.ctg.run(req, d), 5u);
    ASSERT_EQ(b.ctg.samples().size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        const CtgSample& s = b.ctg.samples()[i];
        EXPECT_TRUE(s.ok);
        EXPECT_EQ(s.address, kHost + 0x100 + 64 * i);
        EXPECT_DOUBLE_EQ(s.latency_ns, 50);
        EXPECT_DOUBLE_EQ(s.start_ns, 150.0 * i);  // previous end + gap
    }
    EXPECT_DOUBLE_EQ(ns(d), 4 * 150 + 50);
    EXPECT_EQ(b.ctg.latencies_ns(), std::vector<double>(5, 50.0));
    EXPECT_EQ(b.dist("latency.direct.read").count(), 5u);
    EXPECT_DOUBLE_EQ(b.dist("latency.direct.read").mean(), 50);
    EXPECT_EQ(b.dist("latency.direct.write").count(), 0u);
}

TEST(LinkCtg, DmaWritesBackToBackUseTheEngine) {
    Bench b;
    for (uint64_t i = 0; i < 256; ++i) *b.dev_mem.at(kDev + i) = uint8_t(0xC0 ^ i);
    CtgRequest req;
    req.access = CtgAccess::Dma;
    req.write = true;  // device -> host
    req.address = kHost + 0x2000;
    req.bytes = 256;
    req.count = 3;
    req.stride_bytes = 0x1000;
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(b.ctg.run(req, d), 3u);
    // Each: DMA setup 50 + device read 10 + host write 50.
    EXPECT_EQ(b.ctg.latencies_ns(), std::vector<double>(3, 110.0));
    ASSERT_EQ(b.dma.results().size(), 3u);
    EXPECT_DOUBLE_EQ(b.dma.results()[2].latency_ns, 110);
    EXPECT_DOUBLE_EQ(b.ctg.samples()[2].start_ns, 220);  // back to back
    for (uint64_t r = 0; r < 3; ++r)
        EXPECT_EQ(0,
                  std::memcmp(b.host_mem.at(kHost + 0x2000 + r * 0x1000), b.dev_mem.at(kDev), 256));
    EXPECT_EQ(b.dist("latency.dma.write").count(), 3u);
}

TEST(LinkCtg, FailedRequestsAreCountedNotSampled) {
    Bench b;
    CtgRequest req;
    req.address = kHost + 64 * 1024 - 32;  // runs past host memory
    req.bytes = 64;
    req.count = 2;
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(b.ctg.run(req, d), 0u);
    EXPECT_EQ(b.ctg.samples().size(), 2u);
    EXPECT_FALSE(b.ctg.samples()[0].ok);
    EXPECT_EQ(b.dist("latency.direct.read").count(), 0u);
    EXPECT_EQ(static_cast<const core::Counter*>(b.services.stats.find("ctg", "errors"))->value(),
              2u);
}

}  // namespace
}  // namespace canopy::link
