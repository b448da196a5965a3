// The vocabulary of cache coherence shared by the host's home node and caches (models/host) and
// the CCIX agents of the link (models/link): line states, request and snoop messages, the
// interface a cache offers to the home that snoops it, and far atomics. Names follow Arm CHI,
// which CCIX 1.0's protocol layer mirrors (the CCIX-vs-PCIe paper, seeds/003 Section II: the
// N1-SDP's CMN-600 home node is the CCIX home agent, the FPGA the request agent).
//
//   state  CHI  meaning
//   I      I    invalid
//   UC     UC   unique clean: the only copy, equal to memory; may be written without asking
//   UD     UD   unique dirty: the only copy, newer than memory
//   SC     SC   shared clean: other caches may hold it; read only
//   SD     SD   shared dirty: other caches may hold it clean; this one must write it back
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <systemc>

namespace canopy::core {

enum class LineState : uint8_t { I, UC, UD, SC, SD };

constexpr bool is_valid(LineState s) { return s != LineState::I; }
constexpr bool is_unique(LineState s) { return s == LineState::UC || s == LineState::UD; }
constexpr bool is_dirty(LineState s) { return s == LineState::UD || s == LineState::SD; }
const char* to_string(LineState s);

// Requests a requester sends its home.
enum class CohRequest : uint8_t {
    ReadShared,    // a readable copy (UC when nobody else holds the line, else SC)
    ReadUnique,    // a writable copy: every other copy is invalidated
    CleanUnique,   // upgrade SC -> UC without data: every other copy is invalidated
    ReadOnce,      // I/O-coherent read of the newest data; nothing is cached (PCIe DMA, walks)
    ReadNoSnoop,   // read of memory without snooping (non-coherent)
    WriteUnique,   // I/O-coherent write: cached copies are invalidated first (PCIe DMA writes)
    WriteNoSnoop,  // write to memory without snooping (non-coherent)
    WriteBack,     // eviction of a dirty line, with its data
    Evict,         // eviction of a clean line, no data (keeps the home's snoop filter exact)
    Atomic,        // far atomic, performed at the home after invalidating every copy
};
const char* to_string(CohRequest r);
constexpr int kCohRequests = 10;

// Snoops a home sends a holder of a line.
enum class SnoopKind : uint8_t {
    Shared,      // keep a shared copy; return dirty data
    Unique,      // give the line up; return dirty data (a read-unique by someone else)
    Invalidate,  // give the line up; data not wanted (the snooper drops dirty data too: the
                 // requester is about to overwrite the whole line)
    Once,        // return dirty data, keep the line as it is (an I/O-coherent read)
};
const char* to_string(SnoopKind k);

struct SnoopResponse {
    bool was_valid = false;  // the snooper held the line
    bool data = false;       // dirty data returned in the buffer (the home updates memory)
    LineState before = LineState::I;
};

// What a home sees of a cache it tracks: one snoop, answered at once (loosely timed: the
// snooper adds its own handling time to `delay`). `line` has line_bytes bytes; the snooper
// copies its data there when it returns dirty data.
class Snoopable {
  public:
    virtual ~Snoopable() = default;
    virtual SnoopResponse snoop(SnoopKind kind, uint64_t line_address, uint8_t* line,
                                sc_core::sc_time& delay) = 0;
    // Debug view without side effects (no state change, no statistics): copies the line into
    // `line` and returns true when this cache holds it dirty.
    virtual bool peek_dirty(uint64_t line_address, uint8_t* line) const = 0;
};

// Far atomics (CCIX 1.0 / CHI: AtomicStore and AtomicLoad with an arithmetic or logic sub-op,
// AtomicSwap, AtomicCompare). Operands are little-endian integers of 1, 2, 4 or 8 bytes;
// AtomicCompare compares `compare` and, when equal, stores `operand`.
enum class AtomicKind : uint8_t { Store, Load, Swap, Compare };
enum class AtomicOp : uint8_t { Add, Clr, Eor, Set, Smax, Smin, Umax, Umin };
const char* to_string(AtomicKind k);
const char* to_string(AtomicOp o);

struct AtomicRequest {
    AtomicKind kind = AtomicKind::Compare;
    AtomicOp op = AtomicOp::Add;  // for Store and Load
    uint8_t size = 8;             // bytes: 1, 2, 4 or 8
    uint64_t operand = 0;         // the value to combine, swap in, or store on a match
    uint64_t compare = 0;         // AtomicCompare only
};

// What a requester sees of its home (host/home_node.hpp implements it; the link's CCIX home
// agent makes the device's request agent one of its requesters).
class CoherentHome {
  public:
    struct Result {
        LineState granted = LineState::I;
        uint64_t atomic_old = 0;  // the value before an atomic
    };
    virtual ~CoherentHome() = default;
    // Registers a coherent cache; returns its requester id.
    virtual unsigned attach(Snoopable& cache, const std::string& name) = 0;
    // One request for the line at `line_address` (line-aligned). `line` (line_bytes) receives
    // the data of reads and carries the data of WriteBack / WriteUnique / WriteNoSnoop;
    // `atomic` (Atomic only) acts at `line_address + offset`. Adds its latency to `delay`.
    virtual Result request(unsigned requester, CohRequest req, uint64_t line_address, uint8_t* line,
                           sc_core::sc_time& delay, const AtomicRequest* atomic = nullptr,
                           unsigned offset = 0) = 0;
    virtual uint32_t line_bytes() const = 0;
};

// Performs `a` on the `a.size` bytes at `bytes` and returns the old value (what Load, Swap and
// Compare return; Store returns nothing on the wire). Throws std::invalid_argument for a size
// other than 1, 2, 4, 8.
uint64_t apply_atomic(const AtomicRequest& a, uint8_t* bytes);

}  // namespace canopy::core
