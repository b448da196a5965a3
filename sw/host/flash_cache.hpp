// A FlashCache-like host cache, the baseline Willow Section 4.4 compares Caching against:
// Facebook's FlashCache, a device-mapper target in the host kernel that caches a disk's blocks on
// an SSD used as a plain block device (here Willow's Base-IO). Every access is a system call; the
// kernel finds the block in metadata it keeps in host memory and moves the data with Base-IO
// requests through the block layer (the costs of sw/host/willow_fs: syscall_ns, block_ns,
// completion_ns), and misses go to the disk through the block layer too; a program's files above
// it also pay the file system's own path per call (FlashCacheConfig::under_file_system).
//
// As FlashCache does (its defaults): set-associative, 512 blocks a set, the set of disk block b is
// (b / 512) % sets; FIFO replacement inside a set (LRU by choice); write-back, and in that mode
// each block's metadata (16 B: the disk block and its state) is kept on the SSD, the metadata
// block holding it (4 KiB, 256 entries: FlashCache's DEFAULT_MD_BLOCK_SIZE of 8 sectors, version
// 3.1.1) written whenever a block turns dirty or clean, before the write that dirtied it
// completes, so dirty data survives a reboot. A read miss fills the frame from the disk before the
// call returns (FlashCache overlaps that SSD write with the caller's completion: this costs
// FlashCache a Base-IO write per read miss). A partial write that misses reads the rest of its
// block from the disk first. The cache lives in a device range the kernel gives it (a file of its
// own, platform/willow_stack): its metadata blocks, then the frames. A set's requests take turns
// (FlashCache holds the set's lock for lookups only and marks blocks busy during I/O; here hits of
// a set do not overlap).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "host/disk.hpp"
#include "sw/host/ssd_cache.hpp"
#include "sw/host/willow_fs.hpp"

namespace canopy::sw {

struct FlashCacheConfig {
    uint32_t associativity = 512;  // blocks a set (FlashCache's default)
    bool lru = false;              // false: FIFO in a set (FlashCache's default reclaim policy)
    // The target's own work per request: the set's lookup under its lock, remapping the request.
    // Assumed 1 us.
    double lookup_ns = 1000.0;
    // The caller's files lie in a file system on the cached device, as Fio's 1-128 GiB files did
    // in Willow 4.4's measurement: each call also pays the file system's path (WillowFsConfig
    // read_ns, write_ns) above the target. False: the program reads the cached device itself.
    bool under_file_system = true;
    // True: FlashCache 3.1.1's write-back as its source has it. A victim is only ever a clean
    // block (flashcache_reclaim_fifo_get_old_block), and a miss that finds none goes to the disk
    // uncached; dirty blocks are cleaned in the background (flashcache_clean_set): once a set
    // holds dirty_thresh_pct of dirty blocks (DIRTY_THRESH_DEF, 20 %), each write starts disk
    // writes of its oldest dirty blocks above that, at most max_clean_ios_set at a time in a set
    // and max_clean_ios_total in all (MAX_CLEAN_IOS_SET, MAX_CLEAN_IOS_TOTAL); the caller does
    // not wait for them, but the disk is busy. False (default, until Caching's cache manager
    // also cleans in the background: docs/willow.md): the victim is the policy's, written back
    // first if dirty, on the missing request's time, as Caching's manager does.
    bool background_cleaning = false;
    uint32_t dirty_thresh_pct = 20;
    uint32_t max_clean_ios_set = 2, max_clean_ios_total = 4;
};

class FlashCache {
  public:
    static constexpr uint32_t kBlockBytes = 4096;
    static constexpr uint32_t kMetadataBytes = 16;  // per block, on the SSD
    static constexpr uint32_t kMdBlockBytes = 4096;

    struct Stats {
        uint64_t pieces = 0, hits = 0, misses = 0;
        uint64_t writebacks = 0;       // dirty blocks written to the disk (cleanings, flush)
        uint64_t metadata_writes = 0;  // metadata blocks written
        uint64_t cleanings = 0;        // background write-backs started
        uint64_t uncached = 0;         // misses with no clean frame: straight to the disk
    };

    // The device range for `frames` frames: the metadata blocks, then the frames.
    static uint64_t region_bytes(uint64_t frames);

    // `extents`: where the region lies on the Base-IO device (a file's extents, file offset 0 the
    // region's start; at least region_bytes(frames)); the disk's first `disk_blocks` blocks are
    // cached. Throws HostFault for a region too small.
    FlashCache(WillowFs& fs, host::Disk& disk, std::vector<FileExtent> extents, uint64_t frames,
               uint64_t disk_blocks, FlashCacheConfig cfg = FlashCacheConfig());

    // System calls of the program on `cpu`: the disk's bytes [offset, offset + bytes).
    void read(host::HostCore& cpu, uint64_t offset, void* dst, uint64_t bytes);
    void write(host::HostCore& cpu, uint64_t offset, const void* src, uint64_t bytes);
    // Writes every dirty block back; returns how many.
    uint64_t flush(host::HostCore& cpu);

    const Stats& stats() const { return stats_; }
    uint64_t frames() const { return frames_.size(); }
    uint64_t dirty() const;

  private:
    struct Frame {
        uint64_t block = 0;
        bool valid = false, dirty = false;
        bool cleaning = false;  // its background write-back under way
        double cleaned_ns = 0;  // when that ends
        uint64_t stamp = 0;     // LRU: the last use
    };
    // One block's part of a request, under its set's lock: served, then (a write) the set's
    // cleaning started, as flashcache_write ends with flashcache_clean_set.
    void piece(host::HostCore& cpu, bool write, uint64_t block, uint32_t offset, uint8_t* buf,
               uint32_t bytes);
    void serve(host::HostCore& cpu, bool write, uint64_t block, uint32_t offset, uint8_t* buf,
               uint32_t bytes);
    // A frame of the block's set for it: a free one, else the policy's victim, written back
    // first if dirty; with background cleaning, the victim among the clean ones only (none:
    // UINT32_MAX).
    uint32_t allocate(host::HostCore& cpu, uint64_t block);
    void write_back(host::HostCore& cpu, uint32_t frame);
    // Starts the set's background cleaning when it holds too many dirty blocks; first ends the
    // cleanings whose disk writes are done by now.
    void clean_set(host::HostCore& cpu, uint32_t set);
    void reap(double now_ns);
    void set_dirty(host::HostCore& cpu, uint32_t frame, bool dirty);  // and its metadata block
    // Base-IO on the region (region offsets).
    void ssd(host::HostCore& cpu, bool write, uint64_t at, void* buf, uint64_t bytes);
    uint64_t frame_at(uint32_t frame) const {
        return metadata_bytes_ + uint64_t(frame) * kBlockBytes;
    }

    WillowFs& fs_;
    host::Disk& disk_;
    std::vector<FileExtent> extents_;
    uint64_t disk_blocks_, metadata_bytes_;
    FlashCacheConfig cfg_;
    uint32_t sets_, ways_;
    std::vector<Frame> frames_;
    std::vector<uint32_t> fifo_;        // per set: the next frame FIFO replaces
    std::vector<uint32_t> clean_next_;  // per set: where cleaning looks first
    std::vector<uint32_t> cleaning_;    // frames being cleaned
    // The frames' bytes as the model last wrote them to the SSD: what the background cleaning
    // writes to the disk (its SSD read is not timed: it overlaps the callers' work).
    std::vector<uint8_t> shadow_;
    std::unordered_map<uint64_t, uint32_t> index_;  // block -> frame
    KernelLocks locks_;                             // per set
    uint64_t clock_ = 0;
    Stats stats_;
};

}  // namespace canopy::sw
