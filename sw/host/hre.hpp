// The HRE library (Willow Section 3.1 "Building an SSD App"): a host program's RPC endpoint on
// the Willow SSD, with the same interface SPU-OS gives SSD Apps on the SPUs: start a request to
// an SPU, append its payload, finish it (send), wait for its fixed-size response; receive the
// requests SPUs send to this HRE and answer them. It works on the HRE's queues in host memory
// (models/ssd/hre_queue.h) with ordinary loads and stores and rings the bridge's doorbells by
// MMIO, as a user-space library with OS bypass does: no system call per RPC.
//
// Requests: the payload goes inline in the submission entry when it fits (40 B), otherwise into
// the submission slot's payload buffer in the HRE's DMA window. A full submission ring (one slot
// kept empty) is detected against the last SQ head read from the bridge; only then is the head
// read again (one MMIO round trip). Completions are found by polling the completion queue's
// phase bits; responses to other tags and SPU requests found while waiting are kept for their
// own wait.
#pragma once

#include <cstdint>
#include <deque>
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
        std::vector<uint8_t> payload;
    };
    Hre(host::HostCore& cpu, const HreEndpoint& endpoint, HreConfig cfg = HreConfig());

    uint32_t id() const { return ep_.hre; }

    // RPCStartRequest + RPCAppendRequest + RPCFinishRequest: sends, returns the tag. Throws
    // HostFault for a payload longer than the layout's payload buffer.
    uint16_t send(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes);
    // Waits for the response to `tag`.
    Response wait(uint16_t tag);
    // send + wait.
    Response call(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes);

    // The next request an SPU sent this HRE (waits for one); its payload is copied out and its
    // receive-buffer space returned.
    Request receive();
    std::optional<Request> try_receive();
    // Answers an SPU's request (RPCSendResponse).
    void respond(const Request& r, uint32_t result);

  private:
    bool poll();  // takes one new completion entry, if any
    void submit(const void* entry);
    void doorbell(uint32_t offset, uint32_t value);
    void copy_out(uint64_t va, uint8_t* dst, uint32_t bytes);
    void copy_in(uint64_t va, const uint8_t* src, uint32_t bytes);

    host::HostCore& cpu_;
    HreEndpoint ep_;
    HreConfig cfg_;
    uint32_t sq_tail_ = 0, sq_head_ = 0, cq_head_ = 0;
    uint16_t phase_ = 1, next_tag_ = 0;
    uint32_t rx_consumed_ = 0;  // running count of receive-buffer bytes handed back
    std::map<uint16_t, Response> responses_;
    std::deque<Request> requests_;
};

}  // namespace canopy::sw
