#include "link/tlp.hpp"

#include <algorithm>

namespace canopy::link {

const char* to_string(TlpKind k) {
    switch (k) {
        case TlpKind::MemRd:
            return "MemRd";
        case TlpKind::MemWr:
            return "MemWr";
        case TlpKind::Cpl:
            return "Cpl";
        case TlpKind::CplD:
            return "CplD";
        case TlpKind::AtsRequest:
            return "AtsRequest";
        case TlpKind::AtsCompletion:
            return "AtsCompletion";
        case TlpKind::Msg:
            return "Msg";
        case TlpKind::MsgD:
            return "MsgD";
    }
    return "?";
}

uint32_t header_bytes(TlpKind kind, uint64_t address) {
    switch (kind) {
        case TlpKind::MemRd:
        case TlpKind::MemWr:
            return address >> 32 ? 16 : 12;
        case TlpKind::Cpl:
        case TlpKind::CplD:
        case TlpKind::AtsCompletion:
            return 12;
        case TlpKind::AtsRequest:  // untranslated addresses are 64-bit in practice
        case TlpKind::Msg:
        case TlpKind::MsgD:
            return 16;
    }
    return 16;
}

uint32_t framing_bytes(const PcieConfig& c) { return c.flit_mode() ? 0 : 2; }
uint32_t sequence_bytes(const PcieConfig& c) { return c.flit_mode() ? 0 : 2; }
uint32_t lcrc_bytes(const PcieConfig& c) { return c.flit_mode() ? 0 : 4; }
uint32_t dllp_wire_bytes(const PcieConfig& c) { return c.flit_mode() ? 0 : 8; }

uint32_t dw_span_bytes(uint64_t address, uint32_t bytes) {
    if (bytes == 0) return 0;
    const uint64_t first = address & ~uint64_t(kDwBytes - 1);
    const uint64_t end = (address + bytes + kDwBytes - 1) & ~uint64_t(kDwBytes - 1);
    return uint32_t(end - first);
}

bool Tlp::has_data() const {
    return kind == TlpKind::MemWr || kind == TlpKind::CplD || kind == TlpKind::AtsCompletion ||
           kind == TlpKind::MsgD;
}

uint32_t tlp_wire_bytes(const PcieConfig& c, const Tlp& t) {
    return framing_bytes(c) + sequence_bytes(c) + header_bytes(t.kind, t.address) +
           t.payload_bytes() + (c.ecrc ? 4 : 0) + lcrc_bytes(c);
}

// Chunks of [address, address + bytes) cut at multiples of `unit`, appended to `out`.
static void cut(TlpKind kind, uint64_t address, uint64_t bytes, uint64_t unit,
                std::vector<Tlp>& out) {
    const uint64_t end = address + bytes;
    for (uint64_t pos = address; pos < end;) {
        const uint64_t limit = std::min(end, (pos / unit + 1) * unit);
        out.push_back(Tlp{kind, pos, uint32_t(limit - pos)});
        pos = limit;
    }
}

void split_requests(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes,
                    std::vector<Tlp>& out) {
    out.clear();
    if (write)
        cut(TlpKind::MemWr, address, bytes, c.max_payload_bytes, out);
    else
        cut(TlpKind::MemRd, address, bytes, c.max_read_request_bytes, out);
}

std::vector<Tlp> split_requests(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes) {
    std::vector<Tlp> out;
    split_requests(c, write, address, bytes, out);
    return out;
}

std::vector<Tlp> split_completions(const PcieConfig& c, const Tlp& request) {
    std::vector<Tlp> out;
    split_completions(c, request, out);
    return out;
}

void split_completions(const PcieConfig& c, const Tlp& request, std::vector<Tlp>& out) {
    out.clear();
    const uint64_t rcb = c.read_completion_boundary_bytes;
    if (c.completion_per_rcb)
        return cut(TlpKind::CplD, request.address, request.data_bytes, rcb, out);
    const uint64_t end = request.address + request.data_bytes;
    for (uint64_t pos = request.address; pos < end;) {
        uint64_t limit = pos + c.max_payload_bytes;
        if (limit >= end) {
            limit = end;
        } else {
            limit -= limit % rcb;  // MPS >= 128 >= RCB, so this stays past `pos`
        }
        out.push_back(Tlp{TlpKind::CplD, pos, uint32_t(limit - pos)});
        pos = limit;
    }
}

uint64_t dllps_for(const PcieConfig& c, uint64_t tlps) {
    if (c.flit_mode() || tlps == 0) return 0;
    auto per = [tlps](uint32_t n) { return n ? (tlps + n - 1) / n : 0; };
    return per(c.tlps_per_ack) + per(c.tlps_per_update_fc);
}

WireCount wire_count(const PcieConfig& c, const std::vector<Tlp>& tlps) {
    WireCount w;
    for (const Tlp& t : tlps) {
        ++w.tlps;
        w.tlp_bytes += tlp_wire_bytes(c, t);
        w.payload_bytes += t.payload_bytes();
    }
    w.dllps = dllps_for(c, w.tlps);
    w.dllp_bytes = w.dllps * dllp_wire_bytes(c);
    return w;
}

TransferWire transfer_wire(const PcieConfig& c, bool write, uint64_t address, uint64_t bytes) {
    TransferWire w;
    const std::vector<Tlp> requests = split_requests(c, write, address, bytes);
    w.requests = wire_count(c, requests);
    if (write) return w;
    std::vector<Tlp> completions;
    for (const Tlp& r : requests) {
        const std::vector<Tlp> cpl = split_completions(c, r);
        completions.insert(completions.end(), cpl.begin(), cpl.end());
    }
    w.completions = wire_count(c, completions);
    return w;
}

double serialisation_ns(const PcieConfig& c, uint64_t bytes) {
    return double(bytes) * c.ns_per_byte();
}

sc_core::sc_time serialisation(const PcieConfig& c, uint64_t bytes) {
    return sc_core::sc_time(serialisation_ns(c, bytes), sc_core::SC_NS);  // rounds to resolution
}

}  // namespace canopy::link
