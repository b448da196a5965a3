#include "link/pcie_config.hpp"

#include <string>

#include "core/error.hpp"

namespace canopy::link {

void LayerLatency::describe(core::Params& p) {
    p("transaction_ns", transaction_ns, "ns", "transaction-layer pipeline, TX + RX [assumed]", 0.0,
      1e6)("data_link_ns", data_link_ns, "ns", "data-link-layer pipeline, TX + RX [assumed]", 0.0,
           1e6)("physical_ns", physical_ns, "ns",
                "physical layer incl. SerDes and flight, TX + RX [assumed]", 0.0, 1e6);
}

void Credits::describe(core::Params& p) {
    p("posted_header", posted_header, "", "posted header credits, 0 = infinite [assumed]", 0, 4096)(
        "posted_data", posted_data, "16 B", "posted data credits, 0 = infinite [assumed]", 0,
        65536)("non_posted_header", non_posted_header, "",
               "non-posted header credits, 0 = infinite [assumed]", 0,
               4096)("non_posted_data", non_posted_data, "16 B",
                     "non-posted data credits, 0 = infinite [assumed]", 0,
                     65536)("completion_header", completion_header, "",
                            "completion header credits, 0 = infinite [PCIe spec 2.6.1]", 0, 4096)(
        "completion_data", completion_data, "16 B",
        "completion data credits, 0 = infinite [PCIe spec 2.6.1]", 0, 65536);
}

void PcieConfig::describe(core::Params& p) {
    core::Params l = p.scope("link").scope("pcie");
    l("generation", generation, "", "PCIe generation 1..6 [CCIX paper III: PCIe 4.0]", 1, 6)(
        "lanes", lanes, "", "link width: 1, 2, 4, 8 or 16 [assumed x8: U280 PCIE4C Gen4 x8]", 1,
        16)("max_payload_bytes", max_payload_bytes, "B",
            "max payload size MPS, power of two [assumed]", 128,
            4096)("max_read_request_bytes", max_read_request_bytes, "B",
                  "max read request size MRRS, power of two [PCIe spec default]", 128, 4096)(
        "read_completion_boundary_bytes", read_completion_boundary_bytes, "B",
        "read completion boundary RCB, 64 or 128 [PCIe spec: root port 64]", 64,
        128)("completion_per_rcb", completion_per_rcb,
             "completer returns one completion per RCB block (else the largest legal ones)")(
        "ecrc", ecrc, "append the 4-byte end-to-end CRC to every TLP")(
        "tlps_per_ack", tlps_per_ack, "", "TLPs acknowledged per Ack DLLP, 0 = none [assumed]", 0,
        1024)("tlps_per_update_fc", tlps_per_update_fc, "",
              "TLPs per UpdateFC DLLP, 0 = none [assumed]", 0,
              1024)("max_transfer_bytes", max_transfer_bytes, "B",
                    "largest transfer one transaction may ask for [assumed]", 1, 1u << 30);
    core::Params d = l.scope("downstream");
    downstream.describe(d);
    core::Params u = l.scope("upstream");
    upstream.describe(u);
    core::Params c = l.scope("credits");
    credits.describe(c);
}

static bool power_of_two(uint32_t v) { return v && !(v & (v - 1)); }

void PcieConfig::validate() const {
    auto fail = [](const char* key, const std::string& msg) {
        throw InputError("config", std::string("link.pcie.") + key, msg);
    };
    if (generation < 1 || generation > 6)
        fail("generation", "must be 1..6, got " + std::to_string(generation));
    if (!power_of_two(lanes) || lanes > 16)
        fail("lanes", "must be 1, 2, 4, 8 or 16, got " + std::to_string(lanes));
    if (!power_of_two(max_payload_bytes) || max_payload_bytes < 128 || max_payload_bytes > 4096)
        fail("max_payload_bytes",
             "must be a power of two in 128..4096, got " + std::to_string(max_payload_bytes));
    if (!power_of_two(max_read_request_bytes) || max_read_request_bytes < 128 ||
        max_read_request_bytes > 4096)
        fail("max_read_request_bytes",
             "must be a power of two in 128..4096, got " + std::to_string(max_read_request_bytes));
    if (read_completion_boundary_bytes != 64 && read_completion_boundary_bytes != 128)
        fail("read_completion_boundary_bytes",
             "must be 64 or 128, got " + std::to_string(read_completion_boundary_bytes));
}

double PcieConfig::gigatransfers_per_s() const {
    if (rate_override_gt_s > 0) return rate_override_gt_s;
    static const double kRate[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    return kRate[(generation >= 1 && generation <= 6 ? generation : 4) - 1];
}

double PcieConfig::wire_bits_per_byte() const {
    if (generation <= 2) return 10.0;              // 8b/10b
    if (!flit_mode()) return 8.0 * 130.0 / 128.0;  // 128b/130b
    return 8.0 * 256.0 / 236.0;                    // PAM4 FLIT: 236 TLP bytes per 256 B flit
}

}  // namespace canopy::link
