// PCIe transaction-layer packets and what they cost on the wire (PCIe Base Spec 6.0, Sections
// 2.2 and 4.2; the CCIX-vs-PCIe paper, seeds/003 Section II-a, for why small transfers pay so
// much: every TLP carries 20-28 bytes of header, framing and CRC whatever its payload).
//
// Per TLP, non-FLIT (Gen1-5):
//   framing   2 B  Gen1/2: STP and END symbols; Gen3-5: the first two bytes of the 4-byte STP
//                  token (its other two bytes are the sequence number, counted below)
//   sequence  2 B  12-bit sequence number added by the data-link layer
//   header   12 B  3DW: memory requests below 4 GiB, completions; 16 B 4DW: memory requests at
//                  or above 4 GiB (the spec forbids 4DW below), ATS translation requests, messages
//   payload        the DW-aligned span of the data (byte enables trim it, the wire still carries
//                  whole DWs)
//   ECRC      4 B  when enabled
//   LCRC      4 B
// FLIT mode (Gen6): header, payload and ECRC only; sequence numbers and CRC live in the flit and
// the encoding factor (PcieConfig::wire_bits_per_byte) accounts for them.
// DLLPs (Ack, UpdateFC) are 6 bytes plus 2 of framing (SDP+END, or the 2-byte SDP token) in the
// direction opposite to the TLPs they answer; in FLIT mode they ride in the flit's DLP bytes.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "core/payload.hpp"
#include "core/sim_time.hpp"
#include "link/pcie_config.hpp"

namespace canopy::link {

enum class TlpKind : uint8_t {
    MemRd,          // memory read request, no data
    MemWr,          // memory write request (posted), with data
    Cpl,            // completion without data (e.g. an error status)
    CplD,           // completion with data
    AtsRequest,     // ATS translation request: a MemRd with AT = 01b, 64-bit address
    AtsCompletion,  // ATS translation completion: CplD with 8 B per translation
    Msg,            // message, no data
    MsgD            // message with data
};
const char* to_string(TlpKind k);

constexpr uint32_t kDwBytes = 4;
constexpr uint64_t kPageBytes = 4096;  // no TLP may cross a 4 KiB boundary (spec 2.2.7)

uint32_t header_bytes(TlpKind kind, uint64_t address);
uint32_t framing_bytes(const PcieConfig& c);    // 2, or 0 in FLIT mode
uint32_t sequence_bytes(const PcieConfig& c);   // 2, or 0 in FLIT mode
uint32_t lcrc_bytes(const PcieConfig& c);       // 4, or 0 in FLIT mode
uint32_t dllp_wire_bytes(const PcieConfig& c);  // 8, or 0 in FLIT mode
// The whole DWs that bytes [address, address + bytes) touch.
uint32_t dw_span_bytes(uint64_t address, uint32_t bytes);

struct Tlp {
    TlpKind kind = TlpKind::MemRd;
    uint64_t address = 0;     // first byte
    uint32_t data_bytes = 0;  // bytes requested (MemRd) or carried (MemWr, CplD)
    bool has_data() const;
    uint32_t payload_bytes() const { return has_data() ? dw_span_bytes(address, data_bytes) : 0; }
};

// Bytes of one TLP on the wire: framing + sequence + header + payload + ECRC + LCRC.
uint32_t tlp_wire_bytes(const PcieConfig& c, const Tlp& t);

// A transfer's request TLPs: writes cut at max-payload-aligned addresses, reads at
// max-read-request-aligned ones. Both sizes are powers of two no larger than 4 KiB, so no TLP
// crosses a 4 KiB boundary.
std::vector<Tlp> split_requests(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes);
// The same into `out` (cleared first), so that a caller can reuse its storage.
void split_requests(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes,
                    std::vector<Tlp>& out);
// The completions answering one read request: each at most max payload and, but for the last,
// ending on a read-completion-boundary multiple (or one per RCB block, config.completion_per_rcb).
std::vector<Tlp> split_completions(const PcieConfig& c, const Tlp& request);
void split_completions(const PcieConfig& c, const Tlp& request, std::vector<Tlp>& out);

// Wire cost of a sequence of TLPs in one direction and of the DLLPs answering them in the other.
struct WireCount {
    uint64_t tlps = 0, tlp_bytes = 0, payload_bytes = 0;
    uint64_t dllps = 0, dllp_bytes = 0;  // Acks + UpdateFCs, sent the other way
};
WireCount wire_count(const PcieConfig& c, const std::vector<Tlp>& tlps);
// Acks plus UpdateFCs answering `tlps` TLPs.
uint64_t dllps_for(const PcieConfig& c, uint64_t tlps);

// A whole memory transfer: requests one way, completions (reads only) the other.
struct TransferWire {
    WireCount requests, completions;
    // Everything on the direction the requests travel: request TLPs + DLLPs answering completions.
    uint64_t request_direction_bytes() const { return requests.tlp_bytes + completions.dllp_bytes; }
    uint64_t completion_direction_bytes() const {
        return completions.tlp_bytes + requests.dllp_bytes;
    }
};
TransferWire transfer_wire(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes);

// Time to serialise `bytes` onto one direction: bytes x wire bits per byte / (lanes x GT/s).
double serialisation_ns(const PcieConfig& c, uint64_t bytes);
// The same at the kernel's resolution (1 ps by default), rounded to the nearest step.
sc_core::sc_time serialisation(const PcieConfig& c, uint64_t bytes);

using core::ns_of;

// Link-specific attributes of a transaction. On a transaction entering the link, `single_tlp`
// asks for exactly one TLP (a raw TLP, e.g. from a test or a hand-built request): the link then
// refuses what PCIe forbids in one TLP instead of splitting it. On each forwarded transaction the
// link fills in the TLP's kind, its place in the transfer and its wire bytes. `error` receives
// the reason of a refusal.
struct LinkTlpExt : core::Extension<LinkTlpExt> {
    bool single_tlp = false;
    TlpKind kind = TlpKind::MemRd;
    uint32_t index = 0, count = 1;
    uint32_t wire_bytes = 0;
    std::string error;
};

}  // namespace canopy::link
