// The network interface of one ring node (Willow Sections 3.1 "SPU architecture", "RPC
// interface" and 3.2 "ring"): every SPU has one beside its processor, DMA controller and local
// memory, and the PCIe bridge has one for the host RPC endpoints (HREs). The SPU's registers and
// DMA controller and the bridge drive it through the C++ API below.
//
// Sending a request is done in pieces, as SPU-OS's RPCStartRequest / RPCAppendRequest /
// RPCFinishRequest do: begin_request() gives destination, RPC ID, tag and length; append() takes
// the bytes in any number of pieces (the DMA controller streams headers from local memory and
// data from flash into it); finish_request() sends it. The interface itself writes the header's
// source node and originating HRE (its origin(), set by SPU-OS when it dispatches an RPC, or by
// the bridge per HRE): nothing a program puts in a message can forge them [Willow 3.1 "Tracking
// responsibility"]. When a request is begun the interface reserves one response slot on its own
// receive side for the fixed-size response, so responses (acks or nacks) are always delivered
// [Willow 3.1 "RPC interface"]; with every slot taken, begin_request() refuses.
//
// Receiving: requests go into a bounded receive buffer, all or nothing: a request that does not
// fit is dropped (counted rx_dropped) and the interface answers the sender with a NACK response
// (flagged nack, no result, the request's tag), which lands in the slot the sender reserved
// [Willow 3.1: "RPC delivery is unreliable ... all or nothing"]. A response goes into the slot
// reserved for it, matched by (sender, tag); an unexpected one takes a free slot, or is dropped
// and counted when none is free. SPU-OS reads the head request's header, streams its payload in
// order (RPCReceiveBytes) and pops it; the same for responses. arrival_event() is notified (one
// delta later) on every arrival: the SPU's interrupt.
//
// Timing: register and buffer accesses take no time next to the ring; finish_request() and
// send_response() advance the caller's delay to the moment the message's last flit has left the
// interface (token wait + transmission), and the ring delivers it hops later.
//
// Statistics under the interface's name: requests_sent, responses_sent, requests_received,
// responses_received, rx_dropped, nacks_sent, nacks_received, responses_unexpected,
// responses_dropped, refused (API calls refused), rx_occupancy (bytes held after each arrival),
// round_trip (ns, request sent to its response delivered). Waves "<name>.rx_depth" (requests
// waiting) and "<name>.response_depth" (responses waiting).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "ssd/ring_message.hpp"

namespace canopy::ssd {

class Ring;

struct NiConfig {
    // Receive buffer for requests, counted in ring bytes (header flit + payload flits). Willow
    // gives no size; assumed 32 KiB of FPGA block RAM per node: three 8 KiB striped writes
    // (Willow stripes at 8 KiB, 8,208 ring bytes each) fit, a fourth is NACKed.
    uint32_t rx_buffer_bytes = 32 * 1024;
    // Response slots (one flit each) a node may have reserved or filled at once, i.e. its
    // outstanding requests. Willow gives no number; assumed 16.
    uint32_t response_slots = 16;
    // The longest request begin_request() accepts. A request longer than the receiver's buffer
    // is always NACKed anyway; this bound only keeps a runaway length (a firmware bug) from
    // making the model allocate gigabytes. Assumed: 1 MiB, far above any RPC Willow sends.
    uint32_t max_request_bytes = 1u << 20;

    void describe(core::Params& p);  // relative to the caller's scope ("ssd.ni.")
    // Checks what ranges cannot; throws InputError.
    void validate() const;
};

// What an API call came to. Anything but Ok changes nothing.
enum class NiStatus {
    Ok,
    NotAttached,         // the interface is not on a ring
    UnknownDestination,  // no node with that id on the ring
    RequestOpen,         // begin_request while another request is being built
    NoRequestOpen,       // append / finish / abort without begin_request
    TooLong,             // append beyond the length given to begin_request, or a length
                         // above max_request_bytes
    Incomplete,          // finish_request before all bytes were appended
    NoResponseSlot,      // every response slot is reserved or full
    Empty,               // pop with nothing to pop
};
const char* to_string(NiStatus s);

// The header fields of a received message (its payload stays in the interface).
struct MessageHeader {
    MessageKind kind = MessageKind::Request;
    NodeId src = 0, dst = 0;
    uint16_t rpc_id = 0;
    uint32_t origin_hre = 0;
    uint16_t dst_hre = 0;
    uint16_t tag = 0;
    uint32_t result = 0;
    bool nack = false;    // responses: the request was dropped by its receiver
    uint32_t length = 0;  // payload bytes
};

class NetworkInterface : public sc_core::sc_module {
  public:
    NetworkInterface(sc_core::sc_module_name name, const NiConfig& cfg, core::Services& services);

    const NiConfig& config() const { return cfg_; }
    bool attached() const { return ring_ != nullptr; }
    NodeId node() const { return node_; }  // valid once attached (Ring::attach)

    // The originating HRE stamped on the requests this node sends from now on.
    void set_origin(uint32_t hre) { origin_ = hre; }
    uint32_t origin() const { return origin_; }

    // --- sending ---------------------------------------------------------------------------
    // RPCStartRequest: opens a request of `length` payload bytes and reserves its response slot.
    NiStatus begin_request(NodeId dst, uint16_t rpc_id, uint16_t tag, uint32_t length,
                           uint16_t dst_hre = 0);
    // RPCAppendRequest: the next `n` payload bytes (all of them or, when they would go beyond
    // the length, none).
    NiStatus append(const uint8_t* data, size_t n);
    // RPCFinishRequest: sends the request asked for at now + `delay`; `delay` grows to the end
    // of its transmission.
    NiStatus finish_request(sc_core::sc_time& delay);
    // Drops the request being built and frees its response slot.
    NiStatus abort_request();
    bool request_open() const { return open_; }
    uint32_t append_remaining() const;

    // RPCSendResponse: one flit to `dst` with the request's tag and a result code.
    NiStatus send_response(NodeId dst, uint16_t tag, uint32_t result, sc_core::sc_time& delay);
    // A NACK to `dst`'s request `tag`: it was dropped here (the interface does this itself when
    // its buffer is full; the PCIe bridge when an HRE has no room).
    NiStatus send_nack(NodeId dst, uint16_t tag, sc_core::sc_time& delay);

    // --- receiving -------------------------------------------------------------------------
    bool has_request() const { return !requests_.empty(); }
    std::optional<MessageHeader> request_head() const;
    // RPCReceiveBytes: copies up to `n` of the head request's payload bytes not read yet, in
    // order, to `dst`; returns how many (0 with no request or all read).
    size_t read_request(uint8_t* dst, size_t n);
    uint32_t request_unread() const;  // bytes of the head request not read yet
    // Frees the head request's buffer space, read or not.
    NiStatus pop_request();

    bool has_response() const { return !responses_.empty(); }
    std::optional<MessageHeader> response_head() const;
    NiStatus pop_response();  // frees its slot

    // Notified (one delta later) when a request or response arrives: the SPU's interrupt.
    const sc_core::sc_event& arrival_event() const { return arrival_; }

    size_t requests_waiting() const { return requests_.size(); }
    size_t responses_waiting() const { return responses_.size(); }
    uint32_t rx_bytes_used() const { return rx_bytes_used_; }
    // Response slots neither reserved by an outstanding request nor holding a response.
    uint32_t response_slots_free() const;
    // Why the last call was refused, prefixed with the interface's name; "" when none yet.
    const std::string& last_error() const { return last_error_; }

  private:
    friend class Ring;  // attaches the interface and delivers messages to it

    struct Outstanding {  // a reserved response slot
        NodeId peer;
        uint16_t tag;
        sc_core::sc_time sent;
    };
    struct Received {
        RingMessage message;
        size_t read = 0;  // payload bytes read so far
    };

    void receive(RingMessage&& m);  // from the ring, at the message's arrival time
    void receive_request(RingMessage&& m);
    void receive_response(RingMessage&& m);
    NiStatus refuse(NiStatus s, const std::string& why);
    NiStatus check_destination(NodeId dst);
    // Sends `m` (src and origin already stamped) asked at now + delay; delay to its end.
    void send(RingMessage&& m, sc_core::sc_time& delay);
    NiStatus respond(NodeId dst, uint16_t tag, uint32_t result, bool nack, sc_core::sc_time& delay);
    static MessageHeader header_of(const RingMessage& m);
    void update_probes();

    NiConfig cfg_;
    core::Services& services_;
    Ring* ring_ = nullptr;
    NodeId node_ = 0;
    uint32_t origin_ = 0;

    bool open_ = false;
    RingMessage building_;  // the request being built
    uint32_t building_length_ = 0;

    std::vector<Outstanding> outstanding_;
    std::deque<Received> requests_;
    std::deque<RingMessage> responses_;
    uint32_t rx_bytes_used_ = 0;
    sc_core::sc_event arrival_;
    std::string last_error_;

    core::Probe<uint32_t> rx_depth_probe_, response_depth_probe_;
    core::Counter &requests_sent_, &responses_sent_, &requests_received_, &responses_received_;
    core::Counter &rx_dropped_, &nacks_sent_, &nacks_received_, &responses_unexpected_,
        &responses_dropped_, &refused_;
    core::Distribution &rx_occupancy_, &round_trip_;
};

}  // namespace canopy::ssd
