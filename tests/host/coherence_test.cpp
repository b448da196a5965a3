// The coherent host: cache arrays, far atomics, the home node with its snoop filter and SLC, the
// cores' private caches, MMU and programs, the kernel's services, and I/O-coherent DMA.
// Expected latencies are built from the configured component latencies (the protocol's path),
// never from a run's output. Each TEST is its own process.
#include <gtest/gtest.h>

#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <memory>
#include <systemc>
#include <vector>

#include "core/cache_array.hpp"
#include "core/coherence.hpp"
#include "core/error.hpp"
#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"

namespace canopy::host {
namespace {

using core::LineState;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

// A device BAR: 4 KiB of registers answering after a fixed latency, recording accesses.
struct FakeBar : sc_core::sc_module {
    tlm_utils::simple_target_socket<FakeBar> socket;
    std::vector<uint8_t> regs = std::vector<uint8_t>(4096);
    std::vector<uint64_t> addresses;
    double latency_ns = 500;
    uint64_t base = 0;
    FakeBar(sc_core::sc_module_name n, uint64_t b) : sc_module(n), socket("socket"), base(b) {
        socket.register_b_transport(this, &FakeBar::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        const uint64_t off = gp.get_address() - base;
        if (gp.get_address() < base || off + gp.get_data_length() > regs.size()) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        addresses.push_back(gp.get_address());
        if (gp.is_write())
            std::memcpy(&regs[off], gp.get_data_ptr(), gp.get_data_length());
        else
            std::memcpy(gp.get_data_ptr(), &regs[off], gp.get_data_length());
        d += sc_time(latency_ns, SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

// An initiator standing for the root complex's DMA into the home's io_target.
struct Dma : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Dma> socket;
    explicit Dma(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
    bool access(bool write, uint64_t pa, uint8_t* p, unsigned n, sc_time& d) {
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(p);
        gp.set_data_length(n);
        gp.set_streaming_width(n);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        socket->b_transport(gp, d);
        return gp.is_response_ok();
    }
};

struct Host {
    static constexpr uint64_t kBar = 1ull << 40;
    core::Services services;
    HostMemory memory;
    HomeNode home;
    HostKernel kernel;
    FakeBar bar;
    Dma dma;
    std::vector<std::unique_ptr<HostCore>> cores;
    HostKernel::Process& proc;

    explicit Host(unsigned n_cores = 2, HostCoreConfig cc = HostCoreConfig{},
                  HomeNodeConfig hc = HomeNodeConfig{})
        : memory("memory", small_memory(), services),
          home("home", hc, services),
          kernel(memory, home),
          bar("bar", kBar),
          dma("dma"),
          proc(kernel.create_process("test")) {
        home.memory_initiator.bind(memory.socket);
        dma.socket.bind(home.io_target);
        for (unsigned i = 0; i < n_cores; ++i) {
            cores.push_back(std::make_unique<HostCore>(("core" + std::to_string(i)).c_str(), cc,
                                                       home, kernel, services));
        }
        // The BAR takes one initiator: core 0's; the others go through a tiny forwarder.
        cores[0]->mmio.bind(bar.socket);
        for (unsigned i = 1; i < n_cores; ++i) {
            fwd.push_back(std::make_unique<Forward>(("fwd" + std::to_string(i)).c_str(), bar));
            cores[i]->mmio.bind(fwd.back()->socket);
        }
    }
    struct Forward : sc_core::sc_module {
        tlm_utils::simple_target_socket<Forward> socket;
        FakeBar& bar;
        Forward(sc_core::sc_module_name n, FakeBar& b) : sc_module(n), socket("socket"), bar(b) {
            socket.register_b_transport(this, &Forward::bt);
        }
        void bt(tlm::tlm_generic_payload& gp, sc_time& d) { bar.b_transport(gp, d); }
    };
    std::vector<std::unique_ptr<Forward>> fwd;

    static HostMemoryConfig small_memory() {
        HostMemoryConfig c;
        c.size_bytes = 256 * kMiB;
        return c;
    }
    void run(unsigned core, HostProgram p) { cores[core]->run(proc, std::move(p)); }
    uint64_t counter(const std::string& module, const char* name) {
        auto* s = dynamic_cast<const core::Counter*>(services.stats.find(module, name));
        return s ? s->value() : ~0ull;
    }
};

// ---- building blocks ---------------------------------------------------------------------

TEST(CacheArray, FillsInvalidWaysFirstThenEvictsLeastRecentlyUsed) {
    core::CacheArray a(core::CacheGeometry{4 * 64, 2, 64});  // 2 sets x 2 ways
    // Lines 0, 128, 256 map to set 0.
    a.fill(a.victim(0), 0, LineState::UC);
    a.fill(a.victim(128), 128, LineState::UC);
    ASSERT_NE(a.find(0), nullptr);  // 0 is now more recent than 128
    auto& v = a.victim(256);
    EXPECT_EQ(v.address, 128u);
    a.fill(v, 256, LineState::SC);
    EXPECT_EQ(a.peek(128), nullptr);
    EXPECT_NE(a.peek(0), nullptr);
    EXPECT_EQ(a.peek(256)->state, LineState::SC);
    EXPECT_EQ(a.valid_lines(), 2u);
}

TEST(CacheArray, RejectsImpossibleGeometryNamingTheKey) {
    try {
        core::CacheGeometry{3000, 4, 64}.validate("host.core.l1");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("host.core.l1.size_bytes"), std::string::npos);
    }
    EXPECT_THROW((core::CacheGeometry{4096, 4, 48}.validate("x")), InputError);
    EXPECT_THROW((core::CacheGeometry{3 * 4 * 64, 4, 64}.validate("x")), InputError);  // 3 sets
}

TEST(Atomics, EachKindAndOperationFollowsItsDefinition) {
    auto run = [](core::AtomicKind k, core::AtomicOp op, uint8_t size, uint64_t mem,
                  uint64_t operand, uint64_t compare, uint64_t* after) {
        uint8_t b[8];
        for (int i = 0; i < 8; ++i) b[i] = uint8_t(mem >> (8 * i));
        core::AtomicRequest a{k, op, size, operand, compare};
        uint64_t old = core::apply_atomic(a, b);
        *after = 0;
        for (int i = 7; i >= 0; --i) *after = (*after << 8) | b[i];
        return old;
    };
    using K = core::AtomicKind;
    using O = core::AtomicOp;
    uint64_t after;
    EXPECT_EQ(run(K::Load, O::Add, 8, 40, 2, 0, &after), 40u);
    EXPECT_EQ(after, 42u);
    run(K::Store, O::Add, 1, 0xff, 1, 0, &after);  // wraps within one byte
    EXPECT_EQ(after, 0u);
    run(K::Store, O::Clr, 4, 0xf0f0, 0x00f0, 0, &after);
    EXPECT_EQ(after, 0xf000u);
    run(K::Store, O::Eor, 4, 0b1100, 0b1010, 0, &after);
    EXPECT_EQ(after, 0b0110u);
    run(K::Store, O::Set, 2, 0x0100, 0x0001, 0, &after);
    EXPECT_EQ(after, 0x0101u);
    run(K::Store, O::Smax, 1, 0xfe /*-2*/, 0x01, 0, &after);
    EXPECT_EQ(after, 0x01u);
    run(K::Store, O::Umax, 1, 0xfe, 0x01, 0, &after);
    EXPECT_EQ(after, 0xfeu);
    run(K::Store, O::Smin, 2, 0x0001, 0xffff /*-1*/, 0, &after);
    EXPECT_EQ(after, 0xffffu);
    run(K::Store, O::Umin, 2, 0x0001, 0xffff, 0, &after);
    EXPECT_EQ(after, 0x0001u);
    EXPECT_EQ(run(K::Swap, O::Add, 4, 7, 9, 0, &after), 7u);
    EXPECT_EQ(after, 9u);
    EXPECT_EQ(run(K::Compare, O::Add, 8, 5, 6, 5, &after), 5u);  // match: stored
    EXPECT_EQ(after, 6u);
    EXPECT_EQ(run(K::Compare, O::Add, 8, 5, 6, 4, &after), 5u);  // no match: unchanged
    EXPECT_EQ(after, 5u);
    // Bytes beyond the operand's size are untouched.
    EXPECT_EQ(run(K::Swap, O::Add, 2, 0x1111222233334444ull, 0xffff, 0, &after), 0x4444u);
    EXPECT_EQ(after, 0x111122223333ffffull);
    uint8_t b[8] = {};
    EXPECT_THROW(core::apply_atomic(core::AtomicRequest{K::Swap, O::Add, 3, 0, 0}, b),
                 std::invalid_argument);
}

// ---- latency along the protocol's path -------------------------------------------------------

TEST(HostCore, ColdLoadWalksTablesThenMissesToDramAndWarmLoadHitsL1) {
    Host h(1);
    const HostCoreConfig& c = h.cores[0]->config();
    const HomeNodeConfig& hn = h.home.config();
    const double dram = h.memory.config().latency_ns;
    double cold = 0, warm = 0, neighbour = 0;
    uint64_t got = 0;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        cpu.sync();
        sc_time t0 = cpu.now();
        got = cpu.load<uint64_t>(va);
        cold = ns(cpu.now() - t0);
        t0 = cpu.now();
        cpu.load<uint64_t>(va);
        warm = ns(cpu.now() - t0);
        t0 = cpu.now();
        cpu.load<uint64_t>(va + 64);  // next line: TLB hit, cache miss
        neighbour = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    EXPECT_EQ(h.cores[0]->fault(), "");
    EXPECT_EQ(got, 0u);  // fresh memory is zero
    const double walk = 4 * (hn.request_ns + dram);
    const double miss = c.cache.l1_hit_ns + c.cache.l2_hit_ns + hn.request_ns + dram;
    EXPECT_NEAR(cold, walk + miss, 1e-3);
    EXPECT_NEAR(warm, c.cache.l1_hit_ns, 1e-3);
    EXPECT_NEAR(neighbour, miss, 1e-3);
    EXPECT_EQ(h.counter("core0", "tlb.walk_reads"), 4u);
}

TEST(HostCore, HugePageWalkReadsFewerLevels) {
    Host h(1);
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(2 * kMiB, kPage2M);
        cpu.load<uint32_t>(va);
        cpu.load<uint32_t>(va + kMiB);  // same page: no second walk
    });
    sc_core::sc_start();
    EXPECT_EQ(h.counter("core0", "tlb.walk_reads"), 3u);  // levels 0, 1, 2 (a 2 MiB block)
    EXPECT_EQ(h.counter("core0", "tlb.misses"), 1u);
}

TEST(HostCore, FarAtomicOnAHotLineCostsRequestPlusSlcHit) {
    Host h(1);
    const HomeNodeConfig& hn = h.home.config();
    const auto& cc = h.cores[0]->config().cache;
    double first = 0, second = 0;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        cpu.load<uint64_t>(va + 512);  // TLB warm
        sc_time t0 = cpu.now();
        cpu.compare_and_swap(va, 0, 1);
        first = ns(cpu.now() - t0);
        t0 = cpu.now();
        cpu.compare_and_swap(va, 1, 0);
        second = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    const double dram = h.memory.config().latency_ns;
    EXPECT_NEAR(first, cc.l1_hit_ns + hn.request_ns + dram, 1e-3);            // SLC miss
    EXPECT_NEAR(second, cc.l1_hit_ns + hn.request_ns + hn.slc_hit_ns, 1e-3);  // SLC hit
    // CALIBRATION E5: a host AtomicCompare takes about 50 ns.
    EXPECT_NEAR(second, 50.0, 7.5);
}

// ---- coherence -----------------------------------------------------------------------------

TEST(Coherence, ReaderGetsTheWritersDirtyDataBySnoopAndBothEndShared) {
    Host h(2);
    uint64_t va = 0, seen = 0;
    double latency = 0;
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(4096);
        cpu.store<uint64_t>(va + 8, 0xfeedbeefcafeull);
    });
    h.run(1, [&](HostCore& cpu) {
        cpu.compute_ns(20000);
        cpu.sync();
        cpu.load<uint64_t>(va + 256);  // TLB warm, another line
        sc_time t0 = cpu.now();
        seen = cpu.load<uint64_t>(va + 8);
        latency = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    EXPECT_EQ(seen, 0xfeedbeefcafeull);
    const auto& cc = h.cores[1]->config().cache;
    const HomeNodeConfig& hn = h.home.config();
    // The data comes from core 0's cache: no DRAM access on the critical path.
    EXPECT_NEAR(latency, cc.l1_hit_ns + cc.l2_hit_ns + hn.request_ns + hn.snoop_ns, 1e-3);
    const uint64_t pa = h.proc.space->translate(va)->pa;
    EXPECT_EQ(h.cores[0]->cache().state(pa), LineState::SC);
    EXPECT_EQ(h.cores[1]->cache().state(pa), LineState::SC);
    EXPECT_EQ(h.home.holders(pa).sharers, 0b11u);
    EXPECT_EQ(h.counter("home", "snoop_data"), 1u);
}

TEST(Coherence, AWriteInvalidatesTheOtherCopyAndTheOtherCoreRereadsTheNewValue) {
    Host h(2);
    uint64_t va = 0, before = 0, after = 0;
    LineState mid = LineState::UD;
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(4096);
        cpu.store<uint32_t>(va, 1);
        cpu.compute_ns(10000);
        cpu.sync();
        cpu.store<uint32_t>(va, 2);  // core 1 holds it shared now: CleanUnique
    });
    h.run(1, [&](HostCore& cpu) {
        cpu.compute_ns(5000);
        cpu.sync();
        before = cpu.load<uint32_t>(va);
        cpu.compute_ns(10000);
        cpu.sync();
        mid = cpu.cache().state(h.proc.space->translate(va)->pa);
        after = cpu.load<uint32_t>(va);
    });
    sc_core::sc_start();
    EXPECT_EQ(before, 1u);
    EXPECT_EQ(mid, LineState::I);
    EXPECT_EQ(after, 2u);
    EXPECT_EQ(h.counter("core0", "upgrades"), 1u);
    EXPECT_GE(h.counter("core1", "snoop_invalidations"), 1u);
}

TEST(Coherence, SpinningCoreSeesAFlagSetByAnotherCoreWithinItsQuantum) {
    Host h(2);
    uint64_t va = 0;
    double stored_at = 0, seen_at = 0, miss = 0;
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(4096);
        cpu.store<uint32_t>(va + 128, 0);  // TLB warm
        cpu.compute_ns(50000);
        cpu.store<uint32_t>(va, 1);
        cpu.sync();
        stored_at = ns(cpu.now());
    });
    h.run(1, [&](HostCore& cpu) {
        cpu.compute_ns(1000);
        cpu.sync();
        while (cpu.load<uint32_t>(va) == 0) cpu.compute_ns(20);
        seen_at = ns(cpu.now());
        const auto& cc = cpu.config().cache;
        miss = cc.l1_hit_ns + cc.l2_hit_ns + h.home.config().request_ns + h.home.config().snoop_ns;
    });
    sc_core::sc_start();
    // The spinning core hits its cache, running at most a quantum ahead; the store's
    // invalidation makes its next load miss and fetch the new value from the writer.
    const double quantum = h.cores[1]->config().quantum_ns;
    EXPECT_GT(seen_at, stored_at);
    EXPECT_LE(seen_at, stored_at + quantum + 25.0 + miss);
}

TEST(HostCore, WaitLineSleepsUntilAnotherCoreWritesTheLine) {
    // Arm's WFE on the exclusive monitor: core 0 loads a flag, finds 0 and sleeps on its line
    // instead of spinning; core 1's store takes the line (a snoop) at the moment it reaches the
    // home, which wakes core 0. No loads meanwhile, whatever the wait.
    Host h(2);
    uint64_t va = 0;
    double stored_at = 0, woken_at = 0;
    uint32_t seen = 0;
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(4096);
        while (cpu.load<uint32_t>(va) == 0) cpu.wait_line(va);
        woken_at = ns(cpu.now());
        seen = cpu.load<uint32_t>(va);
    });
    h.run(1, [&](HostCore& cpu) {
        cpu.compute_ns(500000);
        cpu.sync();
        stored_at = ns(cpu.now());
        cpu.store<uint32_t>(va, 7);
    });
    sc_core::sc_start();
    EXPECT_EQ(seen, 7u);
    // The store asks the home for a unique copy (its request, the snoop of core 0).
    const double reach = h.home.config().request_ns + h.home.config().snoop_ns;
    EXPECT_GE(woken_at, stored_at);
    EXPECT_LE(woken_at, stored_at + reach + 1000.0);
    // Two loads that found 0 and 7 (and the table walk), not one per poll for 500 us.
    EXPECT_LE(h.counter("core0", "loads"), 3u);
}

TEST(HostCore, WaitLineReturnsAtOnceForALineNotHeldAndWakesOnAnEvent) {
    Host h(2);
    double unheld_wait = -1, event_at = 0, woken_at = 0;
    h.run(0, [&](HostCore& cpu) {
        const uint64_t va = cpu.mmap(4096);
        cpu.load<uint32_t>(va + 64);  // the TLB warm; the line at va is not in the caches
        const double t = ns(cpu.now());
        cpu.wait_line(va);  // nothing would ever snoop it here: no sleep
        unheld_wait = ns(cpu.now()) - t;
        cpu.wait_line(va + 64);  // held: sleeps until core 1's event (Arm's SEV)
        woken_at = ns(cpu.now());
    });
    h.run(1, [&](HostCore& cpu) {
        cpu.compute_ns(30000);
        cpu.sync();
        event_at = ns(cpu.now());
        h.cores[0]->send_event();
    });
    sc_core::sc_start();
    EXPECT_EQ(unheld_wait, 0.0);
    EXPECT_EQ(woken_at, event_at);
}

void counting(bool far) {
    HostCoreConfig cc;
    cc.far_atomics = far;
    Host h(3, cc);
    uint64_t va = 0, final_value = 0;
    for (unsigned c = 0; c < 3; ++c) {
        h.run(c, [&, c](HostCore& cpu) {
            if (c == 0) va = cpu.mmap(4096);
            cpu.compute_ns(2000);
            for (int i = 0; i < 500; ++i) {
                cpu.fetch_add(va, 1, 4);
                cpu.compute_ns(3 + c);
            }
            if (c == 0) {
                cpu.compute_ns(100000);
                cpu.sync();
                final_value = cpu.load<uint32_t>(va);
            }
        });
    }
    sc_core::sc_start();
    EXPECT_EQ(final_value, 1500u);
    EXPECT_EQ(h.counter("core0", "atomics") + h.counter("core1", "atomics") +
                  h.counter("core2", "atomics"),
              1500u);
}
TEST(Coherence, ConcurrentFarAtomicIncrementsAreNeverLost) { counting(true); }
TEST(Coherence, ConcurrentNearAtomicIncrementsAreNeverLost) { counting(false); }

TEST(Coherence, CompareAndSwapLockGivesMutualExclusion) {
    Host h(3);
    uint64_t va = 0;
    uint64_t total = 0;
    int inside = 0, worst = 0, finished = 0;
    for (unsigned c = 0; c < 3; ++c) {
        h.run(c, [&, c](HostCore& cpu) {
            if (c == 0) va = cpu.mmap(4096);  // costs one syscall_ns; the others start later
            cpu.compute_ns(5000);
            for (int i = 0; i < 100; ++i) {
                while (cpu.compare_and_swap(va, 0, c + 1) != 0) cpu.compute_ns(10);
                worst = std::max(worst, ++inside);
                uint64_t v = cpu.load<uint64_t>(va + 64);  // a plain read-modify-write
                cpu.compute_ns(30);
                cpu.store<uint64_t>(va + 64, v + 1);
                --inside;
                cpu.swap(va, 0);  // release
            }
            ++finished;
            while (finished < 3 && ns(cpu.now()) < 1e7) cpu.compute_ns(1000);
            if (c == 0) total = cpu.load<uint64_t>(va + 64);
        });
    }
    sc_core::sc_start();
    EXPECT_EQ(worst, 1);
    EXPECT_EQ(total, 300u);
    for (auto& core : h.cores) EXPECT_EQ(core->fault(), "");
}

TEST(Coherence, DirtyLinesEvictedFromASmallCacheAreWrittenBackIntact) {
    HostCoreConfig cc;
    cc.cache.l1 = {2 * 64, 2, 64};
    cc.cache.l2 = {4 * 64, 2, 64};  // 2 sets x 2 ways
    Host h(1, cc);
    bool ok = true;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        for (uint64_t i = 0; i < 32; ++i) cpu.store<uint64_t>(va + 64 * i, 1000 + i);
        for (uint64_t i = 0; i < 32; ++i) ok = ok && cpu.load<uint64_t>(va + 64 * i) == 1000 + i;
    });
    sc_core::sc_start();
    EXPECT_TRUE(ok);
    EXPECT_GE(h.counter("core0", "writebacks"), 28u);
}

// ---- I/O coherence ----------------------------------------------------------------------

TEST(IoCoherence, DmaReadSeesACoresDirtyDataAndDmaWriteInvalidatesItsCopy) {
    Host h(1);
    Dma& dma = h.dma;
    uint64_t va = 0, after_dma = 0;
    LineState after_read = LineState::I, after_write = LineState::UD;
    std::vector<uint8_t> got(128);
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(4096);
        cpu.store<uint64_t>(va + 64, 0x1122334455667788ull);  // dirty in the core's L2
        cpu.sync();
        const uint64_t pa = h.proc.space->translate(va)->pa;
        sc_time d = SC_ZERO_TIME;
        EXPECT_TRUE(dma.access(false, pa, got.data(), 128, d));
        after_read = cpu.cache().state(pa + 64);
        uint64_t v = 0xabcdefull;
        EXPECT_TRUE(dma.access(true, pa + 64, reinterpret_cast<uint8_t*>(&v), 8, d));
        after_write = cpu.cache().state(pa + 64);
        after_dma = cpu.load<uint64_t>(va + 64);
    });
    sc_core::sc_start();
    uint64_t seen;
    std::memcpy(&seen, got.data() + 64, 8);
    EXPECT_EQ(seen, 0x1122334455667788ull);
    EXPECT_EQ(after_read, LineState::UD);  // a Once snoop leaves the owner as it was
    EXPECT_EQ(after_write, LineState::I);
    EXPECT_EQ(after_dma, 0xabcdefull);
}

TEST(IoCoherence, RefusesAccessesBeyondMemoryAndBadCommands) {
    Host h(1);
    Dma& dma = h.dma;
    sc_core::sc_start(SC_ZERO_TIME);
    uint8_t b[8] = {};
    sc_time d = SC_ZERO_TIME;
    EXPECT_FALSE(dma.access(false, h.memory.size() - 4, b, 8, d));
    EXPECT_FALSE(dma.access(false, 0, b, 0, d));
    EXPECT_EQ(h.counter("home", "io.errors"), 2u);
}

// ---- faults, kernel services and device memory ---------------------------------------------

TEST(HostCore, FaultsStopOnlyTheFaultingProgramAndNameTheAddress) {
    Host h(2);
    bool core1_done = false;
    h.run(0, [&](HostCore& cpu) {
        cpu.compute_ns(100);
        cpu.load<uint64_t>(0xdead0000);
        ADD_FAILURE() << "a load of an unmapped address returned";
    });
    h.run(1, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        cpu.compute_ns(5000);
        cpu.store<uint64_t>(va, 3);
        core1_done = cpu.load<uint64_t>(va) == 3;
    });
    sc_core::sc_start();
    EXPECT_NE(h.cores[0]->fault().find("0xdead0000"), std::string::npos) << h.cores[0]->fault();
    EXPECT_NE(h.cores[0]->fault().find("not mapped"), std::string::npos);
    EXPECT_NE(h.cores[0]->fault().find("core0"), std::string::npos);
    EXPECT_TRUE(core1_done);
    EXPECT_EQ(h.cores[1]->fault(), "");
    EXPECT_EQ(h.counter("core0", "faults"), 1u);
}

void expect_fault(const char* needle, std::function<void(HostCore&, uint64_t)> body) {
    Host h(1);
    h.run(0, [&](HostCore& cpu) { body(cpu, cpu.mmap(4096)); });
    sc_core::sc_start();
    EXPECT_NE(h.cores[0]->fault().find(needle), std::string::npos) << h.cores[0]->fault();
}
TEST(HostCore, ZeroByteLoadFaults) {
    expect_fault("1 to 64", [](HostCore& c, uint64_t va) {
        uint8_t b;
        c.load(va, &b, 0);
    });
}
TEST(HostCore, SixtyFiveByteStoreFaults) {
    expect_fault("1 to 64", [](HostCore& c, uint64_t va) {
        uint8_t b[65] = {};
        c.store(va, b, 65);
    });
}
TEST(HostCore, MisalignedAtomicFaults) {
    expect_fault("naturally aligned", [](HostCore& c, uint64_t va) { c.fetch_add(va + 2, 1, 4); });
}
TEST(HostCore, OutOfMemoryMmapFaults) {
    expect_fault("mmap", [](HostCore& c, uint64_t) { c.mmap(1ull << 40); });
}

TEST(HostCore, AccessesCrossingLinesAndPagesMoveEveryByte) {
    Host h(1);
    bool ok = false;
    uint64_t va = 0;
    h.run(0, [&](HostCore& cpu) {
        va = cpu.mmap(3 * 4096);
        uint8_t in[64], out[64] = {};
        for (int i = 0; i < 64; ++i) in[i] = uint8_t(i * 7 + 1);
        cpu.store(va + 4096 - 20, in, 64);  // two pages, two lines
        cpu.load(va + 4096 - 20, out, 64);
        ok = std::memcmp(in, out, 64) == 0;
    });
    sc_core::sc_start();
    EXPECT_TRUE(ok);
    const uint64_t pa2 = h.proc.space->translate(va + 4096)->pa;
    uint8_t b = 0;
    h.home.read_coherent(pa2, &b, 1);  // the second page's first byte, from the dirty line
    EXPECT_EQ(b, uint8_t(20 * 7 + 1));
}

TEST(HostCore, MunmapShootsDownTheTlbSoALaterAccessFaults) {
    Host h(1);
    bool first = false;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        cpu.store<uint64_t>(va, 5);
        first = cpu.load<uint64_t>(va) == 5;
        cpu.munmap(va, 4096);
        cpu.load<uint64_t>(va);
    });
    sc_core::sc_start();
    EXPECT_TRUE(first);
    EXPECT_NE(h.cores[0]->fault().find("not mapped"), std::string::npos) << h.cores[0]->fault();
    EXPECT_EQ(h.home.holders(0).sharers, 0u);
}

TEST(HostCore, DeviceMemoryIsUncachedReadsWaitAndWritesArePosted) {
    Host h(1);
    double read_ns = 0, write_ns = 0;
    uint32_t seen = 0;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.map_device(Host::kBar, 4096);
        cpu.load<uint32_t>(va + 0x10);  // TLB warm
        sc_time t0 = cpu.now();
        cpu.store<uint32_t>(va + 0x20, 0x5a5a);
        write_ns = ns(cpu.now() - t0);
        t0 = cpu.now();
        seen = cpu.load<uint32_t>(va + 0x20);
        read_ns = ns(cpu.now() - t0);
        cpu.atomic(va, core::AtomicRequest{});
    });
    sc_core::sc_start();
    EXPECT_EQ(seen, 0x5a5au);
    EXPECT_EQ(h.bar.addresses.size(), 3u);  // every access reached the device: nothing cached
    EXPECT_EQ(h.bar.addresses[1], Host::kBar + 0x20);
    EXPECT_NEAR(write_ns, h.cores[0]->config().mmio_issue_ns, 1e-3);
    EXPECT_NEAR(read_ns, h.bar.latency_ns, 1e-3);
    EXPECT_NE(h.cores[0]->fault().find("device memory"), std::string::npos);
}

TEST(HostCore, DeviceBusErrorFaultsTheProgram) {
    Host h(1);
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.map_device(Host::kBar, 8192);  // the BAR has 4 KiB
        cpu.load<uint32_t>(va + 4096);
    });
    sc_core::sc_start();
    EXPECT_NE(h.cores[0]->fault().find("device read"), std::string::npos) << h.cores[0]->fault();
}

}  // namespace
}  // namespace canopy::host

namespace canopy::host {
namespace {

// The device's single-level CCIX system cache (U280) is the same cache without an L1.
TEST(CoherentCache, WithoutAnL1HitsCostTheLastLevelAlone) {
    HostCoreConfig cc;
    cc.cache.l1.size_bytes = 0;
    Host h(1, cc);
    double warm = 0;
    h.run(0, [&](HostCore& cpu) {
        uint64_t va = cpu.mmap(4096);
        cpu.store<uint64_t>(va, 9);
        sc_time t0 = cpu.now();
        EXPECT_EQ(cpu.load<uint64_t>(va), 9u);
        warm = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    EXPECT_NEAR(warm, cc.cache.l2_hit_ns, 1e-3);
    EXPECT_EQ(h.counter("core0", "l1.hits"), 0u);
}

}  // namespace
}  // namespace canopy::host

namespace canopy::host {
namespace {

// An HN-F serialises requests to one address: two atomics arriving together on one line take
// turns, the second waiting for the first to complete.
TEST(Coherence, SimultaneousAtomicsToOneLineTakeTurnsAtTheHome) {
    Host h(2);
    uint64_t va = 0;
    double lat[2] = {0, 0};
    for (unsigned c = 0; c < 2; ++c) {
        h.run(c, [&, c](HostCore& cpu) {
            if (c == 0) {
                va = cpu.mmap(4096);
                cpu.fetch_add(va, 1);  // the line is in the SLC from now on
            }
            cpu.compute_ns(5000);
            cpu.sync();
            if (c == 1) cpu.load<uint64_t>(va + 64);  // TLB warm (another line)
            cpu.compute_ns(10000 - ns(cpu.now()));
            cpu.sync();
            const sc_time t0 = cpu.now();
            cpu.fetch_add(va, 1);
            lat[c] = ns(cpu.now() - t0);
        });
    }
    sc_core::sc_start();
    const auto& hn = h.home.config();
    const double one = h.cores[0]->config().cache.l1_hit_ns + hn.request_ns + hn.slc_hit_ns;
    EXPECT_NEAR(std::min(lat[0], lat[1]), one, 1e-3);
    EXPECT_NEAR(std::max(lat[0], lat[1]), 2 * one - h.cores[0]->config().cache.l1_hit_ns, 1e-3);
}

}  // namespace
}  // namespace canopy::host
