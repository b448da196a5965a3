// A host client of the block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO";
// sw/firmware/apps/block_io_abi.h): reads and writes of a striped device address space through
// one HRE. The host kernel's Base-IO block driver uses it on a kernel HRE; libDirectIO uses it on
// the user process's own HRE with the Direct-IO app. A transfer is split at stripe boundaries
// into READ / WRITE RPCs, one per stripe unit piece, to the SPU owning it; up to
// `max_outstanding` are in flight at once (the SPUs serve them in parallel). A READ's data comes
// back as a DATA request from the SPU into the HRE's receive buffer (matched by its cookie),
// which is answered once the data is delivered; `read` copies it into the caller's buffer through
// the host core (its loads cost simulated time), `read_in_place` hands the caller each piece where
// it lies in host memory, as a driver DMAing into page-cache pages would, and hands the space
// back when the sink returns. Any failure throws host::HostFault naming the SPU, the address and
// the result (SPU-OS's name for it), after every RPC in flight has been answered. One client per
// HRE and app: DATA requests with a cookie it did not give out are answered with an error and
// reported as a fault.
//
// TRIM (a discard: `trim`, `submit_trim`) goes the same way, one TRIM RPC per stripe-unit piece
// with no data; the SPU's store forgets the whole mapping units inside it (block_io_abi.h).
//
// Transfers may also be asynchronous, as io_uring or libaio make them: submit_read/submit_write
// queue a transfer and return at once; progress() sends what the window allows and takes what
// the completion queue holds, without waiting; reap() hands over finished transfers. The
// synchronous calls are a submit and a wait for that one transfer. Pieces go out in submission
// order (a WRITE piece waiting for room at its SPU holds the ones behind it, as a device's
// submission queue would).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sw/host/hre.hpp"

namespace canopy::sw {

// The SSD's striped address space: where device offset `offset` lives.
struct BlockGeometry {
    uint32_t spus = 8;
    uint64_t bank_bytes = 0;  // NVM address stride per SPU: its bank of SSD memory (ssd_dram)
    uint32_t stripe_bytes = 8192;
    // Store bytes per SPU, a whole number of stripes (0: the whole bank, the SSD-memory store;
    // on the flash, what the FTL offers: StoreConfig::spu_bytes).
    uint64_t store_bytes = 0;
    uint64_t device_bytes() const { return (store_bytes ? store_bytes : bank_bytes) * spus; }
    struct Location {
        uint32_t spu = 0;
        uint32_t nvm = 0;    // SSD memory address (bank spu)
        uint32_t bytes = 0;  // contiguous there: up to the stripe unit's end
    };
    Location locate(uint64_t offset) const;
};

// What a transfer does.
enum class BlockOp : uint8_t { Read, Write, Trim };
const char* block_op_name(BlockOp op);  // "READ", "WRITE", "TRIM": the RPCs' names

// A piece of an I/O on the device: `bytes` at device offset `device`, at offset `at` of the
// I/O's buffer (a file's extents, or a block device's one range).
struct DeviceRange {
    uint64_t device = 0, at = 0, bytes = 0;
};

struct BlockIoConfig {
    // RPCs in flight per client. A READ in flight may hold two completion-queue entries (its
    // DATA request and its response): keep 2 x max_outstanding within the HRE's cq_entries.
    uint32_t max_outstanding = 16;
    // The most one RPC moves (pieces are split at stripe boundaries and at this size); at most
    // BLOCK_IO_MAX_BYTES. Smaller pieces: more RPCs in flight per stripe unit, e.g. one per page.
    uint32_t max_piece_bytes = 8192;
    // WRITE data in flight to one SPU: its network interface's receive buffer holds 32 KiB
    // (docs/willow.md), so three 8 KiB WRITEs; a fourth would be dropped and sent again. READ
    // requests are 12 B, so they are not limited per SPU (the ones SPU-OS cannot start yet wait
    // at the SPU's interface and start as soon as a lane is free).
    uint32_t spu_write_bytes = 24 * 1024;
    // A request the ring dropped for want of room (the bridge's NACK status, or the SPU's
    // SPU_OS_E_DROPPED for a DATA request the bridge could not take) is sent again up to this
    // many times: Willow's RPCs are unreliable by design and the sender retries. The k-th retry
    // waits retry_backoff_ns x 2^(k-1), at most retry_backoff_max_ns, stretched by up to half
    // again (a fixed pseudo-random share per piece and attempt, so that clients that collided
    // do not collide again in step): an SPU storing on the flash drains its receive buffer one
    // program (~0.7 ms) at a time while several clients wait for room.
    uint32_t retries = 64;
    double retry_backoff_ns = 1000.0;
    double retry_backoff_max_ns = 2000000.0;
    // Every WRITE carries the FUA flag (BLOCK_IO_FUA): it completes once its data is on the
    // flash, as Linux sends each write to a file opened O_SYNC or O_DSYNC to an NVMe device.
    bool fua_writes = false;
};

class BlockIo {
  public:
    // The most one TRIM request names (its SPU's NVM-contiguous part of a range).
    static constexpr uint64_t kMaxTrimBytes = uint64_t(1) << 30;
    // `app` is the app id the block I/O app was installed as (Base-IO or Direct-IO).
    BlockIo(Hre& hre, uint32_t app, BlockGeometry geometry, BlockIoConfig cfg = BlockIoConfig());

    // Device offsets [offset, offset + bytes); throws HostFault for a range outside the device.
    void write(uint64_t offset, const void* src, uint64_t bytes);
    void read(uint64_t offset, void* dst, uint64_t bytes);
    // `sink(offset, va, bytes)` for each piece, in the order the pieces arrive, while it lies in
    // the HRE's receive buffer (host virtual address `va`); the space is handed back when the
    // sink returns. The sink must not throw (the pieces in flight would be left unanswered).
    using Sink = std::function<void(uint64_t offset, uint64_t va, uint32_t bytes)>;
    void read_in_place(uint64_t offset, uint64_t bytes, const Sink& sink);
    void trim(uint64_t offset, uint64_t bytes);

    // Asynchronous transfers. The buffer must stay until the transfer is reaped. A range
    // outside the device throws HostFault at once (nothing is queued); the id is never 0.
    uint64_t submit_write(uint64_t offset, const void* src, uint64_t bytes);
    uint64_t submit_read(uint64_t offset, void* dst, uint64_t bytes);
    uint64_t submit_trim(uint64_t offset, uint64_t bytes);
    // One step, without waiting: sends the pieces the window has room for, takes every entry
    // the completion queue holds. False: nothing moved (the caller may idle: hre().idle()).
    bool progress();
    struct Completion {
        uint64_t id = 0;
        BlockOp op = BlockOp::Read;
        uint64_t offset = 0, bytes = 0;
        std::string error;  // empty: done; else what failed, as the HostFault would say
    };
    // A finished transfer, in the order they finished (none: nullopt).
    std::optional<Completion> reap();
    // When a dropped piece's back-off ends (a caller idling must wake then), if one is waiting
    // for it; else infinity.
    double next_attempt_ns() const;
    // Transfers submitted and not yet reaped.
    size_t pending() const { return transfers_.size(); }
    // Progresses (idling while nothing moves) until transfer `id` finished; reaps it and throws
    // HostFault with its error if it failed.
    void wait(uint64_t id);

    const BlockGeometry& geometry() const { return geo_; }
    Hre& hre() { return hre_; }

  private:
    // The wait before a dropped piece's next attempt (BlockIoConfig::retries).
    double backoff_ns(uint64_t offset, uint32_t attempts) const;
    struct Piece {
        uint64_t transfer = 0;
        uint64_t offset = 0;  // device offset
        uint64_t done = 0;    // bytes of the transfer before it (where it goes in the buffer)
        BlockGeometry::Location at;
        uint32_t attempts = 0;
        double not_before_ns = 0;  // a dropped piece waits out its back-off
    };
    struct Transfer {
        BlockOp op = BlockOp::Read;
        uint64_t offset = 0, bytes = 0;
        const uint8_t* src = nullptr;  // WRITE data
        uint8_t* dst = nullptr;        // READ data, copied out; without it handed to sink
        Sink sink;
        uint32_t unsent = 0, flying = 0;  // its pieces still to send, and in flight
        std::string failure;              // the first one; later ones are consequences or alike
        bool finished = false;
    };
    struct Flight {  // an RPC in flight
        uint64_t piece = 0;
        uint32_t cookie = 0;  // READs: the DATA request's cookie
        bool delivered = false;
    };
    // Splits [offset, offset + bytes) at stripe boundaries into queued pieces (HostFault when
    // outside the device) of a new transfer.
    uint64_t submit(Transfer t, const char* what);
    uint16_t issue(const Piece& p, BlockOp op, const uint8_t* src, uint32_t cookie);
    std::string describe(const Piece& p, BlockOp op) const;
    void fail(Transfer& t, const std::string& why);
    // Moves a transfer whose pieces have all been answered (or dropped after a failure) to done_.
    void settle(uint64_t id, Transfer& t);
    bool take_data();       // READ data delivered as DATA requests (true: any)
    bool take_responses();  // the RPCs' responses (true: any)

    Hre& hre_;
    uint32_t app_;
    BlockGeometry geo_;
    BlockIoConfig cfg_;
    uint32_t next_cookie_ = 1;  // READ cookies: unique among this client's READs in flight
    uint64_t next_transfer_ = 1, next_piece_ = 1;
    std::map<uint64_t, Transfer> transfers_;  // submitted, not reaped
    std::map<uint64_t, Piece> pieces_;        // queued or in flight
    std::deque<uint64_t> todo_;               // pieces to send, in order (retries go first)
    std::map<uint16_t, Flight> flights_;      // by tag
    std::map<uint32_t, uint16_t> cookies_;
    std::vector<uint32_t> spu_bytes_;  // WRITE data in flight to each SPU
    std::deque<Completion> done_;
};

}  // namespace canopy::sw
