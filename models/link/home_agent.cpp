#include "link/home_agent.hpp"

#include <cstring>
#include <stdexcept>

#include "core/payload.hpp"
#include "core/trace.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

using sc_core::SC_NS;
using sc_core::sc_time;

// The RA as the home sees it: a cache it snoops over the link.
class HomeAgent::Proxy : public core::Snoopable {
  public:
    explicit Proxy(HomeAgent& ha) : ha_(ha) {}
    core::SnoopResponse snoop(core::SnoopKind kind, uint64_t line_address, uint8_t* line,
                              sc_time& delay) override {
        return ha_.snoop(kind, line_address, line, delay);
    }
    bool peek_dirty(uint64_t line_address, uint8_t* line) const override {
        return ha_.peek_dirty(line_address, line);
    }

  private:
    HomeAgent& ha_;
};

static CcixConfig validated(const CcixConfig& c) {
    c.validate();
    return c;
}

HomeAgent::HomeAgent(sc_core::sc_module_name name, const CcixConfig& cfg, core::CoherentHome& home,
                     core::Services& services)
    : sc_module(name),
      link_target("link_target"),
      snoop_initiator("snoop_initiator"),
      cfg_(validated(cfg)),
      home_(home),
      proxy_(std::make_unique<Proxy>(*this)),
      id_(home.attach(*proxy_, this->name())),
      request_(cfg_.ha.request_ns, SC_NS),
      snoop_time_(cfg_.ha.snoop_ns, SC_NS),
      snoops_(services.stats.counter(this->name(), "snoops", "snoops sent to the request agent")),
      snoop_data_(services.stats.counter(this->name(), "snoop_data", "snoops answered with data")),
      errors_(services.stats.counter(this->name(), "errors",
                                     "VC1 messages refused (unknown, malformed, address)", true)),
      request_latency_(services.stats.distribution(this->name(), "latency.request", "ns",
                                                   "RA request at the HA to its response", true)),
      snoop_latency_(services.stats.distribution(this->name(), "latency.snoop", "ns",
                                                 "snoop of the RA over the link, round trip")),
      services_(services),
      track_(services.trace.track(this->name())) {
    if (home.line_bytes() != kCcixLineBytes)
        throw std::logic_error(std::string(this->name()) + ": the home's lines are " +
                               std::to_string(home.line_bytes()) + " B, CCIX's 64 B");
    for (int i = 0; i < core::kCohRequests; ++i)
        requests_[i] = &services.stats.counter(
            this->name(), std::string("requests.") + core::to_string(core::CohRequest(i)),
            "CCIX requests received from the request agent");
    link_target.register_b_transport(this, &HomeAgent::b_transport);
}

HomeAgent::~HomeAgent() = default;

static std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }

void HomeAgent::refuse(tlm::tlm_generic_payload& gp, tlm::tlm_response_status status,
                       const std::string& why) {
    errors_.add();
    last_error_ = std::string(name()) + ": " + why;
    gp.set_response_status(status);
}

std::string HomeAgent::check(const tlm::tlm_generic_payload& gp, CcixHeader& h,
                             core::AtomicRequest& a) const {
    if (!gp.get_data_ptr()) return "no data buffer";
    if (gp.get_byte_enable_ptr()) return "byte enables on a CCIX message";
    const uint8_t* msg = nullptr;
    uint32_t n = 0;
    if (gp.is_write()) {
        msg = gp.get_data_ptr();
        n = gp.get_data_length();
    } else if (gp.is_read()) {
        const auto* m = gp.get_extension<CcixMessageExt>();
        if (!m) return "a VC1 read without a CCIX message";
        msg = m->bytes.data();
        n = m->length;
    } else {
        return "a VC1 transaction that is neither read nor write";
    }
    std::string why = CcixHeader::decode(msg, n, h);
    if (!why.empty()) return why;
    const std::string op = to_string(h.op);
    if (!is_request(h.op)) return op + " is not a request: a home agent takes requests only";
    if (is_posted(h.op) != gp.is_write())
        return op + (gp.is_write() ? " expects a response: it must be a read"
                                   : " carries no response: it must be a posted write");
    if (h.length != expected_length(h.op, h.atomic_kind))
        return op + " with " + std::to_string(h.length) + " data bytes, expected " +
               std::to_string(expected_length(h.op, h.atomic_kind));
    if (gp.is_write() && gp.get_data_length() != kCcixHeaderBytes + h.length)
        return op + " in a write of " + std::to_string(gp.get_data_length()) + " B, expected " +
               std::to_string(kCcixHeaderBytes + h.length);
    const bool data = h.op == CcixOp::ReadShared || h.op == CcixOp::ReadUnique ||
                      h.op == CcixOp::ReadOnce || h.op == CcixOp::ReadNoSnoop;
    const uint32_t response = kCcixHeaderBytes + (data ? kCcixLineBytes : 0);
    if (gp.is_read() && gp.get_data_length() != response)
        return op + " asks for a " + std::to_string(gp.get_data_length()) +
               " B completion, expected " + std::to_string(response);
    if (h.address % kCcixLineBytes) return op + " of unaligned line address " + hex(h.address);
    if (h.op == CcixOp::Atomic) {
        if (h.offset % h.atomic_size)
            return "atomic of " + std::to_string(h.atomic_size) + " B at line offset " +
                   std::to_string(h.offset) + " is not naturally aligned";
        a.kind = h.atomic_kind;
        a.op = h.atomic_op;
        a.size = h.atomic_size;
        a.operand = a.compare = 0;
        for (int i = 7; i >= 0; --i) {
            a.operand = (a.operand << 8) | msg[kCcixHeaderBytes + i];
            if (h.atomic_kind == core::AtomicKind::Compare)
                a.compare = (a.compare << 8) | msg[kCcixHeaderBytes + 8 + i];
        }
    }
    return "";
}

void HomeAgent::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    CcixHeader h;
    core::AtomicRequest a;
    const std::string why = check(gp, h, a);
    if (!why.empty()) return refuse(gp, tlm::TLM_GENERIC_ERROR_RESPONSE, "refused on VC1: " + why);
    const core::CohRequest req = coh_request(h.op);
    requests_[int(req)]->add();
    const sc_time start = delay;
    const core::TransactionTrace::FlowScope flow(services_.trace, core::flow_of(gp));
    delay += request_;
    uint8_t* buf = gp.get_data_ptr();
    uint8_t scratch[kCcixLineBytes] = {};
    // Writes carry their line after the header; reads receive it there. CleanUnique and atomics
    // return none, but the home may still fill a line (a CleanUnique that lost its copy).
    const bool line_in_buffer =
        gp.is_write() ? h.length != 0 : gp.get_data_length() > kCcixHeaderBytes;
    uint8_t* line = line_in_buffer ? buf + kCcixHeaderBytes : scratch;
    core::CoherentHome::Result res;
    try {
        res = home_.request(id_, req, h.address, line, delay, h.op == CcixOp::Atomic ? &a : nullptr,
                            h.offset);
    } catch (const std::out_of_range& e) {
        return refuse(
            gp, tlm::TLM_ADDRESS_ERROR_RESPONSE,
            std::string(to_string(h.op)) + " of line " + hex(h.address) + ": " + e.what());
    } catch (const std::exception& e) {
        return refuse(
            gp, tlm::TLM_GENERIC_ERROR_RESPONSE,
            std::string(to_string(h.op)) + " of line " + hex(h.address) + ": " + e.what());
    }
    request_latency_.sample(ns_of(delay - start));
    if (services_.trace.enabled())
        services_.trace.complete(track_, to_string(h.op), "ccix", sc_core::sc_time_stamp() + start,
                                 delay - start, services_.trace.current_flow(),
                                 {{"line", hex(h.address)}});
    if (gp.is_read()) {
        CcixHeader r;
        r.tag = h.tag;
        r.agent = h.agent;
        r.state = res.granted;
        if (h.op == CcixOp::Atomic) {
            r.op = CcixOp::CompAtomic;
            r.address = res.atomic_old;
        } else if (line_in_buffer) {
            r.op = CcixOp::CompData;
            r.length = uint8_t(kCcixLineBytes);
            r.address = h.address;
        } else {
            r.op = CcixOp::Comp;
            r.address = h.address;
        }
        r.encode(buf);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

namespace {

// A snoop of `line` with `tag` in a leased transaction: the message encoded and attached.
void prepare_snoop(CcixTransactionPool::Lease& t, core::SnoopKind kind, uint64_t line,
                   uint16_t tag) {
    CcixHeader h;
    h.op = snoop_op(kind);
    h.tag = tag;
    h.address = line;
    t.attach_message(h);
}

// The answer's header in `buf`, or throws naming what is wrong.
CcixHeader snoop_answer(const uint8_t* buf, uint16_t tag, const std::string& who) {
    CcixHeader r;
    std::string why = CcixHeader::decode(buf, kCcixMaxMessageBytes, r);
    if (why.empty() && r.op != CcixOp::SnpResp && r.op != CcixOp::SnpRespData)
        why = std::string("answered with ") + to_string(r.op);
    if (why.empty() && r.tag != tag) why = "answered another tag";
    if (!why.empty()) throw std::logic_error(who + ": snoop answer malformed: " + why);
    return r;
}

}  // namespace

core::SnoopResponse HomeAgent::snoop(core::SnoopKind kind, uint64_t line, uint8_t* data,
                                     sc_time& delay) {
    snoops_.add();
    const sc_time start = delay;
    uint8_t buf[kCcixMaxMessageBytes] = {};  // the answer: header and line
    CcixTransactionPool::Lease t(snoop_transactions_, false, buf, kCcixMaxMessageBytes,
                                 core::TlpExt::Type::CcixSnoop, services_.trace.current_flow());
    prepare_snoop(t, kind, line, ++tag_);
    delay += snoop_time_;
    snoop_initiator->b_transport(t->gp, delay);
    if (!t->gp.is_response_ok()) {
        errors_.add();
        last_error_ = std::string(name()) + ": " + core::to_string(kind) + " of line " + hex(line) +
                      " refused on the way to the request agent: " + t->gp.get_response_string() +
                      (t->link.error.empty() ? "" : " (" + t->link.error + ")");
        throw std::logic_error(last_error_ + " (is the RA's snoop_target on the device VC1?)");
    }
    const CcixHeader r = snoop_answer(buf, tag_, name());
    snoop_latency_.sample(ns_of(delay - start));
    core::SnoopResponse s;
    s.was_valid = r.state != core::LineState::I;
    s.before = r.state;
    s.data = r.op == CcixOp::SnpRespData;
    if (s.data) {
        snoop_data_.add();
        std::memcpy(data, buf + kCcixHeaderBytes, kCcixLineBytes);
    }
    return s;
}

bool HomeAgent::peek_dirty(uint64_t line, uint8_t* data) {
    uint8_t buf[kCcixMaxMessageBytes] = {};
    CcixTransactionPool::Lease t(snoop_transactions_, false, buf, kCcixMaxMessageBytes,
                                 core::TlpExt::Type::CcixSnoop, 0);
    prepare_snoop(t, core::SnoopKind::Once, line, 0);
    if (snoop_initiator->transport_dbg(t->gp) != kCcixMaxMessageBytes) return false;
    CcixHeader r;
    if (!CcixHeader::decode(buf, kCcixMaxMessageBytes, r).empty() || r.op != CcixOp::SnpRespData)
        return false;
    std::memcpy(data, buf + kCcixHeaderBytes, kCcixLineBytes);
    return true;
}

}  // namespace canopy::link
