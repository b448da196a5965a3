// Parameters of the PCIe link between the host (root port, "upstream" end) and the device
// (endpoint, "downstream" end). Defaults follow the CCIX-vs-PCIe paper's set-up (seeds/003,
// Sections II-III: Arm N1-SDP host with an Alveo U280 or VCK5000 on PCIe 4.0 at 16 GT/s) and the
// PCI Express Base Specification (encodings, framing, credit units); values neither gives are
// marked "assumed" with the reason.
//
// Line rate and encoding per generation (PCIe Base Spec 6.0, Section 4.2):
//   Gen1 2.5 GT/s 8b/10b, Gen2 5 GT/s 8b/10b          10 wire bits per byte
//   Gen3 8, Gen4 16, Gen5 32 GT/s 128b/130b            8.125 wire bits per byte
//   Gen6 64 GT/s PAM4 (32 GBd x 2 bits), FLIT mode     each 256 B flit carries 236 B of TLPs,
//     6 B of data-link payload (Acks and UpdateFCs travel there), 8 B CRC and 6 B FEC. We charge
//     TLP bytes at 8 x 256/236 wire bits per byte and DLLPs nothing; partly filled flits are not
//     padded (under load the transmitter packs TLPs across flits). The often quoted 242/256 counts
//     the 6 DLP bytes as payload too.
#pragma once

#include <cstdint>

#include "core/config.hpp"

namespace canopy::link {

// Pipeline latency of one traversal in one direction, per layer: the transmitter's and the
// receiver's part of the layer together. Serialisation on the wire is separate (it depends on
// the size). The sum is added once per TLP traversal. Assumed 180 ns one way: a 64-B DMA read
// then spends about 367 ns on the link at Gen4 x8, leaving the rest of the paper's PCIe-DMA
// small-read latency (CCIX's ~700 ns for a 64-B read, E2, is ~33% below it, E1) to host memory,
// the DMA engine and the device logic. To be calibrated by the E1 experiment.
struct LayerLatency {
    double transaction_ns = 60.0;  // assumed: TL queues, header build/decode in the controllers
    double data_link_ns = 40.0;    // assumed: sequence number, LCRC, replay buffer, both ends
    double physical_ns = 80.0;     // assumed: 128b/130b, scrambler, SerDes, elastic buffer, flight
    double total_ns() const { return transaction_ns + data_link_ns + physical_ns; }
    void describe(core::Params& p);
};

// Flow-control credits the receiver of each direction advertises (PCIe Base Spec 2.6): one
// header credit per TLP, one data credit per 16 bytes of payload; 0 means infinite (root ports
// and endpoints must advertise infinite completion credits).
struct Credits {
    uint32_t posted_header = 64;      // assumed: typical endpoint/root-port advertisement
    uint32_t posted_data = 1024;      // assumed: 16 KiB of posted data
    uint32_t non_posted_header = 64;  // assumed
    uint32_t non_posted_data = 64;    // assumed (only non-posted requests with data use it)
    uint32_t completion_header = 0;   // spec: infinite at endpoints and root ports
    uint32_t completion_data = 0;     // spec: infinite at endpoints and root ports
    static constexpr uint32_t kBytesPerDataCredit = 16;  // spec: one credit = 4 DW
    void describe(core::Params& p);
};

struct PcieConfig {
    uint32_t generation = 4;  // paper Section III: "PCIe 4.0 attachment", 16 GT/s
    // Assumed x8: the paper's text gives no width (its Table I is missing from the seed); the
    // U280's CCIX-capable PCIE4C block runs Gen4 at most x8 (Xilinx PG213), so the N1-SDP's x16
    // CCIX slot trains down to x8.
    uint32_t lanes = 8;
    uint32_t max_payload_bytes = 256;              // assumed: a common root-port MPS
    uint32_t max_read_request_bytes = 512;         // spec default MRRS
    uint32_t read_completion_boundary_bytes = 64;  // spec: root ports 64 (endpoints 64 or 128)
    // false: a completer returns the largest legal completions (at most MPS, ending on RCB
    // boundaries); true: one completion per RCB block, as many root complexes do.
    bool completion_per_rcb = false;
    bool ecrc = false;  // end-to-end CRC (TLP digest, 4 B per TLP); optional, usually off
    // Data-link overhead: one Ack DLLP per `tlps_per_ack` TLPs received and one UpdateFC per
    // `tlps_per_update_fc`, sent back in the other direction; 0 disables. Assumed: coalescing
    // over about four TLPs, as the spec's AckNak latency timer allows at these payload sizes.
    uint32_t tlps_per_ack = 4;
    uint32_t tlps_per_update_fc = 4;
    // The largest transfer one transaction may ask for; the link splits it into TLPs. Assumed:
    // bounds a single b_transport to what a DMA descriptor typically moves.
    uint32_t max_transfer_bytes = 1u << 20;
    // Per-lane rate other than the generation's, 0: none. Not a user key: CCIX Extended Speed
    // Mode sets it when both ends negotiate it (link/ccix_config.hpp, 16 -> 25 GT/s).
    double rate_override_gt_s = 0;
    LayerLatency downstream;  // host -> device
    LayerLatency upstream;    // device -> host
    Credits credits;          // advertised by the receiver of each direction (same both ways)

    void describe(core::Params& p);  // under "link.pcie."
    // Checks what ranges cannot (powers of two, allowed lane counts); throws InputError.
    void validate() const;

    bool flit_mode() const { return generation >= 6; }
    double gigatransfers_per_s() const;  // per lane
    double wire_bits_per_byte() const;   // encoding overhead included
    // Serialisation time of one byte over all lanes.
    double ns_per_byte() const { return wire_bits_per_byte() / (lanes * gigatransfers_per_s()); }
};

}  // namespace canopy::link
