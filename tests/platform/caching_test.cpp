// The Caching SSD App (Willow Section 4.4; sw/firmware/apps/caching.c, sw/host/ssd_cache) on the
// whole platform with real firmware, in front of the disk model (models/host/disk): the host
// kernel installs it and sets its cache up on every SPU, a user process reads and writes the
// disk's blocks through it, hits straight to the SPUs and misses through the kernel's cache
// manager. Checked: hits take no system call, a miss reads the disk and installs, writes make
// blocks dirty and a dirty victim reaches the disk before its frame is reused, the data always
// equals a reference model of the disk, two processes sharing the cache, the refusals, dirty
// blocks across a reboot of the app (in SSD memory and on the flash), the hit ratio of a Zipf
// 90/10 workload against models of the replacement, and the FlashCache baseline's costs and hit
// ratio. Expected numbers come from the configuration and first principles. Each TEST
// elaborates once (its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/caching_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/data_rpc.hpp"
#include "sw/host/payload.hpp"
#include "sw/host/zipf.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 2;
constexpr uint32_t kBlock = CACHE_BLOCK_BYTES;

// A region of `frames` frames per SPU, in whole 8 KiB stripes (the stack's unit).
uint32_t region_for(uint32_t frames) { return (CACHE_REGION_BYTES(frames) + 8191) / 8192 * 8192; }

// Two SPUs storing in SSD memory (the prototype's PCM emulation), so that runs stay short.
struct CacheMachine : StackMachine {
    explicit CacheMachine(uint32_t frames = 15,
                          const std::function<void(PlatformConfig&)>& tweak = nullptr)
        : StackMachine(kSpus, tweak,
                       [&](WillowStackConfig& w) { w.cache_bytes = region_for(frames); }) {}
    sw::CacheManager& manager() { return stack->cache_manager; }
    host::Disk& disk() { return stack->disk; }
    std::vector<uint8_t> on_disk(uint64_t block) {
        std::vector<uint8_t> b(kBlock);
        disk().peek(block * kBlock, b.data(), kBlock);
        return b;
    }
};

double ns(host::HostCore& cpu) { return cpu.now().to_seconds() * 1e9; }

// What the disk holds as the cache's user sees it: every write applied.
struct Reference {
    std::map<uint64_t, std::vector<uint8_t>> blocks;
    std::vector<uint8_t>& block(uint64_t b) {
        auto& v = blocks[b];
        if (v.empty()) v.assign(kBlock, 0);  // never written: the disk's zeros
        return v;
    }
    void write(uint64_t offset, const std::vector<uint8_t>& data) {
        for (size_t i = 0; i < data.size(); ++i)
            block((offset + i) / kBlock)[(offset + i) % kBlock] = data[i];
    }
    std::vector<uint8_t> read(uint64_t offset, size_t n) {
        std::vector<uint8_t> out(n);
        for (size_t i = 0; i < n; ++i) out[i] = block((offset + i) / kBlock)[(offset + i) % kBlock];
        return out;
    }
};

TEST(Caching, AMissInstallsFromTheDiskAndHitsTakeNoSystemCall) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        auto cache = m.stack->caching(cpu);
        const host::Disk::Stats disk0 = m.disk().stats();
        // Blocks 10 (SPU 0) and 11 (SPU 1) on the disk.
        for (uint64_t b : {10, 11})
            m.disk().poke(b * kBlock, pattern(kBlock, unsigned(b)).data(), kBlock);
        std::vector<uint8_t> got(kBlock);
        double t0 = ns(cpu);
        cache->read(10 * kBlock, got.data(), kBlock);
        const double miss_ns = ns(cpu) - t0;
        EXPECT_EQ(got, pattern(kBlock, 10));
        EXPECT_EQ(m.manager().stats().misses, 1u);
        EXPECT_EQ(m.manager().stats().installs, 1u);
        EXPECT_EQ(m.disk().stats().reads - disk0.reads, 1u);
        // A miss costs at least the disk's service and the block layer around it.
        const sw::WillowFsConfig& k = m.stack->fs.config();
        EXPECT_GT(miss_ns, m.disk().stats().busy_ns - disk0.busy_ns + k.block_ns + k.completion_ns +
                               k.syscall_ns);
        // Hit: no system call, no disk.
        t0 = ns(cpu);
        cache->read(10 * kBlock, got.data(), kBlock);
        const double hit_ns = ns(cpu) - t0;
        EXPECT_EQ(got, pattern(kBlock, 10));
        EXPECT_EQ(m.manager().stats().misses, 1u);
        EXPECT_EQ(m.disk().stats().reads - disk0.reads, 1u);
        EXPECT_EQ(cache->stats().hits, 1u);
        EXPECT_EQ(cache->stats().misses, 1u);
        EXPECT_LT(hit_ns, 100e3);
        // Pieces inside a block, and across two blocks on two SPUs: block 11 misses once.
        std::vector<uint8_t> part(300);
        cache->read(10 * kBlock + 1000, part.data(), 300);
        EXPECT_EQ(part, std::vector<uint8_t>(got.begin() + 1000, got.begin() + 1300));
        std::vector<uint8_t> across(2000);
        cache->read(11 * kBlock - 1000, across.data(), 2000);
        std::vector<uint8_t> want(got.end() - 1000, got.end());
        const std::vector<uint8_t> b11 = pattern(kBlock, 11);
        want.insert(want.end(), b11.begin(), b11.begin() + 1000);
        EXPECT_EQ(across, want);
        EXPECT_EQ(m.manager().stats().misses, 2u);
        // The SPUs counted the same: 2 misses, 3 hits (the retries after each miss, and the
        // piece of block 10), two blocks installed, nothing dirty.
        const sw::CacheCounters c = m.manager().counters(cpu);
        EXPECT_EQ(c.misses, 2u);
        EXPECT_EQ(c.hits, 5u);
        EXPECT_EQ(c.installs, 2u);
        EXPECT_EQ(c.valid, 2u);
        EXPECT_EQ(c.dirty, 0u);
        EXPECT_EQ(c.frames, 2u * m.stack->cache_frames());
        std::cout << "[ Caching  ] 4 KiB read: hit " << hit_ns / 1e3 << " us, miss "
                  << miss_ns / 1e3 << " us\n";
        ::testing::Test::RecordProperty("hit_read_ns", std::to_string(hit_ns));
        ::testing::Test::RecordProperty("miss_read_ns", std::to_string(miss_ns));
    });
}

// Whole-block writes of twice the frames one SPU has: the first fill the cache dirty (no disk
// read), each later one evicts a dirty block, which reaches the disk before its frame is reused.
TEST(Caching, DirtyVictimsReachTheDiskBeforeTheirFrameIsReused) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        auto cache = m.stack->caching(cpu);
        const uint32_t f = m.stack->cache_frames();
        auto block = [&](uint32_t i) { return uint64_t(2 * i); };  // all on SPU 0
        auto data = [&](uint32_t i) { return pattern(kBlock, 100 + i); };
        for (uint32_t i = 0; i < f; ++i) cache->write(block(i) * kBlock, data(i).data(), kBlock);
        sw::CacheCounters c = m.manager().counters(cpu);
        EXPECT_EQ(c.dirty, f);
        EXPECT_EQ(c.evictions, 0u);
        EXPECT_EQ(m.disk().stats().accesses(), 0u);  // write-back, and whole blocks need no read
        EXPECT_EQ(m.on_disk(block(0)), std::vector<uint8_t>(kBlock, 0));
        // Every hit counter is 1 (installed once, never hit): the clock takes one off each
        // frame, comes round to frame 0, and its block (the first written) goes to the disk.
        cache->write(block(f) * kBlock, data(f).data(), kBlock);
        EXPECT_EQ(m.on_disk(block(0)), data(0));
        EXPECT_EQ(m.disk().stats().writes, 1u);
        for (uint32_t i = f + 1; i < 2 * f; ++i)
            cache->write(block(i) * kBlock, data(i).data(), kBlock);
        // The first f are on the disk, the last f only in the cache.
        for (uint32_t i = 0; i < 2 * f; ++i)
            EXPECT_EQ(m.on_disk(block(i)), i < f ? data(i) : std::vector<uint8_t>(kBlock, 0)) << i;
        c = m.manager().counters(cpu);
        EXPECT_EQ(c.dirty, f);
        EXPECT_EQ(c.evictions, f);
        EXPECT_EQ(c.writebacks, f);
        EXPECT_EQ(m.manager().stats().writebacks, f);
        EXPECT_EQ(m.disk().stats().reads, 0u);
        // Every block reads back, the evicted ones from the disk again (and each of those
        // misses evicts one of the cached dirty blocks).
        for (uint32_t i = 0; i < 2 * f; ++i) {
            std::vector<uint8_t> got(kBlock);
            cache->read(block(i) * kBlock, got.data(), kBlock);
            EXPECT_EQ(got, data(i)) << i;
        }
        // A partial write that misses: the rest of the block comes from the disk.
        const uint64_t b = block(2 * f);
        m.disk().poke(b * kBlock, pattern(kBlock, 7).data(), kBlock);
        const uint64_t reads = m.disk().stats().reads;
        cache->write(b * kBlock + 50, std::vector<uint8_t>(100, 0xAB).data(), 100);
        EXPECT_EQ(m.disk().stats().reads, reads + 1);
        std::vector<uint8_t> want = pattern(kBlock, 7), got(kBlock);
        std::fill(want.begin() + 50, want.begin() + 150, 0xAB);
        cache->read(b * kBlock, got.data(), kBlock);
        EXPECT_EQ(got, want);
        EXPECT_EQ(m.on_disk(b), pattern(kBlock, 7));  // not yet
        // A flush writes every dirty block; the disk then holds everything.
        const uint32_t dirty = uint32_t(m.manager().counters(cpu).dirty);
        EXPECT_EQ(m.manager().flush(cpu), dirty);
        EXPECT_EQ(m.manager().counters(cpu).dirty, 0u);
        EXPECT_EQ(m.on_disk(b), want);
        for (uint32_t i = 0; i < 2 * f; ++i) EXPECT_EQ(m.on_disk(block(i)), data(i)) << i;
        EXPECT_EQ(m.manager().flush(cpu), 0u);
    });
}

// Random reads and writes of any length at any offset over eight times the cache: every read
// equals the reference, and after a flush so does the disk.
TEST(Caching, RandomAccessesMatchAReferenceModel) {
    CacheMachine m;
    m.user(
        [&](host::HostCore& cpu) {
            auto cache = m.stack->caching(cpu);
            const uint64_t blocks = 8 * kSpus * m.stack->cache_frames();
            Reference ref;
            for (uint64_t b = 0; b < blocks; b += 2) {  // half the blocks hold data already
                m.disk().poke(b * kBlock, pattern(kBlock, unsigned(b) + 3).data(), kBlock);
                ref.block(b) = pattern(kBlock, unsigned(b) + 3);
            }
            core::Rng rng(11);
            unsigned reads = 0, writes = 0;
            for (unsigned op = 0; op < 600; ++op) {
                const bool whole = rng() % 4 == 0;
                const uint64_t n = whole ? kBlock : 1 + rng() % 6000;
                const uint64_t at =
                    whole ? (rng() % blocks) * kBlock : rng() % (blocks * kBlock - n);
                if (rng() % 2) {
                    std::vector<uint8_t> d(n);
                    for (auto& x : d) x = uint8_t(rng());
                    cache->write(at, d.data(), n);
                    ref.write(at, d);
                    ++writes;
                } else {
                    std::vector<uint8_t> got(n);
                    cache->read(at, got.data(), n);
                    ASSERT_EQ(got, ref.read(at, n)) << "op " << op << " at " << at << " + " << n;
                    ++reads;
                }
            }
            EXPECT_GT(reads, 250u);
            EXPECT_GT(writes, 250u);
            // The SPUs saw every READ and WRITE: the pieces and the retries after misses.
            const sw::SsdCache::Stats& s = cache->stats();
            const sw::CacheCounters c = m.manager().counters(cpu);
            EXPECT_EQ(c.hits + c.misses, s.pieces + s.retries);
            EXPECT_EQ(c.misses, s.misses);
            EXPECT_EQ(s.misses, m.manager().stats().misses);
            EXPECT_GT(c.evictions, 100u);
            EXPECT_GT(c.writebacks, 50u);
            m.manager().flush(cpu);
            for (uint64_t b = 0; b < blocks; ++b) EXPECT_EQ(m.on_disk(b), ref.block(b)) << b;
        },
        60);
}

// One Caching RPC on an HRE; DATA requests are taken and counted, the last one's header kept.
struct Raw {
    sw::Hre& hre;
    uint32_t app;
    unsigned data = 0;
    cache_data last{};
    uint32_t operator()(uint32_t spu, uint16_t handler, const std::vector<uint8_t>& p) {
        const sw::Hre::Response r = sw::call_with_data(
            hre, uint8_t(spu), SPU_OS_RPC_ID(app, handler), p.data(), uint32_t(p.size()),
            SPU_OS_RPC_ID(app, CACHE_DATA), [&](const sw::Hre::Request& req) {
                ++data;
                if (req.length >= sizeof last) hre.copy_payload(req, 0, &last, sizeof last);
                return true;
            });
        EXPECT_TRUE(r.ok()) << "HRE status " << r.status;
        return r.result;
    }
};
template <class... T>
std::vector<uint8_t> payload(const T&... parts) {
    std::vector<uint8_t> p;
    (sw::put(p, parts), ...);
    return p;
}

// The app removed and installed again by the kernel, as a power cycle of the SPUs would leave
// it: its DMEM zeroed, its store as it was; it answers CACHE_E_STATE until remount().
void reinstall(CacheMachine& m, host::HostCore& cpu) {
    sw::WillowApps& apps = *m.stack->kernel.on(cpu).apps;
    const uint32_t app = m.stack->cfg.caching_app;
    for (uint32_t s = 0; s < kSpus; ++s)
        EXPECT_EQ(apps.hre().call(uint8_t(s), SPU_OS_RPC_ID(0, SPU_OS_RPC_REMOVE), &app, 4).result,
                  SPU_OS_OK);
    apps.install(m.stack->cfg.firmware_dir + "/app_caching.elf", app, WillowStack::kCachingSlot);
}
// The app's region and CACHE_SETUP without formatting on every SPU, as the kernel's boot sends
// them. The processes' grants are not sent again: their libraries ask the kernel when refused.
void remount(CacheMachine& m, host::HostCore& cpu) {
    m.stack->give_cache_region(*m.stack->kernel.on(cpu).apps);
    Raw kernel{*m.stack->kernel.on(cpu).hre, m.stack->cfg.caching_app};
    for (uint32_t s = 0; s < kSpus; ++s)
        EXPECT_EQ(kernel(s, CACHE_SETUP, payload(m.stack->cache_setup(s, 0))), CACHE_OK);
}

TEST(Caching, RefusalsNameTheProblem) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        auto cache = m.stack->caching(cpu);
        const uint32_t app = m.stack->cfg.caching_app, f = m.stack->cache_frames();
        const uint32_t blocks = uint32_t(m.manager().disk_blocks());
        std::vector<uint8_t> d(kBlock, 0x5A), one(kBlock);
        cache->write(0, d.data(), kBlock);        // block 0: cached, dirty, in a frame of SPU 0
        cache->read(kBlock, one.data(), kBlock);  // block 1: cached, clean, SPU 1
        // The library refuses a range past the disk before it sends anything.
        const std::string past =
            refusal([&] { cache->read(uint64_t(blocks) * kBlock - 10, d.data(), 20); });
        EXPECT_NE(past.find("the cached disk holds"), std::string::npos) << past;
        // A user's own HRE: the management RPCs are the kernel's.
        sw::Hre own(cpu, m.stack->driver.open(cpu));
        Raw user{own, app};
        std::vector<uint8_t> install = payload(cache_install_args{4, 0, 0});
        install.resize(install.size() + kBlock);
        for (const auto& [handler, p] : std::vector<std::pair<uint16_t, std::vector<uint8_t>>>{
                 {CACHE_SETUP, payload(m.stack->cache_setup(0, 1))},
                 {CACHE_VICTIM, payload(cache_victim_args{1})},
                 {CACHE_WRITEBACK, payload(cache_writeback_args{0, 1})},
                 {CACHE_INSTALL, install},
                 {CACHE_CLEAN, payload(cache_clean_args{0})},
                 {CACHE_STATS, payload(cache_stats_args{CACHE_STAT_HITS})},
                 {CACHE_GRANT, payload(cache_grant_args{1, 0, 1, SPU_OS_PERM_READ})}})
            EXPECT_EQ(user(0, handler, p), SPU_OS_E_KERNEL_ONLY) << handler;
        EXPECT_EQ(user.data, 0u);
        // Blocks out of range or on the wrong SPU; malformed reads and writes.
        EXPECT_EQ(user(blocks % kSpus, CACHE_READ, payload(cache_read_args{blocks, 0, 8, 1})),
                  CACHE_E_RANGE);
        EXPECT_EQ(user(0, CACHE_READ, payload(cache_read_args{1, 0, 8, 1})), CACHE_E_RANGE);
        EXPECT_EQ(user(0, CACHE_READ, payload(cache_read_args{0, 0, 0, 1})), CACHE_E_ARGS);
        EXPECT_EQ(user(0, CACHE_READ, payload(cache_read_args{0, 4000, 200, 1})), CACHE_E_ARGS);
        EXPECT_EQ(user(0, CACHE_READ, payload(uint32_t(0))), CACHE_E_ARGS);
        std::vector<uint8_t> short_write = payload(cache_write_args{0, 0, 100});
        short_write.resize(short_write.size() + 50);
        EXPECT_EQ(user(0, CACHE_WRITE, short_write), CACHE_E_ARGS);
        EXPECT_EQ(user.data, 0u);
        EXPECT_EQ(user(0, CACHE_READ, payload(cache_read_args{0, 8, 8, 1})), CACHE_OK);
        EXPECT_EQ(user.data, 1u);
        // The kernel's own refusals.
        Raw kernel{*m.stack->kernel.on(cpu).hre, app};
        auto install_of = [&](uint32_t block, uint32_t frame, uint32_t flags) {
            std::vector<uint8_t> p = payload(cache_install_args{block, frame, flags});
            p.resize(p.size() + kBlock);
            return p;
        };
        EXPECT_EQ(kernel(0, CACHE_INSTALL, install_of(2, f, 0)), CACHE_E_RANGE);
        EXPECT_EQ(kernel(0, CACHE_INSTALL, install_of(3, 0, 0)), CACHE_E_RANGE);  // SPU 1's
        EXPECT_EQ(kernel(0, CACHE_INSTALL, install_of(0, 1, 0)), CACHE_E_PRESENT);
        EXPECT_EQ(kernel(0, CACHE_INSTALL, install_of(2, 0, 4)), CACHE_E_ARGS);
        EXPECT_EQ(kernel(0, CACHE_INSTALL, payload(cache_install_args{2, 0, 0})), CACHE_E_ARGS);
        EXPECT_EQ(kernel(0, CACHE_CLEAN, payload(cache_clean_args{2})), CACHE_E_MISS);
        // Block 0 is dirty and was never handed over: CLEAN refuses, it stays dirty.
        EXPECT_EQ(kernel(0, CACHE_CLEAN, payload(cache_clean_args{0})), CACHE_E_DIRTIED);
        EXPECT_EQ(m.manager().stat(cpu, 0, CACHE_STAT_DIRTY), 1u);
        // Its frame is the only dirty one of SPU 0 (WRITEBACK finds it from frame 0 on): no
        // INSTALL there.
        const unsigned before = kernel.data;
        EXPECT_EQ(kernel(0, CACHE_WRITEBACK, payload(cache_writeback_args{0, 9})), CACHE_OK);
        EXPECT_EQ(kernel.data, before + 1);
        EXPECT_EQ(kernel.last.block, 0u);
        EXPECT_EQ(kernel.last.flags, CACHE_VALID | CACHE_DIRTY);
        EXPECT_EQ(kernel.last.bytes, kBlock);
        const uint32_t dirty_frame = kernel.last.frame;
        EXPECT_EQ(kernel(0, CACHE_INSTALL, install_of(2, dirty_frame, 0)), CACHE_E_DIRTY);
        EXPECT_EQ(kernel(0, CACHE_WRITEBACK, payload(cache_writeback_args{dirty_frame + 1, 9})),
                  CACHE_E_CLEAN);
        // Handed over, then written again: still refused.
        cache->write(0, d.data(), 10);
        EXPECT_EQ(kernel(0, CACHE_CLEAN, payload(cache_clean_args{0})), CACHE_E_DIRTIED);
        EXPECT_EQ(kernel(0, CACHE_STATS, payload(cache_stats_args{CACHE_STATS_COUNT})),
                  CACHE_E_ARGS);
        // A bad SETUP leaves the SPU without a cache until a good one.
        cache_setup_args bad = m.stack->cache_setup(0, 0);
        bad.frames = CACHE_MAX_FRAMES + 1;
        EXPECT_EQ(kernel(0, CACHE_SETUP, payload(bad)), CACHE_E_ARGS);
        const std::string why = refusal([&] { cache->read(0, d.data(), 8); });
        EXPECT_NE(why.find("CACHE_E_STATE"), std::string::npos) << why;
        EXPECT_NE(why.find("block 0 on SPU 0"), std::string::npos) << why;
        EXPECT_EQ(kernel(0, CACHE_SETUP, payload(m.stack->cache_setup(0, 0))), CACHE_OK);
        cache->read(0, d.data(), 8);
        EXPECT_EQ(std::vector<uint8_t>(d.begin(), d.begin() + 8), std::vector<uint8_t>(8, 0x5A));
    });
}

// Two processes on two cores at once over 30 frames: both read a shared set of blocks nobody
// writes, and each writes and reads a set of its own. Their misses meet at the SPUs' locks,
// the same shared block may miss in both (the second finds it installed), and one's writes may
// dirty the other's victim; every read still equals its reference, and so does the disk after
// the flush.
TEST(Caching, TwoProcessesShareTheCache) {
    CacheMachine m;
    const uint64_t shared = 40;
    for (uint64_t b = 0; b < shared; ++b)
        m.disk().poke(b * kBlock, pattern(kBlock, unsigned(b) + 1).data(), kBlock);
    Reference refs[2];
    bool done[2] = {false, false}, flushed = false;
    for (unsigned p = 0; p < 2; ++p) {
        auto& proc = m.platform->host.kernel.create_process("user" + std::to_string(p));
        m.platform->host.cores.at(1 + p)->run(proc, [&, p](host::HostCore& cpu) {
            WillowStack::User u(*m.stack, m.running);
            m.stack->wait_ready(cpu);
            auto cache = m.stack->caching(cpu);
            core::Rng rng(31 + p);
            Reference& ref = refs[p];
            const uint64_t own = 100 * (p + 1);
            std::vector<uint8_t> d(kBlock);
            for (unsigned op = 0; op < 300; ++op) {
                const unsigned kind = unsigned(rng() % 4);
                if (kind < 2) {
                    const uint64_t b = rng() % shared;
                    cache->read(b * kBlock, d.data(), kBlock);
                    EXPECT_EQ(d, pattern(kBlock, unsigned(b) + 1)) << "process " << p;
                    continue;
                }
                const uint64_t b = own + rng() % 30;
                if (kind == 2) {
                    d = pattern(kBlock, op * 7 + p);
                    const uint32_t at = uint32_t(rng() % 2 ? 0 : rng() % 2048);
                    const std::vector<uint8_t> piece(d.begin() + at, d.end());
                    cache->write(b * kBlock + at, piece.data(), uint32_t(piece.size()));
                    ref.write(b * kBlock + at, piece);
                } else {
                    cache->read(b * kBlock, d.data(), kBlock);
                    EXPECT_EQ(d, ref.read(b * kBlock, kBlock)) << "process " << p;
                }
            }
            done[p] = true;
            if (p == 0) {  // once both are done: the kernel's flush
                wait_for(cpu, done[1]);
                m.manager().flush(cpu);
                flushed = true;
            }
        });
    }
    sc_core::sc_start(sc_core::sc_time(60, sc_core::SC_SEC));
    ASSERT_TRUE(done[0] && done[1] && flushed);
    for (unsigned p = 0; p < 2; ++p)
        for (const auto& [b, data] : refs[p].blocks) EXPECT_EQ(m.on_disk(b), data) << b;
    const sw::CacheManager::Stats& s = m.manager().stats();
    EXPECT_GT(m.manager().lock_waits(), 0u);
    std::cout << "[ Caching  ] two processes: " << s.misses << " misses, "
              << m.manager().lock_waits() << " waited for the SPU's lock, " << s.present
              << " found their block installed, " << s.repicks << " victims written meanwhile\n";
}

// Caching's own permission entries (Willow 4.4): the kernel gives the app its region and grants
// processes blocks with a kernel-only RPC. A process the kernel granted nothing, or other blocks,
// reaches the app but not the blocks: its READs and WRITEs are refused and the victim's data
// stays; it can neither grant itself blocks nor give any app a region.
TEST(Caching, AProcessReachesOnlyTheBlocksItWasGranted) {
    CacheMachine m;
    const uint32_t app = m.stack->cfg.caching_app;
    const std::vector<uint8_t> secret = pattern(kBlock, 77);
    bool written = false, attacked = false;
    std::vector<uint8_t> after(kBlock);
    m.users(
        {[&](host::HostCore& cpu) {  // the victim: block 0 (SPU 0) cached and dirty
             auto cache = m.stack->caching(cpu);
             cache->write(0, secret.data(), kBlock);
             written = true;
             wait_for(cpu, attacked);
             cache->read(0, after.data(), kBlock);
         },
         [&](host::HostCore& cpu) {  // the attacker, a process of its own
             wait_for(cpu, written);
             const uint32_t pid = cpu.process().pid;
             sw::Hre own(cpu, m.stack->driver.open(cpu));
             Raw user{own, app};
             const auto read_of = [](uint32_t block) {
                 return payload(cache_read_args{block, 0, 64, 1});
             };
             std::vector<uint8_t> write_of = payload(cache_write_args{0, 0, 64});
             write_of.resize(write_of.size() + 64, 0xEE);
             EXPECT_EQ(user(0, CACHE_READ, read_of(0)), CACHE_E_DENIED);
             EXPECT_EQ(user(0, CACHE_WRITE, write_of), CACHE_E_DENIED);
             // Granting itself is the kernel's: Caching's RPC and SPU-OS's region alike.
             EXPECT_EQ(user(0, CACHE_GRANT,
                            payload(cache_grant_args{pid, 0, 1000,
                                                     SPU_OS_PERM_READ | SPU_OS_PERM_WRITE})),
                       SPU_OS_E_KERNEL_ONLY);
             const uint32_t region[] = {app, 0, 0xFFFFFFFFu};
             EXPECT_EQ(
                 own.call(0, SPU_OS_RPC_ID(0, SPU_OS_RPC_APP_REGION), region, sizeof region).result,
                 SPU_OS_E_KERNEL_ONLY);
             EXPECT_EQ(user(0, CACHE_READ, read_of(0)), CACHE_E_DENIED);
             EXPECT_EQ(user.data, 0u);  // not a byte left the SPU
             // Read-only blocks 0 and 1 from the kernel: block 0 reads, is not written;
             // block 2 (SPU 0 too) stays out of reach.
             m.stack->cache_manager.grant(cpu, pid, 0, 2, SPU_OS_PERM_READ);
             EXPECT_EQ(user(0, CACHE_READ, read_of(0)), CACHE_OK);
             EXPECT_EQ(user.data, 1u);
             EXPECT_EQ(user(0, CACHE_WRITE, write_of), CACHE_E_DENIED);
             EXPECT_EQ(user(0, CACHE_READ, read_of(2)), CACHE_E_DENIED);
             // Revoked (0 blocks), it is refused again; the library names the refusal.
             m.stack->cache_manager.grant(cpu, pid, 0, 0, 0);
             EXPECT_EQ(user(0, CACHE_READ, read_of(0)), CACHE_E_DENIED);
             sw::SsdCache cache(cpu, std::make_unique<sw::Hre>(cpu, m.stack->driver.open(cpu)),
                                m.stack->cache_manager);
             std::vector<uint8_t> d(64);
             const std::string why = refusal([&] { cache.read(0, d.data(), 64); });
             EXPECT_NE(why.find("CACHE_E_DENIED"), std::string::npos) << why;
             attacked = true;
         }});
    EXPECT_EQ(after, secret);
    // The victim's first write only: the refusals took no miss path.
    EXPECT_EQ(m.stack->cache_manager.stats().misses, 1u);
}

// The kernel's grant table on an SPU: malformed entries refused, a full table says so, and an
// entry of the same process and first block is replaced, not added.
TEST(Caching, TheGrantTableIsBoundedAndRefusesMalformedEntries) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        Raw kernel{*m.stack->kernel.on(cpu).hre, m.stack->cfg.caching_app};
        const auto grant = [&](uint32_t process, uint32_t first, uint32_t blocks, uint32_t rights) {
            return kernel(0, CACHE_GRANT,
                          payload(cache_grant_args{process, first, blocks, rights}));
        };
        EXPECT_EQ(grant(0, 0, 1, SPU_OS_PERM_READ), CACHE_E_ARGS);  // the kernel needs none
        EXPECT_EQ(grant(5, 0, 1, 4), CACHE_E_ARGS);                 // no such right
        EXPECT_EQ(grant(5, 0, 1, 0), CACHE_E_ARGS);                 // blocks without rights
        EXPECT_EQ(kernel(0, CACHE_GRANT, payload(uint32_t(5))), CACHE_E_ARGS);
        // This body's process was granted nothing (no WillowStack::caching): the table is empty.
        // Fill it, then one more is refused; replacing one is not.
        for (uint32_t i = 0; i < CACHE_MAX_GRANTS; ++i)
            EXPECT_EQ(grant(100 + i, 0, 1, SPU_OS_PERM_READ), CACHE_OK) << i;
        EXPECT_EQ(grant(200, 0, 1, SPU_OS_PERM_READ), CACHE_E_GRANTS);
        EXPECT_EQ(grant(100, 0, 8, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE), CACHE_OK);
        EXPECT_EQ(grant(101, 0, 0, 0), CACHE_OK);  // revoked: room for one
        EXPECT_EQ(grant(200, 0, 1, SPU_OS_PERM_READ), CACHE_OK);
        EXPECT_EQ(grant(201, 0, 1, SPU_OS_PERM_READ), CACHE_E_GRANTS);
    });
}

// The app removed and installed again (its DMEM zeroed, as by a power cycle of the SPUs), then
// set up without formatting: every block is where it was, dirty ones still dirty; a region of
// another geometry is refused, and so are broken chains.
TEST(Caching, DirtyBlocksSurviveAReboot) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        auto cache = m.stack->caching(cpu);
        const uint32_t app = m.stack->cfg.caching_app;
        Reference ref;
        for (uint64_t b = 0; b < 12; ++b) {  // 6 dirty, 6 clean, on both SPUs
            if (b % 4 < 2) {
                ref.block(b) = pattern(kBlock, unsigned(b) + 40);
                cache->write(b * kBlock, ref.block(b).data(), kBlock);
            } else {
                std::vector<uint8_t> got(kBlock);
                cache->read(b * kBlock, got.data(), kBlock);
            }
        }
        const sw::CacheCounters before = m.manager().counters(cpu);
        EXPECT_EQ(before.dirty, 6u);
        EXPECT_EQ(before.valid, 12u);
        reinstall(m, cpu);
        Raw kernel{*m.stack->kernel.on(cpu).hre, app};
        std::vector<uint8_t> d(kBlock);
        const std::string why = refusal([&] { cache->read(0, d.data(), 8); });
        EXPECT_NE(why.find("CACHE_E_STATE"), std::string::npos) << why;
        // Another geometry: no cache there.
        cache_setup_args other = m.stack->cache_setup(0, 0);
        other.frames -= 1;
        EXPECT_EQ(kernel(0, CACHE_SETUP, payload(other)), CACHE_E_STATE);
        // A chain that loops back on itself: SPU 0's bucket of block 0 (bucket 0) names a frame
        // whose entry's `next` is made to point at the frame itself.
        const cache_setup_args s0 = m.stack->cache_setup(0, 0);
        const uint32_t head_at = s0.base + CACHE_BUCKETS_AT(s0.frames);
        uint32_t head = 0;
        m.ssd().dram.read(head_at, reinterpret_cast<uint8_t*>(&head), 4);
        ASSERT_GT(head, 0u);
        const uint32_t next_at =
            s0.base + CACHE_ENTRIES_AT + (head - 1) * uint32_t(sizeof(cache_entry)) + 4;
        uint32_t next = 0;
        m.ssd().dram.read(next_at, reinterpret_cast<uint8_t*>(&next), 4);
        m.ssd().dram.write(next_at, reinterpret_cast<const uint8_t*>(&head), 4);
        EXPECT_EQ(kernel(0, CACHE_SETUP, payload(s0)), CACHE_E_CORRUPT);
        m.ssd().dram.write(next_at, reinterpret_cast<const uint8_t*>(&next), 4);
        remount(m, cpu);
        const sw::CacheCounters after = m.manager().counters(cpu);
        EXPECT_EQ(after.dirty, before.dirty);
        EXPECT_EQ(after.valid, before.valid);
        EXPECT_EQ(after.hits + after.misses, 0u);
        // Every block hits, with its data; the dirty ones are not on the disk yet.
        const uint64_t misses = m.manager().stats().misses;
        for (uint64_t b = 0; b < 12; ++b) {
            cache->read(b * kBlock, d.data(), kBlock);
            EXPECT_EQ(d, ref.block(b)) << b;
        }
        EXPECT_EQ(m.manager().stats().misses, misses);
        // The reinstalled app had lost the kernel's grant: asked for once on each SPU.
        EXPECT_EQ(m.manager().stats().regrants, kSpus);
        EXPECT_EQ(m.on_disk(0), std::vector<uint8_t>(kBlock, 0));
        EXPECT_EQ(m.manager().flush(cpu), 6u);
        for (uint64_t b = 0; b < 12; ++b) EXPECT_EQ(m.on_disk(b), ref.block(b)) << b;
    });
}

// ---- replacement under a Zipf workload -------------------------------------------------------

// Zipf over n ranks: rank i (from 1) has probability i^-theta / sum.
// Models of a cache of `frames` under independent references with probabilities p (a share of
// all accesses): the hit probability mass each predicts.
// - The best a replacement can do without knowing the future (a static LFU): the top frames.
double lfu_hits(std::vector<double> p, uint32_t frames) {
    std::sort(p.rbegin(), p.rend());
    return std::accumulate(p.begin(), p.begin() + std::min<size_t>(frames, p.size()), 0.0);
}
// - LRU by Che's approximation: a block stays cached for a characteristic time T after its last
//   reference, sum (1 - e^(-p T)) = frames; CLOCK approximates LRU, and the hit counters only
//   keep frequently hit blocks longer.
// - FIFO (= RANDOM under independent references, Gelenbe 1973): a block is cached with
//   probability pT / (1 + pT), their sum = frames.
double cache_model(const std::vector<double>& p, uint32_t frames, bool lru) {
    auto in = [&](double q, double t) { return lru ? 1 - std::exp(-q * t) : q * t / (1 + q * t); };
    double lo = 0, hi = 1;
    auto occupied = [&](double t) {
        double n = 0;
        for (double q : p) n += in(q, t);
        return n;
    };
    while (occupied(hi) < frames) hi *= 2;
    for (int i = 0; i < 100; ++i) {
        const double mid = (lo + hi) / 2;
        (occupied(mid) < frames ? lo : hi) = mid;
    }
    double h = 0;
    for (double q : p) h += q * in(q, lo);
    return h;
}

// fio-like: random 4 KiB accesses by a Zipf 90/10 over ten times the cache's blocks, a fifth of
// them whole-block writes, on Caching and then on FlashCache (an own block range, the same
// sequence, as many frames). After a warm-up the hit ratio of each is measured and set against
// the models of its replacement; the hottest blocks stay cached.
TEST(Caching, ZipfHitRatiosFollowTheModelsOfTheReplacement) {
    CacheMachine m(63);
    m.user(
        [&](host::HostCore& cpu) {
            const uint32_t f = m.stack->cache_frames(), frames = kSpus * f;
            const uint64_t n = 10 * uint64_t(frames);
            const double theta = sw::theta_90_10(n);
            const std::vector<double> p = sw::zipf(n, theta);
            const sw::ZipfSampler zipf_rank(p);
            std::vector<uint64_t> block_of(n);  // rank -> block, shuffled (Fisher-Yates)
            std::iota(block_of.begin(), block_of.end(), 0);
            core::Rng shuffle(3);
            for (uint64_t i = n - 1; i > 0; --i)
                std::swap(block_of[i], block_of[shuffle() % (i + 1)]);
            // The models, per SPU over its blocks' probabilities.
            std::vector<std::vector<double>> per_spu(kSpus);
            for (uint64_t r = 0; r < n; ++r) per_spu[block_of[r] % kSpus].push_back(p[r]);
            double lfu = 0, lru = 0;
            for (const auto& q : per_spu) {
                lfu += lfu_hits(q, f);
                lru += cache_model(q, f, true);
            }
            const double fifo = cache_model(p, frames, false);  // FlashCache: one set of all
            const unsigned warm = 3000, measured = 6000;
            struct Run {
                double hits = 0, read_ns = 0, write_ns = 0;
                unsigned reads = 0, writes = 0;
            };
            // One run of the access sequence, blocks shifted by `base`; `pieces` and `first`
            // read the system's counters of pieces and first-time hits.
            auto run = [&](uint64_t base, const std::function<void(bool, uint64_t, uint8_t*)>& io,
                           const std::function<uint64_t()>& hits) {
                core::Rng rng(17);
                Reference ref;
                Run out;
                uint64_t hits0 = 0;
                std::vector<uint8_t> buf(kBlock);
                for (unsigned i = 0; i < warm + measured; ++i) {
                    if (i == warm) hits0 = hits();
                    const uint64_t b = base + block_of[zipf_rank(rng)];
                    const bool write = rng() % 5 == 0;
                    if (write) buf = pattern(kBlock, i);
                    const double t0 = ns(cpu);
                    io(write, b, buf.data());
                    const double t = ns(cpu) - t0;
                    if (write) {
                        ref.block(b) = buf;
                    } else {
                        EXPECT_EQ(buf, ref.block(b)) << "access " << i << ", block " << b;
                    }
                    if (i >= warm) {
                        (write ? out.write_ns : out.read_ns) += t;
                        ++(write ? out.writes : out.reads);
                    }
                }
                out.hits = double(hits() - hits0) / measured;
                return out;
            };
            auto cache = m.stack->caching(cpu);
            const Run c = run(
                0,
                [&](bool w, uint64_t b, uint8_t* d) {
                    if (w)
                        cache->write(b * kBlock, d, kBlock);
                    else
                        cache->read(b * kBlock, d, kBlock);
                },
                [&] { return cache->stats().hits; });
            // The hottest blocks are cached: reading them takes no system call.
            const uint64_t misses = m.manager().stats().misses;
            std::vector<uint8_t> d(kBlock);
            for (uint64_t r = 0; r < 10; ++r) cache->read(block_of[r] * kBlock, d.data(), kBlock);
            EXPECT_EQ(m.manager().stats().misses, misses) << "a top-10 block was not cached";
            auto fc = m.stack->flash_cache(cpu, frames);
            const Run b = run(
                n,
                [&](bool w, uint64_t blk, uint8_t* d) {
                    if (w)
                        fc->write(cpu, blk * kBlock, d, kBlock);
                    else
                        fc->read(cpu, blk * kBlock, d, kBlock);
                },
                [&] { return fc->stats().hits; });
            // Sampling error of a ratio over `measured` accesses (3 sigma), and 2% for the
            // models' own approximation.
            auto tol = [&](double h) { return 3 * std::sqrt(h * (1 - h) / measured) + 0.02; };
            std::cout << "[ Caching  ] Zipf theta " << theta << " over " << n << " blocks, "
                      << frames << " frames: hit ratio " << c.hits << " (LRU model " << lru
                      << ", static LFU " << lfu << "); FlashCache FIFO " << b.hits << " (model "
                      << fifo << ")\n"
                      << "[ Caching  ] mean 4 KiB read " << c.read_ns / c.reads / 1e3
                      << " us, write " << c.write_ns / c.writes / 1e3 << " us; FlashCache "
                      << b.read_ns / b.reads / 1e3 << " us, " << b.write_ns / b.writes / 1e3
                      << " us\n";
            EXPECT_NEAR(std::accumulate(p.begin(), p.begin() + long(n / 10), 0.0), 0.9, 1e-9);
            EXPECT_GE(c.hits, lru - tol(lru));
            EXPECT_LE(c.hits, lfu + tol(lfu));
            EXPECT_NEAR(b.hits, fifo, tol(fifo));
            EXPECT_GT(c.hits, b.hits);
            ::testing::Test::RecordProperty("caching_hit_ratio", std::to_string(c.hits));
            ::testing::Test::RecordProperty("flashcache_hit_ratio", std::to_string(b.hits));
        },
        600);
}

// ---- against FlashCache ------------------------------------------------------------------------

// One 4 KiB access of each kind on a cached block, on Caching and on FlashCache. FlashCache's time
// is the file system's path above it, its system call and lookup, the block layer around each
// Base-IO request, and the requests themselves, which the test times alone on the kernel's Base-IO
// client: it must add up. Caching pays none of the kernel's part; its SPU looks the block up where
// Base-IO computes an address: at a chain's head, in its DMEM index of buckets, so the hit reads
// from the SSD memory exactly what Base-IO's READ reads (the block), no metadata.
TEST(Caching, HitsSkipTheKernelFlashCacheEntersEveryTime) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        auto cache = m.stack->caching(cpu);
        const sw::FlashCacheConfig fcc;
        auto fc = m.stack->flash_cache(cpu, 8, fcc);
        const sw::WillowFsConfig& k = m.stack->fs.config();
        std::vector<uint8_t> d = pattern(kBlock, 5);
        auto timed = [&](const std::function<void()>& f) {
            const double t0 = ns(cpu);
            f();
            return ns(cpu) - t0;
        };
        // Each brought in by a read miss first; then a read hit, a write hit of the clean block
        // (it turns dirty), a write hit of the dirty block.
        const uint64_t c_at = 4 * kBlock, f_at = 100 * kBlock;
        auto* dram = dynamic_cast<const core::Counter*>(
            m.services.stats.find(m.platform->device.ssd.dram.name(), "reads"));
        ASSERT_NE(dram, nullptr);
        cache->read(c_at, d.data(), kBlock);
        const uint64_t c_reads0 = dram->value();
        const double c_read = timed([&] { cache->read(c_at, d.data(), kBlock); });
        const uint64_t c_reads = dram->value() - c_reads0;
        const double c_clean = timed([&] { cache->write(c_at, d.data(), kBlock); });
        const double c_dirty = timed([&] { cache->write(c_at, d.data(), kBlock); });
        fc->read(cpu, f_at, d.data(), kBlock);
        const uint64_t md = fc->stats().metadata_writes, misses = fc->stats().misses;
        const double f_read = timed([&] { fc->read(cpu, f_at, d.data(), kBlock); });
        const double f_clean = timed([&] { fc->write(cpu, f_at, d.data(), kBlock); });
        const double f_dirty = timed([&] { fc->write(cpu, f_at, d.data(), kBlock); });
        EXPECT_EQ(fc->stats().misses, misses);
        EXPECT_EQ(fc->stats().metadata_writes, md + 1);  // the block turned dirty once
        // The same Base-IO requests alone, on FlashCache's file (its metadata blocks: never
        // read back).
        sw::BlockIo& base = *m.stack->kernel.on(cpu).base_io;
        const uint64_t dev =
            m.stack->fs.inode(*m.stack->fs.lookup("/flashcache0")).extents.at(0).device_offset;
        std::vector<uint8_t> b(kBlock);
        base.read(dev, b.data(), kBlock);
        const uint64_t b_reads0 = dram->value();
        const double b_read = timed([&] { base.read(dev, b.data(), kBlock); });
        EXPECT_EQ(c_reads, dram->value() - b_reads0);  // the block's bytes only
        EXPECT_GT(c_reads, 0u);
        const double b_write = timed([&] { base.write(dev, b.data(), kBlock); });
        const double b_md =
            timed([&] { base.write(dev, b.data(), sw::FlashCache::kMdBlockBytes); });
        // The file system above FlashCache takes its own path per call (Fio's files).
        ASSERT_TRUE(fcc.under_file_system);
        const double call = k.syscall_ns + fcc.lookup_ns, layer = k.block_ns + k.completion_ns;
        // Within 2 us: the host's caches hold other lines in the two runs.
        EXPECT_NEAR(f_read, k.read_ns + call + layer + b_read, 2000);
        EXPECT_NEAR(f_clean, k.write_ns + call + 2 * layer + b_write + b_md, 2000);
        EXPECT_NEAR(f_dirty, k.write_ns + call + layer + b_write, 2000);
        EXPECT_LT(c_clean, f_clean);
        EXPECT_LT(c_dirty, f_dirty);
        // A read hit: Base-IO's READ and the lookup on the SPU (a few us).
        EXPECT_GT(c_read, b_read);
        EXPECT_LT(c_read, b_read + 10000);
        std::cout << "[ Caching  ] 4 KiB hits: read " << c_read / 1e3 << " us, write (clean) "
                  << c_clean / 1e3 << " us, write (dirty) " << c_dirty / 1e3 << " us; FlashCache "
                  << f_read / 1e3 << ", " << f_clean / 1e3 << ", " << f_dirty / 1e3
                  << " us; Base-IO alone " << b_read / 1e3 << ", " << b_write / 1e3 << " us\n";
        ::testing::Test::RecordProperty("hit_read_ns", std::to_string(c_read));
        ::testing::Test::RecordProperty("hit_write_ns", std::to_string(c_dirty));
        ::testing::Test::RecordProperty("flashcache_hit_read_ns", std::to_string(f_read));
        ::testing::Test::RecordProperty("flashcache_hit_write_ns", std::to_string(f_dirty));
    });
}

// FlashCache's write-back as its source has it (FlashCacheConfig::background_cleaning): 20
// frames in one set, so a set with 4 dirty blocks is at its threshold. Each write above it starts
// disk writes of the oldest dirty blocks, at most 2 at a time in a set, which the writer does not
// wait for but a read miss queues behind; a dirty block is never a victim (with no clean frame a
// miss goes to the disk uncached); a hit on a block being cleaned waits for its disk write; the
// flush leaves the disk holding every write.
TEST(Caching, FlashCacheCleansInTheBackgroundAndEvictsOnlyCleanBlocks) {
    CacheMachine m;
    m.user([&](host::HostCore& cpu) {
        sw::FlashCacheConfig fcc;
        fcc.background_cleaning = true;
        auto fc = m.stack->flash_cache(cpu, 20, fcc);
        Reference ref;
        const host::Disk::Stats d0 = m.disk().stats();
        double slowest = 0;
        for (uint64_t b = 0; b < 10; ++b) {  // whole-block write misses: installed dirty
            ref.block(b) = pattern(kBlock, unsigned(b) + 1);
            const double t0 = ns(cpu);
            fc->write(cpu, b * kBlock, ref.block(b).data(), kBlock);
            slowest = std::max(slowest, ns(cpu) - t0);
        }
        // The 5th write (5 dirty, one above 4) started one cleaning, the 6th a second; then the
        // set had its 2. No write waited for the disk (a random access takes milliseconds).
        EXPECT_EQ(fc->stats().cleanings, 2u);
        EXPECT_EQ(m.disk().stats().writes - d0.writes, 2u);
        EXPECT_LT(slowest, 500e3);
        EXPECT_EQ(fc->dirty(), 10u);  // until their disk writes end
        auto timed_write = [&](uint64_t b, unsigned v) {
            ref.block(b) = pattern(kBlock, v);
            const double t0 = ns(cpu);
            fc->write(cpu, b * kBlock, ref.block(b).data(), kBlock);
            return ns(cpu) - t0;
        };
        // A hit on a dirty block not being cleaned goes on at once; one on block 0, which the
        // first cleaning writes (the set's oldest), waits for its disk write, then dirties it
        // again; the set then has room for a third cleaning (block 2).
        EXPECT_LT(timed_write(5, 55), 500e3);
        EXPECT_GT(timed_write(0, 50), 1e6);
        EXPECT_EQ(fc->stats().cleanings, 3u);
        EXPECT_EQ(fc->stats().writebacks, 1u);
        // A read miss queues behind the other two disk writes, which end meanwhile.
        std::vector<uint8_t> d(kBlock);
        fc->read(cpu, 100 * kBlock, d.data(), kBlock);
        EXPECT_EQ(d, ref.block(100));
        EXPECT_GT(m.disk().stats().queued_ns - d0.queued_ns, 1e6);
        EXPECT_EQ(fc->stats().writebacks, 3u);
        EXPECT_EQ(fc->dirty(), 8u) << "blocks 1 and 2 are clean now";
        // Ten more dirty blocks and four clean ones fill the 20 frames; more write misses find
        // a clean victim or none: never a dirty one.
        for (uint64_t b = 10; b < 40; ++b) {
            ref.block(b) = pattern(kBlock, unsigned(b) + 1);
            fc->write(cpu, b * kBlock, ref.block(b).data(), kBlock);
            EXPECT_LE(fc->dirty(), 20u);
        }
        const sw::FlashCache::Stats& st = fc->stats();
        EXPECT_GT(st.uncached, 0u);
        // Every disk write so far is a cleaning's or an uncached write's: no victim was written
        // back on a request's time.
        EXPECT_EQ(m.disk().stats().writes - d0.writes, st.cleanings + st.uncached);
        fc->flush(cpu);  // waits for the cleanings under way, then writes back the rest
        EXPECT_EQ(fc->dirty(), 0u);
        for (uint64_t b = 0; b < 40; ++b) EXPECT_EQ(m.on_disk(b), ref.block(b)) << b;
    });
}

// The same on the flash store (2 channels of TLC through the FTL): whole-block writes of twice an
// SPU's frames, every block read back, the app rebooted on the mounted store with its dirty
// blocks, the flush. A hit reads the bucket and the frame from the flash.
TEST(Caching, OnTheFlashStore) {
    CacheMachine m(15, [](PlatformConfig& c) {
        c.nand.geometry.channels = kSpus;
        c.ssd.store.flash = true;
        c.ssd.store.format = true;
        c.ssd.store.esp_blocks = 0;
    });
    m.user(
        [&](host::HostCore& cpu) {
            ASSERT_TRUE(m.stack->on_flash);
            auto cache = m.stack->caching(cpu);
            const uint32_t f = m.stack->cache_frames();
            Reference ref;
            for (uint32_t i = 0; i < 2 * f; ++i) {
                ref.block(2 * i) = pattern(kBlock, i + 60);
                cache->write(2 * i * kBlock, ref.block(2 * i).data(), kBlock);
            }
            std::vector<uint8_t> d(kBlock);
            const uint64_t misses = m.manager().stats().misses;
            const double t0 = ns(cpu);
            cache->read(2 * (2 * f - 1) * kBlock, d.data(), kBlock);
            const double hit = ns(cpu) - t0;
            EXPECT_EQ(m.manager().stats().misses, misses);
            for (uint32_t i = 0; i < 2 * f; ++i) {
                cache->read(2 * i * kBlock, d.data(), kBlock);
                EXPECT_EQ(d, ref.block(2 * i)) << i;
            }
            // The last few read, written again: dirty (the read-back wrote the others back).
            for (uint32_t i = 2 * f - 3; i < 2 * f; ++i) {
                ref.block(2 * i) = pattern(kBlock, i + 90);
                cache->write(2 * i * kBlock, ref.block(2 * i).data(), kBlock);
            }
            const sw::CacheCounters before = m.manager().counters(cpu);
            EXPECT_GT(before.dirty, 0u);
            reinstall(m, cpu);
            remount(m, cpu);
            const sw::CacheCounters after = m.manager().counters(cpu);
            EXPECT_EQ(after.dirty, before.dirty);
            EXPECT_EQ(after.valid, before.valid);
            EXPECT_EQ(m.manager().flush(cpu), before.dirty);
            for (uint32_t i = 0; i < 2 * f; ++i) EXPECT_EQ(m.on_disk(2 * i), ref.block(2 * i)) << i;
            EXPECT_GT(m.stack->store_stats(cpu).programs, 0u);
            std::cout << "[ Caching  ] on TLC flash: 4 KiB read hit " << hit / 1e3 << " us\n";
            ::testing::Test::RecordProperty("flash_hit_read_ns", std::to_string(hit));
        },
        30);
}
#endif

}  // namespace
}  // namespace canopy::platform
