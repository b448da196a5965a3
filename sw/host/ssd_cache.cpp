#include "sw/host/ssd_cache.hpp"

#include <algorithm>
#include <cstring>

#include "sw/firmware/apps/caching_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/data_rpc.hpp"
#include "sw/host/payload.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

namespace {

// One Caching RPC on `hre`: a DATA request carrying `cookie` lands in *d, its bytes in `data`.
// Throws HostFault when the bridge fails the request (after call_with_data's retries).
uint32_t cache_rpc(Hre& hre, uint32_t app, uint32_t spu, uint16_t handler,
                   const std::vector<uint8_t>& payload, uint32_t cookie, cache_data* d,
                   void* data) {
    auto take = [&](const Hre::Request& req) {
        cache_data got{};
        if (!d || req.length < sizeof got) return false;
        hre.copy_payload(req, 0, &got, sizeof got);
        if (got.cookie != cookie || got.bytes > CACHE_BLOCK_BYTES ||
            req.length != sizeof got + got.bytes)
            return false;
        *d = got;
        if (got.bytes && data) hre.copy_payload(req, sizeof got, data, got.bytes);
        return true;
    };
    const Hre::Response r =
        call_with_data(hre, uint8_t(spu), SPU_OS_RPC_ID(app, handler), payload.data(),
                       uint32_t(payload.size()), SPU_OS_RPC_ID(app, CACHE_DATA), take);
    if (!r.ok())
        throw host::HostFault("Caching: RPC " + std::to_string(handler) + " to SPU " +
                              std::to_string(spu) + " failed: HRE status " +
                              std::to_string(r.status));
    return r.result;
}

std::string where(uint64_t block, uint32_t spus) {
    return "block " + std::to_string(block) + " on SPU " + std::to_string(block % spus);
}

}  // namespace

std::string caching_result_name(uint32_t r) {
    switch (r) {
        case CACHE_E_ARGS:
            return "CACHE_E_ARGS (malformed request)";
        case CACHE_E_RANGE:
            return "CACHE_E_RANGE (a block outside the disk or not the SPU's, or no such frame)";
        case CACHE_E_MISS:
            return "CACHE_E_MISS (the block is not in the cache)";
        case CACHE_E_STATE:
            return "CACHE_E_STATE (not set up, or the region holds no cache)";
        case CACHE_E_PRESENT:
            return "CACHE_E_PRESENT (the block is cached already)";
        case CACHE_E_DIRTY:
            return "CACHE_E_DIRTY (the frame holds a dirty block)";
        case CACHE_E_DIRTIED:
            return "CACHE_E_DIRTIED (written since its data was taken for write-back)";
        case CACHE_E_CLEAN:
            return "CACHE_E_CLEAN (no dirty frame from there on)";
        case CACHE_E_CORRUPT:
            return "CACHE_E_CORRUPT (the region's hash chains are broken)";
        case CACHE_E_DENIED:
            return "CACHE_E_DENIED (the process holds no grant for the block)";
        case CACHE_E_GRANTS:
            return "CACHE_E_GRANTS (the SPU's grant table is full)";
        default:
            return spu_os_result_name(r);
    }
}

void disk_request(host::HostCore& cpu, const WillowFsConfig& costs, host::Disk& disk, bool write,
                  uint64_t offset, void* buf, uint32_t bytes) {
    cpu.compute_ns(costs.block_ns);
    if (write)
        disk.write(cpu, offset, buf, bytes);
    else
        disk.read(cpu, offset, buf, bytes);
    cpu.compute_ns(costs.completion_ns);
}

void for_each_block(uint64_t offset, uint64_t bytes, uint64_t disk_blocks, const std::string& what,
                    const std::function<void(uint64_t, uint32_t, uint64_t, uint32_t)>& fn) {
    const uint64_t end = disk_blocks * CACHE_BLOCK_BYTES;
    if (offset > end || bytes > end - offset)
        throw host::HostFault(what + " of " + std::to_string(bytes) + " B at byte " +
                              std::to_string(offset) + " (the cached disk holds " +
                              std::to_string(end) + " B)");
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t at = offset + done;
        const uint32_t in = uint32_t(at % CACHE_BLOCK_BYTES);
        const uint32_t n = uint32_t(std::min<uint64_t>(bytes - done, CACHE_BLOCK_BYTES - in));
        fn(at / CACHE_BLOCK_BYTES, in, done, n);
        done += n;
    }
}

// ---- the kernel's cache manager ---------------------------------------------------------------

KernelLocks::Held KernelLocks::take(host::HostCore& cpu, size_t i) {
    bool waited = false;
    while (busy_[i]) {
        waited = true;
        cpu.compute_ns(poll_ns_);
        cpu.sync();
    }
    waits_ += waited;
    busy_[i] = true;
    return Held(*this, i);
}

CacheManager::CacheManager(KernelHres& kernel, const WillowFs& fs, host::Disk& disk, uint32_t app,
                           uint64_t disk_blocks, CacheManagerConfig cfg)
    : kernel_(kernel),
      fs_(fs),
      disk_(disk),
      app_(app),
      disk_blocks_(disk_blocks),
      cfg_(cfg),
      locks_(kernel.spus(), fs.config().lock_poll_ns) {
    if (app_ == SPU_OS_KERNEL_APP || app_ > 0xFF || disk_blocks_ == 0 ||
        disk_blocks_ > disk.capacity_bytes() / CACHE_BLOCK_BYTES || disk_blocks_ > 0xFFFFFFFFu)
        throw host::HostFault("Caching manager: bad set-up (app id " + std::to_string(app) + ", " +
                              std::to_string(disk_blocks) + " blocks of a disk of " +
                              std::to_string(disk.capacity_bytes()) + " B)");
}

uint32_t CacheManager::call(host::HostCore& cpu, uint32_t spu, uint16_t handler,
                            const std::vector<uint8_t>& payload, uint32_t cookie, cache_data* d,
                            void* data) {
    return cache_rpc(*kernel_.on(cpu).hre, app_, spu, handler, payload, cookie, d, data);
}

bool CacheManager::write_back(host::HostCore& cpu, uint32_t spu, uint32_t frame, uint32_t* written,
                              bool* cleaned) {
    std::vector<uint8_t> p, data(CACHE_BLOCK_BYTES);
    const uint32_t cookie = next_cookie_++;
    put(p, cache_writeback_args{frame, cookie});
    cache_data d{};
    uint32_t r = call(cpu, spu, CACHE_WRITEBACK, p, cookie, &d, data.data());
    if (r == CACHE_E_CLEAN) return false;
    if (r != CACHE_OK || d.bytes != CACHE_BLOCK_BYTES)
        throw host::HostFault("Caching: WRITEBACK from frame " + std::to_string(frame) +
                              " of SPU " + std::to_string(spu) +
                              " failed: " + caching_result_name(r));
    disk_request(cpu, costs(), disk_, true, uint64_t(d.block) * CACHE_BLOCK_BYTES, data.data(),
                 CACHE_BLOCK_BYTES);
    ++stats_.writebacks;
    p.clear();
    put(p, cache_clean_args{d.block});
    r = call(cpu, spu, CACHE_CLEAN, p);
    if (r != CACHE_OK && r != CACHE_E_DIRTIED)
        throw host::HostFault("Caching: CLEAN of " + where(d.block, spus()) +
                              " failed: " + caching_result_name(r));
    *written = d.frame;
    *cleaned = r == CACHE_OK;
    return true;
}

bool CacheManager::miss(host::HostCore& cpu, uint64_t block, const void* whole) {
    cpu.compute_ns(costs().syscall_ns + cfg_.miss_ns);
    ++stats_.misses;
    if (block >= disk_blocks_)
        throw host::HostFault("Caching: a miss of block " + std::to_string(block) +
                              " (the cache holds blocks of a disk of " +
                              std::to_string(disk_blocks_) + ")");
    const uint32_t spu = uint32_t(block % spus());
    const KernelLocks::Held held = locks_.take(cpu, spu);
    // The block's contents first: while the lock is held no other miss can install it, so what
    // the disk holds stays what the cache lacks.
    std::vector<uint8_t> data(CACHE_BLOCK_BYTES);
    if (whole)
        std::memcpy(data.data(), whole, CACHE_BLOCK_BYTES);
    else
        disk_request(cpu, costs(), disk_, false, block * CACHE_BLOCK_BYTES, data.data(),
                     CACHE_BLOCK_BYTES);
    for (uint32_t attempt = 0; attempt < cfg_.attempts; ++attempt) {
        std::vector<uint8_t> p;
        const uint32_t cookie = next_cookie_++;
        put(p, cache_victim_args{cookie});
        cache_data v{};
        uint32_t r = call(cpu, spu, CACHE_VICTIM, p, cookie, &v);
        if (r != CACHE_OK)
            throw host::HostFault("Caching: VICTIM on SPU " + std::to_string(spu) +
                                  " failed: " + caching_result_name(r));
        if (v.flags & CACHE_DIRTY) {
            uint32_t written = 0;
            bool cleaned = false;
            if (!write_back(cpu, spu, v.frame, &written, &cleaned) || written != v.frame ||
                !cleaned) {
                ++stats_.repicks;
                continue;
            }
        }
        p.clear();
        put(p, cache_install_args{uint32_t(block), v.frame, whole ? CACHE_DIRTY : 0u});
        p.insert(p.end(), data.begin(), data.end());
        r = call(cpu, spu, CACHE_INSTALL, p);
        if (r == CACHE_OK) {
            ++stats_.installs;
            return whole != nullptr;
        }
        if (r == CACHE_E_PRESENT) {
            ++stats_.present;
            return false;
        }
        if (r != CACHE_E_DIRTY)
            throw host::HostFault("Caching: INSTALL of " + where(block, spus()) + " in frame " +
                                  std::to_string(v.frame) + " failed: " + caching_result_name(r));
        ++stats_.repicks;  // a user wrote the victim since VICTIM
    }
    throw host::HostFault("Caching: no frame for " + where(block, spus()) + " after " +
                          std::to_string(cfg_.attempts) + " victims (users wrote each meanwhile)");
}

uint64_t CacheManager::flush(host::HostCore& cpu) {
    uint64_t n = 0;
    for (uint32_t s = 0; s < spus(); ++s) {
        const KernelLocks::Held held = locks_.take(cpu, s);
        uint32_t frame = 0;
        bool cleaned = false;
        while (write_back(cpu, s, frame, &frame, &cleaned)) {
            n += cleaned;
            ++frame;
        }
    }
    return n;
}

void CacheManager::grant(host::HostCore& cpu, uint32_t pid, uint32_t first, uint32_t blocks,
                         uint32_t rights) {
    const cache_grant_args g{pid, first, blocks, rights};
    for (uint32_t s = 0; s < spus(); ++s) send_grant(cpu, s, g);
    auto same = [&](const cache_grant_args& x) { return x.process == pid && x.first == first; };
    grants_.erase(std::remove_if(grants_.begin(), grants_.end(), same), grants_.end());
    if (blocks) grants_.push_back(g);
}

void CacheManager::send_grant(host::HostCore& cpu, uint32_t spu, const cache_grant_args& g) {
    std::vector<uint8_t> p;
    put(p, g);
    if (const uint32_t r = call(cpu, spu, CACHE_GRANT, p); r != CACHE_OK)
        throw host::HostFault("Caching: GRANT of blocks " + std::to_string(g.first) + "+" +
                              std::to_string(g.blocks) + " to process " +
                              std::to_string(g.process) + " on SPU " + std::to_string(spu) +
                              " failed: " + caching_result_name(r));
}

bool CacheManager::regrant(host::HostCore& cpu, uint32_t pid, uint32_t spu, uint64_t block,
                           uint32_t rights) {
    cpu.compute_ns(costs().syscall_ns);
    // Blocks past 32 bits are no cached block, and no entry covers them.
    const bool held =
        block <= UINT32_MAX && std::any_of(grants_.begin(), grants_.end(), [&](const auto& g) {
            return cache_grant_covers(&g, pid, uint32_t(block), rights);
        });
    if (!held) return false;
    for (const cache_grant_args& g : grants_)
        if (g.process == pid) send_grant(cpu, spu, g);
    ++stats_.regrants;
    return true;
}

uint32_t CacheManager::stat(host::HostCore& cpu, uint32_t spu, uint32_t which) {
    std::vector<uint8_t> p;
    put(p, cache_stats_args{which});
    return call(cpu, spu, CACHE_STATS, p);
}

CacheCounters CacheManager::counters(host::HostCore& cpu) {
    CacheCounters t;
    for (uint32_t s = 0; s < spus(); ++s) {
        t.hits += stat(cpu, s, CACHE_STAT_HITS);
        t.misses += stat(cpu, s, CACHE_STAT_MISSES);
        t.installs += stat(cpu, s, CACHE_STAT_INSTALLS);
        t.evictions += stat(cpu, s, CACHE_STAT_EVICTIONS);
        t.writebacks += stat(cpu, s, CACHE_STAT_WRITEBACKS);
        t.dirty += stat(cpu, s, CACHE_STAT_DIRTY);
        t.valid += stat(cpu, s, CACHE_STAT_VALID);
        t.frames += stat(cpu, s, CACHE_STAT_FRAMES);
    }
    return t;
}

// ---- the user library -------------------------------------------------------------------------

SsdCache::SsdCache(host::HostCore& cpu, std::unique_ptr<Hre> hre, CacheManager& manager)
    : cpu_(cpu), hre_(std::move(hre)), manager_(manager) {}

uint32_t SsdCache::access(bool write, uint64_t block, uint32_t offset, uint8_t* buf,
                          uint32_t bytes) {
    const uint32_t spu = uint32_t(block % manager_.spus());
    std::vector<uint8_t> p;
    if (write) {
        put(p, cache_write_args{uint32_t(block), uint16_t(offset), uint16_t(bytes)});
        p.insert(p.end(), buf, buf + bytes);
        return cache_rpc(*hre_, manager_.app(), spu, CACHE_WRITE, p, 0, nullptr, nullptr);
    }
    const uint32_t cookie = next_cookie_++;
    put(p, cache_read_args{uint32_t(block), uint16_t(offset), uint16_t(bytes), cookie});
    cache_data d{};
    const uint32_t r = cache_rpc(*hre_, manager_.app(), spu, CACHE_READ, p, cookie, &d, buf);
    if (r == CACHE_OK && (d.block != block || d.offset != offset || d.bytes != bytes))
        throw host::HostFault("Caching: READ of " + where(block, manager_.spus()) +
                              " got the DATA of block " + std::to_string(d.block) + " bytes " +
                              std::to_string(d.offset) + "+" + std::to_string(d.bytes));
    return r;
}

void SsdCache::piece(bool write, uint64_t block, uint32_t offset, uint8_t* buf, uint32_t bytes) {
    ++stats_.pieces;
    for (uint32_t tries = 0;; ++tries) {
        const uint32_t r = access(write, block, offset, buf, bytes);
        if (r == CACHE_OK) {
            stats_.hits += tries == 0;
            return;
        }
        const std::string what = std::string(write ? "WRITE" : "READ") + " of " +
                                 where(block, manager_.spus()) + " (bytes " +
                                 std::to_string(offset) + "+" + std::to_string(bytes) + ")";
        if (r == CACHE_E_DENIED && tries < kRetries &&
            manager_.regrant(cpu_, cpu_.process().pid, uint32_t(block % manager_.spus()), block,
                             write ? SPU_OS_PERM_WRITE : SPU_OS_PERM_READ))
            continue;  // the SPU had lost the kernel's grant
        if (r != CACHE_E_MISS)
            throw host::HostFault("Caching: " + what + " failed: " + caching_result_name(r));
        if (tries == kRetries)
            throw host::HostFault("Caching: " + what + " missed after " + std::to_string(kRetries) +
                                  " system calls (other processes' misses evicted it each time)");
        ++stats_.misses;
        if (manager_.miss(cpu_, block, write && bytes == CACHE_BLOCK_BYTES ? buf : nullptr))
            return;  // installed with this write's data
        ++stats_.retries;
    }
}

void SsdCache::read(uint64_t offset, void* dst, uint64_t bytes) {
    for_each_block(offset, bytes, manager_.disk_blocks(), "Caching: a read",
                   [&](uint64_t block, uint32_t in, uint64_t done, uint32_t n) {
                       piece(false, block, in, static_cast<uint8_t*>(dst) + done, n);
                   });
}

void SsdCache::write(uint64_t offset, const void* src, uint64_t bytes) {
    for_each_block(offset, bytes, manager_.disk_blocks(), "Caching: a write",
                   [&](uint64_t block, uint32_t in, uint64_t done, uint32_t n) {
                       // Only read from: a WRITE's payload, or a whole block for the manager.
                       auto* b = const_cast<uint8_t*>(static_cast<const uint8_t*>(src));
                       piece(true, block, in, b + done, n);
                   });
}

}  // namespace canopy::sw
