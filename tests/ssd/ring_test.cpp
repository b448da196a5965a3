// The ring of Willow's SSD (models/ssd/ring.hpp): flit arithmetic, token travel, serialisation of
// senders, gap filling under temporal decoupling, delivery time, throughput, statistics, config.
//
// Times worked out by hand on the bench of ring_bench.hpp (9 nodes, 4 ns cycles, 1 cycle per hop,
// a revolution of 36 ns; the token passes node k at (k + 1) x 4 ns + m x 36 ns before any
// message). A request of P payload bytes is 1 + ceil(P / 16) flits, one per cycle:
//   4096 B -> 257 cycles = 1028 ns;  64 B -> 5 cycles = 20 ns;  a response -> 1 cycle = 4 ns.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/config.hpp"
#include "core/error.hpp"
#include "ring_bench.hpp"

namespace canopy::ssd::test {
namespace {

TEST(RingFlits, WireBytesAndCycles) {
    Bench b;
    RingMessage m;
    m.payload.resize(4096);
    EXPECT_EQ(m.wire_bytes(), 16u + 4096u);
    EXPECT_EQ(b.ring.cycles(m), 257u);
    EXPECT_DOUBLE_EQ(ns(b.ring.occupancy(m)), 257 * kCycleNs);
    m.payload.resize(1);  // a partial flit is a whole flit
    EXPECT_EQ(b.ring.cycles(m), 2u);
    m.payload.clear();
    m.kind = MessageKind::Response;
    EXPECT_EQ(b.ring.cycles(m), 1u);  // a response is one flit
    EXPECT_EQ(b.ring.hops(0, 3), 3u);
    EXPECT_EQ(b.ring.hops(3, 0), 6u);  // the ring runs one way
    EXPECT_EQ(b.ring.hops(2, 2), kNodes);
    EXPECT_EQ(b.ring.node_count(), kNodes);
}

// Node 0 sends 4 KiB to node 3 at time 0: the token reaches node 0 one hop after time zero
// (4 ns), the message takes 257 cycles (ends at 1032 ns) and its last flit reaches node 3 three
// hops later, at 1044 ns. It must not be visible there before.
TEST(RingTiming, FourKiBRequestTakes257CyclesPlusHops) {
    Bench b;
    sc_time delay = SC_ZERO_TIME;
    const auto data = pattern(4096, 1);
    ASSERT_EQ(b.request(0, 3, data, 7, delay), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(delay), 4 + 257 * kCycleNs);  // the sender's time: last flit sent
    Bench::run_until_ns(1043.999);
    EXPECT_FALSE(b.at(3).has_request());
    Bench::run_until_ns(1044);
    ASSERT_TRUE(b.at(3).has_request());
    EXPECT_EQ(b.at(3).request_head()->length, 4096u);
    auto* wait = dynamic_cast<const core::Distribution*>(b.stat("ring", "token_wait"));
    ASSERT_NE(wait, nullptr);
    EXPECT_DOUBLE_EQ(wait->max(), 4.0);
    auto* latency = dynamic_cast<const core::Distribution*>(b.stat("ring", "latency"));
    EXPECT_DOUBLE_EQ(latency->max(), 1044.0);
}

// A response is one flit: node 5 answers node 2 at 100 ns. The token passes node 5 at
// 24 + 36 m ns: the first time at or after 100 ns is 132 ns (32 ns waiting); the flit leaves at
// 136 ns and travels 5 -> 6 -> 7 -> 8 -> 0 -> 1 -> 2, 6 hops: delivered at 160 ns.
TEST(RingTiming, ResponseIsOneFlitAfterTheTokenComes) {
    Bench b;
    Bench::run_until_ns(100);
    sc_time delay = SC_ZERO_TIME;
    ASSERT_EQ(b.at(5).send_response(2, 9, 0x100, delay), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(delay), 136 - 100);
    Bench::run_until_ns(159.999);
    EXPECT_FALSE(b.at(2).has_response());
    Bench::run_until_ns(160);
    ASSERT_TRUE(b.at(2).has_response());
    EXPECT_EQ(b.at(2).response_head()->tag, 9);
    EXPECT_EQ(b.at(2).response_head()->result, 0x100u);
}

// After node 2 sends, the token goes on: node 3 gets it one hop after node 2's last flit, node 2
// itself only after a whole revolution (round robin).
TEST(RingTiming, TokenMovesOnAfterEachMessage) {
    Bench b;
    sc_time d2 = SC_ZERO_TIME;
    ASSERT_EQ(b.at(2).send_response(0, 1, 0x100, d2), NiStatus::Ok);  // token at node 2: 12 ns
    const double end2 = ns(d2);
    EXPECT_DOUBLE_EQ(end2, 12 + kCycleNs);
    sc_time d3 = d2;  // node 3 asks the moment node 2 is done
    ASSERT_EQ(b.at(3).send_response(0, 2, 0x100, d3), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d3), end2 + 1 * kCycleNs + kCycleNs);
    sc_time again = d3;  // node 2 asks again once node 3 is done
    ASSERT_EQ(b.at(2).send_response(0, 3, 0x100, again), NiStatus::Ok);
    // From node 3 (released at d3) to node 2: 8 hops.
    EXPECT_DOUBLE_EQ(ns(again), ns(d3) + 8 * kCycleNs + kCycleNs);
}

// Two SPUs send 4 KiB at the same time: one after the other, never overlapping. Node 1 gets the
// token first (8 ns) and sends until 1036 ns; the token then takes 5 hops to node 6, which sends
// from 1056 to 2084 ns.
TEST(RingTiming, TwoSendersAtOnceSerialise) {
    Bench b;
    const auto data = pattern(4096, 2);
    sc_time d1 = SC_ZERO_TIME, d6 = SC_ZERO_TIME;
    ASSERT_EQ(b.request(1, 8, data, 1, d1), NiStatus::Ok);
    ASSERT_EQ(b.request(6, 8, data, 2, d6), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d1), 8 + 257 * kCycleNs);
    EXPECT_DOUBLE_EQ(ns(d6), ns(d1) + 5 * kCycleNs + 257 * kCycleNs);
    auto* busy = dynamic_cast<const core::Occupancy*>(b.stat("ring", "busy"));
    ASSERT_NE(busy, nullptr);
    EXPECT_EQ(busy->grants(), 2u);
    EXPECT_DOUBLE_EQ(busy->busy_ns(), 2 * 257 * kCycleNs);
    EXPECT_DOUBLE_EQ(busy->wait_ns(), 8 + (ns(d6) - 257 * kCycleNs));
    // Node 1 -> 8 is 7 hops, node 6 -> 8 is 2 hops: both arrive, in grant order.
    Bench::run_until(d6 + at_ns(2 * kCycleNs));
    EXPECT_EQ(b.at(kBridge).requests_waiting(), 2u);
    EXPECT_EQ(b.at(kBridge).request_head()->src, 1);
}

// Temporal decoupling: node 2 sends 4 KiB at 0 (12 .. 1040 ns); node 4, running ahead, asks at
// 2000 ns and is granted at 2020 ns (token from node 2 at 1048 + 27 x 36). Node 7, behind it in
// simulated time, then answers at 1100 ns: the token, free since 1040 ns at node 2, passes node 7
// at 1060 + 36 m: 1132 ns. Its flit ends at 1136 ns and the token can still reach node 4 (6 hops)
// long before 2020 ns, so it fills the gap instead of queueing after node 4.
TEST(RingTiming, LaterRequestFillsAnEarlierGap) {
    Bench b;
    sc_time d2 = SC_ZERO_TIME, d4 = at_ns(2000), d7 = at_ns(1100);
    ASSERT_EQ(b.request(2, 0, pattern(4096, 3), 1, d2), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d2), 1040);
    ASSERT_EQ(b.at(4).send_response(0, 2, 0x100, d4), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d4), 2020 + kCycleNs);
    ASSERT_EQ(b.at(7).send_response(0, 3, 0x100, d7), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d7), 1136);
    // Delivery in time order: node 7's response (7 -> 0: 2 hops, 1144 ns) before node 4's.
    Bench::run_until_ns(1144);
    ASSERT_TRUE(b.at(0).has_response());
    EXPECT_EQ(b.at(0).response_head()->src, 7);
    EXPECT_EQ(b.at(0).responses_waiting(), 1u);
}

// A request that does not fit a gap goes after the grant that closes it: node 4 holds the ring
// over [20, 1048) ns; node 1, asking at 0 (later in call order), would get the token at 8 ns but
// its 257 cycles do not fit before 20 ns, so it waits for node 4 and the token's 5 hops on.
TEST(RingTiming, RequestThatDoesNotFitWaitsForTheNextRelease) {
    Bench b;
    const auto data = pattern(4096, 4);
    sc_time d4 = SC_ZERO_TIME, d1 = SC_ZERO_TIME;
    ASSERT_EQ(b.request(4, 0, data, 1, d4), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d4), 20 + 257 * kCycleNs);
    ASSERT_EQ(b.request(1, 0, data, 1, d1), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d1), ns(d4) + 6 * kCycleNs + 257 * kCycleNs);
}

// Throughput, all 8 SPUs streaming 4 KiB requests to the bridge as fast as the ring allows:
// per revolution 8 x 257 cycles of flits plus 9 hops of token travel (one hop between SPUs, two
// from SPU 7 through the bridge back to SPU 0). The wire carries 16 B x 250 MHz = 4.0 GB/s
// (3.73 GiB/s: Willow's 3.7 GB/s); payload throughput is that x 256/257 x 2056/2065.
TEST(RingThroughput, BackToBack4KiBFromAllSpus) {
    NiConfig big;
    big.rx_buffer_bytes = 1u << 30;
    big.response_slots = 1000;
    Bench b(big);
    const auto data = pattern(4096, 5);
    constexpr unsigned kRounds = 50;
    std::vector<sc_time> local(kSpus, SC_ZERO_TIME);
    for (unsigned r = 0; r < kRounds; ++r)
        for (unsigned s = 0; s < kSpus; ++s)
            ASSERT_EQ(b.request(s, kBridge, data, uint16_t(r), local[s]), NiStatus::Ok);
    // The first message starts at 4 ns (token at node 0); every later one follows the token.
    const double first_start = 4.0;
    const double last_end = ns(local[kSpus - 1]);
    const double cycles = (last_end - first_start) / kCycleNs;
    // Every round 8 x 257 cycles of flits and 7 + 2 hops between grants, but the last round
    // ends with its last flit.
    EXPECT_DOUBLE_EQ(cycles, kRounds * (8 * 257 + 9) - 2);
    const double payload = double(kRounds) * kSpus * 4096;
    const double gbps = payload / (last_end - first_start);  // bytes per ns = GB/s
    const double wire = 16 * 250e6 / 1e9;                    // 4.0 GB/s
    EXPECT_NEAR(wire / (1u << 30) * 1e9, 3.7, 0.05);         // Willow's figure, in GiB/s
    EXPECT_NEAR(gbps, wire * 256 / 257 * 2056 / 2065, 0.01);
    // Wait for all 400 to reach the bridge: intact counts, utilisation close to 1.
    Bench::run_until(local[kSpus - 1] + at_ns(100));
    EXPECT_EQ(b.at(kBridge).requests_waiting(), kRounds * kSpus);
    EXPECT_EQ(b.count("ring", "messages"), kRounds * kSpus);
    EXPECT_EQ(b.count("ring", "bytes"), uint64_t(kRounds) * kSpus * 4112);
}

// One sender alone: each message waits a whole revolution for the token to come back.
TEST(RingThroughput, BackToBack4KiBFromOneSender) {
    NiConfig big;
    big.rx_buffer_bytes = 1u << 30;
    big.response_slots = 1000;
    Bench b(big);
    const auto data = pattern(4096, 6);
    sc_time local = SC_ZERO_TIME;
    constexpr unsigned kMessages = 100;
    for (unsigned i = 0; i < kMessages; ++i)
        ASSERT_EQ(b.request(0, 4, data, uint16_t(i), local), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(local), 4 + kMessages * 257 * kCycleNs + (kMessages - 1) * 9 * kCycleNs);
    const double gbps = kMessages * 4096 / (ns(local) - 4);
    EXPECT_NEAR(gbps, 4096 / ((257 + 9) * kCycleNs), 0.02);  // 3.85 GB/s
}

TEST(RingConfig, DescribedUnderSsdRingAndValidated) {
    RingConfig c;
    core::Params p;
    core::Params scoped = p.scope("ssd").scope("ring");
    c.describe(scoped);
    const auto keys = p.keys();
    EXPECT_EQ(keys, (std::vector<std::string>{"ssd.ring.clock_mhz", "ssd.ring.width_bits",
                                              "ssd.ring.hop_cycles"}));
    EXPECT_DOUBLE_EQ(ns(c.cycle()), 4.0);
    c.width_bits = 100;
    EXPECT_THROW(c.validate(), InputError);
    c.width_bits = 128;
    c.hop_cycles = 0;
    EXPECT_THROW(c.validate(), InputError);
}

// A wider, slower ring: 256 bit at 125 MHz, 2 cycles per hop. 4 KiB is 4112 B = 129 cycles of
// 8 ns; node 0 gets the token after 2 cycles.
TEST(RingConfig, WidthClockAndHopCyclesScaleTheTiming) {
    RingConfig rc;
    rc.width_bits = 256;
    rc.clock_mhz = 125;
    rc.hop_cycles = 2;
    Bench b(NiConfig(), rc);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(0, 1, pattern(4096, 7), 1, d), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d), 2 * 8 + 129 * 8);
    Bench::run_until(d + at_ns(16));
    EXPECT_TRUE(b.at(1).has_request());
}

TEST(RingAttach, TwiceOrLateIsAWiringError) {
    core::Services s;
    Ring ring("ring", RingConfig(), s);
    NetworkInterface a("a", NiConfig(), s), c("c", NiConfig(), s), late("late", NiConfig(), s);
    EXPECT_EQ(a.begin_request(1, 1, 1, 0), NiStatus::NotAttached);
    ring.attach(0, a);
    EXPECT_THROW(ring.attach(0, c), std::logic_error);  // the same id
    EXPECT_THROW(ring.attach(1, a), std::logic_error);  // the same interface
    ring.attach(1, c);
    sc_core::sc_start(SC_ZERO_TIME);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(a.send_response(1, 0, 0x100, d), NiStatus::Ok);
    EXPECT_THROW(ring.attach(2, late), std::logic_error);  // after the ring carried a message
}

}  // namespace
}  // namespace canopy::ssd::test
