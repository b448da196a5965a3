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
#pragma once

#include <cstdint>
#include <functional>
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
};

class BlockIo {
  public:
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

    const BlockGeometry& geometry() const { return geo_; }
    Hre& hre() { return hre_; }

  private:
    // The wait before a dropped piece's next attempt (BlockIoConfig::retries).
    double backoff_ns(uint64_t offset, uint32_t attempts) const;
    struct Piece;
    struct Flight;
    // Splits [offset, offset + bytes) at stripe boundaries (HostFault when outside the device).
    std::vector<Piece> split(uint64_t offset, uint64_t bytes, const char* what) const;
    // Runs the pieces' RPCs with up to max_outstanding in flight: WRITE data from `src`; READ
    // data copied out to `dst`, or, without one, handed to `sink` in place.
    void run(std::vector<Piece>& pieces, bool write, const uint8_t* src, uint8_t* dst,
             const Sink& sink);
    uint16_t issue(const Piece& p, bool write, const uint8_t* src, uint32_t cookie);
    std::string describe(const Piece& p, bool write) const;

    Hre& hre_;
    uint32_t app_;
    BlockGeometry geo_;
    BlockIoConfig cfg_;
    uint32_t next_cookie_ = 1;  // READ cookies: unique among this client's READs in flight
};

}  // namespace canopy::sw
