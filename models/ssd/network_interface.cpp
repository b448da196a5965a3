// A ring node's network interface (Willow 3.1 "SPU architecture", "RPC interface", 3.2 "ring"):
// request assembly, response slots, the bounded receive buffer and NACKs; see
// network_interface.hpp.
#include "ssd/network_interface.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "ssd/ring.hpp"

namespace canopy::ssd {

using sc_core::sc_time;

void NiConfig::describe(core::Params& p) {
    p("rx_buffer_bytes", rx_buffer_bytes, "B",
      "receive buffer for requests, in ring bytes (header + payload flits) [assumed: 32 KiB BRAM]",
      kFlitBytes, 1u << 30)("response_slots", response_slots, "",
                            "response slots: outstanding requests per node [assumed: 16]", 1,
                            65536)("max_request_bytes", max_request_bytes, "B",
                                   "longest request payload a node may begin [assumed: 1 MiB]", 0,
                                   1u << 30);
}

void NiConfig::validate() const {
    auto fail = [](const char* key, const std::string& msg) {
        throw InputError("config", std::string("ssd.ni.") + key, msg);
    };
    if (rx_buffer_bytes < kFlitBytes)
        fail("rx_buffer_bytes",
             "must hold at least one header flit (16 B), got " + std::to_string(rx_buffer_bytes));
    if (response_slots == 0) fail("response_slots", "must be at least 1");
}

static NiConfig validated(const NiConfig& c) {
    c.validate();
    return c;
}

const char* to_string(NiStatus s) {
    switch (s) {
        case NiStatus::Ok:
            return "ok";
        case NiStatus::NotAttached:
            return "not attached to a ring";
        case NiStatus::UnknownDestination:
            return "unknown destination";
        case NiStatus::RequestOpen:
            return "a request is already open";
        case NiStatus::NoRequestOpen:
            return "no request open";
        case NiStatus::TooLong:
            return "append beyond the request's length";
        case NiStatus::Incomplete:
            return "request incomplete";
        case NiStatus::NoResponseSlot:
            return "no free response slot";
        case NiStatus::Empty:
            return "nothing to pop";
    }
    return "?";
}

NetworkInterface::NetworkInterface(sc_core::sc_module_name name, const NiConfig& cfg,
                                   core::Services& services)
    : sc_module(name),
      cfg_(validated(cfg)),
      services_(services),
      rx_depth_probe_("rx_depth_probe", services.waves, std::string(this->name()) + ".rx_depth"),
      response_depth_probe_("response_depth_probe", services.waves,
                            std::string(this->name()) + ".response_depth"),
      requests_sent_(services.stats.counter(this->name(), "requests_sent", "requests sent")),
      responses_sent_(services.stats.counter(this->name(), "responses_sent",
                                             "responses sent (NACKs included)")),
      requests_received_(services.stats.counter(this->name(), "requests_received",
                                                "requests taken into the receive buffer")),
      responses_received_(services.stats.counter(this->name(), "responses_received",
                                                 "responses taken into a slot")),
      rx_dropped_(services.stats.counter(this->name(), "rx_dropped",
                                         "requests dropped: receive buffer full", true)),
      nacks_sent_(services.stats.counter(this->name(), "nacks_sent", "NACKs for dropped requests")),
      nacks_received_(services.stats.counter(this->name(), "nacks_received",
                                             "NACKs received: our request was dropped")),
      responses_unexpected_(services.stats.counter(this->name(), "responses_unexpected",
                                                   "responses matching no outstanding request")),
      responses_dropped_(services.stats.counter(this->name(), "responses_dropped",
                                                "unexpected responses dropped: no free slot")),
      refused_(services.stats.counter(this->name(), "refused", "API calls refused")),
      rx_occupancy_(services.stats.distribution(this->name(), "rx_occupancy", "B",
                                                "receive buffer bytes held after each arrival")),
      round_trip_(services.stats.distribution(this->name(), "round_trip", "ns",
                                              "request sent to its response delivered")) {}

NiStatus NetworkInterface::refuse(NiStatus s, const std::string& why) {
    refused_.add();
    last_error_ = std::string(name()) + ": " + to_string(s) + ": " + why;
    return s;
}

NiStatus NetworkInterface::check_destination(NodeId dst) {
    if (!ring_) return refuse(NiStatus::NotAttached, "attach it with Ring::attach first");
    if (!ring_->has_node(dst))
        return refuse(NiStatus::UnknownDestination,
                      "no node " + std::to_string(dst) + " on " + ring_->name());
    return NiStatus::Ok;
}

uint32_t NetworkInterface::response_slots_free() const {
    const size_t used = outstanding_.size() + responses_.size() + (open_ ? 1 : 0);
    return used >= cfg_.response_slots ? 0 : uint32_t(cfg_.response_slots - used);
}

NiStatus NetworkInterface::begin_request(NodeId dst, uint16_t rpc_id, uint16_t tag, uint32_t length,
                                         uint16_t dst_hre) {
    if (open_)
        return refuse(NiStatus::RequestOpen, "finish or abort the open request (tag " +
                                                 std::to_string(building_.tag) +
                                                 ") before beginning another");
    if (NiStatus s = check_destination(dst); s != NiStatus::Ok) return s;
    if (length > cfg_.max_request_bytes)
        return refuse(NiStatus::TooLong, "a request of " + std::to_string(length) +
                                             " B is longer than ssd.ni.max_request_bytes = " +
                                             std::to_string(cfg_.max_request_bytes));
    if (response_slots_free() == 0)
        return refuse(NiStatus::NoResponseSlot,
                      "all " + std::to_string(cfg_.response_slots) +
                          " response slots are reserved or full: pop responses first");
    building_ = RingMessage();
    building_.kind = MessageKind::Request;
    building_.src = node_;
    building_.dst = dst;
    building_.rpc_id = rpc_id;
    building_.origin_hre = origin_;  // stamped by the hardware, never by software
    building_.dst_hre = dst_hre;
    building_.tag = tag;
    building_.payload.reserve(length);
    building_length_ = length;
    open_ = true;
    return NiStatus::Ok;
}

uint32_t NetworkInterface::append_remaining() const {
    return open_ ? building_length_ - uint32_t(building_.payload.size()) : 0;
}

NiStatus NetworkInterface::append(const uint8_t* data, size_t n) {
    if (!open_) return refuse(NiStatus::NoRequestOpen, "append before begin_request");
    if (n > append_remaining())
        return refuse(NiStatus::TooLong, "appending " + std::to_string(n) + " B with only " +
                                             std::to_string(append_remaining()) + " B left");
    building_.payload.insert(building_.payload.end(), data, data + n);
    return NiStatus::Ok;
}

NiStatus NetworkInterface::finish_request(sc_time& delay) {
    if (!open_) return refuse(NiStatus::NoRequestOpen, "finish before begin_request");
    if (append_remaining())
        return refuse(NiStatus::Incomplete, std::to_string(append_remaining()) + " of " +
                                                std::to_string(building_length_) +
                                                " B not appended yet");
    open_ = false;
    outstanding_.push_back(
        Outstanding{building_.dst, building_.tag, sc_core::sc_time_stamp() + delay});
    requests_sent_.add();
    send(std::move(building_), delay);
    return NiStatus::Ok;
}

NiStatus NetworkInterface::abort_request() {
    if (!open_) return refuse(NiStatus::NoRequestOpen, "abort without an open request");
    open_ = false;
    building_ = RingMessage();
    return NiStatus::Ok;
}

NiStatus NetworkInterface::send_response(NodeId dst, uint16_t tag, uint32_t result,
                                         sc_time& delay) {
    return respond(dst, tag, result, false, delay);
}

NiStatus NetworkInterface::send_nack(NodeId dst, uint16_t tag, sc_time& delay) {
    return respond(dst, tag, 0, true, delay);
}

NiStatus NetworkInterface::respond(NodeId dst, uint16_t tag, uint32_t result, bool nack,
                                   sc_time& delay) {
    if (NiStatus s = check_destination(dst); s != NiStatus::Ok) return s;
    RingMessage m;
    m.kind = MessageKind::Response;
    m.src = node_;
    m.dst = dst;
    m.origin_hre = origin_;
    m.tag = tag;
    m.result = result;
    m.nack = nack;
    if (nack) nacks_sent_.add();
    responses_sent_.add();
    send(std::move(m), delay);
    return NiStatus::Ok;
}

void NetworkInterface::send(RingMessage&& m, sc_time& delay) {
    const sc_time now = sc_core::sc_time_stamp();
    delay = ring_->transmit(std::move(m), now + delay).end - now;
}

MessageHeader NetworkInterface::header_of(const RingMessage& m) {
    return MessageHeader{m.kind,    m.src, m.dst,    m.rpc_id, m.origin_hre,
                         m.dst_hre, m.tag, m.result, m.nack,   uint32_t(m.payload.size())};
}

std::optional<MessageHeader> NetworkInterface::request_head() const {
    if (requests_.empty()) return std::nullopt;
    return header_of(requests_.front().message);
}

uint32_t NetworkInterface::request_unread() const {
    if (requests_.empty()) return 0;
    const Received& r = requests_.front();
    return uint32_t(r.message.payload.size() - r.read);
}

size_t NetworkInterface::read_request(uint8_t* dst, size_t n) {
    if (requests_.empty()) return 0;
    Received& r = requests_.front();
    const size_t count = std::min(n, r.message.payload.size() - r.read);
    if (count) std::memcpy(dst, r.message.payload.data() + r.read, count);
    r.read += count;
    return count;
}

NiStatus NetworkInterface::pop_request() {
    if (requests_.empty()) return refuse(NiStatus::Empty, "pop_request with no request waiting");
    rx_bytes_used_ -= uint32_t(requests_.front().message.wire_bytes());
    requests_.pop_front();
    update_probes();
    return NiStatus::Ok;
}

std::optional<MessageHeader> NetworkInterface::response_head() const {
    if (responses_.empty()) return std::nullopt;
    return header_of(responses_.front());
}

NiStatus NetworkInterface::pop_response() {
    if (responses_.empty()) return refuse(NiStatus::Empty, "pop_response with no response waiting");
    responses_.pop_front();
    update_probes();
    return NiStatus::Ok;
}

void NetworkInterface::receive(RingMessage&& m) {
    if (m.kind == MessageKind::Request)
        receive_request(std::move(m));
    else
        receive_response(std::move(m));
    update_probes();
}

void NetworkInterface::receive_request(RingMessage&& m) {
    const uint64_t bytes = m.wire_bytes();
    if (rx_bytes_used_ + bytes > cfg_.rx_buffer_bytes) {
        // All or nothing: drop it and tell the sender, into the slot it reserved.
        rx_dropped_.add();
        nacks_sent_.add();
        responses_sent_.add();
        RingMessage nack;
        nack.kind = MessageKind::Response;
        nack.src = node_;
        nack.dst = m.src;
        nack.origin_hre = m.origin_hre;
        nack.tag = m.tag;
        nack.nack = true;
        nack.flow = m.flow;
        sc_time delay = sc_core::SC_ZERO_TIME;
        send(std::move(nack), delay);
        return;
    }
    rx_bytes_used_ += uint32_t(bytes);
    requests_received_.add();
    rx_occupancy_.sample(double(rx_bytes_used_));
    requests_.push_back(Received{std::move(m), 0});
    arrival_.notify(sc_core::SC_ZERO_TIME);
}

void NetworkInterface::receive_response(RingMessage&& m) {
    auto match = std::find_if(outstanding_.begin(), outstanding_.end(), [&](const Outstanding& o) {
        return o.peer == m.src && o.tag == m.tag;
    });
    if (match != outstanding_.end()) {
        round_trip_.sample((sc_core::sc_time_stamp() - match->sent) / sc_time(1, sc_core::SC_NS));
        outstanding_.erase(match);
    } else {
        responses_unexpected_.add();
        if (response_slots_free() == 0) {
            responses_dropped_.add();
            last_error_ = std::string(name()) + ": dropped unexpected " + m.describe() +
                          ": no free response slot";
            return;
        }
    }
    if (m.nack) nacks_received_.add();
    responses_received_.add();
    responses_.push_back(std::move(m));
    arrival_.notify(sc_core::SC_ZERO_TIME);
}

void NetworkInterface::update_probes() {
    const sc_time now = sc_core::sc_time_stamp();
    rx_depth_probe_.set(uint32_t(requests_.size()), now);
    response_depth_probe_.set(uint32_t(responses_.size()), now);
}

}  // namespace canopy::ssd
