// The shared lock table of neoDBMS (the CCIX-vs-PCIe paper, seeds/003 Section V, Figures 7-8): a
// hash table in pinned huge-page host memory through which the DBMS on the host and the
// near-data-processing module on the device lock record versions before updating them. A record
// version's identifier hashes to a bucket; each bucket holds a FIFO queue of lock requests, whose
// first entry holds the lock; releasing shifts the queue so the next request holds it.
//
// Layout: one 64-byte line per bucket (the coherence granule, so buckets never share a line):
//   word 0      head (bits 31:0) and tail (bits 63:32): the queue as tickets; the entry with
//               ticket == head holds the lock, head == tail means the queue is empty
//   words 1..7  the queue's slots: slot 1 + (ticket mod 7) holds the requester's tag
// A request takes a ticket with one atomic add on word 0's tail (AtomicLoad ADD on CCIX, a far
// atomic on the host); finding the queue empty it holds the lock at once ("the first slot
// represents the process holding the lock"), else it writes its tag into its slot (a swap) and
// waits, polling word 0, until its ticket is at the head. Release adds one to the head.
// Deviation from the paper, which places locks with compare-and-swap: a CAS on a word both sides
// change fails for the slower requester again and again (a device CAS takes ~770 ns), while the
// paper saw the device's lock latency flat under contention; an add never fails, which gives
// that behaviour with the same one-atomic cost. Slot tags are informational (modulo 7); the
// queue itself is unbounded (32-bit tickets; a head wrapping into the tail after 2^32 locks of
// one bucket is not handled).
//
// The same client code runs on both sides through a LockPort: a host core, or the device's
// request agent.
#pragma once

#include <cstdint>

#include "host/host_core.hpp"

namespace canopy::sw {

// What the lock client needs from its side: atomics and loads of 8 bytes at virtual addresses,
// time, and the side's own processing time.
class LockPort {
  public:
    virtual ~LockPort() = default;
    // Return the old value.
    virtual uint64_t fetch_add(uint64_t va, uint64_t value) = 0;
    virtual uint64_t swap(uint64_t va, uint64_t value) = 0;
    virtual uint64_t load64(uint64_t va) = 0;
    virtual void compute_ns(double ns) = 0;
    virtual double now_ns() = 0;
};

// The host side's port: a host core (far atomics at the home node by default).
class HostLockPort : public LockPort {
  public:
    explicit HostLockPort(host::HostCore& cpu) : cpu_(cpu) {}
    uint64_t fetch_add(uint64_t va, uint64_t value) override { return cpu_.fetch_add(va, value); }
    uint64_t swap(uint64_t va, uint64_t value) override { return cpu_.swap(va, value); }
    uint64_t load64(uint64_t va) override { return cpu_.load<uint64_t>(va); }
    void compute_ns(double ns) override { cpu_.compute_ns(ns); }
    double now_ns() override { return cpu_.now_ns(); }

  private:
    host::HostCore& cpu_;
};

struct LockTableLayout {
    static constexpr uint64_t kBucketBytes = 64;
    static constexpr uint32_t kSlots = 7;
    uint64_t base = 0;  // virtual address of bucket 0 (pinned, huge-page memory)
    uint32_t buckets = 1024;
    uint64_t bytes() const { return uint64_t(buckets) * kBucketBytes; }
    uint32_t bucket_of(uint64_t record_version) const;
    uint64_t bucket_address(uint64_t record_version) const {
        return base + uint64_t(bucket_of(record_version)) * kBucketBytes;
    }
};

struct LockClientConfig {
    // The requester's own work per lock request before its first atomic (hashing, building the
    // entry). Assumed for the host: 30 ns, which with the ~50 ns host far atomic gives the paper's
    // ~80 ns low-contention lock (seeds/003 Section V-B).
    double software_ns = 30.0;
    double poll_ns = 20.0;  // assumed: pause between polls of a bucket while waiting
};

class LockClient {
  public:
    struct Lock {
        uint64_t bucket = 0;  // virtual address of the bucket's line
        uint32_t ticket = 0;
        double request_ns = 0;  // request to holding its ticket (the lock, if the queue was empty)
        double wait_ns = 0;     // ticket to holding the lock
        bool queued = false;    // waited behind others (its slot holds its tag)
    };

    LockClient(LockPort& port, const LockTableLayout& table, uint32_t tag,
               const LockClientConfig& cfg = LockClientConfig());
    // Blocks (in simulated time) until the record version's bucket lock is held.
    Lock lock(uint64_t record_version);
    void unlock(const Lock& l);

  private:
    static uint32_t head(uint64_t w) { return uint32_t(w); }
    static uint32_t tail(uint64_t w) { return uint32_t(w >> 32); }
    static uint64_t slot(const Lock& l) {
        return l.bucket + 8 * (1 + l.ticket % LockTableLayout::kSlots);
    }

    LockPort& port_;
    LockTableLayout table_;
    uint32_t tag_;
    LockClientConfig cfg_;
};

}  // namespace canopy::sw
