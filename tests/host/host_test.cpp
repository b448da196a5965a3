// Host-side memory translation: host DRAM, the kernel's frame allocator and page tables in host
// memory, and the IOMMU answering ATS requests (seeds/003 Section IV; CALIBRATION E2).
// Each TEST runs in its own process (gtest_discover_tests), so each elaborates its own modules;
// a Bench finishes elaboration with sc_start(SC_ZERO_TIME) and then calls from sc_main.
#include <gtest/gtest.h>

#include <cstring>
#include <systemc>
#include <tlm>
#include <vector>

#include "host/host_memory.hpp"
#include "host/iommu.hpp"
#include "host/page_table.hpp"

namespace canopy::host {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

HostMemoryConfig small_memory(uint64_t bytes = 64 * kMiB) {
    HostMemoryConfig c;
    c.size_bytes = bytes;
    return c;
}

struct Bench {
    core::Services services;
    HostMemory mem;
    FrameAllocator frames;
    AddressSpace space;
    Iommu iommu;
    static constexpr uint32_t kPasid = 7;

    explicit Bench(const IommuConfig& ic = IommuConfig{},
                   const HostMemoryConfig& mc = HostMemoryConfig{})
        : mem("mem", mc, services),
          frames(mc.size_bytes),
          space(mem, frames),
          iommu("iommu", ic, services) {
        iommu.walk_socket.bind(mem.socket);
        iommu.attach(kPasid, space);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    AtsResult ats(uint64_t va, double* latency_ns = nullptr) {
        sc_time d = SC_ZERO_TIME;
        AtsResult r = iommu.translate(kPasid, va, d);
        if (latency_ns) *latency_ns = ns(d);
        return r;
    }
    uint64_t counter(const char* name) {
        auto* s = dynamic_cast<const core::Counter*>(services.stats.find("iommu", name));
        return s ? s->value() : ~0ull;
    }
};

// --- host memory ---

TEST(HostMemory, BytesRoundTripSparse) {
    core::Services s;
    HostMemory mem("mem", small_memory(), s);
    EXPECT_EQ(mem.read64(12345 * 8), 0u);  // never written: zeros, nothing allocated
    EXPECT_EQ(mem.allocated_chunks(), 0u);
    std::vector<uint8_t> in(200000), out(200000);
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 31 + 7);
    mem.write(3 * kMiB - 1000, in.data(), in.size());  // crosses chunks
    mem.read(3 * kMiB - 1000, out.data(), out.size());
    EXPECT_EQ(in, out);
    EXPECT_EQ(mem.allocated_chunks(), 5u);
    mem.write64(8, 0x1122334455667788ull);
    EXPECT_EQ(mem.read64(8), 0x1122334455667788ull);
}

TEST(HostMemory, TlmTransportLatencyDmiAndAddressError) {
    core::Services s;
    HostMemoryConfig c = small_memory();
    c.latency_ns = 90;
    HostMemory mem("mem", c, s);
    struct Init : sc_core::sc_module {
        tlm_utils::simple_initiator_socket<Init> socket{"socket"};
        explicit Init(sc_core::sc_module_name n) : sc_module(n) {}
    } init("init");
    init.socket.bind(mem.socket);
    sc_core::sc_start(SC_ZERO_TIME);

    uint8_t data[16];
    for (int i = 0; i < 16; ++i) data[i] = uint8_t(0xa0 + i);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(5000);
    gp.set_data_ptr(data);
    gp.set_data_length(16);
    gp.set_streaming_width(16);
    sc_time d = SC_ZERO_TIME;
    init.socket->b_transport(gp, d);
    EXPECT_TRUE(gp.is_response_ok());
    EXPECT_DOUBLE_EQ(ns(d), 90.0);
    uint8_t back[16] = {};
    mem.read(5000, back, 16);
    EXPECT_EQ(0, std::memcmp(back, data, 16));

    tlm::tlm_dmi dmi;
    gp.set_address(5000);
    ASSERT_TRUE(init.socket->get_direct_mem_ptr(gp, dmi));
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), HostMemory::kChunkBytes - 1);
    EXPECT_EQ(dmi.get_dmi_ptr()[5000], 0xa0);
    gp.set_address(10 * kMiB);  // untouched: no DMI
    EXPECT_FALSE(init.socket->get_direct_mem_ptr(gp, dmi));

    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(64 * kMiB - 8);  // straddles the end
    d = SC_ZERO_TIME;
    init.socket->b_transport(gp, d);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_THROW(mem.read64(64 * kMiB), std::out_of_range);
}

// --- frame allocator ---

TEST(HostAllocator, ExhaustionIsReportedClearly) {
    FrameAllocator f(1 * kMiB);  // 256 frames, frame 0 reserved
    EXPECT_EQ(f.free_bytes(), 1 * kMiB - kPage4K);
    std::vector<uint64_t> got;
    for (int i = 0; i < 255; ++i) got.push_back(f.allocate(kPage4K));
    EXPECT_EQ(f.free_bytes(), 0u);
    try {
        f.allocate(kPage4K);
        FAIL() << "no error";
    } catch (const HostKernelError& e) {
        EXPECT_NE(std::string(e.what()).find("exhausted"), std::string::npos) << e.what();
    }
    f.free(got[10], kPage4K);
    EXPECT_EQ(f.allocate(kPage4K), got[10]);
    f.free(got[3], kPage4K);
    EXPECT_THROW(f.free(got[3], kPage4K), HostKernelError);      // double free
    EXPECT_THROW(f.free(got[2], 2 * kPage4K), HostKernelError);  // got[3] already free
    EXPECT_EQ(f.allocate(kPage4K), got[3]);                      // the refused free changed nothing
    EXPECT_EQ(f.free_bytes(), 0u);
}

TEST(HostAllocator, HugePagesAreContiguousAndAligned) {
    FrameAllocator f(256 * kMiB);
    uint64_t small = f.allocate(kPage4K);
    EXPECT_NE(small, 0u);  // frame 0 reserved
    uint64_t m2 = f.allocate(kPage2M, kPage2M);
    EXPECT_EQ(m2 % kPage2M, 0u);
    EXPECT_GE(m2, kPage2M);
    uint64_t k64 = f.allocate(kPage64K, kPage64K);
    EXPECT_EQ(k64 % kPage64K, 0u);
    uint64_t m32 = f.allocate(kPage32M, kPage32M);
    EXPECT_EQ(m32 % kPage32M, 0u);
    // No 1 GiB-aligned run exists in 256 MiB.
    EXPECT_THROW(f.allocate(kPage1G, kPage1G), HostKernelError);
    EXPECT_THROW(f.allocate(5000), HostKernelError);  // not whole frames
}

// --- page tables ---

struct Kernel {
    core::Services services;
    HostMemory mem;
    FrameAllocator frames;
    AddressSpace space;
    explicit Kernel(uint64_t bytes = 4 * kGiB)
        : mem("mem", small_memory(bytes), services), frames(bytes), space(mem, frames) {}
};

TEST(HostPageTable, MapTranslateUnmapEverySize) {
    Kernel k;
    for (uint64_t size : page_sizes()) {
        SCOPED_TRACE(size);
        uint64_t va = 0x7f0000000000ull + 3 * kPage1G;  // 1 GiB aligned
        uint64_t pa = k.frames.allocate(size, size);
        k.space.map(va, pa, size);
        for (uint64_t off : {uint64_t(0), size / 2 + 8, size - 1}) {
            auto t = k.space.translate(va + off);
            ASSERT_TRUE(t);
            EXPECT_EQ(t->pa, pa + off);
            EXPECT_EQ(t->page_bytes, size);
            EXPECT_EQ(t->va_base, va);
            EXPECT_EQ(t->pa_base, pa);
        }
        // Page-size boundaries: the byte before and after are not mapped.
        EXPECT_FALSE(k.space.translate(va - 1));
        EXPECT_FALSE(k.space.translate(va + size));
        Translation gone = k.space.unmap(va + size - 1);
        EXPECT_EQ(gone.page_bytes, size);
        EXPECT_FALSE(k.space.translate(va));
        EXPECT_FALSE(k.space.translate(va + size - 1));
        k.frames.free(pa, size);
    }
}

TEST(HostPageTable, ContiguousRunsAreSixteenDescriptors) {
    Kernel k;
    uint64_t va = 0x10000000000ull;
    uint64_t pa = k.frames.allocate(kPage64K, kPage64K);
    k.space.map(va, pa, kPage64K);
    // 16 level-3 descriptors, each with the contiguous bit and its own frame.
    for (unsigned i = 0; i < 16; ++i) {
        uint64_t d = k.mem.read64(*k.space.descriptor_address(va + i * kPage4K, 3));
        EXPECT_TRUE(d & pte::kContiguous);
        EXPECT_EQ(d & pte::kAddrMask, pa + i * kPage4K);
    }
    EXPECT_EQ(k.mem.read64(*k.space.descriptor_address(va + kPage64K, 3)), 0u);
    uint64_t va2 = va + kPage1G;
    uint64_t pa2 = k.frames.allocate(kPage32M, kPage32M);
    k.space.map(va2, pa2, kPage32M);
    for (unsigned i = 0; i < 16; ++i) {
        uint64_t d = k.mem.read64(*k.space.descriptor_address(va2 + i * kPage2M, 2));
        EXPECT_TRUE(d & pte::kContiguous);
        EXPECT_FALSE(d & pte::kTable);  // block
    }
    auto t = k.space.translate(va2 + 17 * kMiB + 5);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->pa, pa2 + 17 * kMiB + 5);
    EXPECT_EQ(t->page_bytes, kPage32M);
    // Overlap and misalignment are refused.
    EXPECT_THROW(k.space.map(va + kPage4K, pa, kPage4K), HostKernelError);
    EXPECT_THROW(k.space.map(va2 + 3 * kPage2M, pa2, kPage2M), HostKernelError);
    EXPECT_THROW(k.space.map(va + kPage4K * 16 + kPage4K, pa, kPage64K), HostKernelError);
    EXPECT_THROW(k.space.map(va, pa, 8 * kKiB), HostKernelError);
}

TEST(HostPageTable, MmapPinAndMunmap) {
    Kernel k(256 * kMiB);
    uint64_t free0 = k.frames.free_bytes();
    uint64_t va = k.space.mmap(5 * kPage2M - 1, kPage2M);
    EXPECT_EQ(va % kPage2M, 0u);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(k.space.translate(va + i * kPage2M));
    EXPECT_FALSE(k.space.translate(va + 5 * kPage2M));
    k.space.pin(va, 5 * kPage2M);
    EXPECT_TRUE(k.space.translate(va + kPage2M)->pinned);
    EXPECT_THROW(k.space.unmap(va + kPage2M), HostKernelError);
    k.space.pin(va, 5 * kPage2M, false);
    k.space.munmap(va, 5 * kPage2M);
    EXPECT_FALSE(k.space.translate(va));
    // Only the page-table frames remain allocated.
    EXPECT_GT(k.frames.free_bytes(), free0 - 4 * kPage4K);
    // Once 4 KiB pages are gone, a 2 MiB block may replace their emptied table.
    uint64_t small = k.space.mmap(kPage4K);
    uint64_t base = small & ~(kPage2M - 1);
    k.space.munmap(small, kPage4K);
    k.space.map(base, k.frames.allocate(kPage2M, kPage2M), kPage2M);
    EXPECT_EQ(k.space.translate(small)->page_bytes, kPage2M);
    EXPECT_THROW(k.space.mmap(512 * kMiB, kPage2M), HostKernelError);  // more than memory
}

// --- IOMMU ---

TEST(HostIommu, WalkReadsTheTablesInHostMemory) {
    Bench b;
    uint64_t va = b.space.mmap(kPage4K);
    uint64_t pa = b.space.translate(va)->pa;
    // Corrupt the level-3 descriptor in memory: point it at another frame.
    uint64_t other = b.frames.allocate(kPage4K);
    uint64_t at = *b.space.descriptor_address(va, 3);
    b.mem.write64(at, (b.mem.read64(at) & ~pte::kAddrMask) | other);
    AtsResult r = b.ats(va + 0x123);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.pa, other + 0x123);
    EXPECT_NE(r.pa, pa + 0x123);
    EXPECT_EQ(r.walk_reads, 4u);
    // Clearing the level-1 descriptor makes the walk fail after 2 reads.
    b.iommu.invalidate_all();
    b.mem.write64(*b.space.descriptor_address(va, 1), 0);
    r = b.ats(va);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.walk_reads, 2u);
}

TEST(HostIommu, MissCalibratedTo617ns) {
    Bench b;  // defaults: 217 ns processing + 4 x 100 ns DRAM reads
    uint64_t va = b.space.mmap(kPage4K);
    double miss = 0, hit = 0;
    AtsResult r = b.ats(va, &miss);
    ASSERT_TRUE(r.ok);
    EXPECT_FALSE(r.iotlb_hit);
    EXPECT_NEAR(miss, 617.0, 617.0 * 0.05);  // CALIBRATION E2, within 5%
    r = b.ats(va + 64, &hit);
    EXPECT_TRUE(r.iotlb_hit);
    EXPECT_DOUBLE_EQ(hit, 217.0);
    EXPECT_LT(hit, miss);
    EXPECT_EQ(b.counter("requests"), 2u);
    EXPECT_EQ(b.counter("iotlb_hits"), 1u);
    EXPECT_EQ(b.counter("iotlb_misses"), 1u);
    auto* wl =
        dynamic_cast<const core::Distribution*>(b.services.stats.find("iommu", "latency.walk"));
    ASSERT_NE(wl, nullptr);
    EXPECT_EQ(wl->count(), 1u);
}

TEST(HostIommu, HugePagesWalkFewerLevels) {
    Bench b;
    double t2m = 0, t1g = 0;
    AtsResult r = b.ats(b.space.mmap(kPage2M, kPage2M), &t2m);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.walk_reads, 3u);
    EXPECT_DOUBLE_EQ(t2m, 517.0);
    r = b.ats(b.space.mmap(kPage1G, kPage1G) + 12345, &t1g);
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.walk_reads, 2u);
    EXPECT_EQ(r.page_bytes, kPage1G);
    EXPECT_DOUBLE_EQ(t1g, 417.0);
    // One IOTLB entry covers the whole 64 KiB run.
    uint64_t va = b.space.mmap(kPage64K, kPage64K);
    EXPECT_FALSE(b.ats(va).iotlb_hit);
    r = b.ats(va + kPage64K - 1);
    EXPECT_TRUE(r.iotlb_hit);
    EXPECT_EQ(r.page_bytes, kPage64K);
}

TEST(HostIommu, SmallIotlbReplacesLeastRecentlyUsed) {
    IommuConfig c;
    c.iotlb_entries = 2;
    c.iotlb_ways = 2;  // one set
    c.prefetch_pages = 0;
    Bench b(c);
    uint64_t va = b.space.mmap(4 * kPage4K);
    uint64_t p0 = va, p1 = va + kPage4K, p2 = va + 2 * kPage4K;
    b.ats(p0);
    b.ats(p1);
    EXPECT_TRUE(b.ats(p0).iotlb_hit);  // p1 is now least recently used
    EXPECT_FALSE(b.ats(p2).iotlb_hit);
    EXPECT_TRUE(b.iommu.iotlb_contains(Bench::kPasid, p0));
    EXPECT_FALSE(b.iommu.iotlb_contains(Bench::kPasid, p1));
    EXPECT_FALSE(b.ats(p1).iotlb_hit);
}

TEST(HostIommu, UnmapInvalidatesTheIotlb) {
    Bench b;
    uint64_t va = b.space.mmap(2 * kPage4K);
    ASSERT_TRUE(b.ats(va).ok);
    EXPECT_TRUE(b.iommu.iotlb_contains(Bench::kPasid, va));
    b.space.munmap(va, kPage4K);  // the host unmaps: the IOMMU hears of it
    EXPECT_FALSE(b.iommu.iotlb_contains(Bench::kPasid, va));
    EXPECT_TRUE(b.iommu.iotlb_contains(Bench::kPasid, va + kPage4K));  // prefetched, kept
    EXPECT_FALSE(b.ats(va).ok);
    b.iommu.invalidate(Bench::kPasid, va, 2 * kPage4K);
    EXPECT_FALSE(b.iommu.iotlb_contains(Bench::kPasid, va + kPage4K));
    EXPECT_GE(b.counter("invalidations"), 2u);
}

TEST(HostIommu, PrefetchMakesNextSequentialPageAHit) {
    Bench b;  // prefetch_pages = 1
    uint64_t va = b.space.mmap(8 * kPage4K);
    double first = 0, later = 0;
    EXPECT_FALSE(b.ats(va, &first).iotlb_hit);
    for (int i = 1; i < 8; ++i) {
        AtsResult r = b.ats(va + i * kPage4K, &later);
        EXPECT_TRUE(r.iotlb_hit) << "page " << i;
        EXPECT_LT(later, first);
    }
    EXPECT_EQ(b.counter("prefetches"), 7u);  // the 8th page's successor is unmapped
}

TEST(HostIommu, NoPrefetchMeansEveryNewPageMisses) {
    IommuConfig c;
    c.prefetch_pages = 0;
    Bench b(c);
    uint64_t va = b.space.mmap(4 * kPage4K);
    for (int i = 0; i < 4; ++i) EXPECT_FALSE(b.ats(va + i * kPage4K).iotlb_hit);
    EXPECT_EQ(b.counter("prefetches"), 0u);
}

TEST(HostIommu, UnmappedAddressIsAnAtsFailure) {
    Bench b;
    double t = 0;
    AtsResult r = b.ats(0x123456789000ull, &t);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.walk_reads, 1u);  // the level-0 descriptor is invalid
    EXPECT_DOUBLE_EQ(t, 317.0);
    sc_time d = SC_ZERO_TIME;
    EXPECT_FALSE(b.iommu.translate(99, 0x1000, d).ok);  // unknown PASID
    EXPECT_FALSE(b.ats(1ull << 50).ok);                 // beyond 48-bit VA
    EXPECT_EQ(b.counter("failures"), 3u);
}

TEST(HostIommu, ConfigDescribesAndValidates) {
    IommuConfig c;
    core::Params p;
    c.describe(p);
    EXPECT_EQ(p.infos().size(), 4u);
    c.iotlb_entries = 10;
    c.iotlb_ways = 4;
    EXPECT_THROW(c.validate(), std::exception);
    HostMemoryConfig m;
    core::Params q;
    m.describe(q);
    EXPECT_EQ(q.infos().size(), 2u);
}

}  // namespace
}  // namespace canopy::host
