// The device's ATC (models/link/atc.hpp): the ATS completion-entry encoding, hit and miss
// latency, LRU replacement, page-size-aware entries, invalidation, failed translations, and an
// ATS request crossing the PCIe link. Each TEST runs in its own process (gtest_discover_tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <systemc>

#include "core/error.hpp"
#include "core/services.hpp"
#include "device_fakes.hpp"
#include "link/atc.hpp"
#include "link/dma_engine.hpp"
#include "link/pcie_link.hpp"
#include "link/traffic_generator.hpp"

namespace canopy::link {
namespace {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using testing::FakeTranslator;
using testing::ns;

constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

struct Bench {
    core::Services services;
    Atc atc;
    FakeTranslator iommu;
    explicit Bench(const AtcConfig& c = AtcConfig()) : atc("atc", c, services), iommu("iommu") {
        atc.ats_initiator.bind(iommu.socket);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    Atc::Result translate(uint64_t va, double* latency_ns = nullptr) {
        sc_time d = SC_ZERO_TIME;
        Atc::Result r = atc.translate(va, d);
        if (latency_ns) *latency_ns = ns(d);
        return r;
    }
    uint64_t stat(const char* name) const {
        return static_cast<const core::Counter*>(services.stats.find("atc", name))->value();
    }
};

AtcConfig fully_associative(uint32_t entries) {
    AtcConfig c;
    c.entries = c.ways = entries;
    return c;
}

TEST(LinkAtcEntry, EncodingRoundTripsEveryPageSize) {
    for (uint64_t size : atc_page_sizes()) {
        AtsEntry e{7 * size, size, true, false};
        const uint64_t raw = e.encode();
        EXPECT_EQ(bool(raw & (1u << 11)), size > 4 * kKiB) << size;
        const AtsEntry d = AtsEntry::decode(raw);
        EXPECT_EQ(d.physical_page, 7 * size);
        EXPECT_EQ(d.page_bytes, size);
        EXPECT_TRUE(d.read);
        EXPECT_FALSE(d.write);
    }
    // PCIe 10.2.3: an 8 KiB page has S = 1 and bit 12 = 0; 2 MiB has bits 12..19 set, bit 20 clear.
    const AtsEntry huge{0x4000'0000, 2 * kMiB, true, true};
    EXPECT_EQ(huge.encode(), 0x4000'0000u | 0xFF000 | 0x803);
    EXPECT_FALSE(AtsEntry::decode(0x1234'5000).success());
}

TEST(LinkAtc, MissCostsRoundTripHitCostsLookup) {
    Bench b;
    b.iommu.map(0x7000'0000, 0x1234'5000, 4 * kKiB);
    double miss = 0, hit = 0;
    Atc::Result r = b.translate(0x7000'0abc, &miss);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_FALSE(r.hit);
    EXPECT_EQ(r.physical, 0x1234'5abcu);
    EXPECT_EQ(r.page_end, 0x7000'1000u);
    // lookup 20 + ATC overhead 1136 + the IOMMU's 617: the paper's 1773 ns of ATS cost (E2).
    EXPECT_DOUBLE_EQ(miss, 20 + 1136 + 617);
    r = b.translate(0x7000'0ff8, &hit);
    ASSERT_TRUE(r.ok);
    EXPECT_TRUE(r.hit);
    EXPECT_EQ(r.physical, 0x1234'5ff8u);
    EXPECT_DOUBLE_EQ(hit, 20);
    ASSERT_EQ(b.iommu.requests.size(), 1u);
    EXPECT_TRUE(b.iommu.requests[0].ats);
    EXPECT_EQ(b.iommu.requests[0].address, 0x7000'0000u);  // 4 KiB aligned
    EXPECT_EQ(b.iommu.requests[0].length, kAtsEntryBytes);
    EXPECT_EQ(b.stat("lookups"), 2u);
    EXPECT_EQ(b.stat("hits"), 1u);
    EXPECT_EQ(b.stat("misses"), 1u);
    const auto* lat =
        static_cast<const core::Distribution*>(b.services.stats.find("atc", "latency"));
    EXPECT_EQ(lat->count(), 2u);
    EXPECT_DOUBLE_EQ(lat->max(), 1773);
}

TEST(LinkAtc, ReplacesLeastRecentlyUsed) {
    Bench b(fully_associative(2));
    for (uint64_t p = 0; p < 3; ++p) b.iommu.map(p * 4 * kKiB, 0x10'0000 + p * 4 * kKiB, 4 * kKiB);
    b.translate(0x0000);  // A
    b.translate(0x1000);  // B
    b.translate(0x0000);  // A again: B is now least recently used
    b.translate(0x2000);  // C evicts B
    EXPECT_TRUE(b.atc.contains(0x0000));
    EXPECT_FALSE(b.atc.contains(0x1000));
    EXPECT_TRUE(b.atc.contains(0x2000));
    EXPECT_EQ(b.stat("evictions"), 1u);
    b.translate(0x1000);  // B evicts A (C was used more recently)
    EXPECT_FALSE(b.atc.contains(0x0000));
    EXPECT_TRUE(b.atc.contains(0x2000));
}

TEST(LinkAtc, SetAssociativeEvictsOnlyWithinTheSet) {
    AtcConfig c;
    c.entries = 4;
    c.ways = 2;  // two sets: even pages in set 0, odd in set 1
    Bench b(c);
    EXPECT_EQ(b.atc.sets(), 2u);
    for (uint64_t p = 0; p < 8; ++p) b.iommu.map(p * 4 * kKiB, 0x10'0000 + p * 4 * kKiB, 4 * kKiB);
    b.translate(0x1000);  // set 1
    b.translate(0x0000);  // set 0
    b.translate(0x2000);  // set 0
    b.translate(0x4000);  // set 0: evicts page 0, page 1 stays
    EXPECT_TRUE(b.atc.contains(0x1000));
    EXPECT_FALSE(b.atc.contains(0x0000));
    EXPECT_TRUE(b.atc.contains(0x2000));
    EXPECT_TRUE(b.atc.contains(0x4000));
}

TEST(LinkAtc, HugePageEntryCoversWholePage) {
    Bench b(fully_associative(4));
    b.iommu.map(0x4000'0000, 0x8'0020'0000, 2 * kMiB);
    b.iommu.map(0x8000'0000, 0x40'0000'0000, 1 * kGiB);
    b.iommu.map(0x0100'0000, 0x0200'0000, 64 * kKiB);
    Atc::Result r = b.translate(0x4000'1234);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.page_bytes, 2 * kMiB);
    EXPECT_EQ(r.page_end, 0x4020'0000u);
    for (uint64_t off : {0ull, 0x1000ull, 0xF'F000ull, 0x1F'FFFFull}) {
        r = b.translate(0x4000'0000 + off);
        EXPECT_TRUE(r.hit) << off;
        EXPECT_EQ(r.physical, 0x8'0020'0000u + off);
    }
    EXPECT_FALSE(b.atc.contains(0x4020'0000));  // the next huge page is not covered
    r = b.translate(0x8000'0000 + 0x3FFF'FFF0);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.physical, 0x40'3FFF'FFF0u);
    EXPECT_TRUE(b.translate(0x8000'0010).hit);
    EXPECT_TRUE(b.translate(0x0100'0000).ok);
    EXPECT_TRUE(b.translate(0x0100'FFFF).hit);
    EXPECT_FALSE(b.atc.contains(0x0101'0000));
    EXPECT_EQ(b.iommu.requests.size(), 3u);
}

TEST(LinkAtc, InvalidatesOnePageOrAll) {
    Bench b;
    b.iommu.map(0x0000, 0x10'0000, 4 * kKiB);
    b.iommu.map(0x1000, 0x20'0000, 4 * kKiB);
    b.iommu.map(0x20'0000, 0x60'0000, 2 * kMiB);
    b.translate(0x0000);
    b.translate(0x1000);
    b.translate(0x20'0000);
    EXPECT_TRUE(b.atc.invalidate(0x0010));
    EXPECT_FALSE(b.atc.invalidate(0x0010));  // already gone
    EXPECT_FALSE(b.atc.contains(0x0000));
    EXPECT_TRUE(b.atc.contains(0x1000));
    EXPECT_TRUE(b.atc.invalidate(0x3F'0000));  // any address of the huge page drops it
    EXPECT_FALSE(b.atc.contains(0x20'0000));
    b.iommu.map(0x0000, 0x30'0000, 4 * kKiB);  // remapped: the next lookup asks the host again
    double miss = 0;
    EXPECT_EQ(b.translate(0x0008, &miss).physical, 0x30'0008u);
    EXPECT_GT(miss, 1000);
    b.atc.invalidate_all();
    EXPECT_FALSE(b.atc.contains(0x0000));
    EXPECT_FALSE(b.atc.contains(0x1000));
    EXPECT_EQ(b.stat("invalidations"), 4u);
}

TEST(LinkAtc, FailedTranslationIsAnErrorNotCached) {
    Bench b;
    Atc::Result r = b.translate(0xDEAD'0000);  // unmapped: R = W = 0
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("failed"), std::string::npos) << r.error;
    EXPECT_FALSE(b.atc.contains(0xDEAD'0000));
    b.iommu.map(0xDEAD'0000, 0x5000, 4 * kKiB);
    b.iommu.error_response = true;  // the completer answers with an error status
    r = b.translate(0xDEAD'0000);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("answered"), std::string::npos) << r.error;
    b.iommu.error_response = false;
    EXPECT_TRUE(b.translate(0xDEAD'0000).ok);
    EXPECT_EQ(b.stat("failures"), 2u);
    EXPECT_EQ(b.stat("misses"), 3u);
    EXPECT_EQ(b.iommu.requests.size(), 3u);
}

TEST(LinkAtc, MissesWaitForAFreeRequestSlot) {
    AtcConfig one;
    one.max_outstanding = 1;
    Bench b(one);
    for (uint64_t p = 0; p < 3; ++p) b.iommu.map(p * 4 * kKiB, 0x10'0000 + p * 4 * kKiB, 4 * kKiB);
    double first = 0, second = 0, hit = 0;
    b.translate(0x0000, &first);   // both issued at time 0
    b.translate(0x1000, &second);  // waits until the first's answer frees the only slot
    EXPECT_DOUBLE_EQ(first, 1773);
    EXPECT_DOUBLE_EQ(second, 1773 + (1136 + 617));
    b.translate(0x0000, &hit);  // a hit needs no slot
    EXPECT_DOUBLE_EQ(hit, 20);
}

TEST(LinkAtc, TwoSlotsOverlapTwoMisses) {
    AtcConfig two;
    two.max_outstanding = 2;
    Bench b(two);
    for (uint64_t p = 0; p < 3; ++p) b.iommu.map(p * 4 * kKiB, 0x10'0000 + p * 4 * kKiB, 4 * kKiB);
    double l[3] = {};
    for (uint64_t p = 0; p < 3; ++p) b.translate(p * 4 * kKiB, &l[p]);  // all at time 0
    EXPECT_DOUBLE_EQ(l[0], 1773);
    EXPECT_DOUBLE_EQ(l[1], 1773);                 // in flight beside the first
    EXPECT_DOUBLE_EQ(l[2], 1773 + (1136 + 617));  // the third waits for a slot
}

TEST(LinkAtc, RejectsEntriesNotAMultipleOfWays) {
    core::Services s;
    AtcConfig c;
    c.entries = 6;
    c.ways = 4;
    EXPECT_THROW(Atc("atc", c, s), InputError);
    AtcConfig none;
    none.max_outstanding = 0;
    EXPECT_THROW(none.validate(), InputError);
}

TEST(LinkAtc, TranslationRequestCrossesTheLink) {
    core::Services s;
    PcieLink link("link", PcieConfig(), s);
    Atc atc("atc", AtcConfig(), s);
    FakeTranslator iommu("iommu", 617);
    testing::FakeMemory device_mem("device_mem", 0, 4096);
    testing::FakeInitiator host_cpu("host_cpu");
    atc.ats_initiator.bind(link.device_target);
    link.host_initiator.bind(iommu.socket);
    link.device_initiator.bind(device_mem.socket);
    host_cpu.socket.bind(link.host_target);
    sc_core::sc_start(SC_ZERO_TIME);
    iommu.map(0x7000'0000, 0x9000'0000, 2 * kMiB);
    sc_time d = SC_ZERO_TIME;
    const Atc::Result r = atc.translate(0x7001'0000, d);
    ASSERT_TRUE(r.ok) << r.error << " / " << link.last_error();
    EXPECT_EQ(r.physical, 0x9001'0000u);
    ASSERT_EQ(iommu.requests.size(), 1u);
    EXPECT_TRUE(iommu.requests[0].ats);
    // Up the link and back: more than the lookup, overhead and IOMMU alone.
    EXPECT_GT(ns(d), 20 + 1136 + 617 + 2 * 180);
    EXPECT_EQ(static_cast<const core::Counter*>(s.stats.find("link", "ats"))->value(), 1u);
}

TEST(LinkAtcConfig, DescribesDeviceSideKeys) {
    AtcConfig atc;
    DmaConfig dma;
    CtgConfig ctg;
    core::ConfigSource src;
    src.set("link.atc.entries=128");
    src.set("link.dma.translate=true");
    src.set("link.ctg.issue_ns=5");
    core::Params p(&src);
    atc.describe(p);
    dma.describe(p);
    ctg.describe(p);
    const auto keys = p.keys();
    for (const char* k :
         {"link.atc.entries", "link.atc.ways", "link.atc.hit_latency_ns",
          "link.atc.miss_overhead_ns", "link.atc.max_outstanding", "link.dma.translate",
          "link.dma.max_burst_bytes", "link.dma.setup_ns", "link.dma.read_completion_ns",
          "link.dma.pieces_in_flight", "link.ctg.device_buffer_address", "link.ctg.issue_ns"})
        EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
    EXPECT_EQ(atc.entries, 128u);
    EXPECT_TRUE(dma.translate);
    EXPECT_DOUBLE_EQ(ctg.issue_ns, 5.0);
    EXPECT_NO_THROW(atc.validate());
}

TEST(LinkAtc, RefusesUnsupportedPageSize) {
    Bench b;
    b.iommu.map(0x10'0000, 0x20'0000, 8 * kKiB);  // 8 KiB: legal in ATS, not held by this ATC
    const Atc::Result r = b.translate(0x10'0000);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("unsupported page size"), std::string::npos) << r.error;
    EXPECT_EQ(b.stat("failures"), 1u);
}

}  // namespace
}  // namespace canopy::link
