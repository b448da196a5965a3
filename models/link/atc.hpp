// The device's Address Translation Cache: the PCIe ATS client of the endpoint (PCIe Base Spec
// 6.0, Chapter 10; the CCIX-vs-PCIe paper, seeds/003 Section III, where the ATS Switch of the
// Xilinx XDMA/CPM design holds a small ATC and sends translation requests on VC0, and Section IV
// Experiment 2 for its cost: a 64-B read with an ATC miss takes ~2453 ns against ~700 ns with a
// hit, of which the host IOMMU's answer is ~617 ns, leaving ~1136 ns to the ATC itself).
//
// A set-associative cache of virtual-to-physical page translations with LRU replacement. Entries
// are page-size aware: each holds a 4 KiB, 64 KiB, 2 MiB, 32 MiB or 1 GiB page, so one entry of
// a 2 MiB huge page covers every address in it. A set is chosen by the page number of the entry's
// own size, so a lookup probes one set per supported size (as multi-size TLBs do).
//
// On a miss the ATC sends one ATS translation request through `ats_initiator` (towards the
// link's device_target): a read of 8 bytes at the 4 KiB-aligned untranslated address carrying a
// core::TlpExt of type AtsTranslate, address type TranslationRequest. The completer fills the 8
// bytes with one AtsEntry (below). A failed translation (error response, or neither read nor
// write permission) is returned to the requester and counted; it is not cached.
//
// Misses are non-blocking: up to max_outstanding ATS requests may be in flight at once (each
// holds a slot from its issue to its answer); a miss finding every slot taken waits for the
// earliest to free. Clients may thus issue translations ahead (the DMA engine pipelines the
// pages of a descriptor, one lookup per hit_latency_ns, models/link/dma_engine.hpp).
//
// The ATC never calls wait(): translate() adds its latency to the caller's delay; a call may
// start at any delay (loosely timed), slots are taken in call order.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "link/pcie_config.hpp"

namespace canopy::link {

// One ATS translation-completion entry, 8 bytes little-endian as in PCIe Base Spec 10.2.3:
//   bits 63:12  translated (physical) address
//   bit  11     S: size. 0 = 4 KiB; 1 = the page is larger and its size is encoded in the
//               address bits: bits 12 .. k-2 are 1 and bit k-1 is 0 for a page of 2^k bytes
//               (8 KiB: bit 12 = 0; 2 MiB: bits 12..19 = 1, bit 20 = 0)
//   bit  1      W: write permitted
//   bit  0      R: read permitted
// R = W = 0 means the translation failed (no mapping, or the access is not allowed).
struct AtsEntry {
    uint64_t physical_page = 0;  // page-aligned physical address
    uint64_t page_bytes = 4096;  // a power of two, at least 4 KiB
    bool read = false, write = false;

    bool success() const { return read || write; }
    uint64_t encode() const;
    static AtsEntry decode(uint64_t raw);
};
constexpr uint32_t kAtsEntryBytes = 8;

struct AtcConfig {
    uint32_t entries = 64;  // assumed: a small ATC (the paper calls it "small", no size given)
    uint32_t ways = 4;      // associativity; equal to entries for a fully associative ATC
    double hit_latency_ns = 20.0;  // assumed: a few cycles of the 250 MHz soft logic
    // Time the ATC and ATS Switch add around one translation request on a miss, on top of the
    // host's answer. [CCIX paper IV Exp. 2: 2453 - 617 - 700 = 1136 ns]
    double miss_overhead_ns = 1136.0;
    // ATS requests in flight at once. Assumed 8: one ATS round trip (~1.8-2.5 us) spans about
    // three 4 KiB pieces of ~0.75 us, and 8 covers all pages of a 32 KiB transfer, the size from
    // which the paper sees transfer time dominate [CCIX paper IV Exp. 2]. 1 = blocking ATC.
    uint32_t max_outstanding = 8;
    void describe(core::Params& p);  // under "link.atc."
    // entries a multiple of ways, max_outstanding >= 1; throws InputError
    void validate() const;
};

class Atc : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<Atc> ats_initiator;  // translation requests, to the link

    struct Result {
        bool ok = false;
        bool hit = false;
        uint64_t physical = 0;       // translated address of the looked-up byte
        uint64_t page_bytes = 0;     // size of the page holding it
        uint64_t page_end = 0;       // first virtual address past that page
        sc_core::sc_time slot_wait;  // a miss's wait for a free request slot
        std::string error;           // why, when !ok
    };

    Atc(sc_core::sc_module_name name, const AtcConfig& cfg, core::Services& services);

    // Translates virtual address `va`, adding the lookup (and on a miss the ATS round trip) to
    // `delay`. Never throws on a failed translation: Result::ok is false and error says why.
    Result translate(uint64_t va, sc_core::sc_time& delay);
    bool contains(uint64_t va) const;  // a valid entry covers va (no stats, no LRU update)
    // Drops the entry covering `va` (any page size); returns whether one was dropped.
    bool invalidate(uint64_t va);
    // Drops every entry overlapping [va, va + bytes) (an ATS Invalidate Request); returns how many.
    uint64_t invalidate(uint64_t va, uint64_t bytes);
    void invalidate_all();

    const AtcConfig& config() const { return cfg_; }
    uint32_t sets() const { return sets_; }

  private:
    struct Entry {
        bool valid = false;
        uint64_t va_page = 0, pa_page = 0, page_bytes = 0;
        bool read = false, write = false;
        uint64_t last_use = 0;  // LRU stamp
    };
    Entry* find(uint64_t va);
    const Entry* find(uint64_t va) const;
    void insert(uint64_t va, const AtsEntry& t);
    uint32_t set_of(uint64_t va, uint64_t page_bytes) const;
    // One ATS round trip; fills `out` or returns why it failed.
    std::string request(uint64_t va, AtsEntry& out, sc_core::sc_time& delay);

    AtcConfig cfg_;
    core::Services& services_;
    uint32_t sets_;
    std::vector<Entry> entries_;  // sets_ x ways, set-major
    uint64_t tick_ = 0;
    std::vector<sc_core::sc_time> slot_free_;  // per request slot: absolute time it frees
    const sc_core::sc_time hit_latency_, miss_overhead_;
    core::Counter &lookups_, &hits_, &misses_, &failures_, &evictions_, &invalidations_;
    core::Distribution& latency_;
};

// The link's share of one ATS round trip on an idle link: the request TLP upstream and its 8-byte
// completion downstream, each a pipeline traversal plus serialisation. A platform that models the
// link charges this there, so its ATC's miss overhead is the paper's 1136 ns less this.
double ats_link_round_trip_ns(const PcieConfig& link);
// The ATC config for a platform modelling the link: miss_overhead_ns less ats_link_round_trip_ns.
AtcConfig atc_for_modelled_link(const PcieConfig& link);

// Page sizes an ATC entry may hold: 4 KiB, 64 KiB, 2 MiB, 32 MiB, 1 GiB.
const std::vector<uint64_t>& atc_page_sizes();

}  // namespace canopy::link
