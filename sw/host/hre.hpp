// The HRE library (Willow Section 3.1 "Building an SSD App"): a host program's RPC endpoint on
// the Willow SSD, with the same interface SPU-OS gives SSD Apps on the SPUs: start a request to
// an SPU, append its payload, finish it (send), wait for its fixed-size response; receive the
// requests SPUs send to this HRE and answer them. It works on the HRE's queues in host memory
// (models/ssd/hre_queue.h) with ordinary loads and stores and rings the bridge's doorbells by
// MMIO, as a user-space library with OS bypass does: no system call per RPC. On a coherent queue
// (HreEndpoint::coherent, over CCIX) it rings no doorbells: entries carry the SQ pass in their
// phase flag and the heads go to the window's shadow line.
//
// Requests: the payload goes inline in the submission entry when it fits (40 B), otherwise into
// the submission slot's payload buffer in the HRE's DMA window. A full submission ring (one slot
// kept empty) is detected against the last SQ head read from the bridge; only then is the head
// read again (one MMIO round trip). Completions are found by polling the completion queue's
// phase bits; responses to other tags and SPU requests found while waiting are kept for their
// own wait.
//
// SPU requests' payloads arrive in the HRE's receive buffer. `receive` copies a payload out
// through the host core's loads and hands its space back at once; `receive_in_place` leaves it
// where the bridge put it (`payload_va`), as a driver handing the buffer on instead of copying
// would, and the caller hands the space back with `release`. The bridge allocates the buffer as
// a running count, so the RX head can only pass pieces in order: releases may come in any order,
// and the head advances over every leading released piece.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "host/host_core.hpp"
#include "sw/host/willow_driver.hpp"

namespace canopy::sw {

struct HreConfig {
    double poll_gap_ns = 50.0;  // pause between two empty polls of the completion queue
};

class Hre {
  public:
    struct Response {
        uint16_t tag = 0;
        uint8_t node = 0;     // the SPU that answered
        uint32_t result = 0;  // the SPU's result
        uint32_t status = 0;  // HRE_STATUS_*: OK, or why the bridge failed the request
        bool ok() const { return status == 0; }
    };
    struct Request {  // from an SPU
        uint8_t node = 0;
        uint16_t tag = 0, rpc_id = 0;
        uint32_t origin = 0;
        uint32_t length = 0;           // payload bytes
        std::vector<uint8_t> payload;  // receive(): the payload; receive_in_place(): empty
        // receive_in_place(): where the payload lies in the receive buffer until release();
        // `piece` names its space there (0: already handed back).
        uint64_t payload_va = 0;
        uint64_t piece = 0;
    };
    Hre(host::HostCore& cpu, const HreEndpoint& endpoint, HreConfig cfg = HreConfig());

    uint32_t id() const { return ep_.hre; }

    // RPCStartRequest + RPCAppendRequest + RPCFinishRequest: sends, returns the tag. Throws
    // HostFault for a payload longer than the layout's payload buffer.
    uint16_t send(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes);
    // Waits for the response to `tag`.
    Response wait(uint16_t tag);
    // The response to `tag` if it has come (polls what the completion queue holds).
    std::optional<Response> try_wait(uint16_t tag);
    // For callers with their own polling loop over many RPCs: takes one new completion entry,
    // if any (false: none); has_response() then tells, without touching the queue, whether
    // try_wait(tag) will return at once.
    bool poll();
    bool has_response(uint16_t tag) const { return responses_.count(tag) != 0; }
    // send + wait.
    Response call(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes);

    // The next request an SPU sent this HRE (waits for one); its payload is copied out and its
    // receive-buffer space returned.
    Request receive();
    std::optional<Request> try_receive();
    // The next request (with RPC ID `rpc_id` when one is given; the others stay for their own
    // receive), its payload left in the receive buffer at payload_va: copy_payload() reads it,
    // release() hands its space back (until then the bridge cannot reuse it).
    Request receive_in_place(std::optional<uint16_t> rpc_id = std::nullopt);
    std::optional<Request> try_receive_in_place(std::optional<uint16_t> rpc_id = std::nullopt);
    // `bytes` of an in-place request's payload from `offset`, through the host core's loads.
    // Throws HostFault outside the payload or after release().
    void copy_payload(const Request& r, uint32_t offset, void* dst, uint32_t bytes);
    // Hands an in-place request's receive-buffer space back (a no-op for a copied one). Throws
    // HostFault for a piece this HRE does not hold (released twice).
    void release(const Request& r);
    // Answers an SPU's request (RPCSendResponse).
    void respond(const Request& r, uint32_t result);
    // The pause between empty polls, for callers with their own polling loop: with interrupts,
    // sleeping until the queue pair's next MSI unless one came since the last pause (then the
    // waking costs host.msi.wake_ns); else wait_change(poll_gap_ns, until_ns): asleep until the
    // completion queue's next entry is written, or `until_ns` (a retry's time), at the moment a
    // loop polling every poll_gap_ns would have looked.
    void idle(double until_ns = std::numeric_limits<double>::infinity());
    // A polling loop put to sleep (the core's WFE on the completion queue's next entry): waits,
    // costing no wall time, until the bridge writes that entry, a program sends the core an
    // event or `until_ns` comes, then until the moment a loop polling every `period_ns` from now
    // would have looked (at least one period). The polls themselves are not made (they would
    // have hit in the core's L1).
    void wait_change(double period_ns, double until_ns = std::numeric_limits<double>::infinity());
    // The calling core's simulated time, in ns.
    double now_ns() const;

  private:
    std::optional<Request> take(std::optional<uint16_t> rpc_id);  // polls until one matches
    void submit(const void* entry);
    void doorbell(uint32_t offset, uint32_t value);
    // The CQ or RX head: a doorbell, or on a coherent queue a store to the shadow line.
    void publish_head(uint32_t doorbell_offset, uint32_t doorbell_value, uint32_t shadow_offset,
                      uint32_t shadow_value);
    void copy_out(uint64_t va, uint8_t* dst, uint32_t bytes);
    void copy_in(uint64_t va, const uint8_t* src, uint32_t bytes);

    host::HostCore& cpu_;
    HreEndpoint ep_;
    HreConfig cfg_;
    uint32_t sq_tail_ = 0, sq_head_ = 0, cq_head_ = 0;
    uint32_t cq_consumed_ = 0;  // running count: a coherent queue's shadow CQ head
    uint16_t phase_ = 1, next_tag_ = 0;
    bool sq_phase_ = true;    // coherent queues: the pass over the SQ (HRE_FLAG_PHASE)
    uint64_t irqs_seen_ = 0;  // the queue pair's MSI count at the last pause
    struct Piece {            // a request's space in the receive buffer, in allocation order
        uint64_t id;
        uint32_t end;  // the running count just past it
        bool released;
    };
    uint32_t rx_allocated_ = 0;  // running count of receive-buffer bytes the bridge handed out
    uint32_t rx_consumed_ = 0;   // running count of receive-buffer bytes handed back
    uint64_t next_piece_ = 1;
    std::deque<Piece> pieces_;
    std::map<uint16_t, Response> responses_;
    std::deque<Request> requests_;
};

}  // namespace canopy::sw
