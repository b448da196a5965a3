// The token ring inside Willow's SSD (Willow Section 3.2 "ring"): a unidirectional ring, 128 bits
// wide at 250 MHz, joining the SPUs and the PCIe bridge. Arbitration is round robin with a token:
// only the node holding the token transmits. To send, a node's network interface waits for the
// token, holds it while it puts the message on the ring, then lets it go to the next node; to
// receive, an interface watches the headers passing by and takes off the messages addressed to
// it. Node i's downstream neighbour is node i + 1 (node ids in ascending order, wrapping).
//
// Timing, in ring cycles of 1 / clock_mhz (4 ns at 250 MHz):
//   - a message occupies the ring for ceil(wire_bytes * 8 / width_bits) cycles: one header flit
//     and its payload in 128-bit flits (a 4 KiB request: 1 + 256 = 257 cycles);
//   - each node-to-node stage takes hop_cycles (assumed 1: one register per node);
//   - the token, when nobody holds it, moves one node per hop; released by a sender after its
//     last flit, it reaches the next node one hop later, and gets back to the sender only after
//     a whole revolution (N hops for N nodes): round robin;
//   - a message is delivered (its last flit taken off) hops(src, dst) stages after its last flit
//     left the sender; a message to its own sender goes all the way round (N hops).
// So one sender alone sends 4 KiB messages every 257 + N cycles; the wire itself carries
// 16 B x 250 MHz = 4.0 GB/s (3.73 GiB/s: Willow's "3.7 GB/s"), 256/257 of it payload.
//
// Under temporal decoupling a sender asks for the ring at an absolute time (its local time) that
// may lie before or after other senders' requests already granted. The ring keeps its grants
// (start, end, node) in time order. A request at time t from node s starts at the token's first
// arrival at s after t, the token's whereabouts at t following from the last grant that started
// at or before t (its holder released the token at its end; since then it has circulated one node
// per hop). If that transmission, plus the token's trip from s to the next granted node, does not
// end before the next grant starts, the request tries again after that grant, from its holder.
// So a late-arriving request fills an idle gap when it fits, and grants already made never move.
// Approximations of exact round robin, both bounded by one revolution of the token (N hops):
//   - requests are granted in the order the ring sees them (call order), not in token order: two
//     nodes asking at the same time are served in call order, although the token might have
//     passed the second one first;
//   - a grant filled into a gap does not shift the token's phase for later grants already made
//     (they keep their start: the fit test only checks the token can reach them in time).
// Grants that started before the kernel's current time are forgotten except the last one.
//
// The ring delivers each message to the destination's network interface at its arrival time,
// from a method process: nothing is visible at the receiver earlier. Messages due at the same
// time are delivered in the order they were granted.
//
// Statistics under the ring's name: messages, requests, responses, bytes (wire) and payload
// bytes, busy (occupancy: utilisation and waiting), token_wait (from asking to holding the
// token, ns), latency (from asking to delivery, ns). Wave: "<name>.busy".
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "ssd/ring_message.hpp"

namespace canopy::ssd {

class NetworkInterface;

struct RingConfig {
    double clock_mhz = 250.0;   // Willow 3.2: the ring runs at 250 MHz
    uint32_t width_bits = 128;  // Willow 3.2: 128 bits wide (one flit per cycle)
    uint32_t hop_cycles = 1;    // assumed: one pipeline register per node-to-node stage

    void describe(core::Params& p);  // relative to the caller's scope ("ssd.ring.")
    // Checks what ranges cannot (width a whole number of bytes); throws InputError.
    void validate() const;
    sc_core::sc_time cycle() const;  // one ring clock period
};

class Ring : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(Ring);
    // Throws InputError when the config is invalid.
    Ring(sc_core::sc_module_name name, const RingConfig& cfg, core::Services& services);

    // Joins `ni` to the ring as node `id` (and tells `ni` its node and ring). Only before the
    // first message; each id and each interface once. Throws std::logic_error otherwise.
    void attach(NodeId id, NetworkInterface& ni);

    const RingConfig& config() const { return cfg_; }
    bool has_node(NodeId id) const { return nis_[id] != nullptr; }
    size_t node_count() const { return order_.size(); }
    // Stages a message passes from `from` to `to` (N when they are the same node, 0 when either
    // is not attached).
    unsigned hops(NodeId from, NodeId to) const;
    sc_core::sc_time cycle() const { return cycle_; }
    sc_core::sc_time hop_time() const { return hop_; }
    // Cycles `m` occupies the ring, and that as time.
    uint64_t cycles(const RingMessage& m) const;
    sc_core::sc_time occupancy(const RingMessage& m) const { return cycles(m) * cycle_; }

  private:
    friend class NetworkInterface;  // only interfaces send: they stamp src and origin

    struct Grant {
        sc_core::sc_time start, end;  // the sender holds the token over [start, end)
        unsigned position;            // the sender's place on the ring, 0 .. N-1
    };
    // The times a transmission took: token at the sender, last flit sent, last flit delivered.
    struct Transmission {
        sc_core::sc_time start, end, arrival;
    };

    // Puts `m` on the ring for a sender asking at absolute time `at`. The caller has checked
    // that m.src and m.dst are attached.
    Transmission transmit(RingMessage&& m, const sc_core::sc_time& at);

    void freeze_topology();
    // Hops the token takes from the node at position `from` to the one at `to`: 1 .. N.
    unsigned token_hops(unsigned from, unsigned to) const;
    // When the token, released at position `released_at` at time `released`, first reaches
    // position `position` at or after `at`.
    sc_core::sc_time token_arrival(unsigned position, const Grant& released,
                                   const sc_core::sc_time& at) const;
    // The grant for a sender at `position` asking at `at` for `duration`, inserted in grants_.
    Grant arbitrate(unsigned position, const sc_core::sc_time& at,
                    const sc_core::sc_time& duration);
    void forget_old_grants();
    void deliver();  // method: hands over the messages due now

    RingConfig cfg_;
    core::Services& services_;
    sc_core::sc_time cycle_, hop_;
    std::array<NetworkInterface*, 256> nis_{};  // by node id
    std::array<unsigned, 256> position_{};      // by node id, valid once frozen
    std::vector<NodeId> order_;                 // node ids in ring order
    bool frozen_ = false;
    std::vector<Grant> grants_;  // disjoint, by start time

    // Messages on their way, by (arrival, grant order).
    std::map<std::pair<sc_core::sc_time, uint64_t>, RingMessage> in_flight_;
    uint64_t sequence_ = 0;
    sc_core::sc_event deliver_event_;

    core::BusyProbe busy_probe_;
    core::Counter &messages_, &requests_, &responses_, &bytes_, &payload_bytes_;
    core::Occupancy& busy_;
    core::Distribution &token_wait_, &latency_;
    int track_;
};

}  // namespace canopy::ssd
