// A coherent, write-back, write-allocate cache of one or two levels: a requester of a coherent
// home (core/coherence.hpp) that answers its snoops. It stands for the private caches of a host
// core (the N1-SDP's Neoverse N1: 64 KiB L1D and 1 MiB L2; seeds/003 Section III) and for the
// device's CCIX system cache (one level on the U280, two on the VCK5000). The last level (`l2`)
// holds the data and the coherence state; the optional L1 (l1.size_bytes = 0: none) is an
// inclusive tag filter that decides the hit latency, dropped with the line it mirrors.
//
// Timing (loosely timed; each call adds to the caller's delay): l1_hit_ns on every access (with
// an L1); l2_hit_ns more on an L1 miss; on an L2 miss (or a write to a shared line) the request
// goes to the home, after the owner's `sync` callback has brought its local time into the
// kernel's (so requests from several requesters reach the home in simulated-time order).
// Evictions are write-backs (dirty) or evicts (clean) to the home, off the owner's path (a
// write buffer).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "core/cache_array.hpp"
#include "core/coherence.hpp"
#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::core {

struct CoherentCacheConfig {
    CacheGeometry l1{64 * 1024, 4, 64};  // N1: 64 KiB 4-way L1D (Arm N1 TRM); 0 B: no L1
    CacheGeometry l2{1 << 20, 8, 64};    // N1-SDP: 1 MiB private L2, 8-way (N1 TRM)
    double l1_hit_ns = 1.54;             // 4 cycles load-to-use at 2.6 GHz (N1 TRM)
    double l2_hit_ns = 4.23;             // 11 cycles at 2.6 GHz (N1 TRM)
    // A read miss asks for a unique copy (ReadUnique) instead of a shared one (ReadShared): what
    // Xilinx's System Cache does for reads marked read- and write-allocate (PG118, "Complete CCIX
    // Transaction Flow": ARCACHE 1101/1111 -> ReadUnique). Host cores: false (N1 loads).
    bool read_unique = false;
    void describe(Params& p);  // relative to the caller's scope ("host.core.")
    void validate(const std::string& scope) const;
    bool has_l1() const { return l1.size_bytes != 0; }
};

class CoherentCache : public Snoopable {
  public:
    // Called before a request leaves for the home: brings the core's local time (`delay`) into
    // the kernel's and zeroes it.
    using Sync = std::function<void(sc_core::sc_time& delay)>;

    CoherentCache(const std::string& name, const CoherentCacheConfig& cfg, CoherentHome& home,
                  Services& services, Sync sync);

    // A read or write of `length` bytes at physical `address`, within one line.
    void read(uint64_t address, uint8_t* bytes, unsigned length, sc_core::sc_time& delay);
    void write(uint64_t address, const uint8_t* bytes, unsigned length, sc_core::sc_time& delay);
    // An atomic on the `a.size` bytes at `address` (aligned to the size); returns the old value.
    // Far: performed at the home (the line leaves every cache); near: the line is made unique
    // here and the atomic performed in the L2.
    uint64_t atomic(uint64_t address, const AtomicRequest& a, bool far, sc_core::sc_time& delay);
    // A read that goes to the home without allocating (the MMU's table walks).
    void read_once(uint64_t address, uint8_t* bytes, unsigned length, sc_core::sc_time& delay);

    SnoopResponse snoop(SnoopKind kind, uint64_t line_address, uint8_t* line,
                        sc_core::sc_time& delay) override;
    bool peek_dirty(uint64_t line_address, uint8_t* line) const override;

    LineState state(uint64_t address) const;  // the L2's state of the line

    // The exclusive monitor (Arm's LDAXR + WFE, x86's MONITOR + MWAIT): arms a watch on the line
    // holding `address`; a snoop that takes the line from this cache (another requester writes
    // it) clears the watch and notifies monitor_event(). monitor_cleared() tells whether that
    // happened since monitor() (so the waiter must not sleep).
    void monitor(uint64_t address);
    bool monitor_cleared() const { return !monitor_armed_; }
    const sc_core::sc_event& monitor_event() const { return monitor_event_; }
    unsigned requester_id() const { return id_; }

  private:
    CacheArray::Line* lookup(uint64_t line, sc_core::sc_time& delay);
    // Installs a line granted by the home in L2 and L1, evicting as needed.
    CacheArray::Line& install(uint64_t line, LineState state, const uint8_t* data);
    // Obtains a unique copy of the line (the home is asked when needed); returns it.
    CacheArray::Line& make_unique(uint64_t line, sc_core::sc_time& delay);

    std::string name_;
    CoherentCacheConfig cfg_;
    CoherentHome& home_;
    Sync sync_;
    unsigned id_;
    CacheArray l1_, l2_;
    // A line on its way from the home into the L2 (used after the sync, so no other request of
    // this cache's owner can run meanwhile; snoops never touch it).
    std::vector<uint8_t> fill_;
    sc_core::sc_time l1_hit_, l2_hit_;
    uint64_t monitor_line_ = 0;
    bool monitor_armed_ = false;
    sc_core::sc_event monitor_event_;
    Counter &l1_hits_, &l1_misses_, &l2_hits_, &l2_misses_, &upgrades_, &writebacks_, &evicts_,
        &snoops_, &snoop_invalidations_;
};

}  // namespace canopy::core
