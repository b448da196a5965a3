#include "link/pcie_link.hpp"

#include <algorithm>
#include <limits>

#include "core/payload.hpp"

namespace canopy::link {

using sc_core::sc_time;

PcieLink::Direction::Direction(const std::string& n, const LayerLatency& l, core::Services& s)
    : name(n),
      latency(l.total_ns(), sc_core::SC_NS),
      probe((n.substr(n.rfind('.') + 1) + "_busy").c_str(), s.waves, n + ".busy"),
      vc_busy{{"vc0_busy", s.waves, n + ".vc0.busy"}, {"vc1_busy", s.waves, n + ".vc1.busy"}},
      wire(&s.stats.occupancy(n, "wire", "TLP and DLLP serialisation on this direction", true),
           &probe),
      tlps(s.stats.counter(n, "tlps", "TLPs sent")),
      tlp_bytes(
          s.stats.counter(n, "tlp_bytes", "TLP bytes on the wire, framing and CRCs included")),
      payload_bytes(s.stats.counter(n, "payload_bytes", "TLP payload bytes (whole DWs)")),
      dllps(s.stats.counter(n, "dllps", "Ack and UpdateFC DLLPs sent")),
      dllp_bytes(s.stats.counter(n, "dllp_bytes", "DLLP bytes on the wire")) {
    for (int vc = 0; vc < 2; ++vc) {
        const std::string p = "vc" + std::to_string(vc);
        vc_tlps[vc] = &s.stats.counter(n, p + ".tlps", "TLPs sent on this virtual channel");
        vc_bytes[vc] = &s.stats.counter(n, p + ".tlp_bytes", "TLP wire bytes on this VC");
    }
}

static PcieConfig validated(const PcieConfig& c) {
    c.validate();
    return c;
}

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieConfig& cfg, core::Services& services)
    : sc_module(name),
      host_target("host_target"),
      device_initiator("device_initiator"),
      device_target("device_target"),
      host_initiator("host_initiator"),
      cfg_(validated(cfg)),
      services_(services),
      down_(std::make_unique<Direction>(std::string(this->name()) + ".downstream", cfg.downstream,
                                        services)),
      up_(std::make_unique<Direction>(std::string(this->name()) + ".upstream", cfg.upstream,
                                      services)),
      reads_(services.stats.counter(this->name(), "reads", "read transfers (incl. ATS)", true)),
      writes_(services.stats.counter(this->name(), "writes", "write transfers", true)),
      ats_(services.stats.counter(this->name(), "ats", "ATS translation requests")),
      refused_(services.stats.counter(this->name(), "refused", "transactions refused", true)),
      read_latency_(services.stats.distribution(this->name(), "latency.read", "ns",
                                                "link time of a read: requests to last data")),
      write_latency_(services.stats.distribution(this->name(), "latency.write", "ns",
                                                 "link time of a write: to last acceptance")),
      track_(services.trace.track(this->name())),
      log_(services.log, this->name()),
      wire_time_(cfg_.max_payload_bytes + 64) {
    // An UpdateFC for traffic in one direction returns on the other one: its pipeline + one DLLP.
    down_fc_return_ = up_->latency + serialisation(cfg_, dllp_wire_bytes(cfg_));
    up_fc_return_ = down_->latency + serialisation(cfg_, dllp_wire_bytes(cfg_));
    host_target.register_b_transport(this, &PcieLink::host_b_transport);
    device_target.register_b_transport(this, &PcieLink::device_b_transport);
    host_target.register_transport_dbg(this, &PcieLink::host_dbg);
    device_target.register_transport_dbg(this, &PcieLink::device_dbg);
}

void PcieLink::host_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    transport(gp, delay, *down_, *up_, device_initiator);
}
void PcieLink::device_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    transport(gp, delay, *up_, *down_, host_initiator);
}
// Debug accesses take no time and need no TLPs.
unsigned PcieLink::host_dbg(tlm::tlm_generic_payload& gp) {
    return device_initiator->transport_dbg(gp);
}
unsigned PcieLink::device_dbg(tlm::tlm_generic_payload& gp) {
    return host_initiator->transport_dbg(gp);
}

static std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }

std::string PcieLink::check(const tlm::tlm_generic_payload& gp) const {
    const auto* tlp = gp.get_extension<core::TlpExt>();
    const auto* link = gp.get_extension<LinkTlpExt>();
    const uint64_t addr = gp.get_address();
    const uint64_t len = gp.get_data_length();
    const bool write = gp.is_write();
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) return "an ignore command carries no TLP";
    if (len == 0) return "zero-length transfer at " + hex(addr);
    if (!gp.get_data_ptr()) return "no data buffer";
    if (gp.get_byte_enable_ptr())
        return "byte enables are not supported: the link derives the first/last DW byte "
               "enables from the address and length";
    if (gp.get_streaming_width() < len) return "streaming transfers are not supported";
    if (addr + (len - 1) < addr)
        return "address range " + hex(addr) + " + " + std::to_string(len) + " wraps past 2^64";
    if (len > cfg_.max_transfer_bytes)
        return "transfer of " + std::to_string(len) + " B exceeds link.pcie.max_transfer_bytes = " +
               std::to_string(cfg_.max_transfer_bytes);
    if (tlp && tlp->vc > 1)
        return "virtual channel " + std::to_string(tlp->vc) +
               " does not exist (VC0: PCIe and ATS, VC1: CCIX)";
    if (tlp && tlp->type == core::TlpExt::Type::Completion)
        return "a completion cannot be sent as a request: the link makes completions itself";
    if (tlp && tlp->type == core::TlpExt::Type::AtsTranslate) {
        if (write) return "an ATS translation request must be a read";
        if (len % 8 || len > cfg_.max_payload_bytes)
            return "an ATS translation request returns 8 B per translation, at most " +
                   std::to_string(cfg_.max_payload_bytes) + " B (max payload); asked " +
                   std::to_string(len) + " B";
        return "";
    }
    if (link && link->single_tlp) {
        if ((addr % kPageBytes) + len > kPageBytes)
            return "one TLP of " + std::to_string(len) + " B at " + hex(addr) +
                   " would cross the 4 KiB boundary at " +
                   hex((addr / kPageBytes + 1) * kPageBytes) + " (PCIe forbids it)";
        const uint32_t max = write ? cfg_.max_payload_bytes : cfg_.max_read_request_bytes;
        if (len > max)
            return std::string("one ") + (write ? "MemWr of " : "MemRd of ") + std::to_string(len) +
                   " B exceeds " + (write ? "max payload " : "max read request ") +
                   std::to_string(max) + " B";
    }
    return "";
}

void PcieLink::refuse(tlm::tlm_generic_payload& gp, const std::string& why) {
    refused_.add();
    last_error_ = std::string(name()) + ": " + why;
    log_(core::LogLevel::Warning, "refused " + std::string(gp.is_read() ? "a read" : "a write") +
                                      " at " + core::TransactionTrace::hex(gp.get_address()) +
                                      ": " + why);
    if (auto* link = gp.get_extension<LinkTlpExt>()) link->error = why;
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
}

core::SharedResource::Grant PcieLink::send(Direction& d, const Tlp& t, uint8_t vc,
                                           const sc_time& at) {
    const uint32_t bytes = tlp_wire_bytes(cfg_, t);
    d.tlps.add();
    d.tlp_bytes.add(bytes);
    d.payload_bytes.add(t.payload_bytes());
    d.vc_tlps[vc]->add();
    d.vc_bytes[vc]->add(bytes);
    const core::SharedResource::Grant g = d.wire.reserve(at, wire_time(bytes));
    d.vc_busy[vc].busy(g.start, g.end);
    return g;
}

sc_time PcieLink::wire_time(uint64_t bytes) {
    if (bytes >= wire_time_.size()) return serialisation(cfg_, bytes);
    sc_time& t = wire_time_[bytes];
    if (t == sc_core::SC_ZERO_TIME) t = serialisation(cfg_, bytes);
    return t;
}

void PcieLink::send_dllps(Direction& d, uint64_t tlps, const sc_time& at) {
    const uint64_t n = dllps_for(cfg_, tlps);
    const uint64_t bytes = n * dllp_wire_bytes(cfg_);
    if (!bytes) return;
    d.dllps.add(n);
    d.dllp_bytes.add(bytes);
    d.wire.reserve(at, wire_time(bytes));
}

uint64_t PcieLink::credit_window(bool write) const {
    const Credits& c = cfg_.credits;
    uint64_t w = std::numeric_limits<uint64_t>::max();
    const uint32_t header = write ? c.posted_header : c.non_posted_header;
    if (header) w = header;
    if (write && c.posted_data)  // each full TLP takes MPS / 16 data credits
        w = std::min<uint64_t>(
            w, std::max<uint64_t>(1, uint64_t(c.posted_data) * Credits::kBytesPerDataCredit /
                                         cfg_.max_payload_bytes));
    return w == std::numeric_limits<uint64_t>::max() ? 0 : w;
}

void PcieLink::transport(tlm::tlm_generic_payload& gp, sc_time& delay, Direction& fwd,
                         Direction& rev, tlm_utils::simple_initiator_socket<PcieLink>& out) {
    const std::string why = check(gp);
    if (!why.empty()) return refuse(gp, why);

    struct Depth {  // this call's scratch storage, released on return
        size_t& d;
        explicit Depth(size_t& depth) : d(depth) { ++d; }
        ~Depth() { --d; }
    } depth(depth_);
    if (scratch_.size() < depth_) scratch_.push_back(std::make_unique<Scratch>());
    Scratch& sc = *scratch_[depth_ - 1];

    const auto* tlp_in = gp.get_extension<core::TlpExt>();
    const auto* link_in = gp.get_extension<LinkTlpExt>();
    const bool write = gp.is_write();
    const bool ats = tlp_in && tlp_in->type == core::TlpExt::Type::AtsTranslate;
    const uint8_t vc = tlp_in ? tlp_in->vc : 0;
    const uint64_t addr = gp.get_address();
    const uint32_t len = gp.get_data_length();
    const sc_time now = sc_core::sc_time_stamp();
    const sc_time start = now + delay;

    std::vector<Tlp>& requests = sc.requests;
    if (ats) {
        requests.clear();
        requests.push_back(Tlp{TlpKind::AtsRequest, addr, len});
    } else {
        split_requests(cfg_, write, addr, len, requests);
    }
    const uint64_t window = credit_window(write);
    const sc_time& fc_return = &rev == up_.get() ? down_fc_return_ : up_fc_return_;

    // A transfer that is one TLP (every CCIX message) goes to the far side as itself, with the
    // link's two extensions in place of the original's for the call. A longer one goes as
    // forwarded TLPs, on which the original's other extensions (a CCIX message, a request's
    // flow) ride: the same objects, as an interconnect passes a payload on, taken off again
    // after it. Cloning them cost an allocation per message; lending them, a scan of every
    // extension slot.
    const bool as_is = requests.size() == 1 && requests[0].address == addr &&
                       requests[0].data_bytes == len && gp.get_streaming_width() == len;
    tlm::tlm_generic_payload& sub = as_is ? gp : sc.sub;
    const unsigned tlp_id = core::TlpExt::ID, link_id = LinkTlpExt::ID;
    auto& others = sc.others;
    others.clear();
    if (!as_is)
        for (unsigned e = 0, n = unsigned(tlm::max_num_extensions()); e < n; ++e)
            if (e != tlp_id && e != link_id)
                if (auto* ext = gp.get_extension(e)) others.emplace_back(e, ext);

    std::vector<sc_time>& arrivals = sc.arrivals;
    arrivals.clear();
    sc_time done = start, last_request = start, last_sent = start, last_completion = start;
    uint64_t completions = 0;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    for (size_t i = 0; i < requests.size(); ++i) {
        const Tlp& r = requests[i];
        // A transfer's own TLPs follow one another: only others' traffic counts as waiting.
        sc_time earliest = std::max(start, last_sent);
        if (window && i >= window) earliest = std::max(earliest, arrivals[i - window] + fc_return);
        last_sent = send(fwd, r, vc, earliest).end;
        const sc_time arrival = last_sent + fwd.latency;
        arrivals.push_back(arrival);
        last_request = std::max(last_request, arrival);

        // The far side sees this TLP as its own transaction, carrying the original's extensions.
        if (!as_is) {
            sub.set_command(gp.get_command());
            sub.set_address(r.address);
            sub.set_data_ptr(gp.get_data_ptr() + (r.address - addr));
            sub.set_data_length(r.data_bytes);
            sub.set_streaming_width(r.data_bytes);
            sub.set_byte_enable_ptr(nullptr);
            sub.set_byte_enable_length(0);
            for (const auto& [e, ext] : others) sub.set_extension(e, ext);
        }
        sub.set_dmi_allowed(false);
        sub.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        core::TlpExt& tlp_out = sc.tlp;
        tlp_out = tlp_in ? *tlp_in : core::TlpExt();
        tlp_out.type = write ? core::TlpExt::Type::MemWrite : core::TlpExt::Type::MemRead;
        if (ats) tlp_out.type = core::TlpExt::Type::AtsTranslate;
        if (ats) tlp_out.at = core::TlpExt::AddressType::TranslationRequest;
        tlp_out.vc = vc;
        sub.set_extension(&tlp_out);
        LinkTlpExt& link_out = sc.link;
        if (link_in)
            link_out = *link_in;
        else
            link_out = LinkTlpExt();
        link_out.single_tlp = true;
        link_out.kind = r.kind;
        link_out.index = uint32_t(i);
        link_out.count = uint32_t(requests.size());
        link_out.wire_bytes = tlp_wire_bytes(cfg_, r);
        link_out.error.clear();
        sub.set_extension(&link_out);

        sc_time d = arrival - now;
        {
            // The far side may throw (a programming error): the payload must still not keep
            // extensions that are not its own (the original gets its two back).
            struct Lent {
                tlm::tlm_generic_payload& sub;
                const decltype(sc.others)& others;
                core::TlpExt* tlp;
                LinkTlpExt* link;
                ~Lent() {
                    sub.set_extension(core::TlpExt::ID, tlp);
                    sub.set_extension(LinkTlpExt::ID, link);
                    for (const auto& [e, ext] : others) sub.set_extension(e, nullptr);
                }
            } lent{sub, others, as_is ? const_cast<core::TlpExt*>(tlp_in) : nullptr,
                   as_is ? const_cast<LinkTlpExt*>(link_in) : nullptr};
            out->b_transport(sub, d);
        }
        if (as_is) gp.set_dmi_allowed(false);  // the link gives no direct access
        const sc_time ready = std::max(now + d, arrival);
        const bool failed = sub.is_response_error();
        if (failed && status == tlm::TLM_OK_RESPONSE) status = sub.get_response_status();
        if (write) {
            done = std::max(done, ready);
            continue;
        }
        // A failed read completes with one Cpl carrying the error status and no data.
        std::vector<Tlp>& cpl = sc.completions;
        if (failed || ats) {
            cpl.clear();
            cpl.push_back(failed ? Tlp{TlpKind::Cpl, r.address, 0}
                                 : Tlp{TlpKind::AtsCompletion, r.address, r.data_bytes});
        } else {
            split_completions(cfg_, r, cpl);
        }
        for (const Tlp& c : cpl) {
            last_completion = send(rev, c, vc, std::max(ready, last_completion)).end;
            done = std::max(done, last_completion + rev.latency);
        }
        completions += cpl.size();
    }
    send_dllps(rev, requests.size(), last_request);
    if (completions) send_dllps(fwd, completions, done);

    (write ? writes_ : reads_).add();
    if (ats) ats_.add();
    (write ? write_latency_ : read_latency_).sample(ns_of(done - start));
    if (services_.trace.enabled()) {
        services_.trace.complete(track_, ats ? "ats" : (write ? "write" : "read"), "link", start,
                                 done - start, core::flow_of(gp),
                                 {{"address", hex(addr)},
                                  {"bytes", std::to_string(len)},
                                  {"tlps", std::to_string(requests.size() + completions)},
                                  {"vc", std::to_string(vc)},
                                  {"direction", fwd.name.substr(fwd.name.rfind('.') + 1)}});
    }
    delay = done - now;
    gp.set_response_status(status);
}

}  // namespace canopy::link
