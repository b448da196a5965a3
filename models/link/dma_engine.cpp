#include "link/dma_engine.hpp"

#include <algorithm>

#include "core/payload.hpp"

namespace canopy::link {

namespace {
constexpr uint64_t kSmallPage = 4096;
std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }
// Exact for whole picoseconds (to_seconds() * 1e9 is not).
double ns(const sc_core::sc_time& t) { return t / sc_core::sc_time(1, sc_core::SC_NS); }
}  // namespace

void DmaConfig::describe(core::Params& p) {
    core::Params d = p.scope("link").scope("dma");
    d("translate", translate,
      "host addresses are virtual, translated by the ATC (else physical) [CCIX paper IV Exp. 1: "
      "physical]")("max_burst_bytes", max_burst_bytes, "B",
                   "largest piece moved at once [assumed: one 4 KiB buffer]", 4, 1u << 20)(
        "setup_ns", setup_ns, "ns", "descriptor fetch and decode, device logic [assumed; calibrated by exp ats-cost: 700 ns 64-B read with ATC hit, CCIX paper IV Exp. 2, minus ATC hit, link and host DRAM]", 0.0, 1e6);
}

DmaEngine::DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, core::Services& services,
                     Atc* atc)
    : sc_module(name),
      host_initiator("host_initiator"),
      device_initiator("device_initiator"),
      cfg_(cfg),
      services_(services),
      atc_(atc),
      buffer_(cfg.max_burst_bytes),
      descriptors_(services.stats.counter(this->name(), "descriptors", "descriptors run", true)),
      bytes_(services.stats.counter(this->name(), "bytes", "bytes moved", true)),
      errors_(
          services.stats.counter(this->name(), "errors", "descriptors ended by an error", true)),
      latency_h2d_(services.stats.distribution(this->name(), "latency.host_to_device", "ns",
                                               "descriptor latency, host -> device", true)),
      latency_d2h_(services.stats.distribution(this->name(), "latency.device_to_host", "ns",
                                               "descriptor latency, device -> host", true)) {}

std::string DmaEngine::access(tlm_utils::simple_initiator_socket<DmaEngine>& socket, bool write,
                              uint64_t address, uint8_t* data, uint32_t bytes, bool host,
                              bool translated, sc_core::sc_time& delay) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(data);
    gp.set_data_length(bytes);
    gp.set_streaming_width(bytes);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (host) {  // what the link and the host's IOMMU need to know; freed by the payload
        auto* tlp = new core::TlpExt;
        tlp->type = write ? core::TlpExt::Type::MemWrite : core::TlpExt::Type::MemRead;
        tlp->at = translated ? core::TlpExt::AddressType::Translated
                             : core::TlpExt::AddressType::Untranslated;
        gp.set_extension(tlp);
    }
    socket->b_transport(gp, delay);
    if (gp.is_response_ok()) return "";
    return std::string(host ? "host" : "device") + (write ? " write" : " read") + " of " +
           std::to_string(bytes) + " B at " + hex(address) + " answered " +
           gp.get_response_string();
}

DmaResult DmaEngine::execute(const DmaDescriptor& d, sc_core::sc_time& delay) {
    const sc_core::sc_time start = delay;
    DmaResult r;
    r.id = results_.size();
    descriptors_.add();
    delay += sc_core::sc_time(cfg_.setup_ns, sc_core::SC_NS);
    const bool h2d = d.direction == DmaDirection::HostToDevice;
    const bool translate = cfg_.translate;

    if (d.length == 0) {
        r.error = "zero-length descriptor";
    } else if (d.host_address + (d.length - 1) < d.host_address ||
               d.device_address + (d.length - 1) < d.device_address) {
        r.error = "descriptor address range wraps past 2^64";
    } else if (translate && !atc_) {
        r.error = "link.dma.translate is on but the engine has no ATC";
    }

    uint64_t done = 0;
    uint64_t page_end = 0, physical_base = 0;  // the current translated page
    while (r.error.empty() && done < d.length) {
        const uint64_t va = d.host_address + done;
        if (translate && (r.translations == 0 || va >= page_end)) {
            const sc_core::sc_time before = delay;
            const Atc::Result t = atc_->translate(va, delay);
            r.translation_ns += ns(delay - before);
            ++r.translations;
            if (!t.ok) {
                r.error = t.error;
                break;
            }
            page_end = t.page_end;
            physical_base = t.physical - va;  // physical = va + (physical_base) mod 2^64
        } else if (!translate && (done == 0 || va >= page_end)) {
            page_end = (va / kSmallPage + 1) * kSmallPage;
            physical_base = 0;
        }
        // Up to the page end (page_end 0 means the last page before 2^64).
        uint64_t piece = std::min<uint64_t>(d.length - done, cfg_.max_burst_bytes);
        if (page_end) piece = std::min(piece, page_end - va);
        const uint64_t host = va + physical_base;
        const uint64_t dev = d.device_address + done;
        const uint32_t n = uint32_t(piece);
        const sc_core::sc_time before = delay;
        r.error =
            h2d ? access(host_initiator, false, host, buffer_.data(), n, true, translate, delay)
                : access(device_initiator, false, dev, buffer_.data(), n, false, false, delay);
        if (r.error.empty())
            r.error =
                h2d ? access(device_initiator, true, dev, buffer_.data(), n, false, false, delay)
                    : access(host_initiator, true, host, buffer_.data(), n, true, translate, delay);
        r.transfer_ns += ns(delay - before);
        ++r.pieces;
        if (r.error.empty()) done += piece;
    }

    r.ok = r.error.empty();
    r.bytes_done = done;
    bytes_.add(done);
    if (!r.ok) {
        errors_.add();
        r.error = std::string(name()) + ": descriptor " + std::to_string(r.id) + ": " + r.error;
    }
    r.latency_ns = ns(delay - start);
    r.completion = sc_core::sc_time_stamp() + delay;
    (h2d ? latency_h2d_ : latency_d2h_).sample(r.latency_ns);
    results_.push_back(r);
    return r;
}

}  // namespace canopy::link
