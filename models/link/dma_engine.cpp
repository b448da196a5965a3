#include "link/dma_engine.hpp"

#include <algorithm>

#include "core/payload.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

namespace {
constexpr uint64_t kSmallPage = 4096;
std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }
double ns(const sc_core::sc_time& t) { return ns_of(t); }
}  // namespace

void DmaConfig::describe(core::Params& p) {
    core::Params d = p.scope("link").scope("dma");
    d("translate", translate,
      "host addresses are virtual, translated by the ATC (else physical) [CCIX paper IV Exp. 1: "
      "physical]")("max_burst_bytes", max_burst_bytes, "B",
                   "largest piece moved at once [assumed: one 4 KiB buffer]", 4, 1u << 20)(
        "setup_ns", setup_ns, "ns",
        "descriptor fetch and decode, device logic, both directions [calibrated to E1: CCIX 64-B "
        "write ~32% longer than a PCIe-DMA one, CCIX paper IV Exp. 1]",
        0.0, 1e6)("read_completion_ns", read_completion_ns, "ns",
                  "host -> device only: completion handling of a read before done [calibrated to "
                  "E1: CCIX 64-B reads ~33% shorter than PCIe-DMA ones, CCIX paper IV Exp. 1]",
                  0.0, 1e6)("pieces_in_flight", pieces_in_flight, "",
                            "pieces (buffers of max_burst_bytes) in flight, reads ahead of writes; "
                            "1 = store and forward [calibrated to E1: the DMA read bandwidth of "
                            "the read throughput ratios, CCIX paper IV Exp. 1]",
                            1u, 1024u);
}

DmaEngine::DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, core::Services& services,
                     Atc* atc)
    : sc_module(name),
      host_initiator("host_initiator"),
      device_initiator("device_initiator"),
      cfg_(cfg),
      atc_(atc),
      buffer_(cfg.max_burst_bytes),
      setup_(cfg.setup_ns, sc_core::SC_NS),
      read_completion_(cfg.read_completion_ns, sc_core::SC_NS),
      window_(atc ? atc->config().max_outstanding : 1),
      interval_(atc ? sc_core::sc_time(atc->config().hit_latency_ns, sc_core::SC_NS)
                    : sc_core::SC_ZERO_TIME),
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
    // One payload reused for every access (no allocation per access); the TlpExt tells the link
    // and the host's IOMMU what the request is.
    tlm::tlm_generic_payload& gp = gp_;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(data);
    gp.set_data_length(bytes);
    gp.set_streaming_width(bytes);
    gp.set_byte_enable_ptr(nullptr);
    gp.set_byte_enable_length(0);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (host) {
        tlp_ = core::TlpExt();
        tlp_.type = write ? core::TlpExt::Type::MemWrite : core::TlpExt::Type::MemRead;
        tlp_.at = translated ? core::TlpExt::AddressType::Translated
                             : core::TlpExt::AddressType::Untranslated;
        gp.set_extension(&tlp_);
    }
    socket->b_transport(gp, delay);
    if (host) gp.clear_extension(&tlp_);
    if (gp.is_response_ok()) return "";
    return std::string(host ? "host" : "device") + (write ? " write" : " read") + " of " +
           std::to_string(bytes) + " B at " + hex(address) + " answered " +
           gp.get_response_string();
}

DmaResult DmaEngine::execute(const DmaDescriptor& d, sc_core::sc_time& delay) {
    const sc_core::sc_time start = delay;
    DmaResult r;
    r.id = next_id_++;
    descriptors_.add();
    delay += setup_;
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

    // Translations ahead of the data: page j may be looked up once page j - window_ has moved, and
    // no sooner than interval_ after the previous lookup was accepted (slot wait included).
    const uint64_t last = d.host_address + (d.length - 1);
    pages_.clear();
    write_ends_.clear();
    uint64_t next_va = d.host_address;  // address of the next lookup
    bool more = translate && r.error.empty();
    sc_core::sc_time next_issue = delay;
    // Issues lookups while fewer than `count` are out; `moved`: when the pieces before the current
    // one had all been written (page j - window done by then).
    auto issue_until = [&](size_t count, const sc_core::sc_time& moved) {
        while (more && pages_.size() < count) {
            sc_core::sc_time t = std::max(next_issue, moved);
            const Atc::Result x = atc_->translate(next_va, t);
            pages_.push_back(Page{x.page_end, x.physical - next_va, t, x.error});
            ++r.translations;
            next_issue = std::max(next_issue, moved) + x.slot_wait + interval_;
            if (!x.ok || x.page_end == 0 || x.page_end > last) more = false;
            next_va = x.page_end;
        }
    };

    const sc_core::sc_time set_up = delay;
    sc_core::sc_time issued = delay;        // the previous piece's start: reads are issued in order
    sc_core::sc_time write_issued = delay;  // the previous piece's write went out: writes in order
    sc_core::sc_time moved = delay;         // every piece so far has been written
    const size_t in_flight = std::max<uint32_t>(1, cfg_.pieces_in_flight);
    uint64_t done = 0;
    size_t page = 0;  // index in pages_ of the current page
    uint64_t page_end = 0, physical_base = 0;
    while (r.error.empty() && done < d.length) {
        const uint64_t va = d.host_address + done;
        // A buffer is free once the piece pieces_in_flight back has been written.
        sc_core::sc_time start = issued;
        if (write_ends_.size() >= in_flight)
            start = std::max(start, write_ends_[write_ends_.size() - in_flight]);
        if (translate && (done == 0 || (page_end && va >= page_end))) {
            if (done) ++page;
            // Pages before `page` have moved: lookups up to page + window - 1 may go out.
            issue_until(page + window_, moved);
            const Page& p = pages_[page];
            if (!p.error.empty()) {
                r.error = p.error;
                break;
            }
            if (p.ready > start) {
                // Exposed: the part of the wait while no earlier piece was still moving.
                if (p.ready > moved) r.translation_ns += ns(p.ready - std::max(start, moved));
                start = p.ready;
            }
            page_end = p.page_end;
            physical_base = p.physical_base;  // physical = va + physical_base mod 2^64
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
        sc_core::sc_time t = start;
        r.error = h2d ? access(host_initiator, false, host, buffer_.data(), n, true, translate, t)
                      : access(device_initiator, false, dev, buffer_.data(), n, false, false, t);
        // Destination writes are issued in piece order, each once its data is in (the targets
        // serialise them: a posted write need not wait for the one before it to be accepted).
        t = std::max(t, write_issued);
        write_issued = t;
        if (r.error.empty())
            r.error =
                h2d ? access(device_initiator, true, dev, buffer_.data(), n, false, false, t)
                    : access(host_initiator, true, host, buffer_.data(), n, true, translate, t);
        issued = start;
        moved = std::max(moved, t);
        write_ends_.push_back(t);
        ++r.pieces;
        if (r.error.empty()) done += piece;
    }
    delay = std::max(delay, moved);
    r.transfer_ns = ns(delay - set_up) - r.translation_ns;
    if (h2d && r.error.empty()) delay += read_completion_;

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
