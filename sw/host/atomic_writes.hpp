// The Atomic-Writes host library (Willow Section 4.3; sw/firmware/apps/atomic_writes_abi.h): a
// process's transactions over the files it opened with libDirectIO, on libDirectIO's HRE (no
// system call per operation). write() logs data at the SPUs that own the file's blocks (one
// LOGWRITE per stripe-unit piece, or one VECTORLOGWRITE per SPU for a batch, in flight at once),
// commit() sends COMMIT to the coordinator, the lowest-numbered SPU the transaction touched,
// which runs two-phase commit over the others; write_commit() saves the last round trip when the
// last write lands on the coordinator (LOGWRITECOMMIT). A failure throws host::HostFault naming
// the SPU and the result; a failed write or commit leaves the transaction aborted everywhere, or
// (AW_E_INCOMPLETE) committed, for the kernel's RECOVER to finish. Requests the ring dropped or
// SPU-OS refused for an evicted permission entry (which the kernel grants again) are retried.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sw/host/lib_direct_io.hpp"

namespace canopy::sw {

class AtomicWrites {
  public:
    struct Update {
        int fd = -1;
        uint64_t offset = 0;
        const void* data = nullptr;
        uint64_t bytes = 0;
    };
    struct Stats {
        uint64_t rpcs = 0, commits = 0, aborts = 0;
        uint64_t retries = 0;   // requests sent again (NACKed, or a permission entry re-granted)
        uint64_t finishes = 0;  // COMMITs sent again to finish applying a committed transaction
    };

    // `app`: the id the Atomic-Writes app is installed as; the kernel has granted the process
    // the log regions (platform/willow_stack: WillowStack::atomic_writes).
    AtomicWrites(DirectIo& dio, uint32_t app);

    uint32_t begin();  // a new transaction
    void write(uint32_t tx, int fd, uint64_t offset, const void* data, uint64_t bytes);
    void write(uint32_t tx, const std::vector<Update>& updates);  // VECTORLOGWRITE
    void commit(uint32_t tx);
    void write_commit(uint32_t tx, int fd, uint64_t offset, const void* data, uint64_t bytes);
    void abort(uint32_t tx);

    const Stats& stats() const { return stats_; }

  private:
    struct Rpc {
        uint32_t spu;
        std::vector<uint8_t> payload;
        uint32_t records;  // LOGWRITE records in the payload
    };
    // The LOGWRITE pieces of `updates`, one payload of records per SPU, split so that none is
    // over the SPU's receive buffer.
    std::vector<Rpc> log_records(uint32_t tx, const std::vector<Update>& updates);
    // Sends them all, waits for all; throws (after aborting tx) if any failed.
    void run(uint32_t tx, uint16_t handler, const std::vector<Rpc>& rpcs);
    uint32_t& participants(uint32_t tx);
    // COMMIT of tx (open, with participants) to its coordinator, the lowest participant.
    Rpc commit_rpc(uint32_t tx);
    [[noreturn]] void fail(uint32_t tx, uint32_t spu, const char* what, uint32_t result);

    DirectIo& dio_;
    Hre& hre_;
    uint32_t app_;
    uint32_t next_ = 1;
    std::map<uint32_t, uint32_t> open_;  // transaction -> participant SPUs (bit mask)
    Stats stats_;
};

// The name of an Atomic-Writes result (AW_*), else SPU-OS's.
std::string atomic_writes_result_name(uint32_t r);

}  // namespace canopy::sw
