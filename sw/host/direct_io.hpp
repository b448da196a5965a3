// The Direct-IO kernel module (Willow Section 3.1 "Willow usage model", Figure 2; "Non-volatile
// storage protection"; Section 4.2): the kernel half of OS-bypass file access. When libDirectIO
// opens a file (one system call) the module asks the file system whether the process may access
// it, then has the Willow driver install the file's extents in SPU-OS's permission tables: a
// contiguous device range is contiguous in every bank it touches (Base-IO's striping), so each
// extent becomes one PERM_ADD per SPU it reaches. It hands the library the file's extent map;
// from then on the process reads and writes through its own HRE and the Direct-IO app, and
// SPU-OS checks every transfer. SPU-OS's table holds 768 entries and evicts when full; a
// transfer an evicted entry allowed fails with SPU_OS_E_PERMISSION and SPU-OS sends the kernel
// HRE a NOTIFY_PERM_MISS. The module's notice thread resolves it by granting again the extent of
// a file the process has open with those rights, or an app region the kernel gave it (and
// nothing else); the library retries. Close
// revokes the grants. O_APPEND also opens the file with Append (Willow Section 4.6) on the SPU
// holding its inode, granting the process the inode's size field, which that SPU updates; the
// last close of it there reads the inode back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sw/host/willow_fs.hpp"

namespace canopy::sw {

struct DirectIoModuleConfig {
    // The module's own work to open a file for Direct-IO besides the file system's lookup and
    // the grant RPCs (its open-file records, the extent-to-bank translation). Assumed 2 us.
    double open_ns = 2000.0;
    // The notice thread's pause between two empty polls of the kernel HRE. Assumed 1 us.
    double notice_poll_ns = 1000.0;
    uint32_t direct_io_app = 2;  // the id Direct-IO (and so Append) is installed as
};

// One SPU's share of a device range: SSD memory [nvm, nvm + bytes) of SPU `spu`.
struct NvmRange {
    uint32_t spu = 0, nvm = 0, bytes = 0;
};
// The ranges device [offset, offset + bytes) covers, one per SPU it touches (merged per bank).
std::vector<NvmRange> nvm_ranges(const BlockGeometry& geo, uint64_t offset, uint64_t bytes);

// Whether a HostFault is a transfer SPU-OS refused for want of a permission entry.
bool permission_refused(const host::HostFault& f);

class DirectIoModule {
  public:
    struct Opened {
        uint32_t handle = 0;  // the module's open-file record
        uint32_t rights = 0;  // SPU_OS_PERM_*
        uint64_t size = 0;    // the file's size when opened
        std::vector<FileExtent> extents;
        // O_APPEND (Willow 4.6, Append): the SPU holding the inode, which takes the APPENDs
        // of the file (BLOCK_IO_APPEND's handle: the inode number); -1 otherwise.
        int append_spu = -1;
        uint32_t inode = 0;
    };
    struct Stats {
        uint64_t opens = 0, closes = 0;
        uint64_t misses = 0;      // NOTIFY_PERM_MISS notices taken
        uint64_t regranted = 0;   // misses resolved by granting the extent again
        uint64_t unresolved = 0;  // misses no open file explains, or SPU-OS would not take
        uint64_t faults = 0;      // NOTIFY_FAULT notices (app faults) seen
        uint64_t denied = 0;      // NOTIFY_DENIED notices (accesses SPU-OS refused) seen
    };

    DirectIoModule(WillowFs& fs, DirectIoModuleConfig cfg = DirectIoModuleConfig());

    // The system call libDirectIO's open makes on the caller's core. Throws HostFault naming
    // the path and the process when the file does not exist or the process may not open it so.
    Opened open(host::HostCore& cpu, const std::string& path, int flags);
    // Ends the record; the last close of a file by a process revokes its grants.
    void close(host::HostCore& cpu, uint32_t handle);

    // An app's region the kernel gives a process for good (Atomic-Writes' logs, the Key-Value
    // table, the cache: each SPU's `ranges`): granted now through `apps`, and again after a
    // permission miss, as an open file's extents are.
    void grant_region(WillowApps& apps, uint32_t pid, const std::vector<NvmRange>& ranges,
                      uint32_t rights);
    // Resolves one notice taken from the kernel HRE, granting through `apps` (on that core).
    // Returns true when a permission miss was resolved.
    bool resolve(WillowApps& apps, const SpuNotice& notice);
    // The module's kernel thread on the core that booted the kernel HREs (queue pair 0): takes
    // notices and resolves them until `stop` is set.
    void serve_notices(host::HostCore& cpu, const bool& stop);

    const Stats& stats() const { return stats_; }
    std::vector<SpuNotice> notices() const { return seen_; }
    WillowFs& fs() { return fs_; }
    const DirectIoModuleConfig& config() const { return cfg_; }

  private:
    struct Grant {  // what one process holds of one file
        uint32_t opens = 0, rights = 0;
        std::vector<NvmRange> ranges;
    };
    struct Record {
        uint32_t pid = 0, inode = 0;
        bool append = false;
    };
    // Opens the file for appending on the SPU holding its inode (the first O_APPEND open of
    // it); returns that SPU.
    uint32_t open_append(host::HostCore& cpu, uint32_t inode, Grant& g);
    using Key = std::pair<uint32_t, uint32_t>;  // pid, inode

    WillowFs& fs_;
    DirectIoModuleConfig cfg_;
    std::map<Key, Grant> grants_;
    std::vector<std::pair<uint32_t, Grant>> regions_;  // pid, an app region it holds
    std::map<uint32_t, Record> records_;
    std::map<uint32_t, uint32_t> appending_;  // inode -> O_APPEND opens of it
    uint32_t next_handle_ = 1;
    Stats stats_;
    std::vector<SpuNotice> seen_;
};

}  // namespace canopy::sw
