// Willow's token ring (Section 3.2): arbitration, occupancy and delivery; see ring.hpp.
#include "ssd/ring.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "ssd/network_interface.hpp"

namespace canopy::ssd {

using sc_core::sc_time;

void RingConfig::describe(core::Params& p) {
    p("clock_mhz", clock_mhz, "MHz", "ring clock [Willow 3.2: 250 MHz]", 1.0, 10000.0)(
        "width_bits", width_bits, "bit", "ring width, one flit per cycle [Willow 3.2: 128 bit]", 8,
        4096)("hop_cycles", hop_cycles, "cycle",
              "cycles per node-to-node stage, for messages and the token [assumed: 1]", 1, 1024);
}

void RingConfig::validate() const {
    auto fail = [](const char* key, const std::string& msg) {
        throw InputError("config", std::string("ssd.ring.") + key, msg);
    };
    if (!(clock_mhz > 0)) fail("clock_mhz", "must be positive");
    if (width_bits == 0 || width_bits % 8)
        fail("width_bits", "must be a whole number of bytes, got " + std::to_string(width_bits));
    if (hop_cycles == 0) fail("hop_cycles", "must be at least 1");
}

sc_time RingConfig::cycle() const { return sc_time(1e3 / clock_mhz, sc_core::SC_NS); }

static RingConfig validated(const RingConfig& c) {
    c.validate();
    return c;
}

static double to_ns(const sc_time& t) { return t / sc_time(1, sc_core::SC_NS); }

Ring::Ring(sc_core::sc_module_name name, const RingConfig& cfg, core::Services& services)
    : sc_module(name),
      cfg_(validated(cfg)),
      services_(services),
      cycle_(cfg_.cycle()),
      hop_(cycle_ * double(cfg_.hop_cycles)),
      busy_probe_("busy_probe", services.waves, std::string(this->name()) + ".busy"),
      messages_(services.stats.counter(this->name(), "messages", "messages carried", true)),
      requests_(services.stats.counter(this->name(), "requests", "RPC requests carried")),
      responses_(services.stats.counter(this->name(), "responses", "RPC responses carried")),
      bytes_(services.stats.counter(this->name(), "bytes", "bytes on the ring: headers + flits")),
      payload_bytes_(services.stats.counter(this->name(), "payload_bytes", "request payload")),
      busy_(services.stats.occupancy(this->name(), "busy",
                                     "ring held by a sender: utilisation and waiting", true)),
      token_wait_(services.stats.distribution(this->name(), "token_wait", "ns",
                                              "from asking for the ring to holding the token")),
      latency_(services.stats.distribution(this->name(), "latency", "ns",
                                           "from asking for the ring to delivery")),
      track_(services.trace.track(this->name())) {
    SC_METHOD(deliver);
    sensitive << deliver_event_;
    dont_initialize();
}

void Ring::attach(NodeId id, NetworkInterface& ni) {
    const std::string where = std::string(name()) + ": node " + std::to_string(id);
    if (frozen_) throw std::logic_error(where + " attached after the ring carried a message");
    if (nis_[id]) throw std::logic_error(where + " attached twice");
    if (ni.ring_) throw std::logic_error(where + ": its network interface is already attached");
    nis_[id] = &ni;
    ni.ring_ = this;
    ni.node_ = id;
    order_.clear();
    for (unsigned n = 0; n < nis_.size(); ++n)
        if (nis_[n]) {
            position_[n] = unsigned(order_.size());
            order_.push_back(NodeId(n));
        }
}

void Ring::freeze_topology() {
    if (frozen_) return;
    frozen_ = true;
    // Before any message the token circulates from the last node: it reaches node 0 one hop
    // after time zero. This zero-length grant stands for that.
    grants_.push_back(
        Grant{sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, unsigned(order_.size()) - 1});
}

unsigned Ring::token_hops(unsigned from, unsigned to) const {
    const unsigned n = unsigned(order_.size());
    return (to + n - from - 1) % n + 1;
}

unsigned Ring::hops(NodeId from, NodeId to) const {
    if (!has_node(from) || !has_node(to)) return 0;
    return token_hops(position_[from], position_[to]);
}

uint64_t Ring::cycles(const RingMessage& m) const {
    const uint64_t bits = m.wire_bytes() * 8;
    return (bits + cfg_.width_bits - 1) / cfg_.width_bits;
}

sc_time Ring::token_arrival(unsigned position, const Grant& released, const sc_time& at) const {
    const sc_time first = released.end + double(token_hops(released.position, position)) * hop_;
    if (first >= at) return first;
    const sc_time revolution = double(order_.size()) * hop_;
    const double laps = std::ceil((at - first) / revolution);
    return first + laps * revolution;
}

Ring::Grant Ring::arbitrate(unsigned position, const sc_time& at, const sc_time& duration) {
    // The last grant started at or before `at` tells where the token is at `at`.
    auto next = std::upper_bound(grants_.begin(), grants_.end(), at,
                                 [](const sc_time& t, const Grant& g) { return t < g.start; });
    auto released = std::prev(next);  // grants_[0] starts at or before any time still asked for
    for (;; released = next++) {
        const sc_time start = token_arrival(position, *released, at);
        const Grant g{start, start + duration, position};
        if (next == grants_.end() ||
            g.end + double(token_hops(position, next->position)) * hop_ <= next->start) {
            grants_.insert(next, g);
            return g;
        }
    }
}

void Ring::forget_old_grants() {
    const sc_time now = sc_core::sc_time_stamp();
    size_t drop = 0;
    while (drop + 1 < grants_.size() && grants_[drop + 1].start <= now) ++drop;
    if (drop >= 32) grants_.erase(grants_.begin(), grants_.begin() + drop);
}

Ring::Transmission Ring::transmit(RingMessage&& m, const sc_time& at) {
    freeze_topology();
    forget_old_grants();
    const sc_time duration = occupancy(m);
    const sc_time asked = std::max(at, sc_core::sc_time_stamp());  // nobody asks in the past
    const Grant g = arbitrate(position_[m.src], asked, duration);
    const Transmission t{g.start, g.end, g.end + double(hops(m.src, m.dst)) * hop_};

    messages_.add();
    (m.kind == MessageKind::Request ? requests_ : responses_).add();
    bytes_.add(m.wire_bytes());
    payload_bytes_.add(m.payload.size());
    busy_.occupy(to_ns(g.start - asked), to_ns(duration));
    busy_probe_.busy(g.start, g.end);
    token_wait_.sample(to_ns(g.start - asked));
    latency_.sample(to_ns(t.arrival - asked));
    if (services_.trace.enabled())
        services_.trace.complete(
            track_, m.kind == MessageKind::Request ? "request" : "response", "ring", g.start,
            t.arrival - g.start, m.flow,
            {{"message", m.describe()}, {"token_wait_ns", std::to_string(to_ns(g.start - asked))}});

    const sc_time now = sc_core::sc_time_stamp();
    in_flight_.emplace(std::make_pair(t.arrival, sequence_++), std::move(m));
    deliver_event_.notify(in_flight_.begin()->first.first - now);
    return t;
}

void Ring::deliver() {
    const sc_time now = sc_core::sc_time_stamp();
    while (!in_flight_.empty() && in_flight_.begin()->first.first <= now) {
        RingMessage m = std::move(in_flight_.begin()->second);
        in_flight_.erase(in_flight_.begin());
        nis_[m.dst]->receive(std::move(m));  // may send (a NACK): in_flight_ may grow
    }
    if (!in_flight_.empty()) deliver_event_.notify(in_flight_.begin()->first.first - now);
}

}  // namespace canopy::ssd
