// The PCIe link module (models/link/pcie_link.hpp): timing of transfers through both directions,
// queueing on one direction, independence of the two, pipeline latency, splitting at 4 KiB
// boundaries, flow-control stalls, virtual channels and refusals.
//
// Each TEST runs in its own process (gtest_discover_tests): a Bench finishes elaboration with
// sc_start(SC_ZERO_TIME) and then calls b_transport from sc_main's context (the link never
// calls wait()). Times are worked out by hand at Gen4 x8 (0.0634765625 ns per byte), each TLP's
// serialisation rounded to the kernel's 1 ps:
//   MemRd 20 B -> 1.270 ns; CplD of 64 B, 84 B -> 5.332 ns; MemWr/CplD of 256 B, 276 B -> 17.520 ns
// and a pipeline latency of 60 + 40 + 80 = 180 ns per traversal in each direction.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstring>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/services.hpp"
#include "link/pcie_link.hpp"

namespace canopy::link {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

constexpr uint64_t kHostBase = 0x1000'0000, kDeviceBase = 0x2000'0000;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

// A memory with a fixed access latency that records every transaction it sees.
struct Memory : sc_core::sc_module {
    struct Seen {
        double at_ns;
        uint64_t address;
        uint32_t length;
        bool write;
        core::TlpExt tlp;
        LinkTlpExt link;
        const core::RequestExt* request;  // another extension the TLP carried, if any
    };
    tlm_utils::simple_target_socket<Memory> socket;
    uint64_t base;
    std::vector<uint8_t> bytes;
    sc_time latency = SC_ZERO_TIME;
    std::vector<Seen> seen;
    bool throw_next = false;  // the next access throws after it is recorded (a model's bug)
    bool grant_dmi = false;   // marks each answer DMI-allowed, as a plain memory may

    Memory(sc_core::sc_module_name n, uint64_t b, size_t size)
        : sc_module(n), socket("socket"), base(b), bytes(size) {
        socket.register_b_transport(this, &Memory::b_transport);
        for (size_t i = 0; i < size; ++i) bytes[i] = uint8_t(i * 7 + 3);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
        Seen s{ns(sc_core::sc_time_stamp() + delay),
               gp.get_address(),
               gp.get_data_length(),
               gp.is_write(),
               {},
               {},
               gp.get_extension<core::RequestExt>()};
        if (auto* t = gp.get_extension<core::TlpExt>()) s.tlp = *t;
        if (auto* l = gp.get_extension<LinkTlpExt>()) s.link = *l;
        seen.push_back(s);
        if (std::exchange(throw_next, false)) throw std::logic_error("memory model bug");
        if (gp.get_address() < base ||
            gp.get_address() + gp.get_data_length() > base + bytes.size())
            return gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        uint8_t* m = bytes.data() + (gp.get_address() - base);
        if (gp.is_write())
            std::memcpy(m, gp.get_data_ptr(), gp.get_data_length());
        else
            std::memcpy(gp.get_data_ptr(), m, gp.get_data_length());
        delay += latency;
        gp.set_dmi_allowed(grant_dmi);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket;
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
};

struct Result {
    tlm::tlm_response_status status;
    double ns;  // the returned delay
    std::string error;
    std::vector<uint8_t> data;
};

struct Bench {
    core::Services services;
    PcieLink link;
    Memory host_mem, device_mem;
    Initiator host_cpu, device_dma;

    explicit Bench(const PcieConfig& c = PcieConfig())
        : link("link", c, services),
          host_mem("host_mem", kHostBase, 1 << 20),
          device_mem("device_mem", kDeviceBase, 1 << 16),
          host_cpu("host_cpu"),
          device_dma("device_dma") {
        host_cpu.socket.bind(link.host_target);
        link.device_initiator.bind(device_mem.socket);
        device_dma.socket.bind(link.device_target);
        link.host_initiator.bind(host_mem.socket);
        sc_core::sc_start(SC_ZERO_TIME);
    }

    // One transfer through the link; `from_device` picks the device's DMA (else the host's CPU).
    Result transfer(bool from_device, bool write, uint64_t addr, uint32_t len, double start_ns = 0,
                    core::TlpExt* tlp = nullptr, bool single_tlp = false,
                    const uint8_t* byte_enables = nullptr) {
        Result r;
        r.data.assign(len, write ? 0xA5 : 0);
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(r.data.data());
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_byte_enable_ptr(const_cast<uint8_t*>(byte_enables));
        gp.set_byte_enable_length(byte_enables ? len : 0);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        LinkTlpExt link_ext;
        link_ext.single_tlp = single_tlp;
        gp.set_extension(&link_ext);
        if (tlp) gp.set_extension(tlp);
        sc_time delay(start_ns, SC_NS);
        (from_device ? device_dma : host_cpu).socket->b_transport(gp, delay);
        gp.clear_extension(&link_ext);
        if (tlp) gp.clear_extension(tlp);
        r.status = gp.get_response_status();
        r.ns = ns(delay);
        r.error = link_ext.error;
        return r;
    }
    Result dma_read(uint64_t addr, uint32_t len, double at = 0) {
        return transfer(true, false, addr, len, at);
    }
    Result dma_write(uint64_t addr, uint32_t len, double at = 0) {
        return transfer(true, true, addr, len, at);
    }
    const core::Occupancy& wire(const char* dir) const {
        return *dynamic_cast<const core::Occupancy*>(
            services.stats.find(std::string("link.") + dir, "wire"));
    }
    uint64_t counter(const std::string& module, const char* name) const {
        return dynamic_cast<const core::Counter*>(services.stats.find(module, name))->value();
    }
};

TEST(LinkTiming, OtherExtensionsRideOnEveryTlpAndStayTheOriginals) {
    Bench b;
    // 2 KiB read: four MemRd TLPs of 512 B (MRRS), each carrying the request's flow extension.
    std::vector<uint8_t> data(2048);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(kHostBase);
    gp.set_data_ptr(data.data());
    gp.set_data_length(2048);
    gp.set_streaming_width(2048);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    core::RequestExt flow;  // on the stack: the link must neither keep nor free it
    flow.flow = 42;
    gp.set_extension(&flow);
    sc_time delay = SC_ZERO_TIME;
    b.device_dma.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(gp.get_extension<core::RequestExt>(), &flow);
    gp.clear_extension(&flow);
    ASSERT_EQ(b.host_mem.seen.size(), 4u);
    for (const auto& s : b.host_mem.seen) {
        EXPECT_EQ(s.request, &flow) << s.address;
        EXPECT_EQ(s.link.count, 4u);
    }
    // The next transfer without it: the TLPs carry none (nothing was left on the link's payload).
    b.host_mem.seen.clear();
    EXPECT_EQ(b.dma_read(kHostBase, 64).status, tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.host_mem.seen.size(), 1u);
    EXPECT_EQ(b.host_mem.seen[0].request, nullptr);
}

// A transfer of one TLP reaches the far side as itself, with the link's TLP attributes in place
// of the original's for the call: afterwards the original has exactly its own extensions back,
// and no direct-memory grant of the far side leaks through the link.
TEST(LinkTiming, OneTlpGoesAsItselfAndGetsItsOwnExtensionsBack) {
    Bench b;
    b.host_mem.grant_dmi = true;
    uint8_t data[64] = {};
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(kHostBase + 0x40);
    gp.set_data_ptr(data);
    gp.set_data_length(64);
    gp.set_streaming_width(64);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    core::TlpExt own;  // the requester's attributes: the link copies them, never keeps them
    own.type = core::TlpExt::Type::MemRead;
    own.requester_id = 0x0100;
    core::RequestExt flow;
    flow.flow = 5;
    gp.set_extension(&own);
    gp.set_extension(&flow);
    sc_time delay = SC_ZERO_TIME;
    b.device_dma.socket->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_FALSE(gp.is_dmi_allowed());
    EXPECT_EQ(gp.get_extension<core::TlpExt>(), &own);
    EXPECT_EQ(gp.get_extension<LinkTlpExt>(), nullptr);
    EXPECT_EQ(gp.get_extension<core::RequestExt>(), &flow);
    ASSERT_EQ(b.host_mem.seen.size(), 1u);
    EXPECT_EQ(b.host_mem.seen[0].request, &flow);
    EXPECT_EQ(b.host_mem.seen[0].tlp.requester_id, 0x0100);
    EXPECT_EQ(b.host_mem.seen[0].link.count, 1u);
    EXPECT_EQ(b.host_mem.seen[0].link.kind, TlpKind::MemRd);
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(data[i], b.host_mem.bytes[0x40 + i]);
    gp.clear_extension(&own);
    gp.clear_extension(&flow);
}

// A far side that throws must not leave the original's extensions (nor the link's own) on the
// payload the link reuses for the next transfer, nor the link's on the original.
TEST(LinkTiming, AThrowingTargetLeavesNoLentExtensionsBehind) {
    Bench b;
    // 64 B goes as itself, 2 KiB as four forwarded TLPs on the link's own payload.
    for (const uint32_t len : {64u, 2048u}) {
        SCOPED_TRACE(len);
        std::vector<uint8_t> data(len);
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(kHostBase);
        gp.set_data_ptr(data.data());
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        {
            core::RequestExt flow;  // gone when the block ends: the link must not hold it
            flow.flow = 7;
            gp.set_extension(&flow);
            b.host_mem.throw_next = true;
            sc_time delay = SC_ZERO_TIME;
            EXPECT_THROW(b.device_dma.socket->b_transport(gp, delay), std::logic_error);
            EXPECT_EQ(gp.get_extension<core::TlpExt>(), nullptr);
            EXPECT_EQ(gp.get_extension<LinkTlpExt>(), nullptr);
            gp.clear_extension(&flow);
        }
        ASSERT_EQ(b.host_mem.seen.size(), 1u);  // the first TLP threw
        EXPECT_EQ(b.host_mem.seen[0].link.count, len / 512 + (len < 512));
        b.host_mem.seen.clear();
        const Result r = b.dma_read(kHostBase, len);
        EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
        ASSERT_FALSE(b.host_mem.seen.empty());
        for (const auto& s : b.host_mem.seen) {
            EXPECT_EQ(s.request, nullptr);
            EXPECT_EQ(s.tlp.type, core::TlpExt::Type::MemRead);
        }
        b.host_mem.seen.clear();
    }
}

TEST(LinkTiming, DmaRead64B) {
    Bench b;
    // MemRd upstream 1.270 + 180, memory answers at once, CplD downstream 5.332 + 180.
    const Result r = b.dma_read(kHostBase + 0x40, 64);
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_NEAR(r.ns, 1.270 + 180 + 5.332 + 180, 1e-6);  // 366.602 ns
    ASSERT_EQ(b.host_mem.seen.size(), 1u);
    EXPECT_NEAR(b.host_mem.seen[0].at_ns, 181.270, 1e-6);
    EXPECT_EQ(b.host_mem.seen[0].tlp.type, core::TlpExt::Type::MemRead);
    EXPECT_EQ(b.host_mem.seen[0].link.kind, TlpKind::MemRd);
    EXPECT_EQ(b.host_mem.seen[0].link.wire_bytes, 20u);
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r.data[i], b.host_mem.bytes[0x40 + i]);
    // Upstream: the MemRd plus the Ack and UpdateFC answering the CplD: 20 + 16 B.
    EXPECT_EQ(b.counter("link.upstream", "tlp_bytes") + b.counter("link.upstream", "dllp_bytes"),
              36u);
    EXPECT_EQ(
        b.counter("link.downstream", "tlp_bytes") + b.counter("link.downstream", "dllp_bytes"),
        100u);
}

TEST(LinkTiming, DmaRead4KiB) {
    Bench b;
    // 8 MemRd of 512 B leave upstream every 1.270 ns; the first reaches the host at 181.270 and
    // its two CplDs start at once. The downstream wire is the bottleneck: 16 CplD of 276 B back
    // to back, 16 x 17.520 = 280.320 ns, the last arriving 180 ns later.
    const Result r = b.dma_read(kHostBase, 4096);
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_NEAR(r.ns, 181.270 + 280.320 + 180, 1e-6);  // 641.590 ns
    EXPECT_EQ(b.host_mem.seen.size(), 8u);
    EXPECT_EQ(r.data,
              std::vector<uint8_t>(b.host_mem.bytes.begin(), b.host_mem.bytes.begin() + 4096));
    // Downstream busy: 16 CplDs plus 4 DLLPs (32 B, 2.031 ns) answering the 8 MemRds.
    EXPECT_NEAR(b.wire("downstream").busy_ns(), 280.320 + 2.031, 1e-6);
    EXPECT_EQ(b.counter("link.downstream", "tlps"), 16u);
    EXPECT_EQ(b.counter("link.upstream", "tlps"), 8u);
}

TEST(LinkTiming, DmaWrite4KiB) {
    Bench b;
    // 16 MemWr of 276 B back to back upstream, the last accepted by host memory 180 ns after it
    // leaves: 280.320 + 180.
    const Result r = b.dma_write(kHostBase, 4096);
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_NEAR(r.ns, 460.320, 1e-6);
    ASSERT_EQ(b.host_mem.seen.size(), 16u);
    EXPECT_NEAR(b.host_mem.seen[15].at_ns, 460.320, 1e-6);
    EXPECT_EQ(b.host_mem.seen[15].address, kHostBase + 15 * 256);
    EXPECT_EQ(b.host_mem.seen[15].link.index, 15u);
    EXPECT_EQ(b.host_mem.seen[15].link.count, 16u);
    EXPECT_EQ(b.host_mem.bytes[4095], 0xA5);
    EXPECT_EQ(b.counter("link.downstream", "tlps"), 0u);
    EXPECT_EQ(b.counter("link.downstream", "dllp_bytes"), 64u);  // 4 Acks + 4 UpdateFCs
}

TEST(LinkTiming, Gen4x16) {
    PcieConfig c;
    c.lanes = 16;  // 0.03173828125 ns per byte: MemRd 20 B 0.635, CplD 84 B 2.666, 276 B 8.760
    Bench b(c);
    EXPECT_NEAR(b.dma_read(kHostBase, 64).ns, 0.635 + 180 + 2.666 + 180, 1e-6);  // 363.301
    // 4 KiB read: the first MemRd arrives at 180.635, then 16 CplD back to back, + 180.
    EXPECT_NEAR(b.dma_read(kHostBase, 4096, 1000).ns, 1000 + 180.635 + 16 * 8.760 + 180,
                1e-6);  // 500.795 after the start
    // 4 KiB write: 16 MemWr back to back, + 180.
    EXPECT_NEAR(b.dma_write(kHostBase, 4096, 2000).ns, 2000 + 16 * 8.760 + 180, 1e-6);  // 320.160
}

TEST(LinkTiming, BackToBackTransfersQueueOnOneDirection) {
    Bench b;
    EXPECT_NEAR(b.dma_write(kHostBase, 4096).ns, 460.320, 1e-6);
    // The second write, issued at the same time, waits for the first's 16 TLPs.
    EXPECT_NEAR(b.dma_write(kHostBase + 4096, 4096).ns, 32 * 17.520 + 180, 1e-6);  // 740.640
    const core::Occupancy& up = b.wire("upstream");
    EXPECT_EQ(up.grants(), 32u);
    EXPECT_NEAR(up.busy_ns(), 32 * 17.520, 1e-6);
    EXPECT_NEAR(up.wait_ns(), 280.320, 1e-6);  // the second's first TLP waited for the first
    // A third, issued after the wire is free again, does not wait.
    EXPECT_NEAR(b.dma_write(kHostBase, 256, 1000).ns, 1000 + 17.520 + 180, 1e-6);
}

TEST(LinkTiming, DirectionsAreIndependent) {
    Bench b;
    // The host writes 4 KiB to the device (downstream) while the device writes 4 KiB to the host
    // (upstream): neither waits for the other.
    EXPECT_NEAR(b.transfer(false, true, kDeviceBase, 4096).ns, 460.320, 1e-6);
    EXPECT_NEAR(b.dma_write(kHostBase, 4096).ns, 460.320, 1e-6);
    EXPECT_NEAR(b.device_mem.seen.back().at_ns, 460.320, 1e-6);
    EXPECT_DOUBLE_EQ(b.wire("upstream").wait_ns(), 0.0);
    EXPECT_DOUBLE_EQ(b.wire("downstream").wait_ns(), 0.0);
}

TEST(LinkTiming, PipelineLatencyOncePerTraversal) {
    PcieConfig c;
    c.downstream = LayerLatency{10, 20, 70};  // 100 ns host -> device
    c.upstream = LayerLatency{5, 15, 30};     // 50 ns device -> host
    Bench b(c);
    EXPECT_EQ(b.link.downstream_latency(), sc_time(100, SC_NS));
    EXPECT_EQ(b.link.upstream_latency(), sc_time(50, SC_NS));
    // DMA read: MemRd up (1.270 + 50), CplD down (5.332 + 100).
    EXPECT_NEAR(b.dma_read(kHostBase, 64).ns, 1.270 + 50 + 5.332 + 100, 1e-6);
    // A host MMIO write of 4 B: MemWr of 24 B (1.523 ns) down, + 100; no completion.
    EXPECT_NEAR(b.transfer(false, true, kDeviceBase, 4, 1000).ns, 1000 + 1.523 + 100, 1e-6);
    // A host MMIO read of 4 B: MemRd down (1.270 + 100), CplD of 24 B up (1.523 + 50).
    EXPECT_NEAR(b.transfer(false, false, kDeviceBase, 4, 2000).ns, 2000 + 1.270 + 100 + 1.523 + 50,
                1e-6);
    // The far side's own latency adds on top, once.
    b.host_mem.latency = sc_time(100, SC_NS);
    EXPECT_NEAR(b.dma_read(kHostBase, 64, 3000).ns, 3000 + 1.270 + 50 + 100 + 5.332 + 100, 1e-6);
}

TEST(LinkTiming, TransfersSplitAt4KiBBoundaries) {
    Bench b;
    // 1 KiB read from 0x...E00: two 512-B MemRd, the second starting at the 4 KiB boundary.
    EXPECT_EQ(b.dma_read(kHostBase + 0xE00, 1024).status, tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.host_mem.seen.size(), 2u);
    EXPECT_EQ(b.host_mem.seen[1].address, kHostBase + 0x1000);
    // 512-B write from 0x...F80: 128 B to the boundary, 256, 128.
    b.host_mem.seen.clear();
    EXPECT_EQ(b.dma_write(kHostBase + 0xF80, 512, 1000).status, tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.host_mem.seen.size(), 3u);
    EXPECT_EQ(b.host_mem.seen[0].length, 128u);
    EXPECT_EQ(b.host_mem.seen[1].address, kHostBase + 0x1000);
    EXPECT_EQ(b.host_mem.seen[1].length, 256u);
    EXPECT_EQ(b.host_mem.seen[2].length, 128u);
    for (const auto& s : b.host_mem.seen) EXPECT_LE(s.address % 4096 + s.length, 4096u);
}

TEST(LinkTiming, PostedCreditsStallLongWrites) {
    PcieConfig c;
    c.credits.posted_header = 2;  // two MemWr in flight, then wait for an UpdateFC
    Bench b(c);
    // TLP0 [0, 17.520] arrives 197.520; TLP1 [17.520, 35.040] arrives 215.040. The UpdateFC for
    // TLP0 is back 180 + 0.508 (one 8-B DLLP) later, at 378.028: TLP2 [378.028, 395.548] arrives
    // 575.548; TLP3 waits for TLP1's credit, back at 395.548, and arrives 395.548 + 17.520 + 180.
    EXPECT_NEAR(b.dma_write(kHostBase, 1024).ns, 395.548 + 17.520 + 180, 1e-6);  // 593.068
    ASSERT_EQ(b.host_mem.seen.size(), 4u);
    EXPECT_NEAR(b.host_mem.seen[2].at_ns, 575.548, 1e-6);
}

TEST(LinkTiming, VirtualChannelsShareTheWire) {
    Bench b;
    core::TlpExt vc1;
    vc1.vc = 1;
    EXPECT_NEAR(b.dma_write(kHostBase, 4096).ns, 460.320, 1e-6);
    // A VC1 (CCIX) write issued at the same time queues behind the VC0 one, in request order.
    const Result r = b.transfer(true, true, kHostBase + 4096, 4096, 0, &vc1);
    EXPECT_NEAR(r.ns, 740.640, 1e-6);
    EXPECT_EQ(b.host_mem.seen.back().tlp.vc, 1);
    EXPECT_EQ(b.counter("link.upstream", "vc0.tlps"), 16u);
    EXPECT_EQ(b.counter("link.upstream", "vc1.tlps"), 16u);
}

TEST(LinkTiming, AtsTranslationRequest) {
    Bench b;
    core::TlpExt ats;
    ats.type = core::TlpExt::Type::AtsTranslate;
    // AtsRequest 4DW: 24 B (1.523 ns) up + 180; AtsCompletion 12 + 8 + 8 = 28 B (1.777) + 180.
    const Result r = b.transfer(true, false, kHostBase, 8, 0, &ats);
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_NEAR(r.ns, 1.523 + 180 + 1.777 + 180, 1e-6);
    ASSERT_EQ(b.host_mem.seen.size(), 1u);
    EXPECT_EQ(b.host_mem.seen[0].tlp.type, core::TlpExt::Type::AtsTranslate);
    EXPECT_EQ(b.host_mem.seen[0].tlp.at, core::TlpExt::AddressType::TranslationRequest);
    EXPECT_EQ(b.counter("link", "ats"), 1u);
}

TEST(LinkTiming, FailedReadCompletesWithoutData) {
    Bench b;
    // Past the end of host memory: the host answers with an address error, the link returns it
    // in one Cpl without data (20 B, 1.270 ns).
    const Result r = b.dma_read(kHostBase + (1 << 20), 64);
    EXPECT_EQ(r.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_NEAR(r.ns, 1.270 + 180 + 1.270 + 180, 1e-6);
}

TEST(LinkRefusal, RefusesWhatPcieCannotCarry) {
    PcieConfig c;
    c.max_transfer_bytes = 64 * 1024;
    Bench b(c);
    auto refused = [&](const Result& r, const char* why) {
        EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE) << why;
        EXPECT_NE(r.error.find(why), std::string::npos) << r.error;
        EXPECT_NE(b.link.last_error().find(why), std::string::npos) << b.link.last_error();
        EXPECT_DOUBLE_EQ(r.ns, 5.0) << why;  // delay untouched
    };
    refused(b.transfer(true, false, kHostBase, 0, 5), "zero-length");
    refused(b.transfer(true, false, kHostBase, 128 * 1024, 5), "max_transfer_bytes");
    refused(b.transfer(true, false, ~0ull - 8, 64, 5), "wraps");
    // One raw TLP may not cross 4 KiB nor exceed MRRS / MPS; as a transfer the same is split.
    refused(b.transfer(true, false, kHostBase + 0xFC0, 128, 5, nullptr, true), "4 KiB boundary");
    refused(b.transfer(true, false, kHostBase, 1024, 5, nullptr, true), "max read request 512");
    refused(b.transfer(true, true, kHostBase, 512, 5, nullptr, true), "max payload 256");
    const uint8_t enables[8] = {0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0};
    refused(b.transfer(true, true, kHostBase, 8, 5, nullptr, false, enables), "byte enables");
    core::TlpExt vc2;
    vc2.vc = 2;
    refused(b.transfer(true, true, kHostBase, 8, 5, &vc2), "virtual channel 2");
    core::TlpExt ats;
    ats.type = core::TlpExt::Type::AtsTranslate;
    refused(b.transfer(true, true, kHostBase, 8, 5, &ats), "must be a read");
    refused(b.transfer(true, false, kHostBase, 12, 5, &ats), "8 B per translation");
    core::TlpExt cpl;
    cpl.type = core::TlpExt::Type::Completion;
    refused(b.transfer(true, false, kHostBase, 8, 5, &cpl), "completion");
    EXPECT_TRUE(b.host_mem.seen.empty());
    EXPECT_EQ(b.counter("link", "refused"), 11u);
    // Legal raw TLPs and split transfers go through.
    EXPECT_EQ(b.transfer(true, false, kHostBase + 0xF80, 128, 0, nullptr, true).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.transfer(true, false, kHostBase + 0xFC0, 128).status, tlm::TLM_OK_RESPONSE);
}

TEST(LinkRefusal, InvalidConfigIsAnInputError) {
    core::Services s;
    PcieConfig c;
    c.max_read_request_bytes = 1000;
    EXPECT_THROW({ PcieLink link("link", c, s); }, InputError);
}

}  // namespace
}  // namespace canopy::link
