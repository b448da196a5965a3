// The host side of the Caching SSD App (Willow Section 4.4; sw/firmware/apps/caching_abi.h): the
// SSD caches a disk's 4 KiB blocks, block b on SPU b % spus.
//
// - SsdCache, the user library: reads and writes of the disk's bytes from a user process on its
//   own HRE, straight to the SPU that caches each block (no system call on a hit). A miss
//   (CACHE_E_MISS) is a system call into the kernel's cache manager, which brings the block in;
//   then the library asks again.
// - CacheManager, the kernel's cache manager (after Bankshot: the kernel handles misses, user
//   space the hits): per miss, on the calling core's kernel HRE, it reads the missing block from
//   the disk, has the SPU pick a frame (VICTIM), writes a dirty victim back to the disk
//   (WRITEBACK, the disk write, CLEAN) and INSTALLs the block. A whole-block write that missed is
//   installed dirty with the caller's data, without reading the disk. One miss at a time per SPU
//   (a lock the manager keeps), so a frame stays the manager's from VICTIM to INSTALL and no other
//   miss can bring the block in meanwhile; users' writes can still dirty the victim, which the
//   SPU reports (CACHE_E_DIRTIED, CACHE_E_DIRTY) and the manager answers by picking again.
//
// The host kernel (platform/willow_stack) gives the app its cache region on every SPU (SPU-OS's
// APP_REGION) and sets it up; WillowStack::caching grants a process the disk's blocks (the app's
// own entries, CACHE_GRANT) before it gives the process an SsdCache. Errors throw
// host::HostFault naming the block, the SPU and the result.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/disk.hpp"
#include "sw/firmware/apps/caching_abi.h"
#include "sw/host/hre.hpp"
#include "sw/host/kernel_hres.hpp"
#include "sw/host/willow_fs.hpp"

namespace canopy::sw {

// The name of a Caching result (CACHE_E_*), else SPU-OS's.
std::string caching_result_name(uint32_t r);

// One disk request through the host kernel's block layer: `costs`' block_ns before, the disk's
// time, completion_ns after (a kernel thread sleeping on it wakes by interrupt).
void disk_request(host::HostCore& cpu, const WillowFsConfig& costs, host::Disk& disk, bool write,
                  uint64_t offset, void* buf, uint32_t bytes);

// For each 4 KiB block piece of the disk's bytes [offset, offset + bytes), in order:
// fn(block, offset in the block, offset from `offset`, bytes). Throws HostFault ("`what` of n B
// at byte x ...") before any when the range passes the disk's first `disk_blocks` blocks.
void for_each_block(uint64_t offset, uint64_t bytes, uint64_t disk_blocks, const std::string& what,
                    const std::function<void(uint64_t, uint32_t, uint64_t, uint32_t)>& fn);

// Locks of the host kernel that a host program waits for by polling, as a thread blocked in the
// kernel would sleep: one per index (an SPU, a cache set). Host programs are SystemC threads, so
// testing and taking a lock is one step.
class KernelLocks {
  public:
    KernelLocks(size_t n, double poll_ns) : busy_(n, false), poll_ns_(poll_ns) {}
    class Held {  // the lock, until it goes
      public:
        Held(KernelLocks& locks, size_t i) : locks_(locks), i_(i) {}
        Held(const Held&) = delete;
        Held& operator=(const Held&) = delete;
        ~Held() { locks_.busy_[i_] = false; }

      private:
        KernelLocks& locks_;
        size_t i_;
    };
    Held take(host::HostCore& cpu, size_t i);
    uint64_t waits() const { return waits_; }  // takes that found the lock held

  private:
    std::vector<bool> busy_;
    double poll_ns_;
    uint64_t waits_ = 0;
};

// Every SPU's Caching counters (CACHE_STAT_*), summed.
struct CacheCounters {
    uint64_t hits = 0, misses = 0, installs = 0, evictions = 0, writebacks = 0, dirty = 0,
             valid = 0, frames = 0;
};

struct CacheManagerConfig {
    // The manager's own work per miss besides the system call and the block layer (its tables,
    // the lock, building the RPCs). Assumed 2 us, as the file system's per-call work.
    double miss_ns = 2000.0;
    // Victims picked per miss before it gives up (each further one follows a user's write to
    // the one before).
    uint32_t attempts = 8;
};

class CacheManager {
  public:
    struct Stats {
        uint64_t misses = 0;      // system calls
        uint64_t installs = 0;    // blocks installed (whole-block writes among them)
        uint64_t writebacks = 0;  // dirty blocks written to the disk
        uint64_t repicks = 0;     // victims given up: written by a user meanwhile
        uint64_t present = 0;     // misses another process's miss had served already
        uint64_t regrants = 0;    // refusals the kernel's records resolved
    };

    // `fs`: the kernel's block-layer and system-call costs (WillowFsConfig); `app`: the id the
    // Caching app is installed as; the disk's first `disk_blocks` 4 KiB blocks are cached.
    CacheManager(KernelHres& kernel, const WillowFs& fs, host::Disk& disk, uint32_t app,
                 uint64_t disk_blocks, CacheManagerConfig cfg = CacheManagerConfig());

    // The system call of a user's library whose access missed `block`: when it returns, the block
    // has been installed (unless another process's miss had installed it already). `whole`: a
    // whole block's new contents (a write), installed dirty instead of the disk's; true if it was.
    bool miss(host::HostCore& cpu, uint64_t block, const void* whole = nullptr);
    // Writes every dirty block back to the disk (a clean shutdown), from the calling core;
    // returns how many. A block a user writes meanwhile stays dirty.
    uint64_t flush(host::HostCore& cpu);
    // CACHE_GRANT on every SPU: process `pid` may reach the disk blocks [first, first + blocks)
    // with `rights` (SPU_OS_PERM_READ | SPU_OS_PERM_WRITE; blocks 0 revokes the entry). The
    // kernel keeps what it granted.
    void grant(host::HostCore& cpu, uint32_t pid, uint32_t first, uint32_t blocks, uint32_t rights);
    // The system call of a user's library refused CACHE_E_DENIED for `block` on `spu`: when the
    // kernel's records grant the process the block with `rights`, its entries go to that SPU
    // again (the app lost them: reinstalled, or its SPU power-cycled) and true is returned.
    bool regrant(host::HostCore& cpu, uint32_t pid, uint32_t spu, uint64_t block, uint32_t rights);
    // The SPUs' counters, by STATS RPCs from the calling core's kernel HRE.
    CacheCounters counters(host::HostCore& cpu);
    uint32_t stat(host::HostCore& cpu, uint32_t spu, uint32_t which);

    uint32_t app() const { return app_; }
    uint32_t spus() const { return kernel_.spus(); }
    uint64_t disk_blocks() const { return disk_blocks_; }
    host::Disk& disk() { return disk_; }
    const Stats& stats() const { return stats_; }
    uint64_t lock_waits() const { return locks_.waits(); }  // misses that found their SPU's held
    const WillowFsConfig& costs() const { return fs_.config(); }

  private:
    // A kernel RPC to `spu`; a DATA request it sends with `cookie` lands in *d, its bytes in
    // `data`.
    uint32_t call(host::HostCore& cpu, uint32_t spu, uint16_t handler,
                  const std::vector<uint8_t>& payload, uint32_t cookie = 0, cache_data* d = nullptr,
                  void* data = nullptr);
    void send_grant(host::HostCore& cpu, uint32_t spu, const cache_grant_args& g);
    // Writes the first dirty frame from `frame` on back to the disk; false when there is none.
    // *written: the frame it wrote (*cleaned: and CLEAN took it).
    bool write_back(host::HostCore& cpu, uint32_t spu, uint32_t frame, uint32_t* written,
                    bool* cleaned);

    KernelHres& kernel_;
    const WillowFs& fs_;
    host::Disk& disk_;
    uint32_t app_;
    uint64_t disk_blocks_;
    CacheManagerConfig cfg_;
    KernelLocks locks_;                     // per SPU: a miss is under way
    std::vector<cache_grant_args> grants_;  // what the kernel granted, by process and first
    uint32_t next_cookie_ = 1;
    Stats stats_;
};

class SsdCache {
  public:
    struct Stats {
        uint64_t pieces = 0;   // block pieces read or written
        uint64_t hits = 0;     // served without the kernel
        uint64_t misses = 0;   // system calls into the cache manager
        uint64_t retries = 0;  // accesses asked again after a miss
    };

    // On the process's own HRE, on the core it runs on; `manager`: the kernel's.
    SsdCache(host::HostCore& cpu, std::unique_ptr<Hre> hre, CacheManager& manager);

    // The disk's bytes [offset, offset + bytes), block by block. Throws HostFault outside the
    // cached blocks, or for a refusal.
    void read(uint64_t offset, void* dst, uint64_t bytes);
    void write(uint64_t offset, const void* src, uint64_t bytes);

    const Stats& stats() const { return stats_; }
    Hre& hre() { return *hre_; }

    // A piece is asked again at most this often after misses (another process may evict the
    // block between the manager's install and the retry).
    static constexpr uint32_t kRetries = 8;

  private:
    // One RPC for the piece of `block` at `offset`; the result.
    uint32_t access(bool write, uint64_t block, uint32_t offset, uint8_t* buf, uint32_t bytes);
    void piece(bool write, uint64_t block, uint32_t offset, uint8_t* buf, uint32_t bytes);

    host::HostCore& cpu_;
    std::unique_ptr<Hre> hre_;
    CacheManager& manager_;
    uint32_t next_cookie_ = 1;
    Stats stats_;
};

}  // namespace canopy::sw
