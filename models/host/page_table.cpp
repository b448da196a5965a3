#include "host/page_table.hpp"

#include <algorithm>
#include <cstdio>

namespace canopy::host {

namespace {

std::string size_text(uint64_t bytes) {
    if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
    if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
    if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

// How a page size is laid out: the level of its leaf descriptors, the bytes one descriptor maps
// and how many descriptors (1, or a contiguous run of 16).
struct Layout {
    unsigned level;
    uint64_t entry_bytes;
    unsigned entries;
};

Layout layout(uint64_t page_bytes) {
    switch (page_bytes) {
        case kPage4K:
            return {3, kPage4K, 1};
        case kPage64K:
            return {3, kPage4K, pte::kContiguousRun};
        case kPage2M:
            return {2, kPage2M, 1};
        case kPage32M:
            return {2, kPage2M, pte::kContiguousRun};
        case kPage1G:
            return {1, kPage1G, 1};
        default:
            throw HostKernelError("page size " + size_text(page_bytes) +
                                  " is not one of 4 KiB, 64 KiB, 2 MiB, 32 MiB, 1 GiB");
    }
}

}  // namespace

const std::vector<uint64_t>& page_sizes() {
    static const std::vector<uint64_t> sizes{kPage1G, kPage32M, kPage2M, kPage64K, kPage4K};
    return sizes;
}

bool is_page_size(uint64_t bytes) {
    const auto& s = page_sizes();
    return std::find(s.begin(), s.end(), bytes) != s.end();
}

DescriptorView decode_descriptor(uint64_t desc, unsigned level, uint64_t va) {
    DescriptorView v;
    if (!(desc & pte::kValid)) return v;
    bool table_bit = (desc & pte::kTable) != 0;
    if (level < 3 && table_bit) {
        v.valid = v.table = true;
        v.next_table = desc & pte::kAddrMask;
        return v;
    }
    // No level-0 blocks (512 GiB) and no level-3 descriptor with bit 1 clear: both invalid.
    if (level == 0 || (level == 3 && !table_bit)) return v;
    uint64_t entry_bytes = level == 1 ? kPage1G : level == 2 ? kPage2M : kPage4K;
    uint64_t bytes = entry_bytes;
    if ((desc & pte::kContiguous) && level >= 2) bytes *= pte::kContiguousRun;
    // Each descriptor of a run holds its own output address, as on ARM.
    uint64_t pa = (desc & pte::kAddrMask & ~(entry_bytes - 1)) + (va & (entry_bytes - 1));
    v.valid = true;
    v.leaf.page_bytes = bytes;
    v.leaf.va_base = va & ~(bytes - 1);
    v.leaf.pa = pa;
    v.leaf.pa_base = pa - (va - v.leaf.va_base);
    v.leaf.pinned = (desc & pte::kPinned) != 0;
    v.leaf.device = (desc & pte::kDevice) != 0;
    return v;
}

// --- FrameAllocator ---

FrameAllocator::FrameAllocator(uint64_t memory_bytes)
    : used_(memory_bytes / kPage4K, false), free_frames_(memory_bytes / kPage4K) {
    if (!used_.empty()) used_[0] = true, --free_frames_;  // PA 0 never names a table
}

uint64_t FrameAllocator::allocate(uint64_t bytes, uint64_t align_bytes) {
    if (bytes == 0 || bytes % kPage4K || align_bytes < kPage4K || (align_bytes & (align_bytes - 1)))
        throw HostKernelError("frame allocation of " + size_text(bytes) + " aligned to " +
                              size_text(align_bytes) +
                              ": size must be a non-zero multiple of 4 KiB and alignment a "
                              "power of two of at least 4 KiB");
    uint64_t n = bytes / kPage4K, a = align_bytes / kPage4K, total = used_.size();
    for (uint64_t start = 0; start + n <= total;) {
        uint64_t j = start;
        while (j < start + n && !used_[j]) ++j;
        if (j == start + n) {
            for (uint64_t k = start; k < start + n; ++k) used_[k] = true;
            free_frames_ -= n;
            return start * kPage4K;
        }
        start = (j / a + 1) * a;  // the next aligned start past the used frame
    }
    throw HostKernelError("host memory exhausted: cannot allocate " + size_text(bytes) +
                          " contiguous aligned to " + size_text(align_bytes) + " (" +
                          size_text(free_bytes()) + " free of " + size_text(total_bytes()) + ")");
}

void FrameAllocator::free(uint64_t pa, uint64_t bytes) {
    if (pa % kPage4K || bytes % kPage4K || (pa + bytes) / kPage4K > used_.size())
        throw HostKernelError("freeing " + size_text(bytes) + " at " + hex(pa) +
                              ": not whole frames of host memory");
    for (uint64_t k = pa / kPage4K; k < (pa + bytes) / kPage4K; ++k)
        if (!used_[k]) throw HostKernelError("double free of the frame at " + hex(k * kPage4K));
    for (uint64_t k = pa / kPage4K; k < (pa + bytes) / kPage4K; ++k) used_[k] = false;
    free_frames_ += bytes / kPage4K;
}

// --- AddressSpace ---

AddressSpace::AddressSpace(HostMemory& memory, FrameAllocator& frames)
    : mem_(memory), frames_(frames), root_(new_table()) {}

uint64_t AddressSpace::new_table() {
    uint64_t pa = frames_.allocate(kPage4K);
    mem_.zero(pa, kPage4K);  // a reused frame may hold old descriptors
    return pa;
}

uint64_t AddressSpace::table_for(uint64_t va, unsigned level) {
    uint64_t table = root_;
    for (unsigned l = 0; l < level; ++l) {
        uint64_t addr = table + 8 * pte::index(va, l);
        uint64_t d = mem_.read64(addr);
        if (!(d & pte::kValid)) {
            uint64_t t = new_table();
            mem_.write64(addr, t | pte::kValid | pte::kTable);
            table = t;
        } else if (d & pte::kTable) {
            table = d & pte::kAddrMask;
        } else {
            throw HostKernelError("mapping at " + hex(va) + " overlaps a block mapping");
        }
    }
    return table;
}

std::optional<uint64_t> AddressSpace::descriptor_address(uint64_t va, unsigned level) const {
    uint64_t table = root_;
    for (unsigned l = 0; l < level; ++l) {
        uint64_t d = mem_.read64(table + 8 * pte::index(va, l));
        if (!(d & pte::kValid) || !(d & pte::kTable)) return std::nullopt;
        table = d & pte::kAddrMask;
    }
    return table + 8 * pte::index(va, level);
}

void AddressSpace::map(uint64_t va, uint64_t pa, uint64_t page_bytes, bool device) {
    Layout lay = layout(page_bytes);
    if (va % page_bytes || pa % page_bytes)
        throw HostKernelError("mapping " + size_text(page_bytes) + " at VA " + hex(va) + " to PA " +
                              hex(pa) + ": both must be aligned to the page size");
    if (va + page_bytes > (1ull << 48) || pa + page_bytes > (device ? 1ull << 48 : mem_.size()))
        throw HostKernelError("mapping " + size_text(page_bytes) + " at VA " + hex(va) + " to PA " +
                              hex(pa) + ": beyond the 48-bit VA or host memory");
    uint64_t table = table_for(va, lay.level);
    for (unsigned i = 0; i < lay.entries; ++i) {
        uint64_t addr = table + 8 * (pte::index(va, lay.level) + i);
        uint64_t d = mem_.read64(addr);
        if (!(d & pte::kValid)) continue;
        // An emptied next-level table left by earlier unmaps may give way to a block.
        bool empty_table = false;
        if ((d & pte::kTable) && lay.level < 3) {
            empty_table = true;
            uint64_t t = d & pte::kAddrMask;
            for (unsigned k = 0; k < 512 && empty_table; ++k)
                empty_table = !(mem_.read64(t + 8 * k) & pte::kValid);
        }
        if (!empty_table)
            throw HostKernelError("mapping " + size_text(page_bytes) + " at VA " + hex(va) +
                                  ": overlaps an existing mapping");
    }
    for (unsigned i = 0; i < lay.entries; ++i) {
        uint64_t addr = table + 8 * (pte::index(va, lay.level) + i);
        uint64_t old = mem_.read64(addr);
        if ((old & pte::kValid) && (old & pte::kTable)) frames_.free(old & pte::kAddrMask, kPage4K);
        uint64_t d = (pa + i * lay.entry_bytes) | pte::kValid;
        if (lay.level == 3) d |= pte::kTable;  // "page" descriptor
        if (lay.entries > 1) d |= pte::kContiguous;
        if (device) d |= pte::kDevice;
        mem_.write64(addr, d);
    }
}

std::optional<Translation> AddressSpace::translate(uint64_t va) const {
    return walk_tables(root_, va, [this](uint64_t pa, uint64_t& desc) {
        desc = mem_.read64(pa);
        return true;
    });
}

Translation AddressSpace::unmap(uint64_t va) {
    auto t = translate(va);
    if (!t) throw HostKernelError("unmapping VA " + hex(va) + ": not mapped");
    if (t->pinned) throw HostKernelError("unmapping VA " + hex(va) + ": the page is pinned");
    Layout lay = layout(t->page_bytes);
    uint64_t first = *descriptor_address(t->va_base, lay.level);
    for (unsigned i = 0; i < lay.entries; ++i) mem_.write64(first + 8 * i, 0);
    for (auto& l : listeners_) l(t->va_base, t->page_bytes);
    return *t;
}

void AddressSpace::pin(uint64_t va, uint64_t bytes, bool pinned) {
    for (uint64_t a = va; a < va + bytes;) {
        auto t = translate(a);
        if (!t) throw HostKernelError("pinning VA " + hex(a) + ": not mapped");
        Layout lay = layout(t->page_bytes);
        uint64_t first = *descriptor_address(t->va_base, lay.level);
        for (unsigned i = 0; i < lay.entries; ++i) {
            uint64_t d = mem_.read64(first + 8 * i);
            mem_.write64(first + 8 * i, pinned ? d | pte::kPinned : d & ~pte::kPinned);
        }
        a = t->va_base + t->page_bytes;
    }
}

uint64_t AddressSpace::map_device(uint64_t pa, uint64_t bytes) {
    if (pa % kPage4K || bytes == 0)
        throw HostKernelError("mapping device memory at PA " + hex(pa) +
                              ": needs a 4 KiB-aligned address and a size");
    const uint64_t size = (bytes + kPage4K - 1) / kPage4K * kPage4K;
    const uint64_t va = next_va_;
    for (uint64_t off = 0; off < size; off += kPage4K) map(va + off, pa + off, kPage4K, true);
    next_va_ += size;
    return va;
}

uint64_t AddressSpace::mmap(uint64_t bytes, uint64_t page_bytes) {
    layout(page_bytes);  // validates the size
    if (bytes == 0) throw HostKernelError("mmap of 0 bytes");
    uint64_t size = (bytes + page_bytes - 1) / page_bytes * page_bytes;
    uint64_t va = (next_va_ + page_bytes - 1) / page_bytes * page_bytes;
    if (va + size > (1ull << 48)) throw HostKernelError("mmap: 48-bit VA space exhausted");
    uint64_t done = 0;
    try {
        for (; done < size; done += page_bytes) {
            uint64_t pa = frames_.allocate(page_bytes, page_bytes);
            try {
                map(va + done, pa, page_bytes);
            } catch (...) {
                frames_.free(pa, page_bytes);
                throw;
            }
        }
    } catch (...) {
        if (done) munmap(va, done);  // leave nothing half-mapped
        throw;
    }
    next_va_ = va + size;
    return va;
}

void AddressSpace::munmap(uint64_t va, uint64_t bytes) {
    for (uint64_t a = va; a < va + bytes;) {
        Translation t = unmap(a);
        frames_.free(t.pa_base, t.page_bytes);
        a = t.va_base + t.page_bytes;
    }
}

}  // namespace canopy::host
