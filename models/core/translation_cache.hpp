// A set-associative, page-size-aware cache of virtual-to-physical translations with LRU
// replacement: the storage of every TLB-like structure of the platform (the host cores' TLBs, the
// host IOMMU's IOTLB, the device's ATC). An entry holds one page of any supported size, tagged by
// an address-space id; a lookup probes one set per page size, chosen by the page number of that
// size (as multi-size TLBs do), so one entry of a 2 MiB page covers every address in it.
#pragma once

#include <cstdint>
#include <vector>

namespace canopy::core {

class TranslationCache {
  public:
    struct Entry {
        bool valid = false;
        uint32_t asid = 0;
        uint64_t va_base = 0, pa_base = 0, page_bytes = 0;
        uint32_t flags = 0;  // owner-defined (permissions, memory attributes)
        uint64_t last_use = 0;
        uint64_t translate(uint64_t va) const { return pa_base + (va - va_base); }
    };

    // `entries` a multiple of `ways` (the owner's config validates it); `page_sizes` largest
    // first.
    TranslationCache(uint32_t entries, uint32_t ways, std::vector<uint64_t> page_sizes)
        : ways_(ways),
          sets_(entries / ways),
          page_sizes_(std::move(page_sizes)),
          entries_(entries) {}

    // The entry covering `va` in `asid`, marked most recently used; null on a miss.
    Entry* lookup(uint32_t asid, uint64_t va) {
        Entry* e = find(asid, va);
        if (e) e->last_use = ++clock_;
        return e;
    }
    bool contains(uint32_t asid, uint64_t va) const {
        return const_cast<TranslationCache*>(this)->find(asid, va) != nullptr;
    }
    // Inserts a page (replacing the set's invalid or least recently used entry); returns whether
    // a valid entry was evicted.
    bool insert(uint32_t asid, uint64_t va_base, uint64_t pa_base, uint64_t page_bytes,
                uint32_t flags = 0) {
        Entry* set = &entries_[set_of(va_base, page_bytes) * ways_];
        Entry* victim = &set[0];
        for (uint32_t w = 0; w < ways_; ++w) {
            if (!set[w].valid) {
                victim = &set[w];
                break;
            }
            if (set[w].last_use < victim->last_use) victim = &set[w];
        }
        const bool evicted = victim->valid;
        *victim = Entry{true, asid, va_base, pa_base, page_bytes, flags, ++clock_};
        return evicted;
    }
    // Drops every entry of `asid` overlapping [va, va + bytes); returns how many.
    uint64_t invalidate(uint32_t asid, uint64_t va, uint64_t bytes) {
        uint64_t n = 0;
        for (Entry& e : entries_) {
            if (e.valid && e.asid == asid && e.va_base < va + bytes &&
                va < e.va_base + e.page_bytes) {
                e.valid = false;
                ++n;
            }
        }
        return n;
    }
    uint64_t invalidate_all() {
        uint64_t n = 0;
        for (Entry& e : entries_) {
            n += e.valid;
            e.valid = false;
        }
        return n;
    }
    uint32_t sets() const { return uint32_t(sets_); }

  private:
    size_t set_of(uint64_t va, uint64_t page_bytes) const {
        return size_t((va / page_bytes) % sets_);
    }
    Entry* find(uint32_t asid, uint64_t va) {
        for (uint64_t size : page_sizes_) {
            const uint64_t base = va & ~(size - 1);
            Entry* set = &entries_[set_of(va, size) * ways_];
            for (uint32_t w = 0; w < ways_; ++w) {
                Entry& e = set[w];
                if (e.valid && e.asid == asid && e.page_bytes == size && e.va_base == base)
                    return &e;
            }
        }
        return nullptr;
    }

    uint32_t ways_;
    uint64_t sets_;
    std::vector<uint64_t> page_sizes_;
    std::vector<Entry> entries_;
    uint64_t clock_ = 0;
};

}  // namespace canopy::core
