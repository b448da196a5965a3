// The network interface of a ring node (models/ssd/network_interface.hpp): requests built in
// pieces arrive intact and in order, the origin HRE is stamped by the sender's interface, errors
// return a status and change nothing, response slots are reserved when a request is begun, a
// full receiver drops all of a request and NACKs it, responses are always delivered, the arrival
// event wakes an SPU thread at the arrival time. Bench and time arithmetic: ring_bench.hpp.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "../temp_dir.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "ring_bench.hpp"

namespace canopy::ssd::test {
namespace {

// Reads the head request's payload in chunks of `chunk` bytes.
std::vector<uint8_t> read_all(NetworkInterface& n, size_t chunk) {
    std::vector<uint8_t> out;
    std::vector<uint8_t> buf(chunk);
    while (size_t got = n.read_request(buf.data(), chunk))
        out.insert(out.end(), buf.begin(), buf.begin() + got);
    return out;
}

TEST(NetworkInterface, PayloadArrivesIntactAndInOrder) {
    Bench b;
    const auto data = pattern(4096 + 5, 9);
    NetworkInterface& tx = b.at(3);
    ASSERT_EQ(tx.begin_request(6, 0x0203, 42, uint32_t(data.size()), 0), NiStatus::Ok);
    size_t off = 0;
    for (size_t piece : {size_t(1), size_t(100), size_t(1000), data.size() - 1101}) {
        ASSERT_EQ(tx.append(data.data() + off, piece), NiStatus::Ok);
        off += piece;
    }
    EXPECT_EQ(tx.append_remaining(), 0u);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(tx.finish_request(d), NiStatus::Ok);
    // A second, smaller request from another node to the same receiver, later.
    sc_time d2 = d;
    const auto small = pattern(33, 10);
    ASSERT_EQ(b.request(1, 6, small, 43, d2, 0x0301), NiStatus::Ok);
    Bench::run_until(d2 + at_ns(100));

    NetworkInterface& rx = b.at(6);
    ASSERT_EQ(rx.requests_waiting(), 2u);
    auto h = rx.request_head();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->kind, MessageKind::Request);
    EXPECT_EQ(h->src, 3);
    EXPECT_EQ(h->dst, 6);
    EXPECT_EQ(h->rpc_id, 0x0203);
    EXPECT_EQ(h->tag, 42);
    EXPECT_EQ(h->length, data.size());
    EXPECT_EQ(rx.rx_bytes_used(), 16u + 4112u + 16u + 48u);  // header + whole flits each
    EXPECT_EQ(read_all(rx, 7), data);
    EXPECT_EQ(rx.request_unread(), 0u);
    uint8_t byte;
    EXPECT_EQ(rx.read_request(&byte, 1), 0u);
    ASSERT_EQ(rx.pop_request(), NiStatus::Ok);
    h = rx.request_head();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->src, 1);
    EXPECT_EQ(h->rpc_id, 0x0301);
    EXPECT_EQ(read_all(rx, 1000), small);
    ASSERT_EQ(rx.pop_request(), NiStatus::Ok);
    EXPECT_EQ(rx.rx_bytes_used(), 0u);
    EXPECT_FALSE(rx.request_head());
    EXPECT_EQ(b.count("spu6_ni", "requests_received"), 2u);
    EXPECT_EQ(b.count("spu3_ni", "requests_sent"), 1u);
}

// Popping a request read only in part frees all of it; the next request starts at its own first
// byte.
TEST(NetworkInterface, PopDiscardsTheUnreadRest) {
    Bench b;
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(0, 1, pattern(100, 1), 1, d), NiStatus::Ok);
    ASSERT_EQ(b.request(0, 1, pattern(50, 2), 2, d), NiStatus::Ok);
    Bench::run_until(d + at_ns(10));
    NetworkInterface& rx = b.at(1);
    uint8_t buf[10];
    ASSERT_EQ(rx.read_request(buf, 10), 10u);
    EXPECT_EQ(rx.request_unread(), 90u);
    ASSERT_EQ(rx.pop_request(), NiStatus::Ok);
    EXPECT_EQ(read_all(rx, 64), pattern(50, 2));
}

// The bridge stamps the HRE a request comes from; software only chooses destination, RPC, tag
// and bytes. Whatever the payload says, the receiver sees the sender's node and origin. An SPU
// serving that RPC (SPU-OS sets its interface's origin from the request) passes it on.
TEST(NetworkInterface, OriginIsStampedByTheSendingInterface) {
    Bench b;
    NetworkInterface& bridge = b.at(kBridge);
    bridge.set_origin(0x401);  // HRE 1 of a user process (high bits non-zero)
    EXPECT_FALSE(is_kernel_hre(bridge.origin()));
    // A payload shaped like a header claiming kernel HRE 0 from node 7 changes nothing.
    std::vector<uint8_t> payload(64, 0);
    payload[0] = 7;
    ASSERT_EQ(bridge.begin_request(2, 0x0101, 1, uint32_t(payload.size()), 0), NiStatus::Ok);
    bridge.set_origin(0);  // too late: the origin was stamped when the request was begun
    ASSERT_EQ(bridge.append(payload.data(), payload.size()), NiStatus::Ok);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(bridge.finish_request(d), NiStatus::Ok);
    Bench::run_until(d + at_ns(100));
    auto h = b.at(2).request_head();
    ASSERT_TRUE(h);
    EXPECT_EQ(h->src, kBridge);
    EXPECT_EQ(h->origin_hre, 0x401u);

    // SPU 2 serves it and makes an RPC of its own to SPU 5: the origin goes along.
    NetworkInterface& spu = b.at(2);
    spu.set_origin(h->origin_hre);
    ASSERT_EQ(spu.pop_request(), NiStatus::Ok);
    sc_time d2 = SC_ZERO_TIME;
    ASSERT_EQ(b.request(2, 5, {}, 2, d2), NiStatus::Ok);
    Bench::run_until(sc_core::sc_time_stamp() + d2 + at_ns(100));
    ASSERT_TRUE(b.at(5).request_head());
    EXPECT_EQ(b.at(5).request_head()->origin_hre, 0x401u);
    EXPECT_EQ(b.at(5).request_head()->src, 2);
}

TEST(NetworkInterface, ErrorsReturnAStatusAndChangeNothing) {
    NiConfig one;
    one.response_slots = 1;
    Bench b(one);
    NetworkInterface& n = b.at(4);
    const auto data = pattern(16, 3);
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(n.append(data.data(), 1), NiStatus::NoRequestOpen);
    EXPECT_EQ(n.finish_request(d), NiStatus::NoRequestOpen);
    EXPECT_EQ(n.abort_request(), NiStatus::NoRequestOpen);
    EXPECT_EQ(n.begin_request(200, 1, 1, 4), NiStatus::UnknownDestination);
    EXPECT_EQ(n.begin_request(5, 1, 1, 0xffffffffu), NiStatus::TooLong);  // no 4 GiB buffer
    EXPECT_EQ(n.send_response(9, 1, 0, d), NiStatus::UnknownDestination);
    EXPECT_EQ(n.pop_request(), NiStatus::Empty);
    EXPECT_EQ(n.pop_response(), NiStatus::Empty);
    EXPECT_FALSE(n.request_open());

    ASSERT_EQ(n.begin_request(5, 1, 1, 10), NiStatus::Ok);
    EXPECT_EQ(n.response_slots_free(), 0u);  // reserved by the open request
    EXPECT_EQ(n.begin_request(5, 1, 2, 10), NiStatus::RequestOpen);
    EXPECT_EQ(n.append(data.data(), 11), NiStatus::TooLong);
    EXPECT_EQ(n.append_remaining(), 10u);  // nothing of it was taken
    ASSERT_EQ(n.append(data.data(), 4), NiStatus::Ok);
    EXPECT_EQ(n.finish_request(d), NiStatus::Incomplete);
    EXPECT_TRUE(n.request_open());
    EXPECT_EQ(d, SC_ZERO_TIME);
    EXPECT_EQ(b.count("ring", "messages"), 0u);  // nothing was sent
    EXPECT_NE(n.last_error().find("spu4_ni"), std::string::npos);
    EXPECT_NE(n.last_error().find("6 of 10 B"), std::string::npos);

    // Abort frees the slot; a fresh request then goes through.
    ASSERT_EQ(n.abort_request(), NiStatus::Ok);
    EXPECT_EQ(n.response_slots_free(), 1u);
    ASSERT_EQ(n.begin_request(5, 1, 3, 10), NiStatus::Ok);
    ASSERT_EQ(n.append(data.data(), 10), NiStatus::Ok);
    ASSERT_EQ(n.finish_request(d), NiStatus::Ok);
    EXPECT_GT(d, SC_ZERO_TIME);
    EXPECT_EQ(b.count("ring", "messages"), 1u);
    EXPECT_EQ(b.count("spu4_ni", "refused"), 11u);
    Bench::run_until(d + at_ns(100));
    ASSERT_TRUE(b.at(5).request_head());
    EXPECT_EQ(b.at(5).request_head()->tag, 3);  // not the aborted request
    EXPECT_EQ(b.at(5).requests_waiting(), 1u);
}

// With every response slot reserved a node may not begin another request: nothing is sent until
// a response has come and been popped.
TEST(NetworkInterface, NoFreeResponseSlotRefusesTheRequest) {
    NiConfig two;
    two.response_slots = 2;
    Bench b(two);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(0, 1, pattern(32, 1), 1, d), NiStatus::Ok);
    ASSERT_EQ(b.request(0, 1, pattern(32, 2), 2, d), NiStatus::Ok);
    EXPECT_EQ(b.at(0).response_slots_free(), 0u);
    EXPECT_EQ(b.at(0).begin_request(1, 1, 3, 32), NiStatus::NoResponseSlot);
    EXPECT_EQ(b.count("ring", "messages"), 2u);

    Bench::run_until(d + at_ns(100));
    sc_time r = SC_ZERO_TIME;
    ASSERT_EQ(b.at(1).send_response(0, 1, 0x100, r), NiStatus::Ok);
    Bench::run_until(sc_core::sc_time_stamp() + r + at_ns(100));
    ASSERT_TRUE(b.at(0).has_response());
    // The response sits in the slot that was reserved for it: still no free slot.
    EXPECT_EQ(b.at(0).response_slots_free(), 0u);
    EXPECT_EQ(b.at(0).begin_request(1, 1, 3, 32), NiStatus::NoResponseSlot);
    ASSERT_EQ(b.at(0).pop_response(), NiStatus::Ok);
    EXPECT_EQ(b.at(0).response_slots_free(), 1u);
    EXPECT_EQ(b.at(0).begin_request(1, 1, 3, 32), NiStatus::Ok);
}

// Node 2 sends four 8 KiB requests to node 5, whose 32 KiB buffer holds three (8,208 ring bytes
// each): the fourth is dropped whole and NACKed. Node 2 gets the token at 12 ns; each request is
// 513 cycles (2,052 ns) and waits a revolution (36 ns) for the token after the previous one, so
// the fourth ends at 12 + 4 x 2052 + 3 x 36 = 8,328 ns and reaches node 5 three hops later,
// 8,340 ns. Node 5 answers then: the token, released by node 2 at 8,328 ns, is at node 5 at
// 8,340 ns; the NACK's flit ends at 8,344 ns and takes 6 hops to node 2: 8,368 ns.
TEST(NetworkInterface, FullReceiverDropsTheWholeRequestAndNacksTheSender) {
    Bench b;
    sc_time d = SC_ZERO_TIME;
    for (uint16_t tag = 1; tag <= 4; ++tag)
        ASSERT_EQ(b.request(2, 5, pattern(8192, uint8_t(tag)), tag, d), NiStatus::Ok);
    EXPECT_DOUBLE_EQ(ns(d), 8328);
    Bench::run_until_ns(8340);
    NetworkInterface& rx = b.at(5);
    EXPECT_EQ(rx.requests_waiting(), 3u);
    EXPECT_EQ(rx.rx_bytes_used(), 3u * 8208u);  // nothing of the fourth
    EXPECT_EQ(b.count("spu5_ni", "rx_dropped"), 1u);
    EXPECT_EQ(b.count("spu5_ni", "nacks_sent"), 1u);
    Bench::run_until_ns(8367.999);
    EXPECT_FALSE(b.at(2).has_response());
    Bench::run_until_ns(8368);
    auto nack = b.at(2).response_head();
    ASSERT_TRUE(nack);
    EXPECT_EQ(nack->src, 5);
    EXPECT_EQ(nack->tag, 4);
    EXPECT_TRUE(nack->nack);
    EXPECT_EQ(nack->result, 0u);  // a NACK carries no result: every result value stays free
    EXPECT_EQ(b.count("spu2_ni", "nacks_received"), 1u);
    EXPECT_EQ(b.count("spu2_ni", "responses_unexpected"), 0u);

    // Once the receiver frees room, the sender's retry is taken.
    ASSERT_EQ(rx.pop_request(), NiStatus::Ok);
    ASSERT_EQ(b.at(2).pop_response(), NiStatus::Ok);
    sc_time retry = SC_ZERO_TIME;
    ASSERT_EQ(b.request(2, 5, pattern(8192, 4), 4, retry), NiStatus::Ok);
    Bench::run_until(sc_core::sc_time_stamp() + retry + at_ns(100));
    EXPECT_EQ(rx.requests_waiting(), 3u);
    EXPECT_EQ(b.count("spu5_ni", "rx_dropped"), 1u);
}

// All or nothing: a request larger than the whole buffer is never partly taken.
TEST(NetworkInterface, RequestLargerThanTheBufferIsNeverPartlyTaken) {
    Bench b;
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(0, 1, pattern(40000, 1), 1, d), NiStatus::Ok);
    Bench::run_until(d + at_ns(200));
    EXPECT_FALSE(b.at(1).has_request());
    EXPECT_EQ(b.at(1).rx_bytes_used(), 0u);
    ASSERT_TRUE(b.at(0).has_response());
    EXPECT_TRUE(b.at(0).response_head()->nack);
}

// Responses do not use the request buffer: node 0's request buffer is full (1 KiB holds twelve
// 64 B requests of 80 ring bytes; node 1's thirteenth is NACKed), yet all 16 responses to node 0's
// own 16 requests are delivered, one per reserved slot.
TEST(NetworkInterface, ResponsesAreAlwaysDelivered) {
    NiConfig small;
    small.rx_buffer_bytes = 1024;
    Bench b(small);
    sc_time d1 = SC_ZERO_TIME;
    for (uint16_t tag = 0; tag < 13; ++tag)
        ASSERT_EQ(b.request(1, 0, pattern(64, uint8_t(tag)), tag, d1), NiStatus::Ok);
    sc_time d0 = SC_ZERO_TIME;
    for (uint16_t tag = 100; tag < 116; ++tag)
        ASSERT_EQ(b.request(0, 3, {}, tag, d0), NiStatus::Ok);
    EXPECT_EQ(b.at(0).begin_request(3, 1, 999, 0), NiStatus::NoResponseSlot);
    Bench::run_until(std::max(d0, d1) + at_ns(200));
    EXPECT_EQ(b.at(0).requests_waiting(), 12u);
    EXPECT_EQ(b.count("spu0_ni", "rx_dropped"), 1u);
    ASSERT_EQ(b.at(1).responses_waiting(), 1u);  // its NACK
    EXPECT_EQ(b.at(1).response_head()->tag, 12);

    // SPU 3 answers every request, in order.
    NetworkInterface& server = b.at(3);
    ASSERT_EQ(server.requests_waiting(), 16u);
    sc_time r = SC_ZERO_TIME;
    while (auto h = server.request_head()) {
        ASSERT_EQ(server.send_response(h->src, h->tag, 0x100 + h->tag, r), NiStatus::Ok);
        ASSERT_EQ(server.pop_request(), NiStatus::Ok);
    }
    Bench::run_until(sc_core::sc_time_stamp() + r + at_ns(200));
    NetworkInterface& client = b.at(0);
    ASSERT_EQ(client.responses_waiting(), 16u);
    for (uint16_t tag = 100; tag < 116; ++tag) {
        auto h = client.response_head();
        ASSERT_TRUE(h);
        EXPECT_EQ(h->tag, tag);
        EXPECT_EQ(h->result, 0x100u + tag);
        ASSERT_EQ(client.pop_response(), NiStatus::Ok);
    }
    EXPECT_EQ(b.count("spu0_ni", "responses_dropped"), 0u);
    auto* rtt = dynamic_cast<const core::Distribution*>(b.stat("spu0_ni", "round_trip"));
    ASSERT_NE(rtt, nullptr);
    EXPECT_EQ(rtt->count(), 16u);
}

// A response nobody asked for takes a free slot if there is one, never a reserved one: with two
// slots and one reserved, the first stray response is kept, the second dropped (counted), and the
// expected response still gets its slot.
TEST(NetworkInterface, UnexpectedResponsesNeverTakeAReservedSlot) {
    NiConfig two;
    two.response_slots = 2;
    Bench b(two);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(4, 5, {}, 77, d), NiStatus::Ok);
    sc_time s6 = SC_ZERO_TIME, s7 = at_ns(50);
    ASSERT_EQ(b.at(6).send_response(4, 1, 0x100, s6), NiStatus::Ok);
    ASSERT_EQ(b.at(7).send_response(4, 2, 0x100, s7), NiStatus::Ok);
    Bench::run_until(std::max(s6, s7) + at_ns(100));
    EXPECT_EQ(b.count("spu4_ni", "responses_unexpected"), 2u);
    EXPECT_EQ(b.count("spu4_ni", "responses_dropped"), 1u);
    EXPECT_EQ(b.at(4).responses_waiting(), 1u);
    EXPECT_NE(b.at(4).last_error().find("dropped unexpected response 7->4"), std::string::npos);
    sc_time r = SC_ZERO_TIME;
    ASSERT_EQ(b.at(5).send_response(4, 77, 0x100, r), NiStatus::Ok);
    Bench::run_until(sc_core::sc_time_stamp() + r + at_ns(100));
    EXPECT_EQ(b.at(4).responses_waiting(), 2u);
}

// An RPC round trip between two threads, as SPU-OS and the bridge would run it. The bridge asks
// at 0 ns; the token, released by the bridge (node 8) at time zero, comes back to it after a
// revolution, 36 ns; 64 B is 5 cycles, so the last flit leaves at 56 ns and reaches SPU 0 (one
// hop) at 60 ns. The SPU's thread wakes on the arrival event at 60 ns and answers: the token,
// released at node 8 at 56 ns, is at node 0 at 60 ns; the flit ends at 64 ns and travels 8 hops
// back to the bridge: 96 ns.
struct Spu : sc_core::sc_module {
    SC_HAS_PROCESS(Spu);
    NetworkInterface& ni;
    double woke_ns = -1;
    std::vector<uint8_t> received;
    Spu(sc_core::sc_module_name n, NetworkInterface& i) : sc_module(n), ni(i) { SC_THREAD(serve); }
    void serve() {
        while (!ni.has_request()) wait(ni.arrival_event());
        woke_ns = ns(sc_core::sc_time_stamp());
        auto h = ni.request_head();
        received.resize(h->length);
        ni.read_request(received.data(), received.size());
        ni.set_origin(h->origin_hre);
        ni.pop_request();
        const uint32_t sum = std::accumulate(received.begin(), received.end(), 0u);
        sc_time d = SC_ZERO_TIME;
        ni.send_response(h->src, h->tag, 0x100 + sum, d);
        wait(d);
    }
};
struct Host : sc_core::sc_module {
    SC_HAS_PROCESS(Host);
    NetworkInterface& ni;
    std::vector<uint8_t> data = pattern(64, 4);
    double sent_ns = -1, answered_ns = -1;
    uint32_t result = 0;
    Host(sc_core::sc_module_name n, NetworkInterface& i) : sc_module(n), ni(i) { SC_THREAD(run); }
    void run() {
        ni.set_origin(0x401);
        ni.begin_request(0, 0x0102, 5, uint32_t(data.size()), 0);
        ni.append(data.data(), data.size());
        sc_time d = SC_ZERO_TIME;
        ni.finish_request(d);
        wait(d);
        sent_ns = ns(sc_core::sc_time_stamp());
        while (!ni.has_response()) wait(ni.arrival_event());
        answered_ns = ns(sc_core::sc_time_stamp());
        result = ni.response_head()->result;
        ni.pop_response();
    }
};

TEST(NetworkInterface, RoundTripBetweenThreadsWakesOnArrival) {
    BenchOptions o;
    o.start = false;
    Bench b(o);
    Spu spu("spu0", b.at(0));
    Host host("host", b.at(kBridge));
    sc_core::sc_start(at_ns(1000));
    EXPECT_DOUBLE_EQ(host.sent_ns, 56);
    EXPECT_DOUBLE_EQ(spu.woke_ns, 60);
    EXPECT_EQ(spu.received, host.data);
    EXPECT_DOUBLE_EQ(host.answered_ns, 96);
    EXPECT_EQ(host.result, 0x100u + std::accumulate(host.data.begin(), host.data.end(), 0u));
    EXPECT_EQ(b.at(0).origin(), 0x401u);
    auto* rtt = dynamic_cast<const core::Distribution*>(b.stat("bridge_ni", "round_trip"));
    EXPECT_DOUBLE_EQ(rtt->max(), 96);
}

TEST(NetworkInterface, QueueDepthsAndRingBusyAreWaves) {
    canopy_test::TempDir dir;
    BenchOptions o;
    o.waves_path = dir.file("waves");
    Bench b(o);
    sc_time d = SC_ZERO_TIME;
    ASSERT_EQ(b.request(0, 1, pattern(64, 1), 1, d), NiStatus::Ok);
    Bench::run_until(d + at_ns(100));
    ASSERT_EQ(b.at(1).pop_request(), NiStatus::Ok);
    Bench::run_until(d + at_ns(200));
    b.services.waves.close();
    std::ifstream f(dir.file("waves.vcd"));
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find("rx_depth"), std::string::npos);
    EXPECT_NE(text.str().find("response_depth"), std::string::npos);
    EXPECT_NE(text.str().find("busy"), std::string::npos);
}

TEST(NetworkInterface, ConfigDescribedUnderSsdNi) {
    NiConfig c;
    core::Params p;
    core::Params scoped = p.scope("ssd").scope("ni");
    c.describe(scoped);
    EXPECT_EQ(p.keys(), (std::vector<std::string>{"ssd.ni.rx_buffer_bytes", "ssd.ni.response_slots",
                                                  "ssd.ni.max_request_bytes"}));
    EXPECT_EQ(c.rx_buffer_bytes, 32768u);
    EXPECT_EQ(c.response_slots, 16u);
    c.response_slots = 0;
    EXPECT_THROW(c.validate(), InputError);
    c.response_slots = 1;
    c.rx_buffer_bytes = 8;
    EXPECT_THROW(c.validate(), InputError);
}

}  // namespace
}  // namespace canopy::ssd::test
