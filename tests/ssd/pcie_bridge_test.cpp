// Willow's PCIe bridge (models/ssd/pcie_bridge): queue-pair set-up through its registers, RPCs
// fetched from a submission queue in host memory and stamped with the queue's HRE, responses
// and SPU requests written to the completion queue and receive buffer, and the refusals: payload
// outside the DMA window, malformed entries, doorbells of a disabled queue, a bad set-up (a
// coherent queue without a request agent among them), and
// SPU requests to an HRE with no room (NACKed). The SPU side is a test thread on a network
// interface; host memory is a plain memory. Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include <cstring>
#include <functional>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "cpu/memory.hpp"
#include "ssd/pcie_bridge.hpp"
#include "ssd/ring.hpp"

namespace canopy::ssd {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

constexpr uint64_t kWindow = 0x10000, kWindowBytes = 0x10000;
constexpr uint64_t kSq = kWindow, kCq = kWindow + 0x1000, kRx = kWindow + 0x2000,
                   kPayload = kWindow + 0x4000;
constexpr uint32_t kSqEntries = 8, kCqEntries = 8, kRxBytes = 256;
constexpr NodeId kSpu = 0, kBridgeNode = 1;

const core::RegisterMap& bridge_map() {
    static const core::RegisterMap map = PcieBridge::register_map();
    return map;
}

// The host's side: register and doorbell accesses, and its memory.
struct Bench : sc_core::sc_module {
    core::Services services;
    Ring ring{"ring", RingConfig(), services};
    NetworkInterface spu_ni{"spu_ni", NiConfig(), services};
    NetworkInterface bridge_ni{"bridge_ni", bridge_ni_config(), services};
    PcieBridge bridge{"bridge", bridge_ni, services, bridge_config()};
    cpu::Memory host_mem{"host_mem", 1 << 20, services};
    tlm_utils::simple_initiator_socket<Bench> ctl{"ctl_port"}, bell{"bell_port"};
    std::function<void(Bench&)> host_program, spu_program;

    SC_HAS_PROCESS(Bench);
    explicit Bench(sc_core::sc_module_name n) : sc_module(n) {
        ring.attach(kSpu, spu_ni);
        ring.attach(kBridgeNode, bridge_ni);
        bridge.host.bind(host_mem.socket);
        ctl.bind(bridge.ctl);
        bell.bind(bridge.doorbells);
        SC_THREAD(host_thread);
        SC_THREAD(spu_thread);
    }
    static NiConfig bridge_ni_config() {
        NiConfig c;
        c.response_slots = 64;
        return c;
    }
    static BridgeConfig bridge_config() {
        BridgeConfig c;
        c.queue_pairs = 4;
        return c;
    }
    void host_thread() {
        if (host_program) host_program(*this);
    }
    void spu_thread() {
        if (spu_program) spu_program(*this);
    }

    bool access(tlm_utils::simple_initiator_socket<Bench>& s, bool write, uint64_t addr,
                uint64_t& v, unsigned bytes) {
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(bytes);
        gp.set_streaming_width(bytes);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_time d = SC_ZERO_TIME;
        s->b_transport(gp, d);
        wait(d);
        return gp.is_response_ok();
    }
    void reg(const std::string& name, uint64_t v) {
        const auto& r = *bridge_map().find(name);
        ASSERT_TRUE(access(ctl, true, r.offset, v, r.size_bytes())) << name;
    }
    uint64_t reg(const std::string& name) {
        const auto& r = *bridge_map().find(name);
        uint64_t v = 0;
        EXPECT_TRUE(access(ctl, false, r.offset, v, r.size_bytes())) << name;
        return v;
    }
    // After the run: the debugger's view (no time passes).
    uint64_t peek(const std::string& name) {
        const auto& r = *bridge_map().find(name);
        uint64_t v = 0;
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(r.offset);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(r.size_bytes());
        gp.set_streaming_width(r.size_bytes());
        EXPECT_EQ(ctl->transport_dbg(gp), r.size_bytes()) << name;
        return v;
    }
    bool ring_bell(uint32_t qp, uint32_t offset, uint32_t value) {
        uint64_t v = value;
        return access(bell, true, uint64_t(qp) * HRE_DOORBELL_PAGE_BYTES + offset, v, 4);
    }
    // Sets queue pair `qp` up in the window; true when it was enabled.
    bool setup(uint32_t qp, uint32_t hre, uint64_t sq = kSq, uint64_t control = 1) {
        reg("qp_select", qp);
        reg("qp_hre", hre);
        reg("qp_window_base", kWindow);
        reg("qp_window_bytes", kWindowBytes);
        reg("qp_sq_base", sq);
        reg("qp_cq_base", kCq);
        reg("qp_rx_base", kRx);
        reg("qp_sq_entries", kSqEntries);
        reg("qp_cq_entries", kCqEntries);
        reg("qp_rx_bytes", kRxBytes);
        reg("qp_shadow_base", kPayload - 64);
        reg("qp_control", control);
        return reg("qp_status") & 1;
    }
    void put_sq(uint32_t slot, const hre_sq_entry& e) {
        host_mem.write(kSq + slot * HRE_SQ_ENTRY_BYTES, reinterpret_cast<const uint8_t*>(&e),
                       sizeof e);
    }
    hre_cq_entry cq(uint32_t slot) {
        hre_cq_entry e;
        host_mem.read(kCq + slot * HRE_CQ_ENTRY_BYTES, reinterpret_cast<uint8_t*>(&e), sizeof e);
        return e;
    }
    // Polls CQ slot `slot` until its phase bit says `phase`.
    hre_cq_entry wait_cq(uint32_t slot, uint16_t phase = 1) {
        for (int i = 0; i < 100000; ++i) {
            hre_cq_entry e = cq(slot);
            if ((e.phase & 1) == phase && e.kind != 0) return e;
            wait(sc_time(10, SC_NS));
        }
        ADD_FAILURE() << "no completion in slot " << slot;
        return {};
    }
};

hre_sq_entry request(uint16_t tag, uint32_t length, bool inline_payload) {
    hre_sq_entry e{};
    e.kind = HRE_KIND_REQUEST;
    e.node = kSpu;
    e.rpc_id = 0x0203;
    e.tag = tag;
    e.flags = inline_payload ? HRE_FLAG_INLINE : 0;
    e.length = length;
    e.payload_addr = kPayload;
    for (uint32_t i = 0; i < HRE_INLINE_BYTES; ++i) e.inline_payload[i] = uint8_t(100 + i);
    return e;
}

TEST(PcieBridge, RequestIsStampedWithTheQueuesHreAndItsResponseCompletes) {
    Bench b("bench");
    std::vector<uint8_t> data(1000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 13);
    b.host_mem.write(kPayload, data.data(), data.size());
    MessageHeader seen;
    std::vector<uint8_t> got(1000);
    b.spu_program = [&](Bench& bb) {
        while (!bb.spu_ni.has_request()) wait(bb.spu_ni.arrival_event());
        seen = *bb.spu_ni.request_head();
        bb.spu_ni.read_request(got.data(), seen.length);
        bb.spu_ni.pop_request();
        sc_time d = SC_ZERO_TIME;
        bb.spu_ni.send_response(seen.src, seen.tag, 0x1234, d);
    };
    hre_cq_entry done{};
    b.host_program = [&](Bench& bb) {
        const uint32_t hre = (5u << kHreIndexBits) | 2;  // process prefix 5, queue pair 2
        ASSERT_TRUE(bb.setup(2, hre));
        hre_sq_entry e = request(42, 1000, false);
        bb.host_mem.write(kSq, reinterpret_cast<const uint8_t*>(&e), sizeof e);
        ASSERT_TRUE(bb.ring_bell(2, HRE_DOORBELL_SQ_TAIL, 1));
        done = bb.wait_cq(0);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    EXPECT_EQ(seen.origin_hre, (5u << kHreIndexBits) | 2);  // the queue's, not the entry's
    EXPECT_EQ(seen.rpc_id, 0x0203);
    EXPECT_EQ(seen.src, kBridgeNode);
    EXPECT_EQ(got, data);
    EXPECT_EQ(done.kind, HRE_KIND_RESPONSE);
    EXPECT_EQ(done.tag, 42);  // the host's tag back, whatever tag the bridge used on the ring
    EXPECT_EQ(done.result, 0x1234u);
    EXPECT_EQ(done.status, HRE_STATUS_OK);
    EXPECT_EQ(done.node, kSpu);
    EXPECT_EQ(b.peek("fetched"), 1u);
    EXPECT_EQ(b.peek("completions"), 1u);
}

TEST(PcieBridge, PayloadOutsideTheWindowIsRefusedAndNothingReachesTheSpu) {
    Bench b("bench");
    hre_cq_entry done{};
    b.host_program = [&](Bench& bb) {
        ASSERT_TRUE(bb.setup(0, 1));
        hre_sq_entry e = request(7, 64, false);
        e.payload_addr = kWindow + kWindowBytes - 32;  // straddles the window's end
        bb.host_mem.write(kSq, reinterpret_cast<const uint8_t*>(&e), sizeof e);
        hre_sq_entry bad = request(8, HRE_INLINE_BYTES + 1, true);  // inline, too long
        bb.host_mem.write(kSq + HRE_SQ_ENTRY_BYTES, reinterpret_cast<const uint8_t*>(&bad),
                          sizeof bad);
        ASSERT_TRUE(bb.ring_bell(0, HRE_DOORBELL_SQ_TAIL, 2));
        done = bb.wait_cq(0);
        const hre_cq_entry second = bb.wait_cq(1);
        EXPECT_EQ(second.tag, 8);
        EXPECT_EQ(second.status, HRE_STATUS_BAD_ENTRY);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    EXPECT_EQ(done.tag, 7);
    EXPECT_EQ(done.status, HRE_STATUS_BAD_ADDRESS);
    EXPECT_FALSE(b.spu_ni.has_request());
    EXPECT_EQ(b.peek("refused"), 2u);
}

TEST(PcieBridge, SpuRequestLandsInTheReceiveBufferAndANackWhenThereIsNoRoom) {
    Bench b("bench");
    std::vector<bool> results;  // NACK or not, per response
    uint16_t nacked_tag = 0;
    b.spu_program = [&](Bench& bb) {
        wait(sc_time(5, sc_core::SC_US));  // after the host's set-up
        for (uint16_t tag : {1, 2}) {      // both sent before any answer
            std::vector<uint8_t> p(200, uint8_t(tag));
            sc_time d = SC_ZERO_TIME;
            ASSERT_EQ(bb.spu_ni.begin_request(kBridgeNode, 0x0405, tag, 200, 3), NiStatus::Ok);
            ASSERT_EQ(bb.spu_ni.append(p.data(), p.size()), NiStatus::Ok);
            ASSERT_EQ(bb.spu_ni.finish_request(d), NiStatus::Ok);
            wait(d);
        }
        while (!bb.spu_ni.has_response()) wait(bb.spu_ni.arrival_event());
        results.push_back(bb.spu_ni.response_head()->nack);
        nacked_tag = bb.spu_ni.response_head()->tag;
        bb.spu_ni.pop_response();
    };
    hre_cq_entry got{};
    b.host_program = [&](Bench& bb) {
        ASSERT_TRUE(bb.setup(3, 3));
        got = bb.wait_cq(0);
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    EXPECT_EQ(got.kind, HRE_KIND_REQUEST);
    EXPECT_EQ(got.rpc_id, 0x0405);
    EXPECT_EQ(got.length, 200u);
    EXPECT_EQ(got.node, kSpu);
    std::vector<uint8_t> rx(200);
    b.host_mem.read(kRx + got.rx_offset, rx.data(), rx.size());
    EXPECT_EQ(rx, std::vector<uint8_t>(200, 1));
    // The second 200 B does not fit the 256 B receive buffer before the host returns space:
    // NACKed (the first one was never answered by the host: the SPU sees only the NACK).
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0]);
    EXPECT_EQ(nacked_tag, 2);
    EXPECT_EQ(b.peek("nacked"), 1u);
}

TEST(PcieBridge, BadSetUpAndDoorbellsOfADisabledQueueDoNothing) {
    Bench b("bench");
    b.host_program = [&](Bench& bb) {
        EXPECT_FALSE(bb.setup(1, 1, kWindow + kWindowBytes - 64));  // SQ runs out of the window
        EXPECT_EQ(bb.reg("qp_status"), 2u);                         // config_error
        EXPECT_TRUE(bb.ring_bell(1, HRE_DOORBELL_SQ_TAIL, 1));      // accepted, ignored
        uint64_t v = 0;
        EXPECT_FALSE(bb.access(bb.bell, true, 4 * HRE_DOORBELL_PAGE_BYTES, v, 4));  // no page
        EXPECT_EQ(bb.reg("queues"), 4u);
        // A coherent queue needs a CCIX request agent, which this bridge has not.
        EXPECT_FALSE(bb.setup(2, 2, kSq, 1 | 4));
        EXPECT_EQ(bb.reg("qp_status"), 2u);
        EXPECT_TRUE(bb.setup(2, 2));  // the same set-up with doorbells is fine
        wait(sc_time(10, sc_core::SC_US));
    };
    sc_core::sc_start(sc_time(1, sc_core::SC_MS));
    EXPECT_EQ(b.peek("fetched"), 0u);
    EXPECT_FALSE(b.spu_ni.has_request());
}

}  // namespace
}  // namespace canopy::ssd
