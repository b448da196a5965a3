// The CCIX pieces of models/link on their own: the VC router and merge, the message header, the
// config with its device profiles and Extended Speed Mode, and the request and home agents across
// a real PcieLink with a fake coherent home (a flat memory that records requests and snoops the
// request agent on demand). The host's real home node is exercised in tests/platform/ccix_test.cpp.
//
// Each TEST runs in its own process; agents are called from sc_main's context after elaboration
// (sc_start(SC_ZERO_TIME)); none of them waits. Expected latencies are sums of the configured
// components along the protocol's path.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/coherence.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/services.hpp"
#include "link/atc.hpp"
#include "link/ccix_config.hpp"
#include "link/ccix_message.hpp"
#include "link/ccix_transaction.hpp"
#include "link/home_agent.hpp"
#include "link/pcie_link.hpp"
#include "link/request_agent.hpp"
#include "link/tlp.hpp"
#include "link/vc_router.hpp"

namespace canopy::link {
namespace {

using core::LineState;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

// Records what reaches it and answers after a fixed time.
struct Sink : sc_core::sc_module {
    tlm_utils::simple_target_socket<Sink> socket;
    std::vector<uint64_t> seen;
    unsigned dbg = 0;
    explicit Sink(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_b_transport(this, &Sink::b_transport);
        socket.register_transport_dbg(this, &Sink::transport_dbg);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_time& d) {
        seen.push_back(gp.get_address());
        d += sc_time(10, SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) {
        ++dbg;
        return gp.get_data_length();
    }
};

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket;
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
    // One transaction; `vc` < 0: no TlpExt (plain PCIe).
    tlm::tlm_response_status send(uint64_t address, int vc, bool write = false,
                                  uint8_t* data = nullptr, unsigned length = 8,
                                  CcixMessageExt* message = nullptr) {
        uint8_t local[8] = {};
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(address);
        gp.set_data_ptr(data ? data : local);
        gp.set_data_length(length);
        gp.set_streaming_width(length);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        core::TlpExt tlp;
        if (vc >= 0) {
            tlp.vc = uint8_t(vc);
            gp.set_extension(&tlp);
        }
        if (message) gp.set_extension(message);
        sc_time d = SC_ZERO_TIME;
        socket->b_transport(gp, d);
        if (vc >= 0) gp.clear_extension(&tlp);
        if (message) gp.clear_extension(message);
        return gp.get_response_status();
    }
};

uint64_t counter(core::Services& s, const std::string& module, const char* name) {
    auto* c = dynamic_cast<const core::Counter*>(s.stats.find(module, name));
    return c ? c->value() : ~0ull;
}

// ---- VC router and merge ------------------------------------------------------------------

TEST(VcRouter, ForwardsByVirtualChannelAndPlainTrafficGoesToVc0) {
    core::Services s;
    Initiator in("in");
    VcRouter router("router", s);
    Sink pcie("pcie"), ccix("ccix");
    in.socket.bind(router.target);
    router.vc0.bind(pcie.socket);
    router.vc1.bind(ccix.socket);
    sc_core::sc_start(SC_ZERO_TIME);
    EXPECT_EQ(in.send(0x100, -1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in.send(0x200, 0), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in.send(0x300, 1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in.send(0x400, 2), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(pcie.seen, (std::vector<uint64_t>{0x100, 0x200}));
    EXPECT_EQ(ccix.seen, (std::vector<uint64_t>{0x300}));
    EXPECT_EQ(counter(s, "router", "refused"), 1u);
    EXPECT_NE(router.last_error().find("virtual channel 2"), std::string::npos);
    EXPECT_EQ(counter(s, "router", "vc1.transactions"), 1u);

    // Debug transport follows the same routes.
    uint8_t b[4];
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_data_ptr(b);
    gp.set_data_length(4);
    core::TlpExt tlp;
    tlp.vc = 1;
    gp.set_extension(&tlp);
    EXPECT_EQ(in.socket->transport_dbg(gp), 4u);
    gp.clear_extension(&tlp);
    EXPECT_EQ(ccix.dbg, 1u);
    EXPECT_EQ(pcie.dbg, 0u);
}

TEST(VcRouter, MergeTakesManyInitiatorsAndRefusesTrafficOfTheOtherVc) {
    core::Services s;
    Initiator atc("atc"), dma("dma"), ra("ra");
    VcMerge merge("merge", s);
    Sink link("link");
    atc.socket.bind(merge.vc0);
    dma.socket.bind(merge.vc0);
    ra.socket.bind(merge.vc1);
    merge.out.bind(link.socket);
    sc_core::sc_start(SC_ZERO_TIME);
    EXPECT_EQ(atc.send(0x10, -1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(dma.send(0x20, 0), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(ra.send(0x30, 1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(ra.send(0x40, -1), tlm::TLM_GENERIC_ERROR_RESPONSE);  // VC1 input, no VC1 tag
    EXPECT_EQ(dma.send(0x50, 1), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(link.seen, (std::vector<uint64_t>{0x10, 0x20, 0x30}));
    EXPECT_EQ(counter(s, "merge", "refused"), 2u);
    EXPECT_NE(merge.last_error().find("VC1"), std::string::npos);
}

// ---- message header -------------------------------------------------------------------------

TEST(CcixMessage, HeaderRoundTripsAndFollowsTheDocumentedLayout) {
    CcixHeader h;
    h.op = CcixOp::Atomic;
    h.length = 16;
    h.atomic_kind = core::AtomicKind::Compare;
    h.atomic_op = core::AtomicOp::Umax;
    h.atomic_size = 4;
    h.offset = 12;
    h.agent = 3;
    h.tag = 0xbeef;
    h.address = 0x0123456789abcdc0ull;
    uint8_t b[kCcixHeaderBytes + 16] = {};
    h.encode(b);
    EXPECT_EQ(b[0], 0x0A);  // Atomic = 0x01 + CohRequest::Atomic (9)
    EXPECT_EQ(b[1], 16);
    // kind Compare (3) | op Umax (6) << 2 | log2(4) = 2 << 5
    EXPECT_EQ(b[3], 3 | (6 << 2) | (2 << 5));
    EXPECT_EQ(b[4], 12);
    EXPECT_EQ(b[5], 3);
    EXPECT_EQ(b[6], 0xef);  // little-endian tag
    EXPECT_EQ(b[7], 0xbe);
    EXPECT_EQ(b[8], 0xc0);  // little-endian address
    EXPECT_EQ(b[15], 0x01);
    CcixHeader d;
    ASSERT_EQ(CcixHeader::decode(b, sizeof b, d), "");
    EXPECT_EQ(d.op, CcixOp::Atomic);
    EXPECT_EQ(d.atomic_kind, core::AtomicKind::Compare);
    EXPECT_EQ(d.atomic_op, core::AtomicOp::Umax);
    EXPECT_EQ(d.atomic_size, 4);
    EXPECT_EQ(d.offset, 12);
    EXPECT_EQ(d.tag, 0xbeef);
    EXPECT_EQ(d.address, h.address);

    // Every request and snoop maps to its own opcode and back.
    for (int r = 0; r < core::kCohRequests; ++r) {
        const CcixOp op = request_op(core::CohRequest(r));
        EXPECT_TRUE(is_request(op));
        EXPECT_EQ(coh_request(op), core::CohRequest(r));
        EXPECT_STREQ(to_string(op), core::to_string(core::CohRequest(r)));
    }
    for (int k = 0; k < 4; ++k)
        EXPECT_EQ(snoop_kind(snoop_op(core::SnoopKind(k))), core::SnoopKind(k));
    CcixHeader resp;
    resp.op = CcixOp::CompData;
    resp.length = 64;
    resp.state = LineState::SC;
    uint8_t r[kCcixMaxMessageBytes] = {};
    resp.encode(r);
    ASSERT_EQ(CcixHeader::decode(r, sizeof r, d), "");
    EXPECT_EQ(d.state, LineState::SC);
    EXPECT_EQ(d.atomic_size, 0);
}

TEST(CcixMessage, DecodeRefusesMalformedHeaders) {
    CcixHeader h, d;
    h.op = CcixOp::ReadShared;
    uint8_t b[kCcixMaxMessageBytes] = {};
    h.encode(b);
    EXPECT_NE(CcixHeader::decode(b, 15, d).find("16-byte header"), std::string::npos);
    uint8_t bad[kCcixMaxMessageBytes];
    auto mutate = [&](int at, uint8_t v) {
        std::memcpy(bad, b, sizeof b);
        bad[at] = v;
        return CcixHeader::decode(bad, sizeof bad, d);
    };
    EXPECT_NE(mutate(0, 0x7f).find("unknown CCIX opcode 127"), std::string::npos);
    EXPECT_NE(mutate(0, 0x00).find("unknown"), std::string::npos);
    EXPECT_NE(mutate(1, 12).find("data bytes"), std::string::npos);
    EXPECT_NE(mutate(2, 9).find("line state"), std::string::npos);
    EXPECT_NE(mutate(3, 1).find("atomic attributes"), std::string::npos);
    EXPECT_NE(mutate(4, 64).find("beyond a line"), std::string::npos);
    std::memcpy(bad, b, sizeof b);
    bad[1] = 64;  // announces a line the 16-byte buffer does not hold
    EXPECT_NE(CcixHeader::decode(bad, kCcixHeaderBytes, d).find("buffer holds"), std::string::npos);
    EXPECT_EQ(CcixHeader::decode(bad, sizeof bad, d), "");
}

// ---- config, profiles, ESM ------------------------------------------------------------------

TEST(CcixTransaction, LeasesNestReuseAndComeBackWithoutExtensions) {
    CcixTransactionPool pool;
    uint8_t a_buf[kCcixMaxMessageBytes] = {}, b_buf[8] = {};
    CcixTransaction* outer = nullptr;
    CcixTransaction* inner = nullptr;
    {
        CcixTransactionPool::Lease a(pool, false, a_buf, kCcixMaxMessageBytes,
                                     core::TlpExt::Type::CcixSnoop, 7);
        CcixHeader h;
        h.op = CcixOp::SnpShared;
        h.tag = 5;
        a.attach_message(h);
        outer = &*a;
        EXPECT_TRUE(a->gp.is_read());
        EXPECT_EQ(a->gp.get_address(), kCcixMessageAddress);
        EXPECT_EQ(a->gp.get_data_ptr(), a_buf);
        EXPECT_EQ(a->gp.get_data_length(), kCcixMaxMessageBytes);
        EXPECT_EQ(a->gp.get_extension<core::TlpExt>()->type, core::TlpExt::Type::CcixSnoop);
        EXPECT_EQ(a->gp.get_extension<core::TlpExt>()->vc, 1);
        EXPECT_TRUE(a->gp.get_extension<LinkTlpExt>()->single_tlp);
        EXPECT_EQ(a->gp.get_extension<CcixMessageExt>(), &a->message);
        EXPECT_EQ(a->gp.get_extension<core::RequestExt>()->flow, 7u);  // the trace's request
        CcixHeader got;
        EXPECT_EQ(CcixHeader::decode(a->message.bytes.data(), a->message.length, got), "");
        EXPECT_EQ(a->message.length, kCcixHeaderBytes);
        EXPECT_EQ(got.op, CcixOp::SnpShared);
        EXPECT_EQ(got.tag, 5);
        a->link.error = "left over";
        a->gp.set_response_status(tlm::TLM_OK_RESPONSE);
        {  // a message sent while another is on its way (a write-back inside a request)
            CcixTransactionPool::Lease b(pool, true, b_buf, 8, core::TlpExt::Type::CcixRequest, 0);
            inner = &*b;
            EXPECT_NE(inner, outer);
            EXPECT_TRUE(b->gp.is_write());
            EXPECT_EQ(b->gp.get_extension<CcixMessageExt>(), nullptr);
        }
        EXPECT_EQ(a->gp.get_extension<CcixMessageExt>(), &a->message);  // the inner one's end
    }
    // Ended leases leave no extension behind, and the next lease is the first transaction again,
    // set up afresh.
    EXPECT_EQ(outer->gp.get_extension<core::TlpExt>(), nullptr);
    EXPECT_EQ(outer->gp.get_extension<LinkTlpExt>(), nullptr);
    EXPECT_EQ(outer->gp.get_extension<CcixMessageExt>(), nullptr);
    EXPECT_EQ(outer->gp.get_extension<core::RequestExt>(), nullptr);
    EXPECT_EQ(inner->gp.get_extension<core::TlpExt>(), nullptr);
    CcixTransactionPool::Lease c(pool, true, b_buf, 8, core::TlpExt::Type::CcixRequest, 0);
    EXPECT_EQ(&*c, outer);
    EXPECT_TRUE(c->gp.is_write());
    EXPECT_EQ(c->gp.get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
    EXPECT_TRUE(c->link.error.empty());
    EXPECT_EQ(c->gp.get_extension<CcixMessageExt>(), nullptr);
}

TEST(CcixConfig, ProfilesPresetOneOrTwoCacheLevelsAndMeetTheLocalHitTargets) {
    const CcixConfig u = CcixConfig::preset("u280");
    const CcixConfig v = CcixConfig::preset("vck5000");
    EXPECT_FALSE(u.ra.cache.has_l1());
    EXPECT_TRUE(v.ra.cache.has_l1());
    EXPECT_EQ(v.ra.cache.l2.size_bytes, 1u << 20);  // the CPM's 1 MiB L2 (AM016)
    EXPECT_GT(v.ra.cache.l2.size_bytes, u.ra.cache.l2.size_bytes);
    // CALIBRATION E3: local hit = issue + ATC hit + cache hit; reads add the data's return.
    const double atc = AtcConfig().hit_latency_ns;
    const double u_write = u.ra.issue_ns + atc + u.ra.cache.l2_hit_ns;
    const double v_write = v.ra.issue_ns + atc + v.ra.cache.l1_hit_ns;
    EXPECT_NEAR(u_write, 80, 8);
    EXPECT_NEAR(u_write + u.ra.read_return_ns, 100, 10);
    EXPECT_NEAR(v_write, 150, 15);
    EXPECT_NEAR(v_write + v.ra.read_return_ns, 170, 17);
    EXPECT_EQ(CcixConfig().profile, "u280");
    EXPECT_THROW(CcixConfig::preset("u250"), InputError);
}

TEST(CcixConfig, ExplicitKeysOverrideTheProfilePresetAndTyposAreNamed) {
    core::ConfigSource src;
    src.set("link.ccix.profile", "vck5000", "--set");
    src.set("link.ccix.ra.sc.l2.hit_ns", "55", "--set");
    CcixConfig c;
    core::Params p(&src);
    c.describe(p);
    EXPECT_EQ(c.profile, "vck5000");
    EXPECT_TRUE(c.ra.cache.has_l1());  // from the preset
    EXPECT_DOUBLE_EQ(c.ra.cache.l2_hit_ns, 55.0);
    EXPECT_DOUBLE_EQ(c.ra.issue_ns, CcixConfig::preset("vck5000").ra.issue_ns);
    bool units = true;
    for (const auto& i : p.infos())
        if (i.type == "number" && i.unit.empty()) units = false;
    EXPECT_TRUE(units);

    core::ConfigSource typo;
    typo.set("link.ccix.profile", "vck500", "--set");
    CcixConfig t;
    core::Params q(&typo);
    try {
        t.describe(q);
        FAIL() << "an unknown profile was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("vck5000"), std::string::npos) << e.what();
    }
}

TEST(CcixConfig, ValidateRefusesImpossibleValuesNamingTheKey) {
    CcixConfig c;
    c.esm_rate_gt_s = 22;
    try {
        c.validate();
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("link.ccix.esm.rate_gt_s"), std::string::npos);
    }
    CcixConfig l;
    l.ra.cache.l2.line_bytes = 128;
    try {
        l.validate();
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("link.ccix.ra.sc.l2"), std::string::npos);
    }
}

TEST(CcixConfig, ExtendedSpeedModeIsOnOnlyWhenBothEndsSupportIt) {
    const PcieConfig gen4;
    for (int host = 0; host < 2; ++host) {
        for (int device = 0; device < 2; ++device) {
            CcixConfig c;
            c.esm_host = host;
            c.esm_device = device;
            const EsmNegotiation n = negotiate_esm(c, gen4);
            EXPECT_EQ(n.enabled, host && device);
            EXPECT_DOUBLE_EQ(n.base_gt_s, 16.0);
            EXPECT_DOUBLE_EQ(n.rate_gt_s, host && device ? 25.0 : 16.0);
            EXPECT_EQ(n.reason.empty(), bool(host && device));
        }
    }
    CcixConfig both;
    both.esm_host = both.esm_device = true;
    both.esm_rate_gt_s = 20;
    EXPECT_DOUBLE_EQ(negotiate_esm(both, gen4).rate_gt_s, 20.0);
    PcieConfig gen5;
    gen5.generation = 5;
    const EsmNegotiation n5 = negotiate_esm(both, gen5);
    EXPECT_FALSE(n5.enabled);
    EXPECT_NE(n5.reason.find("PCIe 4.0"), std::string::npos);
    // The link runs at the negotiated rate (its encoding stays 128b/130b); without ESM at Gen4's.
    EsmNegotiation out;
    const PcieConfig after = esm_link_config(both, gen4, &out);
    EXPECT_TRUE(out.enabled);
    EXPECT_DOUBLE_EQ(out.rate_gt_s, 20.0);
    EXPECT_EQ(after.generation, gen4.generation);
    EXPECT_DOUBLE_EQ(after.gigatransfers_per_s(), 20.0);
    EXPECT_DOUBLE_EQ(esm_link_config(CcixConfig(), gen4, nullptr).gigatransfers_per_s(), 16.0);
}

// ---- agents across the link, with a fake home ----------------------------------------------

// A coherent home over a flat memory: grants UC, performs atomics, records requests.
struct FakeHome : core::CoherentHome {
    std::vector<uint8_t> mem = std::vector<uint8_t>(64 * 1024);
    core::Snoopable* agent = nullptr;
    std::vector<core::CohRequest> seen;
    double latency_ns = 50;
    unsigned attach(core::Snoopable& s, const std::string&) override {
        agent = &s;
        return 0;
    }
    Result request(unsigned, core::CohRequest req, uint64_t line, uint8_t* data, sc_time& d,
                   const core::AtomicRequest* a, unsigned off) override {
        seen.push_back(req);
        d += sc_time(latency_ns, SC_NS);
        if (line + 64 > mem.size()) throw std::out_of_range("beyond the fake memory");
        Result r;
        switch (req) {
            case core::CohRequest::ReadShared:
            case core::CohRequest::ReadUnique:
            case core::CohRequest::ReadOnce:
            case core::CohRequest::ReadNoSnoop:
                std::memcpy(data, &mem[line], 64);
                r.granted = LineState::UC;
                break;
            case core::CohRequest::CleanUnique:
                r.granted = LineState::UC;
                break;
            case core::CohRequest::WriteBack:
            case core::CohRequest::WriteUnique:
            case core::CohRequest::WriteNoSnoop:
                std::memcpy(&mem[line], data, 64);
                break;
            case core::CohRequest::Evict:
                break;
            case core::CohRequest::Atomic:
                r.atomic_old = core::apply_atomic(*a, &mem[line + off]);
                break;
        }
        return r;
    }
    uint32_t line_bytes() const override { return 64; }
};

// Host and device ends of the link with both agents, no ATC (physical addresses).
struct Rig {
    core::Services services;
    FakeHome home;
    CcixConfig cfg;
    PcieLink link;
    VcRouter host_router, device_router;
    VcMerge host_merge, device_merge;
    Sink root_port, bar;
    Initiator host_pcie, device_pcie;
    HomeAgent ha;
    RequestAgent ra;
    explicit Rig(const CcixConfig& c = CcixConfig(), bool start = true)
        : cfg(c),
          link("link", PcieConfig(), services),
          host_router("host_router", services),
          device_router("device_router", services),
          host_merge("host_merge", services),
          device_merge("device_merge", services),
          root_port("root_port"),
          bar("bar"),
          host_pcie("host_pcie"),
          device_pcie("device_pcie"),
          ha("ha", cfg, home, services),
          ra("ra", cfg, nullptr, 0, services) {
        link.host_initiator.bind(host_router.target);
        host_router.vc0.bind(root_port.socket);
        host_router.vc1.bind(ha.link_target);
        host_pcie.socket.bind(host_merge.vc0);
        ha.snoop_initiator.bind(host_merge.vc1);
        host_merge.out.bind(link.host_target);
        link.device_initiator.bind(device_router.target);
        device_router.vc0.bind(bar.socket);
        device_router.vc1.bind(ra.snoop_target);
        device_pcie.socket.bind(device_merge.vc0);
        ra.link_initiator.bind(device_merge.vc1);
        device_merge.out.bind(link.device_target);
        for (size_t i = 0; i < home.mem.size(); ++i) home.mem[i] = uint8_t(i * 3 + 1);
        if (start) sc_core::sc_start(SC_ZERO_TIME);  // else the test binds more, then starts
    }
    // The link's time for a non-posted CCIX message: the request up, a completion of `cpl` B down.
    double round_trip_ns(uint32_t cpl) const {
        const PcieConfig c;
        return c.upstream.total_ns() + c.downstream.total_ns() +
               serialisation_ns(c,
                                tlp_wire_bytes(c, Tlp{TlpKind::MemRd, kCcixMessageAddress, cpl})) +
               serialisation_ns(c, tlp_wire_bytes(c, Tlp{TlpKind::CplD, kCcixMessageAddress, cpl}));
    }
    uint64_t count(const std::string& m, const char* n) { return counter(services, m, n); }
};

TEST(CcixAgents, LoadMissCrossesVc1BothWaysThenHitsTheSystemCache) {
    Rig r;
    const auto& ra = r.cfg.ra;
    uint8_t got[8] = {};
    sc_time d = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.load(0, 0x1008, got, 8, d).ok) << r.ra.last_error();
    const double miss = ns(d);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], uint8_t((0x1008 + i) * 3 + 1));
    EXPECT_EQ(r.ra.state(0x1000), LineState::UC);
    const double expect_miss = ra.issue_ns + ra.cache.l2_hit_ns + ra.request_ns +
                               r.round_trip_ns(kCcixMaxMessageBytes) + r.cfg.ha.request_ns +
                               r.home.latency_ns + ra.response_ns + ra.read_return_ns;
    EXPECT_NEAR(miss, expect_miss, 0.01);
    sc_time h = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.load(0, 0x1010, got, 8, h).ok);
    EXPECT_NEAR(ns(h), ra.issue_ns + ra.cache.l2_hit_ns + ra.read_return_ns, 1e-6);
    EXPECT_EQ(r.home.seen, (std::vector<core::CohRequest>{core::CohRequest::ReadShared}));
    EXPECT_EQ(r.count("ra", "requests.ReadShared"), 1u);
    EXPECT_EQ(r.count("ha", "requests.ReadShared"), 1u);
    EXPECT_EQ(r.count("link.upstream", "vc1.tlps"), 1u);    // the request
    EXPECT_EQ(r.count("link.downstream", "vc1.tlps"), 1u);  // its completion
    EXPECT_EQ(r.count("link.upstream", "vc0.tlps"), 0u);
}

TEST(CcixAgents, HomeSnoopReachesTheSystemCacheOverTheLinkAndReturnsDirtyData) {
    Rig r;
    const uint64_t v = 0x1122334455667788ull;
    sc_time d = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.store(0, 0x2040, &v, 8, d).ok) << r.ra.last_error();
    EXPECT_EQ(r.ra.state(0x2040), LineState::UD);
    ASSERT_NE(r.home.agent, nullptr);
    uint8_t line[64] = {};
    EXPECT_TRUE(r.home.agent->peek_dirty(0x2040, line));  // debug path: no state change
    EXPECT_EQ(r.ra.state(0x2040), LineState::UD);
    std::memset(line, 0, sizeof line);
    sc_time t = SC_ZERO_TIME;
    const core::SnoopResponse s = r.home.agent->snoop(core::SnoopKind::Unique, 0x2040, line, t);
    EXPECT_TRUE(s.was_valid);
    EXPECT_TRUE(s.data);
    EXPECT_EQ(s.before, LineState::UD);
    uint64_t seen;
    std::memcpy(&seen, line, 8);
    EXPECT_EQ(seen, v);
    EXPECT_EQ(r.ra.state(0x2040), LineState::I);
    EXPECT_NEAR(
        ns(t), r.cfg.ha.snoop_ns + r.cfg.ra.snoop_ns + r.round_trip_ns(kCcixMaxMessageBytes), 0.01);
    // A snoop of a line the RA does not hold answers without data.
    sc_time t2 = SC_ZERO_TIME;
    const core::SnoopResponse none = r.home.agent->snoop(core::SnoopKind::Shared, 0x3000, line, t2);
    EXPECT_FALSE(none.was_valid);
    EXPECT_FALSE(none.data);
    EXPECT_EQ(r.count("ha", "snoops"), 2u);
    EXPECT_EQ(r.count("ra", "snoop_data"), 1u);
}

TEST(CcixAgents, AtomicIsPerformedAtTheHomeAndReturnsTheOldValue) {
    Rig r;
    uint64_t init = 41;
    std::memcpy(&r.home.mem[0x4008], &init, 8);
    sc_time d = SC_ZERO_TIME;
    RaResult a = r.ra.fetch_add(0, 0x4008, 1, 8, d);
    ASSERT_TRUE(a.ok) << a.error;
    EXPECT_EQ(a.value, 41u);
    RaResult c = r.ra.compare_and_swap(0, 0x4008, 42, 7, 8, d);
    EXPECT_EQ(c.value, 42u);
    uint64_t now;
    std::memcpy(&now, &r.home.mem[0x4008], 8);
    EXPECT_EQ(now, 7u);
    EXPECT_EQ(r.count("ha", "requests.Atomic"), 2u);
    EXPECT_EQ(r.ra.state(0x4000), LineState::I);  // far: nothing cached on the device
}

TEST(CcixAgents, EvictedDirtyLinesAreWrittenBackAsPostedMessages) {
    CcixConfig c;
    c.ra.cache.l2 = core::CacheGeometry{2 * 64, 2, 64};  // one set of two lines
    Rig r(c);
    sc_time d = SC_ZERO_TIME;
    for (uint64_t i = 0; i < 4; ++i) {
        const uint64_t v = 100 + i;
        ASSERT_TRUE(r.ra.store(0, 0x8000 + 64 * i, &v, 8, d).ok);
    }
    EXPECT_EQ(r.count("ra", "requests.WriteBack"), 2u);
    EXPECT_EQ(r.count("ha", "requests.WriteBack"), 2u);
    for (uint64_t i = 0; i < 2; ++i) {
        uint64_t v;
        std::memcpy(&v, &r.home.mem[0x8000 + 64 * i], 8);
        EXPECT_EQ(v, 100 + i);
    }
    EXPECT_GE(r.count("link.upstream", "vc1.tlps"), 6u);  // 4 ReadUnique + 2 WriteBack
}

// The watch the SSD bridge keeps on its submission queues' lines (coherent queues): a snoop
// that takes the line away, or its eviction, calls the watcher once, with the time; a shared
// snoop (the line stays) and an unwatched line do not.
TEST(CcixAgents, AWatchedLineCallsItsWatcherOnceWhenASnoopTakesItOrItIsEvicted) {
    CcixConfig c;
    c.ra.cache.l2 = core::CacheGeometry{2 * 64, 2, 64};  // one set of two lines
    Rig r(c);
    uint8_t line[64];
    sc_time d = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.read_physical(0x1000, line, 64, d).ok) << r.ra.last_error();
    std::vector<sc_time> woke;
    auto watcher = [&](const sc_time& at) { woke.push_back(at); };
    r.ra.watch(0x1010, watcher);  // any byte of the line names it
    sc_time t = SC_ZERO_TIME;
    r.home.agent->snoop(core::SnoopKind::Shared, 0x1000, line, t);
    EXPECT_TRUE(woke.empty());
    sc_time u = SC_ZERO_TIME;
    r.home.agent->snoop(core::SnoopKind::Unique, 0x1000, line, u);
    ASSERT_EQ(woke.size(), 1u);
    // At the snoop's arrival at the RA: the home agent's part and the link one way, before the
    // RA's handling and the answer's way back.
    EXPECT_GT(woke[0], SC_ZERO_TIME);
    EXPECT_LT(woke[0], u);
    sc_time again = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.read_physical(0x1000, line, 64, again).ok);
    r.home.agent->snoop(core::SnoopKind::Invalidate, 0x1000, line, again);
    EXPECT_EQ(woke.size(), 1u);  // once: the watch went with the first
    // Unwatched: nothing.
    ASSERT_TRUE(r.ra.read_physical(0x1000, line, 64, again).ok);
    r.ra.watch(0x1000, watcher);
    r.ra.unwatch(0x1000);
    r.home.agent->snoop(core::SnoopKind::Unique, 0x1000, line, again);
    EXPECT_EQ(woke.size(), 1u);
    // Evicted: two more lines of the set push the watched one out.
    ASSERT_TRUE(r.ra.read_physical(0x1000, line, 64, again).ok);
    r.ra.watch(0x1000, watcher);
    ASSERT_TRUE(r.ra.read_physical(0x2000, line, 64, again).ok);
    EXPECT_EQ(woke.size(), 1u);
    ASSERT_TRUE(r.ra.read_physical(0x3000, line, 64, again).ok);
    EXPECT_EQ(woke.size(), 2u);
    EXPECT_EQ(r.ra.state(0x1000), LineState::I);
}

// Reads that do not allocate (the bridge's payloads): a line the system cache lacks is a
// ReadOnce and stays out; a line it holds is a hit.
TEST(CcixAgents, ANonAllocatingReadIsAReadOnceAndKeepsNothing) {
    Rig r;
    uint8_t got[100];
    sc_time d = SC_ZERO_TIME;
    ASSERT_TRUE(r.ra.read_physical(0x5020, got, 100, d, false).ok) << r.ra.last_error();
    for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], uint8_t((0x5020 + i) * 3 + 1)) << i;
    // Three lines: 0x5020..0x5083.
    EXPECT_EQ(r.home.seen, std::vector<core::CohRequest>(3, core::CohRequest::ReadOnce));
    EXPECT_EQ(r.ra.state(0x5000), LineState::I);
    EXPECT_EQ(r.ra.state(0x5040), LineState::I);
    ASSERT_TRUE(r.ra.read_physical(0x6000, got, 8, d).ok);  // allocates
    r.home.seen.clear();
    ASSERT_TRUE(r.ra.read_physical(0x6000, got, 8, d, false).ok);
    EXPECT_TRUE(r.home.seen.empty());
}

TEST(CcixAgents, AcceleratorPortIsLoadAndStoreAsTlmTransactions) {
    Rig r(CcixConfig(), false);
    Initiator ctg("ctg");
    ctg.socket.bind(r.ra.accel_target);
    sc_core::sc_start(SC_ZERO_TIME);
    uint8_t w[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8] = {};
    EXPECT_EQ(ctg.send(0x3000, -1, true, w, 8), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(ctg.send(0x3000, -1, false, got, 8), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(std::memcmp(w, got, 8), 0);
    EXPECT_EQ(r.ra.state(0x3000), LineState::UD);
    EXPECT_EQ(r.count("ra", "stores"), 1u);
    uint8_t big[128] = {};
    EXPECT_EQ(ctg.send(0x3000, -1, false, big, 128), tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_NE(r.ra.last_error().find("1 to 64"), std::string::npos) << r.ra.last_error();
}

TEST(CcixAgents, RequestAgentRefusesBadAccessesAndCountsThem) {
    Rig r;
    uint8_t b[65] = {};
    sc_time d = SC_ZERO_TIME;
    RaResult zero = r.ra.load(0, 0x100, b, 0, d);
    EXPECT_FALSE(zero.ok);
    EXPECT_NE(zero.error.find("1 to 64"), std::string::npos) << zero.error;
    EXPECT_FALSE(r.ra.store(0, 0x100, b, 65, d).ok);
    RaResult mis = r.ra.fetch_add(0, 0x102, 1, 4, d);
    EXPECT_FALSE(mis.ok);
    EXPECT_NE(mis.error.find("naturally aligned"), std::string::npos) << mis.error;
    RaResult size3 = r.ra.atomic(
        0, 0x100, core::AtomicRequest{core::AtomicKind::Swap, core::AtomicOp::Add, 3, 0, 0}, d);
    EXPECT_FALSE(size3.ok);
    EXPECT_EQ(r.count("ra", "refused"), 4u);
    EXPECT_EQ(ns(d), 0.0);  // refused before doing anything
    // An address beyond the home's memory: the home's error comes back to the caller.
    RaResult far = r.ra.load(0, 1 << 20, b, 8, d);
    EXPECT_FALSE(far.ok);
    EXPECT_NE(far.error.find("ReadShared"), std::string::npos) << far.error;
    EXPECT_EQ(r.count("ra", "errors"), 1u);
    EXPECT_EQ(r.count("ha", "errors"), 1u);
    EXPECT_NE(r.ha.last_error().find("beyond"), std::string::npos) << r.ha.last_error();
}

TEST(CcixAgents, HomeAgentRefusesUnknownAndMalformedMessages) {
    core::Services s;
    FakeHome home;
    CcixConfig cfg;
    Initiator in("in");
    HomeAgent ha("ha", cfg, home, s);
    Sink down("down");
    in.socket.bind(ha.link_target);
    ha.snoop_initiator.bind(down.socket);
    sc_core::sc_start(SC_ZERO_TIME);
    uint8_t msg[kCcixMaxMessageBytes] = {};
    // An unknown opcode as a posted write.
    msg[0] = 0x7e;
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, true, msg, kCcixHeaderBytes),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_NE(ha.last_error().find("unknown CCIX opcode"), std::string::npos) << ha.last_error();
    // A read request sent as a posted write.
    CcixHeader h;
    h.op = CcixOp::ReadShared;
    h.encode(msg);
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, true, msg, kCcixHeaderBytes),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_NE(ha.last_error().find("must be a read"), std::string::npos) << ha.last_error();
    // A read without its request message.
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, false, msg, kCcixMaxMessageBytes),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    // A misaligned atomic in a well-formed message.
    CcixMessageExt m;
    CcixHeader a;
    a.op = CcixOp::Atomic;
    a.atomic_kind = core::AtomicKind::Swap;
    a.atomic_size = 8;
    a.offset = 4;
    a.length = 8;
    a.address = 0x40;
    a.encode(m.bytes.data());
    m.length = kCcixHeaderBytes + 8;
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, false, msg, kCcixHeaderBytes, &m),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_NE(ha.last_error().find("naturally aligned"), std::string::npos) << ha.last_error();
    // A snoop is not something a home agent takes.
    CcixHeader snp;
    snp.op = CcixOp::SnpShared;
    snp.encode(m.bytes.data());
    m.length = kCcixHeaderBytes;
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, false, msg, kCcixMaxMessageBytes, &m),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(counter(s, "ha", "errors"), 5u);
    EXPECT_TRUE(home.seen.empty());
}

TEST(CcixAgents, RequestAgentRefusesMessagesOtherThanSnoopsOnItsSnoopPort) {
    core::Services s;
    CcixConfig cfg;
    FakeHome home;
    Initiator in("in");
    RequestAgent ra("ra", cfg, nullptr, 0, s);
    Sink up("up");
    in.socket.bind(ra.snoop_target);
    ra.link_initiator.bind(up.socket);
    sc_core::sc_start(SC_ZERO_TIME);
    uint8_t buf[kCcixMaxMessageBytes] = {};
    CcixMessageExt m;
    CcixHeader h;
    h.op = CcixOp::ReadUnique;
    h.encode(m.bytes.data());
    m.length = kCcixHeaderBytes;
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, false, buf, kCcixMaxMessageBytes, &m),
              tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_NE(ra.last_error().find("not a snoop"), std::string::npos) << ra.last_error();
    EXPECT_EQ(in.send(kCcixMessageAddress, 1, false, buf, kCcixMaxMessageBytes),
              tlm::TLM_GENERIC_ERROR_RESPONSE);  // no message at all
    EXPECT_NE(ra.last_error().find("without a CCIX message"), std::string::npos);
    EXPECT_EQ(counter(s, "ra", "errors"), 2u);
    (void)home;
}

}  // namespace
}  // namespace canopy::link
