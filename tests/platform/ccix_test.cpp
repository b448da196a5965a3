// The CCIX coherent link end to end: host memory, the home node with its SLC and snoop filter,
// host cores, the host kernel and IOMMU, the root port for ATS on VC0, the PCIe link, the VC
// routers and merges, the home agent, and the device's request agent with its ATC and system
// cache (models/link/{vc_router,home_agent,request_agent}.hpp). The device's accelerator is a
// simulated thread calling the request agent, which synchronises (wait()) before every request
// leaving for the home, as host cores do.
//
// Expected latencies are sums of the configured components along the protocol's path (never a
// run's output); coherence is checked by data, line states and the home's snoop filter. Each
// TEST is its own process with one sc_start.
#include <gtest/gtest.h>

#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/coherence.hpp"
#include "core/services.hpp"
#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"
#include "host/iommu.hpp"
#include "link/atc.hpp"
#include "link/ccix_config.hpp"
#include "link/ccix_message.hpp"
#include "link/home_agent.hpp"
#include "link/pcie_link.hpp"
#include "link/request_agent.hpp"
#include "link/tlp.hpp"
#include "link/vc_router.hpp"
#include "platform/root_port.hpp"

namespace canopy {
namespace {

using core::LineState;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

// The device's BAR on VC0 (unused here: it binds the device router's vc0).
struct Bar : sc_core::sc_module {
    tlm_utils::simple_target_socket<Bar> socket;
    explicit Bar(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_b_transport(this, &Bar::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time&) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
};

constexpr uint32_t kPid = 1;  // the first process the kernel creates: its PASID too

struct Platform {
    core::Services services;
    link::CcixConfig cfg;
    host::HostMemory memory;
    host::HomeNode home;
    host::Iommu iommu;
    host::HostKernel kernel;
    platform::RootPort root;
    link::PcieLink link;
    link::VcRouter host_router, device_router;
    link::VcMerge host_merge, device_merge;
    link::HomeAgent ha;
    link::Atc atc;
    link::RequestAgent ra;
    Bar bar;
    std::vector<std::unique_ptr<host::HostCore>> cores;
    host::HostKernel::Process& proc;
    sc_time device_offset = SC_ZERO_TIME;  // the accelerator thread's local time

    static host::HostMemoryConfig small_memory() {
        host::HostMemoryConfig c;
        c.size_bytes = 256ull << 20;
        return c;
    }
    static link::RequestAgent::Sync thread_sync() {
        return [](sc_time& d) {
            sc_core::wait(d);
            d = SC_ZERO_TIME;
        };
    }

    explicit Platform(unsigned n_cores, const link::CcixConfig& c = link::CcixConfig())
        : cfg(c),
          memory("memory", small_memory(), services),
          home("home", host::HomeNodeConfig(), services),
          iommu("iommu", host::IommuConfig(), services),
          kernel(memory, home, &iommu),
          root("root_port", iommu, kPid, services),
          link("link", link::PcieConfig(), services),
          host_router("host_router", services),
          device_router("device_router", services),
          host_merge("host_merge", services),
          device_merge("device_merge", services),
          ha("ha", cfg, home, services),
          atc("atc", link::AtcConfig(), services),
          ra("ra", cfg, &atc, kPid, services, thread_sync()),
          bar("bar"),
          proc(kernel.create_process("app")) {
        home.memory_initiator.bind(memory.socket);
        iommu.walk_socket.bind(root.walk_target);
        root.memory_initiator.bind(home.io_target);
        link.host_initiator.bind(host_router.target);
        host_router.vc0.bind(root.link_target);
        host_router.vc1.bind(ha.link_target);
        ha.snoop_initiator.bind(host_merge.vc1);
        host_merge.out.bind(link.host_target);
        link.device_initiator.bind(device_router.target);
        device_router.vc0.bind(bar.socket);
        device_router.vc1.bind(ra.snoop_target);
        atc.ats_initiator.bind(device_merge.vc0);
        ra.link_initiator.bind(device_merge.vc1);
        device_merge.out.bind(link.device_target);
        for (unsigned i = 0; i < n_cores; ++i) {
            cores.push_back(std::make_unique<host::HostCore>(("core" + std::to_string(i)).c_str(),
                                                             host::HostCoreConfig(), home, kernel,
                                                             services));
            cores.back()->mmio.bind(host_merge.vc0);
        }
    }

    void run(unsigned core, host::HostProgram p) { cores[core]->run(proc, std::move(p)); }
    // The accelerator: a thread calling the request agent.
    void device(std::function<void()> program) {
        sc_core::sc_spawn(
            [this, program] {
                program();
                sc_core::wait(device_offset);
                device_offset = SC_ZERO_TIME;
            },
            "accelerator");
    }
    sc_time device_now() const { return sc_core::sc_time_stamp() + device_offset; }
    void device_wait_ns(double t) {
        sc_core::wait(device_offset + sc_time(t, SC_NS));
        device_offset = SC_ZERO_TIME;
    }
    uint64_t device_load64(uint64_t va) {
        uint64_t v = 0;
        link::RaResult r = ra.load(kPid, va, &v, 8, device_offset);
        EXPECT_TRUE(r.ok) << r.error;
        return v;
    }
    void device_store64(uint64_t va, uint64_t v) {
        link::RaResult r = ra.store(kPid, va, &v, 8, device_offset);
        EXPECT_TRUE(r.ok) << r.error;
    }
    uint64_t pa(uint64_t va) const { return proc.space->translate(va)->pa; }
    uint64_t counter(const std::string& m, const char* n) {
        auto* c = dynamic_cast<const core::Counter*>(services.stats.find(m, n));
        return c ? c->value() : ~0ull;
    }
    // The link's time for one non-posted message: a 16-B-header request one way, a completion
    // of `cpl` bytes back (both directions have the same configuration).
    static double round_trip_ns(uint32_t cpl) {
        const link::PcieConfig c;
        using link::Tlp;
        using link::TlpKind;
        return c.upstream.total_ns() + c.downstream.total_ns() +
               link::serialisation_ns(
                   c,
                   link::tlp_wire_bytes(c, Tlp{TlpKind::MemRd, link::kCcixMessageAddress, cpl})) +
               link::serialisation_ns(
                   c, link::tlp_wire_bytes(c, Tlp{TlpKind::CplD, link::kCcixMessageAddress, cpl}));
    }
};

// ---- data and coherence --------------------------------------------------------------------

TEST(CcixPlatform, HostDataIsReadByTheDeviceAndDeviceDataByTheHost) {
    Platform p(1);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    uint64_t device_saw = 0, host_saw = 0;
    p.run(0, [&](host::HostCore& cpu) {
        cpu.store<uint64_t>(va, 0xc0ffee);  // dirty in the core's L2
        cpu.compute_ns(50000);
        cpu.sync();
        host_saw = cpu.load<uint64_t>(va + 128);
    });
    p.device([&] {
        p.device_wait_ns(10000);
        device_saw = p.device_load64(va);
        p.device_store64(va + 128, 0xfeed);
    });
    sc_core::sc_start();
    EXPECT_EQ(device_saw, 0xc0ffeeu);
    EXPECT_EQ(host_saw, 0xfeedu);
    EXPECT_EQ(p.cores[0]->fault(), "");
    // The device's read took the core's dirty line by a snoop; both keep it shared.
    EXPECT_EQ(p.cores[0]->cache().state(p.pa(va)), LineState::SC);
    EXPECT_EQ(p.ra.state(p.pa(va)), LineState::SC);
    EXPECT_GE(p.counter("ra", "requests.ReadShared"), 1u);
    EXPECT_GE(p.counter("ha", "snoops"), 1u);  // the host's read of the device's dirty line
}

TEST(CcixPlatform, DeviceWriteInvalidatesTheHostCoresCopy) {
    Platform p(1);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    LineState before = LineState::I, after = LineState::UD;
    host::HomeNode::Holders holders;
    uint64_t reread = 0;
    p.run(0, [&](host::HostCore& cpu) {
        cpu.load<uint64_t>(va);  // a clean copy
        before = cpu.cache().state(p.pa(va));
        cpu.compute_ns(50000);
        cpu.sync();
        after = cpu.cache().state(p.pa(va));
        holders = p.home.holders(p.pa(va));
        reread = cpu.load<uint64_t>(va);
    });
    p.device([&] {
        p.device_wait_ns(10000);
        p.device_store64(va, 77);
    });
    sc_core::sc_start();
    EXPECT_NE(before, LineState::I);
    EXPECT_EQ(after, LineState::I);
    EXPECT_EQ(holders.owner, int(p.ha.requester_id()));
    EXPECT_EQ(holders.sharers, 1u << p.ha.requester_id());
    EXPECT_EQ(reread, 77u);
}

TEST(CcixPlatform, HostReadOfADeviceDirtyLineSnoopsTheDeviceAcrossTheLinkBothWays) {
    Platform p(1);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    double latency = 0;
    uint64_t seen = 0;
    p.device([&] { p.device_store64(va + 64, 0xabcdef); });
    p.run(0, [&](host::HostCore& cpu) {
        cpu.load<uint64_t>(va + 512);  // TLB warm
        cpu.compute_ns(50000);
        cpu.sync();
        const sc_time t0 = cpu.now();
        seen = cpu.load<uint64_t>(va + 64);
        latency = ns(cpu.now() - t0);
    });
    sc_core::sc_start();
    EXPECT_EQ(seen, 0xabcdefu);
    const auto& cc = p.cores[0]->config().cache;
    const auto& hn = p.home.config();
    const double expect = cc.l1_hit_ns + cc.l2_hit_ns + hn.request_ns + hn.snoop_ns +
                          p.cfg.ha.snoop_ns + p.cfg.ra.snoop_ns +
                          Platform::round_trip_ns(link::kCcixMaxMessageBytes);
    EXPECT_NEAR(latency, expect, 0.01);
    // It includes the link both ways: at least two pipeline traversals.
    const link::PcieConfig lc;
    EXPECT_GT(latency, lc.downstream.total_ns() + lc.upstream.total_ns());
    EXPECT_EQ(p.ra.state(p.pa(va + 64)), LineState::SC);
    EXPECT_EQ(p.counter("ra", "snoop_data"), 1u);
    std::printf("[ measured ] host read of a device-dirty line: %.1f ns\n", latency);
}

TEST(CcixPlatform, ConcurrentAtomicIncrementsFromHostAndDeviceAreNeverLost) {
    Platform p(2);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    constexpr int kEach = 200;
    uint64_t final_value = 0;
    int device_errors = 0;
    for (unsigned c = 0; c < 2; ++c) {
        p.run(c, [&, c](host::HostCore& cpu) {
            cpu.compute_ns(1000);
            for (int i = 0; i < kEach; ++i) {
                cpu.fetch_add(va, 1, 4);
                cpu.compute_ns(100 + 37 * c);
            }
            if (c == 0) {
                cpu.compute_ns(2e6);
                cpu.sync();
                final_value = cpu.load<uint32_t>(va);
            }
        });
    }
    p.device([&] {
        for (int i = 0; i < kEach; ++i) {
            if (!p.ra.fetch_add(kPid, va, 1, 4, p.device_offset).ok) ++device_errors;
            p.device_offset += sc_time(50, SC_NS);
        }
    });
    sc_core::sc_start();
    EXPECT_EQ(device_errors, 0);
    EXPECT_EQ(final_value, 3u * kEach);
    EXPECT_EQ(p.counter("ha", "requests.Atomic"), uint64_t(kEach));
}

TEST(CcixPlatform, CompareAndSwapLockBetweenHostAndDeviceGivesMutualExclusion) {
    Platform p(2);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    constexpr int kRounds = 40;
    int inside = 0, worst = 0, finished = 0, host_spins = 0, device_spins = 0;
    uint64_t total = 0;
    for (unsigned c = 0; c < 2; ++c) {
        p.run(c, [&, c](host::HostCore& cpu) {
            cpu.compute_ns(2000);
            for (int i = 0; i < kRounds; ++i) {
                while (cpu.compare_and_swap(va, 0, c + 1) != 0) {
                    ++host_spins;
                    cpu.compute_ns(50);
                }
                worst = std::max(worst, ++inside);
                const uint64_t v = cpu.load<uint64_t>(va + 64);
                cpu.compute_ns(30);
                cpu.store<uint64_t>(va + 64, v + 1);
                --inside;
                cpu.swap(va, 0);
                cpu.compute_ns(200);
            }
            ++finished;
            while (finished < 3 && ns(cpu.now()) < 1e8) cpu.compute_ns(1000);
            if (c == 0) total = cpu.load<uint64_t>(va + 64);
        });
    }
    p.device([&] {
        for (int i = 0; i < kRounds; ++i) {
            for (;;) {
                link::RaResult r = p.ra.compare_and_swap(kPid, va, 0, 9, 8, p.device_offset);
                ASSERT_TRUE(r.ok) << r.error;
                if (r.value == 0) break;
                ++device_spins;
                p.device_offset += sc_time(50, SC_NS);
            }
            worst = std::max(worst, ++inside);
            const uint64_t v = p.device_load64(va + 64);
            p.device_store64(va + 64, v + 1);
            --inside;
            link::RaResult r = p.ra.swap(kPid, va, 0, 8, p.device_offset);
            ASSERT_TRUE(r.ok) << r.error;
            p.device_wait_ns(200);
        }
        ++finished;
    });
    sc_core::sc_start();
    EXPECT_EQ(worst, 1);
    EXPECT_EQ(total, 3u * kRounds);
    // The lock was contended from both sides (else this test would prove nothing).
    EXPECT_GT(host_spins, 0);
    EXPECT_GT(device_spins, 0);
    for (auto& core : p.cores) EXPECT_EQ(core->fault(), "");
}

// ---- latency along the path ----------------------------------------------------------------

TEST(CcixPlatform, LocalHitAndRemoteMissLatenciesFollowTheConfiguredComponents) {
    Platform p(1);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    double miss = 0, hit_read = 0, hit_write = 0, atomic = 0;
    p.run(0, [&](host::HostCore& cpu) {
        cpu.compare_and_swap(va + 2048, 0, 0);  // the lock word is now in the SLC, held nowhere
    });
    p.device([&] {
        p.device_wait_ns(10000);
        p.device_load64(va);  // ATC warm (an ATS round trip), line 0 cached
        p.device_wait_ns(1000);
        sc_time t0 = p.device_now();
        p.device_load64(va + 1024);  // ATC hit, system-cache miss: CALIBRATION E2
        miss = ns(p.device_now() - t0);
        t0 = p.device_now();
        p.device_load64(va + 1024 + 8);
        hit_read = ns(p.device_now() - t0);
        p.device_store64(va + 1536, 1);  // unique now
        t0 = p.device_now();
        p.device_store64(va + 1536 + 8, 2);
        hit_write = ns(p.device_now() - t0);
        p.device_wait_ns(1000);
        t0 = p.device_now();
        link::RaResult r = p.ra.compare_and_swap(kPid, va + 2048, 0, 1, 8, p.device_offset);
        atomic = ns(p.device_now() - t0);
        EXPECT_TRUE(r.ok) << r.error;
    });
    sc_core::sc_start();
    const auto& ra = p.cfg.ra;
    const auto& hn = p.home.config();
    const double atc_hit = p.atc.config().hit_latency_ns;
    const double local = ra.issue_ns + atc_hit + ra.cache.l2_hit_ns;  // u280: one level
    EXPECT_NEAR(hit_write, local, 1e-3);
    EXPECT_NEAR(hit_read, local + ra.read_return_ns, 1e-3);
    const double expect_miss = local + ra.request_ns +
                               Platform::round_trip_ns(link::kCcixMaxMessageBytes) +
                               p.cfg.ha.request_ns + hn.request_ns + p.memory.config().latency_ns +
                               ra.response_ns + ra.read_return_ns;
    EXPECT_NEAR(miss, expect_miss, 0.01);
    const double expect_atomic =
        local + ra.atomic_ns + ra.request_ns + Platform::round_trip_ns(link::kCcixHeaderBytes) +
        p.cfg.ha.request_ns + hn.request_ns + hn.slc_hit_ns + ra.response_ns + ra.read_return_ns;
    EXPECT_NEAR(atomic, expect_atomic, 0.01);
    // CALIBRATION: E3 u280 ~80 / ~100 ns, E2 ~700 ns, E5 740-800 ns.
    EXPECT_NEAR(hit_write, 80, 8);
    EXPECT_NEAR(hit_read, 100, 10);
    EXPECT_NEAR(miss, 700, 70);
    EXPECT_GE(atomic, 740 * 0.95);
    EXPECT_LE(atomic, 800 * 1.05);
    std::printf(
        "[ measured ] u280 local hit write %.1f ns, read %.1f ns; 64 B read miss %.1f ns; "
        "device AtomicCompare %.1f ns\n",
        hit_write, hit_read, miss, atomic);
}

void local_hits(const std::string& profile, double* read, double* write) {
    Platform p(0, link::CcixConfig::preset(profile));
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    p.device([&] {
        p.device_store64(va, 1);  // ATC and cache warm, line unique
        sc_time t0 = p.device_now();
        p.device_store64(va + 8, 2);
        *write = ns(p.device_now() - t0);
        t0 = p.device_now();
        p.device_load64(va + 16);
        *read = ns(p.device_now() - t0);
    });
    sc_core::sc_start();
    const auto& ra = p.cfg.ra;
    const double atc = p.atc.config().hit_latency_ns;
    // With an L1, a line just written is in both levels: an L1 hit.
    const double hit = ra.cache.has_l1() ? ra.cache.l1_hit_ns : ra.cache.l2_hit_ns;
    EXPECT_NEAR(*write, ra.issue_ns + atc + hit, 1e-3);
    EXPECT_NEAR(*read, ra.issue_ns + atc + hit + ra.read_return_ns, 1e-3);
    std::printf("[ measured ] %s local hit write %.1f ns, read %.1f ns\n", profile.c_str(), *write,
                *read);
}

TEST(CcixPlatform, U280LocalHitsAreOneLevelAndMeetE3) {
    double r = 0, w = 0;
    local_hits("u280", &r, &w);
    EXPECT_NEAR(w, 80, 8);
    EXPECT_NEAR(r, 100, 10);
}

TEST(CcixPlatform, Vck5000LocalHitsAreSlowerThroughItsTwoLevelPathAndMeetE3) {
    double r = 0, w = 0;
    local_hits("vck5000", &r, &w);
    EXPECT_NEAR(w, 150, 15);
    EXPECT_NEAR(r, 170, 17);
    const link::CcixConfig u = link::CcixConfig::preset("u280");
    EXPECT_GT(w, u.ra.issue_ns + link::AtcConfig().hit_latency_ns + u.ra.cache.l2_hit_ns);
}

// ---- errors --------------------------------------------------------------------------------

TEST(CcixPlatform, UnmappedAddressIsAnAtsFailureSeenByTheCaller) {
    Platform p(0);
    const uint64_t va = p.kernel.mmap(p.proc, 4096);
    link::RaResult bad, good, other_pasid;
    p.device([&] {
        uint64_t v = 0;
        bad = p.ra.load(kPid, va + 64 * 4096, &v, 8, p.device_offset);
        good = p.ra.load(kPid, va, &v, 8, p.device_offset);
        other_pasid = p.ra.load(kPid + 1, va, &v, 8, p.device_offset);
    });
    sc_core::sc_start();
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.error.find("ATS failure"), std::string::npos) << bad.error;
    EXPECT_TRUE(good.ok) << good.error;  // the agent goes on
    EXPECT_FALSE(other_pasid.ok);
    EXPECT_NE(other_pasid.error.find("PASID"), std::string::npos) << other_pasid.error;
    EXPECT_EQ(p.counter("ra", "ats_failures"), 1u);
    EXPECT_EQ(p.counter("root_port", "ats_failures"), 1u);
    EXPECT_EQ(p.counter("ra", "refused"), 1u);
}

// ---- multi-line transfers ------------------------------------------------------------------

// 4 KiB read by the device: 64 line misses. With `outstanding` in flight they overlap; with one
// they follow each other. Returns the latency and checks every byte.
double transfer_4k(unsigned outstanding) {
    link::CcixConfig c;
    c.ra.max_outstanding = outstanding;
    Platform p(1, c);
    const uint64_t va = p.kernel.mmap(p.proc, 2 << 20, host::kPage2M);
    double latency = 0;
    std::vector<uint8_t> got(4096);
    p.run(0, [&](host::HostCore& cpu) {
        for (uint64_t off = 0; off < 4096; off += 8) cpu.store<uint64_t>(va + 8192 + off, off * 3);
    });
    p.device([&] {
        p.device_wait_ns(100000);
        p.device_load64(va);  // ATC warm: the whole 2 MiB page
        const sc_time t0 = p.device_now();
        const link::RaResult r =
            p.ra.transfer(false, kPid, va + 8192, got.data(), 4096, p.device_offset);
        latency = ns(p.device_now() - t0);
        EXPECT_TRUE(r.ok) << r.error;
    });
    sc_core::sc_start();
    for (uint64_t off = 0; off < 4096; off += 8) {
        uint64_t v;
        std::memcpy(&v, &got[off], 8);
        EXPECT_EQ(v, off * 3) << off;
    }
    return latency;
}

TEST(CcixPlatform, MultiLineTransferOverlapsItsLineMisses) {
    const double single_miss = 700.0;  // E2's calibrated 64 B read (the line held by the host)
    const double overlapped = transfer_4k(16);
    EXPECT_LT(overlapped, 64 * single_miss / 4);  // at least 4x better than one at a time
    EXPECT_GT(overlapped, single_miss);
}

TEST(CcixPlatform, MultiLineTransferWithOneOutstandingIsSerial) {
    const double serial = transfer_4k(1);
    EXPECT_GT(serial, 64 * 400.0);  // each line crosses the link both ways before the next
}

}  // namespace
}  // namespace canopy
