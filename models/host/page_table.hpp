// A small piece of the host kernel of the N1-SDP host (seeds/003, Sections III-IV): a physical
// frame allocator and per-process page tables stored in host memory, as the host IOMMU (Arm
// SMMU) walks them to answer ATS translation requests. Page sizes are those the paper's host
// offers: 4 KiB (the Linux base page) and the huge pages 64 KiB, 2 MiB, 32 MiB and 1 GiB
// (Section IV: "N1-SDP supports hugepages of 64KB, 2MB, 32MB and 1GB at boot").
//
// Table format: ARMv8-A-style stage-1, 4 KiB granule, 48-bit VA, 4 levels of 512 8-byte
// descriptors, each level a 4 KiB table in host memory (not bit-exact ARM; the fields we use):
//   level 0 index VA[47:39], level 1 VA[38:30], level 2 VA[29:21], level 3 VA[20:12]
//   bit 0       valid
//   bit 1       levels 0-2: 1 table (next-level table address), 0 block; level 3: must be 1 (page)
//   bit 2       device memory (ARM AttrIndx[0] here): uncached, for BARs mapped into a process
//   bits 47:12  output address (next table, or the block/page frame)
//   bit 52      contiguous hint: one of 16 adjacent, aligned entries mapping one contiguous run
//   bit 55      pinned (a software bit, as ARM's 55-58): unmap refuses it
// A 1 GiB block is a level-1 block, 2 MiB a level-2 block, 4 KiB a level-3 page; 64 KiB is a run
// of 16 level-3 pages and 32 MiB a run of 16 level-2 blocks, each with the contiguous bit, the
// run aligned to its size in both VA and PA (as ARM's contiguous hint requires).
//
// The kernel writes the tables through HostMemory's untimed accessors (its software cost is not
// modelled); the IOMMU walks them with timed reads. Intermediate tables are never freed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/host_memory.hpp"

namespace canopy::host {

constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
constexpr uint64_t kPage4K = 4 * kKiB, kPage64K = 64 * kKiB, kPage2M = 2 * kMiB,
                   kPage32M = 32 * kMiB, kPage1G = kGiB;
// Largest first, as lookups try them.
const std::vector<uint64_t>& page_sizes();
bool is_page_size(uint64_t bytes);

namespace pte {
constexpr uint64_t kValid = 1ull << 0;
constexpr uint64_t kTable = 1ull << 1;  // or "page" at level 3
constexpr uint64_t kDevice = 1ull << 2;
constexpr uint64_t kContiguous = 1ull << 52;
constexpr uint64_t kPinned = 1ull << 55;
constexpr uint64_t kAddrMask = ((1ull << 48) - 1) & ~(kPage4K - 1);
constexpr unsigned kContiguousRun = 16;
// Index of `va` in a table of `level` (0-3).
inline unsigned index(uint64_t va, unsigned level) {
    return unsigned(va >> (39 - 9 * level)) & 511;
}
}  // namespace pte

// Thrown for a request the kernel cannot satisfy (no memory, bad alignment, already mapped).
class HostKernelError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// First-fit allocator of 4 KiB frames of host memory; contiguous, size-aligned runs for huge
// pages. Frame 0 is reserved so that physical address 0 never names a table.
class FrameAllocator {
  public:
    explicit FrameAllocator(uint64_t memory_bytes);
    // `bytes` (a multiple of 4 KiB) contiguous, aligned to `align_bytes` (a power of two >= 4
    // KiB). Throws HostKernelError saying what was asked and what is free.
    uint64_t allocate(uint64_t bytes, uint64_t align_bytes = kPage4K);
    void free(uint64_t pa, uint64_t bytes);
    uint64_t free_bytes() const { return free_frames_ * kPage4K; }
    uint64_t total_bytes() const { return used_.size() * kPage4K; }

  private:
    std::vector<bool> used_;
    uint64_t free_frames_;
};

struct Translation {
    uint64_t pa = 0;          // physical address of the VA asked for
    uint64_t page_bytes = 0;  // size of the mapping (a contiguous run counts as one page)
    uint64_t va_base = 0, pa_base = 0;
    bool pinned = false;
    bool device = false;  // device memory (a BAR): uncached
};

// One process's address space: a level-0 table in host memory and its mappings.
class AddressSpace {
  public:
    AddressSpace(HostMemory& memory, FrameAllocator& frames);

    uint64_t root() const { return root_; }  // physical address of the level-0 table

    // Maps [va, va + page_bytes) to [pa, ...); both aligned to page_bytes; throws
    // HostKernelError on a bad size/alignment or an overlap with an existing mapping.
    void map(uint64_t va, uint64_t pa, uint64_t page_bytes, bool device = false);
    // Maps `bytes` of device memory at physical `pa` (a BAR) into a fresh VA range with 4 KiB
    // device pages; returns the VA.
    uint64_t map_device(uint64_t pa, uint64_t bytes);
    // Unmaps the whole page (or contiguous run) containing va and returns it; throws when va is
    // unmapped or pinned. Listeners hear of it (the IOMMU invalidates its IOTLB).
    Translation unmap(uint64_t va);
    // Pins (or unpins) every page overlapping [va, va + bytes); throws if any is unmapped.
    void pin(uint64_t va, uint64_t bytes, bool pinned = true);
    // mmap-like: reserves a fresh VA range of `bytes` rounded up to page_bytes, backs it with
    // contiguous, aligned frames per page and maps it. Returns the VA.
    uint64_t mmap(uint64_t bytes, uint64_t page_bytes = kPage4K);
    // Unmaps and frees the frames of a range mmap returned.
    void munmap(uint64_t va, uint64_t bytes);
    // Software walk of the tables in host memory (untimed), for tests and the kernel.
    std::optional<Translation> translate(uint64_t va) const;

    // Called with (va_base, bytes) after every unmap.
    void on_unmap(std::function<void(uint64_t, uint64_t)> listener) {
        listeners_.push_back(std::move(listener));
    }

    // Physical address of the descriptor of `va` at `level`, or nullopt when an upper level has
    // no table for it (for tests that corrupt entries).
    std::optional<uint64_t> descriptor_address(uint64_t va, unsigned level) const;

  private:
    uint64_t new_table();
    // The table at `level` covering va, creating tables down to it; throws if a block is in the
    // way.
    uint64_t table_for(uint64_t va, unsigned level);
    void pin_one(uint64_t va, bool pinned);

    HostMemory& mem_;
    FrameAllocator& frames_;
    uint64_t root_;
    uint64_t next_va_ = 1ull << 40;  // assumed: where mmap starts handing out VAs
    std::vector<std::function<void(uint64_t, uint64_t)>> listeners_;
};

// Decodes one descriptor read at `level`: the leaf's mapping when it is a block or page
// (nullopt with `next_table` set when it is a table, both unset when invalid). Shared by the
// software walk and the IOMMU's timed walk so both read the format the same way.
struct DescriptorView {
    bool valid = false, table = false;
    uint64_t next_table = 0;
    Translation leaf;  // for a block/page: bases and size of the mapping covering va
};
DescriptorView decode_descriptor(uint64_t desc, unsigned level, uint64_t va);

// Walks the tables from level-0 table `root` for `va`, reading each descriptor with
// `read(pa, desc)`, which returns false when the read fails (and may charge time for it): the
// one walk behind the kernel's software lookup, the IOMMU's and the host cores' MMUs. Returns the
// leaf, or nullopt (unmapped, bad VA, failed read); `reads` counts the descriptors read.
template <class Read>
std::optional<Translation> walk_tables(uint64_t root, uint64_t va, Read&& read,
                                       unsigned* reads = nullptr) {
    if (va >= (1ull << 48)) return std::nullopt;
    uint64_t table = root;
    for (unsigned level = 0; level < 4; ++level) {
        uint64_t desc = 0;
        if (reads) ++*reads;
        if (!read(table + 8 * pte::index(va, level), desc)) return std::nullopt;
        DescriptorView v = decode_descriptor(desc, level, va);
        if (!v.valid) return std::nullopt;
        if (!v.table) return v.leaf;
        table = v.next_table;
    }
    return std::nullopt;
}

}  // namespace canopy::host
