// The device's DMA engine (models/link/dma_engine.hpp): data integrity in both directions across
// page boundaries, with and without translation, per-descriptor errors, latency as the sum of its
// parts, translations requested ahead and overlapping the transfer, and transfers through the
// PCIe link. Each TEST runs in its own process.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <systemc>

#include "core/services.hpp"
#include "device_fakes.hpp"
#include "link/dma_engine.hpp"
#include "link/pcie_link.hpp"

namespace canopy::link {
namespace {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using testing::FakeMemory;
using testing::FakeTranslator;
using testing::ns;

constexpr uint64_t kHost = 0x1000'0000, kDev = 0x2000'0000, kVirt = 0x7000'0000;
constexpr uint64_t kPage = 4096;

// The engine with host memory (100 ns per access) bound straight to its host socket, device
// memory (10 ns), and with `translate` an ATC asking a fake IOMMU (617 ns). Store and forward
// (one piece in flight) unless `in_flight` says otherwise, so expected times are plain sums.
struct Bench {
    core::Services services;
    std::unique_ptr<Atc> atc;
    std::unique_ptr<FakeTranslator> iommu;
    DmaEngine dma;
    FakeMemory host_mem, dev_mem;

    explicit Bench(bool translate, const AtcConfig& atc_config = AtcConfig(),
                   uint32_t in_flight = 1)
        : atc(translate ? std::make_unique<Atc>("atc", atc_config, services) : nullptr),
          iommu(translate ? std::make_unique<FakeTranslator>("iommu", 617) : nullptr),
          dma("dma", config(translate, in_flight), services, atc.get()),
          host_mem("host_mem", kHost, 64 * 1024, 100),
          dev_mem("dev_mem", kDev, 64 * 1024, 10) {
        if (atc) atc->ats_initiator.bind(iommu->socket);
        dma.host_initiator.bind(host_mem.socket);
        dma.device_initiator.bind(dev_mem.socket);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    static DmaConfig config(bool translate, uint32_t in_flight = 1) {
        DmaConfig c;
        c.translate = translate;
        c.pieces_in_flight = in_flight;
        return c;
    }
    // The fixed part of a host -> device descriptor: setup and the read's completion handling.
    static double read_fixed_ns() { return DmaConfig().setup_ns + DmaConfig().read_completion_ns; }
    DmaResult run(DmaDirection dir, uint64_t host, uint64_t dev, uint64_t len) {
        sc_time d = SC_ZERO_TIME;
        DmaResult r = dma.execute(DmaDescriptor{dir, host, dev, len}, d);
        EXPECT_DOUBLE_EQ(ns(d), r.latency_ns);
        return r;
    }
};

TEST(LinkDma, HostToDeviceMovesBytesAcrossPages) {
    Bench b(false);
    const DmaResult r = b.run(DmaDirection::HostToDevice, kHost + 0xF00, kDev + 0x10, 10000);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.bytes_done, 10000u);
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev + 0x10), b.host_mem.at(kHost + 0xF00), 10000));
    // Cut at the 4 KiB boundaries: 256 + 4096 + 4096 + 1552.
    ASSERT_EQ(r.pieces, 4u);
    ASSERT_EQ(b.host_mem.seen.size(), 4u);
    EXPECT_EQ(b.host_mem.seen[0].length, 256u);
    EXPECT_EQ(b.host_mem.seen[1].address, kHost + 0x1000);
    EXPECT_EQ(b.host_mem.seen[1].length, 4096u);
    EXPECT_EQ(b.host_mem.seen[3].length, 1552u);
    for (const auto& s : b.host_mem.seen) {
        EXPECT_FALSE(s.write);
        EXPECT_EQ(s.at, core::TlpExt::AddressType::Untranslated);
    }
    EXPECT_EQ(r.translations, 0u);
}

TEST(LinkDma, DeviceToHostTranslatesEachPage) {
    Bench b(true);
    // Virtual pages 0..3 on physical pages 3..0: a contiguous buffer scattered in host memory.
    for (uint64_t i = 0; i < 4; ++i)
        b.iommu->map(kVirt + i * kPage, kHost + (3 - i) * kPage, kPage);
    const DmaResult r = b.run(DmaDirection::DeviceToHost, kVirt + 0x800, kDev, 3 * kPage);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.translations, 4u);
    EXPECT_EQ(r.pieces, 4u);
    for (uint64_t off = 0; off < 3 * kPage; ++off) {
        const uint64_t va = kVirt + 0x800 + off;
        const uint64_t pa = kHost + (3 - (va - kVirt) / kPage) * kPage + va % kPage;
        ASSERT_EQ(*b.host_mem.at(pa), *b.dev_mem.at(kDev + off)) << off;
    }
    for (const auto& s : b.host_mem.seen) {
        EXPECT_TRUE(s.write);
        EXPECT_EQ(s.at, core::TlpExt::AddressType::Translated);
    }
}

TEST(LinkDma, HugePageNeedsOneTranslation) {
    Bench b(true);
    b.iommu->map(0x4000'0000, kHost, 2 * 1024 * 1024);
    const DmaResult r = b.run(DmaDirection::HostToDevice, 0x4000'0100, kDev, 3 * kPage + 100);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.translations, 1u);
    EXPECT_EQ(r.pieces, 4u);  // still cut at max_burst_bytes: 4096 x 3 + 100
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev), b.host_mem.at(kHost + 0x100), 3 * kPage + 100));
}

TEST(LinkDma, LatencyIsTranslationPlusTransfer) {
    Bench b(true);
    for (uint64_t i = 0; i < 2; ++i) b.iommu->map(kVirt + i * kPage, kHost + i * kPage, kPage);
    // 2 KiB straddling two pages: two ATC misses, two pieces of host read + device write. The
    // second page's lookup goes out one lookup time (20 ns) after the first and is back before
    // the first piece (110 ns) has moved: only the first miss is waited for.
    DmaResult r = b.run(DmaDirection::HostToDevice, kVirt + 0xC00, kDev, 0x800);
    ASSERT_TRUE(r.ok) << r.error;
    const double miss = 20 + 1136 + 617, hit = 20, piece = 100 + 10, setup = Bench::read_fixed_ns();
    EXPECT_EQ(r.translations, 2u);
    EXPECT_DOUBLE_EQ(r.translation_ns, miss);
    EXPECT_DOUBLE_EQ(r.transfer_ns, 2 * piece);
    EXPECT_DOUBLE_EQ(r.latency_ns, setup + miss + 2 * piece);
    r = b.run(DmaDirection::HostToDevice, kVirt + 0xC00, kDev, 0x800);  // now ATC hits
    EXPECT_DOUBLE_EQ(r.latency_ns, setup + hit + 2 * piece);
    EXPECT_EQ(b.dma.results().size(), 2u);
    EXPECT_EQ(b.dma.results()[1].id, 1u);
    EXPECT_EQ(b.dma.results()[1].completion, sc_time(r.latency_ns, sc_core::SC_NS));
}

TEST(LinkDma, PiecesInFlightOverlapTheirReads) {
    Bench b(false, AtcConfig(), 2);  // two buffers
    const DmaResult r = b.run(DmaDirection::HostToDevice, kHost, kDev, 4 * kPage);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.pieces, 4u);
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev), b.host_mem.at(kHost), 4 * kPage));
    const double host = 100, dev = 10;
    // Pieces 0 and 1 are read at once and written as their data arrives (host + dev); pieces 2
    // and 3 take the buffers when pieces 0 and 1 have been written and end one piece later.
    const double end = 2 * (host + dev);
    EXPECT_DOUBLE_EQ(r.transfer_ns, end);
    EXPECT_DOUBLE_EQ(r.latency_ns, Bench::read_fixed_ns() + end);
    EXPECT_LT(r.latency_ns, Bench::read_fixed_ns() + 4 * (host + dev));  // store and forward
}

// A write (device -> host) pays no read completion: setup and the pieces only.
TEST(LinkDma, WritesToTheHostPayNoReadCompletion) {
    Bench b(false);
    const DmaResult w = b.run(DmaDirection::DeviceToHost, kHost, kDev, 64);
    const DmaResult r = b.run(DmaDirection::HostToDevice, kHost, kDev, 64);
    ASSERT_TRUE(w.ok && r.ok);
    EXPECT_DOUBLE_EQ(w.latency_ns, DmaConfig().setup_ns + 10 + 100);
    EXPECT_DOUBLE_EQ(r.latency_ns - w.latency_ns, DmaConfig().read_completion_ns);
}

// 32 KiB over 8 virtual pages scattered in host memory (virtual page i on physical 7 - i).
void map_scattered(Bench& b) {
    for (uint64_t i = 0; i < 8; ++i)
        b.iommu->map(kVirt + i * kPage, kHost + (7 - i) * kPage, kPage);
}

TEST(LinkDma, TranslationsOverlapTheTransfer) {
    Bench b(true);  // 8 translations in flight
    map_scattered(b);
    const DmaResult r = b.run(DmaDirection::HostToDevice, kVirt, kDev, 8 * kPage);
    ASSERT_TRUE(r.ok) << r.error;
    const double miss = 20 + 1136 + 617, piece = 100 + 10, setup = Bench::read_fixed_ns();
    // Far below 8 misses one after another: lookup k leaves 20k ns after the first and is back
    // before piece k - 1 has moved (20 < 110 ns), so only the first miss is waited for.
    EXPECT_LT(r.latency_ns, setup + 8 * miss);
    EXPECT_DOUBLE_EQ(r.translation_ns, miss);
    EXPECT_DOUBLE_EQ(r.latency_ns, setup + miss + 8 * piece);
    // The lookups went out in page order, one per page; the pieces read their physical pages in
    // order and the data arrived intact.
    ASSERT_EQ(b.iommu->requests.size(), 8u);
    for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(b.iommu->requests[i].address, kVirt + i * kPage);
    ASSERT_EQ(b.host_mem.seen.size(), 8u);
    for (uint64_t i = 0; i < 8; ++i) {
        EXPECT_EQ(b.host_mem.seen[i].address, kHost + (7 - i) * kPage) << i;
        EXPECT_EQ(b.host_mem.seen[i].at, core::TlpExt::AddressType::Translated);
        EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev + i * kPage),
                                 b.host_mem.at(kHost + (7 - i) * kPage), kPage))
            << i;
    }
    const auto* lat =
        static_cast<const core::Distribution*>(b.services.stats.find("atc", "latency"));
    EXPECT_EQ(lat->count(), 8u);
    EXPECT_DOUBLE_EQ(lat->max(), miss);  // no request waited for a slot
}

TEST(LinkDma, OneOutstandingTranslationIsSerial) {
    AtcConfig c;
    c.max_outstanding = 1;
    Bench b(true, c);
    map_scattered(b);
    const DmaResult r = b.run(DmaDirection::HostToDevice, kVirt, kDev, 8 * kPage);
    ASSERT_TRUE(r.ok) << r.error;
    // Page k is translated only after page k - 1 moved: 8 x (miss + piece), as a blocking ATC.
    const double miss = 20 + 1136 + 617, piece = 100 + 10, setup = Bench::read_fixed_ns();
    EXPECT_DOUBLE_EQ(r.translation_ns, 8 * miss);
    EXPECT_DOUBLE_EQ(r.latency_ns, setup + 8 * (miss + piece));
    for (uint64_t i = 0; i < 8; ++i)
        EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev + i * kPage),
                                 b.host_mem.at(kHost + (7 - i) * kPage), kPage))
            << i;
    // Warm, every lookup hits and still waits for the previous page: 8 x (hit + piece).
    const DmaResult w = b.run(DmaDirection::HostToDevice, kVirt, kDev, 8 * kPage);
    EXPECT_DOUBLE_EQ(w.latency_ns, setup + 8 * (20 + piece));
}

TEST(LinkDma, TwoOutstandingTranslationsOverlapPartly) {
    AtcConfig c;
    c.max_outstanding = 2;
    Bench b(true, c);
    map_scattered(b);
    const DmaResult r = b.run(DmaDirection::HostToDevice, kVirt, kDev, 8 * kPage);
    ASSERT_TRUE(r.ok) << r.error;
    const double miss = 20 + 1136 + 617, piece = 100 + 10, setup = Bench::read_fixed_ns();
    // Page k + 2 is looked up when page k has moved, so a miss (1773 ns) overlaps one piece
    // (110 ns) at most: between the blocking and the fully overlapped cases.
    EXPECT_LT(r.latency_ns, setup + 8 * (miss + piece));
    EXPECT_GT(r.latency_ns, setup + miss + 8 * piece);
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev + 7 * kPage), b.host_mem.at(kHost), kPage));
}

TEST(LinkDma, FailedLookAheadTranslationEndsAtItsPage) {
    Bench b(true);
    for (uint64_t i = 0; i < 3; ++i) b.iommu->map(kVirt + i * kPage, kHost + i * kPage, kPage);
    // Page 3 is unmapped: pages 0-2 move, then the descriptor fails; no lookup after it.
    const DmaResult r = b.run(DmaDirection::HostToDevice, kVirt, kDev, 6 * kPage);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.bytes_done, 3 * kPage);
    EXPECT_EQ(r.translations, 4u);
    EXPECT_EQ(b.iommu->requests.size(), 4u);
    EXPECT_NE(r.error.find("failed"), std::string::npos) << r.error;
}

TEST(LinkDma, ReportsErrorsPerDescriptor) {
    Bench b(true);
    b.iommu->map(kVirt, kHost, kPage);  // the next page is unmapped
    DmaResult r = b.run(DmaDirection::HostToDevice, kVirt + 0xF00, kDev, 0x200);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.bytes_done, 0x100u);  // the first page's part moved
    EXPECT_NE(r.error.find("descriptor 0"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("failed"), std::string::npos) << r.error;
    r = b.run(DmaDirection::HostToDevice, kVirt, kDev + 64 * 1024 - 16, 64);  // past device memory
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("device write"), std::string::npos) << r.error;
    r = b.run(DmaDirection::DeviceToHost, kVirt, kDev, 0);
    EXPECT_FALSE(r.ok);
    r = b.run(DmaDirection::DeviceToHost, kVirt, kDev, 64);  // the engine carries on
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(static_cast<const core::Counter*>(b.services.stats.find("dma", "errors"))->value(),
              3u);
    EXPECT_EQ(b.dma.results().size(), 4u);
}

TEST(LinkDma, HostBusErrorEndsDescriptor) {
    Bench b(false);
    const DmaResult r =
        b.run(DmaDirection::DeviceToHost, kHost + 64 * 1024 - kPage, kDev, 2 * kPage);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.bytes_done, kPage);
    EXPECT_NE(r.error.find("host write"), std::string::npos) << r.error;
}

TEST(LinkDma, ThroughTheLinkDataIntact) {
    core::Services s;
    PcieLink link("link", PcieConfig(), s);
    DmaEngine dma("dma", DmaConfig(), s);
    FakeMemory host_mem("host_mem", kHost, 64 * 1024, 100), dev_mem("dev_mem", kDev, 64 * 1024);
    FakeMemory mmio("mmio", 0, 4096);  // the device's side of host -> device requests, unused
    testing::FakeInitiator host_cpu("host_cpu");
    dma.host_initiator.bind(link.device_target);
    dma.device_initiator.bind(dev_mem.socket);
    link.host_initiator.bind(host_mem.socket);
    link.device_initiator.bind(mmio.socket);
    host_cpu.socket.bind(link.host_target);
    sc_core::sc_start(SC_ZERO_TIME);
    sc_time d = SC_ZERO_TIME;
    DmaResult r = dma.execute({DmaDirection::HostToDevice, kHost + 0x123, kDev, 5000}, d);
    ASSERT_TRUE(r.ok) << r.error << " / " << link.last_error();
    EXPECT_EQ(0, std::memcmp(dev_mem.at(kDev), host_mem.at(kHost + 0x123), 5000));
    EXPECT_GT(r.latency_ns, 2 * 180);  // at least one round trip per piece
    for (uint64_t i = 0; i < 3000; ++i) *dev_mem.at(kDev + 0x4000 + i) = uint8_t(i * 31);
    r = dma.execute({DmaDirection::DeviceToHost, kHost + 0x8000 - 7, kDev + 0x4000, 3000}, d);
    ASSERT_TRUE(r.ok) << r.error << " / " << link.last_error();
    EXPECT_EQ(0, std::memcmp(host_mem.at(kHost + 0x8000 - 7), dev_mem.at(kDev + 0x4000), 3000));
    EXPECT_EQ(static_cast<const core::Counter*>(s.stats.find("link", "reads"))->value(), 2u);
}

}  // namespace
}  // namespace canopy::link
