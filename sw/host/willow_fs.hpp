// The host kernel's file system on the Willow SSD's Base-IO block device (Willow Section 3.1
// "Willow usage model": "a conventional file system manages space and sets permissions for the
// data it holds; it uses the Base-IO block interface for its metadata and for applications'
// data"). Small but real: a superblock, a block bitmap and an inode table stored on the device
// through Base-IO (mount reads them back), flat path names, files made of extents of 4 KiB
// blocks allocated contiguously when possible, an owner and mode bits per file. Processes use
// it through POSIX-like system calls (open, pread/pwrite, read/write with a file position,
// lseek, close) that run on the calling core and pay the configured kernel costs there; their
// data moves between the device and the caller's buffer through that core's kernel HRE (Base-IO).
// This is the "Base-IO through XFS" path Willow Section 4.2 compares Direct-IO against.
//
// Errors are HostFaults naming the path or fd and the process (the simulator's errno); a read
// past the end of the file is short, as in POSIX.
#pragma once

#include <fcntl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sw/host/kernel_hres.hpp"

namespace canopy::sw {

struct WillowFsConfig {
    // Entering and leaving the kernel for one system call. Assumed 1 us: the round trip of a
    // trivial read() on a Linux server with speculative-execution mitigations; the Willow driver
    // assumes the same (WillowDriverConfig::syscall_ns).
    double syscall_ns = 1000.0;
    // The file system's own work per read call (fd and inode lookup, the inode lock, the extent
    // lookup, building the block request). Calibrated to 5 us with block_ns and completion_ns
    // against Willow 4.2's small-read gain (docs/direct_io.md; 2 us, XFS's direct-I/O read
    // path, before).
    double read_ns = 5000.0;
    // The same for a write (also the log reservation and the timestamp), under the inode's I/O
    // lock: the one cost fitted to Willow 4.2's 8x small-write gain (W.5, docs/direct_io.md; 3 us
    // assumed before).
    double write_ns = 12000.0;
    // The block layer and the Base-IO driver below the file system, per block request: the bio,
    // the request queue, the driver's submission. Assumed 3 us.
    double block_ns = 3000.0;
    // A block request's completion: the device's interrupt, its handler, and waking the caller,
    // who slept meanwhile (a context switch). Assumed 6 us; with the costs above it sets how
    // much Direct-IO saves, which Willow Section 4.2 measured (docs/direct_io.md).
    double completion_ns = 6000.0;
    // Opening and closing a file (path lookup, permission check, fd table). Assumed 2 us each.
    double open_ns = 2000.0;
    // True: every write updates the inode's mtime and commits the inode's block synchronously
    // (a journaling file system's commit, or O_SYNC). False (assumed default, XFS: timestamps
    // are logged lazily): only a write that grows the file commits its inode.
    bool write_updates_inode = false;
    // The inode's I/O lock: reads take it shared, writes exclusive (XFS's i_rwsem / iolock for
    // writes it cannot prove non-overlapping), held over the transfer and any inode commit; so
    // writers of one file from several cores are serialised. False: writes take it shared too.
    bool exclusive_writes = true;
    // How often a waiter looks at a held lock again (the wake-up's granularity). Assumed 100 ns.
    double lock_poll_ns = 100.0;
};

// One extent of a file: `bytes` at file offset `file_offset` lie at device offset `device_offset`.
struct FileExtent {
    uint64_t file_offset = 0, device_offset = 0, bytes = 0;
};

// For each piece of the file range [offset, offset + bytes) inside `extents` (in file order):
// fn(device offset, offset of the piece from `offset`, piece bytes). Returns the bytes covered,
// stopping at the first gap (the end of the allocated blocks).
uint64_t for_each_piece(const std::vector<FileExtent>& extents, uint64_t offset, uint64_t bytes,
                        const std::function<void(uint64_t, uint64_t, uint64_t)>& fn);

// Access rights from open flags (O_RDONLY, O_WRONLY, O_RDWR): SPU-OS's READ and WRITE bits.
uint32_t rights_of(int flags);

class WillowFs {
  public:
    static constexpr uint32_t kBlockBytes = 4096;
    static constexpr uint32_t kInodeBytes = 256;
    static constexpr uint32_t kMaxExtents = 8;
    static constexpr uint32_t kNameBytes = 160;

    struct Inode {
        uint32_t number = 0;
        std::string path;
        uint32_t owner = 0;  // the owning process's PID
        uint32_t mode = 0;   // 0600-style bits: owner rw, others rw (group unused)
        uint64_t size = 0;
        uint64_t mtime_ns = 0;
        std::vector<FileExtent> extents;  // in file order
        uint64_t allocated() const;       // bytes of its blocks
    };

    WillowFs(KernelHres& kernel, WillowFsConfig cfg = WillowFsConfig());

    // mkfs on the device's first `bytes` (0: the whole device), with room for `inodes` files;
    // writes the superblock, bitmap and inode table through Base-IO. Then mounted.
    void format(host::HostCore& cpu, uint64_t bytes = 0, uint32_t inodes = 64);
    // Reads the superblock, bitmap and inode table back from the device.
    void mount(host::HostCore& cpu);

    // A file of `bytes` (its size; blocks allocated for them, contiguous where possible) owned
    // by `owner` with `mode`; commits its inode and bitmap. Returns the inode number. Throws
    // HostFault for a path taken or too long, no free inode, no space, too many extents.
    // With `size`, smaller than `bytes`: the file starts that long, with room for the rest
    // (Append's target).
    uint32_t create(host::HostCore& cpu, const std::string& path, uint64_t bytes, uint32_t owner,
                    uint32_t mode, std::optional<uint64_t> size = std::nullopt);
    // Where inode `number`'s 64-bit size lies on the device (Append updates it there), and
    // reading the inode back from the device after it did.
    uint64_t size_field_offset(uint32_t number) const;
    void reload(host::HostCore& cpu, uint32_t number);
    std::optional<uint32_t> lookup(const std::string& path) const;
    const Inode& inode(uint32_t number) const;
    // Whether process `pid` may access the file with `rights` (owner or others' mode bits).
    bool may_access(uint32_t number, uint32_t pid, uint32_t rights) const;

    // ---- system calls of the process running on `cpu` ---------------------------------
    int open(host::HostCore& cpu, const std::string& path, int flags);
    uint64_t pread(host::HostCore& cpu, int fd, void* buf, uint64_t bytes, uint64_t offset);
    uint64_t pwrite(host::HostCore& cpu, int fd, const void* buf, uint64_t bytes, uint64_t offset);
    uint64_t read(host::HostCore& cpu, int fd, void* buf, uint64_t bytes);
    uint64_t write(host::HostCore& cpu, int fd, const void* buf, uint64_t bytes);
    uint64_t lseek(host::HostCore& cpu, int fd, uint64_t offset);  // SEEK_SET
    void close(host::HostCore& cpu, int fd);

    // One block request through the calling core's Base-IO client, with the block layer's costs
    // (block_ns before, completion_ns after): the file system's, and a kernel block driver's
    // below it (sw/host/flash_cache).
    void device_read(host::HostCore& cpu, uint64_t offset, void* dst, uint64_t bytes);
    void device_write(host::HostCore& cpu, uint64_t offset, const void* src, uint64_t bytes);

    const WillowFsConfig& config() const { return cfg_; }
    WillowFsConfig& config() { return cfg_; }  // experiments retune costs between runs
    KernelHres& kernel() { return kernel_; }
    uint64_t inode_commits() const { return inode_commits_; }
    uint64_t lock_waits() const { return lock_waits_; }  // calls that found the inode locked

  private:
    struct File {
        uint32_t inode = 0;
        int flags = 0;
        uint64_t position = 0;
    };
    File& file(host::HostCore& cpu, int fd, uint32_t rights);
    Inode& inode_rw(uint32_t number);
    std::vector<FileExtent> allocate(uint64_t blocks, uint64_t file_offset);
    void grow(host::HostCore& cpu, Inode& ino, uint64_t end);  // allocation and size
    void commit_inode(host::HostCore& cpu, const Inode& ino);
    void commit_bitmap(host::HostCore& cpu, uint64_t first_block, uint64_t blocks);
    struct IoLock {  // one inode's
        uint32_t readers = 0;
        bool writer = false;
    };
    struct Held {  // releases the inode's lock when it goes
        IoLock& lock;
        bool exclusive;
        ~Held();
    };
    Held lock(host::HostCore& cpu, uint32_t inode, bool exclusive);
    std::string who(host::HostCore& cpu) const;

    KernelHres& kernel_;
    WillowFsConfig cfg_;
    // The superblock's fields.
    uint64_t blocks_ = 0;
    uint32_t inode_count_ = 0, bitmap_start_ = 1, bitmap_blocks_ = 0, inode_start_ = 0,
             inode_blocks_ = 0, data_start_ = 0;
    std::vector<bool> used_;                       // the block bitmap
    std::vector<std::optional<Inode>> inodes_;     // the inode table (kernel's inode cache)
    std::map<uint32_t, std::map<int, File>> fds_;  // per process (pid): its fd table
    std::map<uint32_t, IoLock> locks_;             // by inode
    uint64_t inode_commits_ = 0, lock_waits_ = 0;
};

}  // namespace canopy::sw
