// Bytes on the wire and serialisation time of PCIe transfers (models/link/tlp.hpp), checked
// against values worked out by hand from the PCIe Base Specification's packet formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "link/pcie_config.hpp"
#include "link/tlp.hpp"

namespace canopy::link {
namespace {

constexpr uint64_t kBase = 0x1000'0000;  // 4 KiB aligned, below 4 GiB: 3DW headers

// Defaults: Gen4 x8, MPS 256, MRRS 512, RCB 64 (largest legal completions), no ECRC, one Ack
// and one UpdateFC per 4 TLPs. Per TLP on a Gen4 wire: STP token 2 + sequence number 2 +
// header 12 (3DW) + LCRC 4 = 20 B plus the payload. A DLLP is 8 B; k TLPs are answered by
// ceil(k/4) Acks + ceil(k/4) UpdateFCs = 16 x ceil(k/4) B the other way.
struct ReadRow {
    uint64_t bytes;
    uint64_t requests;           // MemRd TLPs: ceil(N / 512)
    uint64_t completions;        // CplD TLPs: ceil(N / 256) (512-B requests come back as 2 x 256)
    uint64_t request_direction;  // 20 x R + 16 x ceil(C/4)
    uint64_t completion_direction;  // (20 x C + N) + 16 x ceil(R/4)
};
const std::vector<ReadRow> kReads = {
    {32, 1, 1, 20 + 16, 20 + 32 + 16},                 // 36, 68
    {64, 1, 1, 20 + 16, 20 + 64 + 16},                 // 36, 100
    {128, 1, 1, 20 + 16, 20 + 128 + 16},               // 36, 164
    {256, 1, 1, 20 + 16, 20 + 256 + 16},               // 36, 292
    {512, 1, 2, 20 + 16, 40 + 512 + 16},               // 36, 568
    {1024, 2, 4, 40 + 16, 80 + 1024 + 16},             // 56, 1120
    {2048, 4, 8, 80 + 32, 160 + 2048 + 16},            // 112, 2224
    {4096, 8, 16, 160 + 64, 320 + 4096 + 32},          // 224, 4448
    {8192, 16, 32, 320 + 128, 640 + 8192 + 64},        // 448, 8896
    {16384, 32, 64, 640 + 256, 1280 + 16384 + 128},    // 896, 17792
    {32768, 64, 128, 1280 + 512, 2560 + 32768 + 256},  // 1792, 35584
};

struct WriteRow {
    uint64_t bytes;
    uint64_t tlps;     // MemWr TLPs: ceil(N / 256)
    uint64_t forward;  // 20 x W + N
    uint64_t reverse;  // DLLPs: 16 x ceil(W/4)
};
const std::vector<WriteRow> kWrites = {
    {32, 1, 20 + 32, 16},
    {64, 1, 20 + 64, 16},  // 52, 84
    {128, 1, 20 + 128, 16},
    {256, 1, 20 + 256, 16},  // 148, 276
    {512, 2, 40 + 512, 16},
    {1024, 4, 80 + 1024, 16},  // 552, 1104
    {2048, 8, 160 + 2048, 32},
    {4096, 16, 320 + 4096, 64},  // 2208, 4416
    {8192, 32, 640 + 8192, 128},
    {16384, 64, 1280 + 16384, 256},   // 8832, 17664
    {32768, 128, 2560 + 32768, 512},  // 35328
};

TEST(LinkWire, ReadsAtGen4) {
    const PcieConfig c;
    for (const ReadRow& r : kReads) {
        SCOPED_TRACE(r.bytes);
        const TransferWire w = transfer_wire(c, false, kBase, r.bytes);
        EXPECT_EQ(w.requests.tlps, r.requests);
        EXPECT_EQ(w.completions.tlps, r.completions);
        EXPECT_EQ(w.completions.payload_bytes, r.bytes);
        EXPECT_EQ(w.request_direction_bytes(), r.request_direction);
        EXPECT_EQ(w.completion_direction_bytes(), r.completion_direction);
    }
}

TEST(LinkWire, WritesAtGen4) {
    const PcieConfig c;
    for (const WriteRow& r : kWrites) {
        SCOPED_TRACE(r.bytes);
        const TransferWire w = transfer_wire(c, true, kBase, r.bytes);
        EXPECT_EQ(w.requests.tlps, r.tlps);
        EXPECT_EQ(w.completions.tlps, 0u);
        EXPECT_EQ(w.request_direction_bytes(), r.forward);
        EXPECT_EQ(w.completion_direction_bytes(), r.reverse);
    }
}

TEST(LinkWire, HeaderFramingAndCrcPerTlp) {
    PcieConfig c;
    // MemRd below 4 GiB: 2 + 2 + 12 + 4 = 20; at or above 4 GiB a 4DW header: 24.
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemRd, 0xFFFF'F000, 64}), 20u);
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemRd, 0x1'0000'0000, 64}), 24u);
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemWr, 0x1'0000'0000, 64}), 24u + 64);
    // Completions are 3DW whatever the address; an error completion carries no data.
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::CplD, 0x1'0000'0000, 64}), 20u + 64);
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::Cpl, 0, 0}), 20u);
    // ATS translation request: 4DW, no data; its completion one 8-B translation.
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::AtsRequest, 0x1000, 8}), 24u);
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::AtsCompletion, 0x1000, 8}), 28u);
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::Msg, 0, 0}), 24u);
    // Payload in whole DWs: 64 B from byte 2 touch 17 DWs = 68 B.
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemWr, kBase + 2, 64}), 20u + 68);
    c.ecrc = true;  // + 4 B digest
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemWr, kBase, 64}), 24u + 64);
    c.ecrc = false;
    c.generation = 2;  // STP 1 + sequence 2 + header 12 + LCRC 4 + END 1: also 20
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemWr, kBase, 64}), 20u + 64);
    EXPECT_EQ(dllp_wire_bytes(c), 8u);
    c.generation = 6;  // FLIT mode: header and payload only, DLLPs ride in the flit
    EXPECT_EQ(tlp_wire_bytes(c, Tlp{TlpKind::MemWr, kBase, 256}), 12u + 256);
    EXPECT_EQ(dllp_wire_bytes(c), 0u);
    EXPECT_EQ(transfer_wire(c, true, kBase, 4096).completion_direction_bytes(), 0u);
}

TEST(LinkWire, DllpRatios) {
    PcieConfig c;
    EXPECT_EQ(dllps_for(c, 1), 2u);  // one Ack + one UpdateFC
    EXPECT_EQ(dllps_for(c, 5), 4u);  // ceil(5/4) each
    c.tlps_per_ack = 1;
    c.tlps_per_update_fc = 0;
    EXPECT_EQ(dllps_for(c, 5), 5u);
    c.tlps_per_ack = 0;
    EXPECT_EQ(dllps_for(c, 5), 0u);
}

TEST(LinkWire, SplitAtAlignedBoundariesNeverAcross4KiB) {
    const PcieConfig c;
    // A 512-B write from 0x...F80: 128 B up to the 256-B-aligned 0x1000, then 256, then 128.
    const auto w = split_requests(c, true, kBase + 0xF80, 512);
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].address, kBase + 0xF80);
    EXPECT_EQ(w[0].data_bytes, 128u);
    EXPECT_EQ(w[1].address, kBase + 0x1000);
    EXPECT_EQ(w[1].data_bytes, 256u);
    EXPECT_EQ(w[2].data_bytes, 128u);
    // A 600-B read from 0x...F00: 256 B to the 4 KiB boundary, then 344.
    const auto r = split_requests(c, false, kBase + 0xF00, 600);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].data_bytes, 256u);
    EXPECT_EQ(r[1].address, kBase + 0x1000);
    EXPECT_EQ(r[1].data_bytes, 344u);
    for (uint64_t start : {0xE04ull, 0xFFCull, 0x123ull})
        for (const Tlp& t : split_requests(c, false, kBase + start, 9000))
            EXPECT_LE(t.address % kPageBytes + t.data_bytes, kPageBytes) << std::hex << t.address;
}

TEST(LinkWire, CompletionsByRcb) {
    PcieConfig c;
    // 512 B from 32 B past a 64-B boundary: 224 B (ends on the RCB boundary 0x100), 256, 32.
    const Tlp req{TlpKind::MemRd, kBase + 0x20, 512};
    auto cpl = split_completions(c, req);
    ASSERT_EQ(cpl.size(), 3u);
    EXPECT_EQ(cpl[0].data_bytes, 224u);
    EXPECT_EQ(cpl[1].data_bytes, 256u);
    EXPECT_EQ(cpl[2].data_bytes, 32u);
    c.completion_per_rcb = true;  // 32 + 7 x 64 + 32
    cpl = split_completions(c, req);
    ASSERT_EQ(cpl.size(), 9u);
    EXPECT_EQ(cpl[0].data_bytes, 32u);
    EXPECT_EQ(cpl[1].data_bytes, 64u);
    EXPECT_EQ(cpl[8].data_bytes, 32u);
    // 4 KiB read with per-RCB completions: 64 CplD of 64 B = 64 x 84 B.
    EXPECT_EQ(transfer_wire(c, false, kBase, 4096).completions.tlp_bytes, 64u * 84);
}

TEST(LinkRate, Generations) {
    PcieConfig c;
    c.lanes = 1;
    struct Row {
        uint32_t gen;
        double gt, bits_per_byte, ns_per_byte;
    };
    const Row rows[] = {
        {1, 2.5, 10.0, 4.0},                               // 8b/10b: 250 MB/s per lane
        {2, 5.0, 10.0, 2.0},                               // 500 MB/s
        {3, 8.0, 8.125, 1.015625},                         // 128b/130b: 984.6 MB/s
        {4, 16.0, 8.125, 0.5078125},                       // 1.969 GB/s (paper: 1.97 GB/s per lane)
        {5, 32.0, 8.125, 0.25390625},                      // 3.938 GB/s (paper: 3.94 GB/s)
        {6, 64.0, 8.0 * 256 / 236, 8.0 * 256 / 236 / 64},  // 236 TLP B per 256-B flit: 7.375 GB/s
    };
    for (const Row& r : rows) {
        SCOPED_TRACE(r.gen);
        c.generation = r.gen;
        EXPECT_DOUBLE_EQ(c.gigatransfers_per_s(), r.gt);
        EXPECT_DOUBLE_EQ(c.wire_bits_per_byte(), r.bits_per_byte);
        EXPECT_DOUBLE_EQ(c.ns_per_byte(), r.ns_per_byte);
        EXPECT_EQ(c.flit_mode(), r.gen == 6);
    }
    c.generation = 6;
    EXPECT_NEAR(1.0 / c.ns_per_byte(), 7.375, 1e-12);  // GB/s per lane
}

TEST(LinkRate, SerialisationTime) {
    PcieConfig c;  // Gen4 x8: 8.125 / (8 x 16) = 0.0634765625 ns per byte
    EXPECT_DOUBLE_EQ(c.ns_per_byte(), 0.0634765625);
    EXPECT_DOUBLE_EQ(serialisation_ns(c, 4448), 282.34375);   // a 4 KiB read's completions
    EXPECT_DOUBLE_EQ(serialisation_ns(c, 276), 17.51953125);  // one 256-B CplD or MemWr
    // Rounded to the kernel's 1 ps: 17.520 ns.
    EXPECT_EQ(serialisation(c, 276), sc_core::sc_time(17520, sc_core::SC_PS));
    c.lanes = 16;  // 31.5 GB/s: 4416 B in 140.15625 ns
    EXPECT_DOUBLE_EQ(serialisation_ns(c, 4416), 140.15625);
    c.generation = 1;
    c.lanes = 1;
    EXPECT_DOUBLE_EQ(serialisation_ns(c, 100), 400.0);
}

TEST(LinkConfig, DescribeAndValidate) {
    PcieConfig c;
    core::Params p;
    c.describe(p);
    const auto keys = p.keys();
    for (const char* k : {"link.pcie.generation", "link.pcie.lanes", "link.pcie.max_payload_bytes",
                          "link.pcie.downstream.physical_ns", "link.pcie.credits.posted_data"})
        EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
    EXPECT_NO_THROW(c.validate());
    // Values come from the config source under link.pcie.
    core::ConfigSource src;
    src.set("link.pcie.lanes=16");
    src.set("link.pcie.upstream.physical_ns=100");
    core::Params loaded(&src);
    c.describe(loaded);
    EXPECT_EQ(c.lanes, 16u);
    EXPECT_DOUBLE_EQ(c.upstream.physical_ns, 100.0);
    EXPECT_DOUBLE_EQ(c.upstream.total_ns(), 200.0);
    c.max_payload_bytes = 384;
    EXPECT_THROW(c.validate(), InputError);
    c = PcieConfig();
    c.lanes = 3;
    EXPECT_THROW(c.validate(), InputError);
    c = PcieConfig();
    c.read_completion_boundary_bytes = 96;
    EXPECT_THROW(c.validate(), InputError);
}

// CCIX Extended Speed Mode runs the same 128b/130b lanes at 25 GT/s instead of Gen4's 16.
TEST(LinkWire, RateOverrideScalesSerialisation) {
    PcieConfig gen4, esm;
    esm.rate_override_gt_s = 25.0;
    EXPECT_DOUBLE_EQ(esm.gigatransfers_per_s(), 25.0);
    EXPECT_DOUBLE_EQ(serialisation_ns(esm, 1000) / serialisation_ns(gen4, 1000), 16.0 / 25.0);
    EXPECT_DOUBLE_EQ(esm.wire_bits_per_byte(), gen4.wire_bits_per_byte());
}
}  // namespace
}  // namespace canopy::link
