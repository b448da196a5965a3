// The tag, state and data array of a set-associative, write-back cache with LRU replacement:
// the storage every coherent cache of the platform is built on (the host cores' L1 and L2, the
// home node's system-level cache, the device's CCIX system cache). It holds real bytes; the
// caches around it decide states and timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/coherence.hpp"

namespace canopy::core {

struct CacheGeometry {
    uint64_t size_bytes = 64 * 1024;
    uint32_t ways = 4;
    uint32_t line_bytes = 64;
    // Throws InputError naming `scope` ("host.core.l1") when the geometry is impossible: sizes
    // not powers of two, size not a multiple of ways x line.
    void validate(const std::string& scope) const;
    uint64_t sets() const { return size_bytes / (uint64_t(ways) * line_bytes); }
};

class CacheArray {
  public:
    struct Line {
        uint64_t address = 0;  // line-aligned
        LineState state = LineState::I;
        uint64_t last_use = 0;
    };

    // `with_data` false keeps tags and states only (a latency filter such as an inclusive L1).
    CacheArray(const CacheGeometry& g, bool with_data = true);

    uint64_t line_of(uint64_t address) const { return address & ~line_mask_; }
    uint32_t line_bytes() const { return geometry_.line_bytes; }
    const CacheGeometry& geometry() const { return geometry_; }

    // The valid line holding `address`, or null. find() marks it most recently used.
    Line* find(uint64_t address);
    // The same without touching the replacement order (snoops, inspection).
    Line* probe(uint64_t address) { return const_cast<Line*>(peek(address)); }
    const Line* peek(uint64_t address) const;
    // The way a fill of `address` goes to: an invalid way, else the least recently used. The
    // caller evicts it (write-back, snoop filter) before calling fill().
    Line& victim(uint64_t address);
    // Takes `line` for `address` in `state`, most recently used; copies `data` when given.
    void fill(Line& line, uint64_t address, LineState state, const uint8_t* data = nullptr);
    void invalidate(Line& line) { line.state = LineState::I; }
    uint8_t* data(const Line& line);  // null without data
    const uint8_t* data(const Line& line) const {
        return const_cast<CacheArray*>(this)->data(line);
    }

    uint64_t valid_lines() const;
    template <class F>
    void for_each_valid(F&& f) {
        for (Line& l : lines_)
            if (is_valid(l.state)) f(l);
    }

  private:
    size_t set_index(uint64_t address) const {
        return size_t((address >> line_shift_) & (sets_ - 1));  // a shift: no 64-bit divide
    }
    CacheGeometry geometry_;
    uint64_t line_mask_;
    unsigned line_shift_;  // log2(line_bytes), a power of two (validate)
    uint64_t sets_;
    uint64_t clock_ = 0;
    std::vector<Line> lines_;  // sets x ways, set-major
    std::vector<uint8_t> data_;
};

}  // namespace canopy::core
