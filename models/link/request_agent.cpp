#include "link/request_agent.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/payload.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

using sc_core::SC_NS;
using sc_core::sc_time;

// The system cache's home as the RA sees it: the link.
class RequestAgent::LinkHome : public core::CoherentHome {
  public:
    explicit LinkHome(RequestAgent& ra) : ra_(ra) {}
    unsigned attach(core::Snoopable&, const std::string&) override { return 0; }
    Result request(unsigned, core::CohRequest req, uint64_t line_address, uint8_t* line,
                   sc_time& delay, const core::AtomicRequest* atomic, unsigned offset) override {
        return ra_.send(req, line_address, line, delay, atomic, offset);
    }
    uint32_t line_bytes() const override { return kCcixLineBytes; }

  private:
    RequestAgent& ra_;
};

static CcixConfig validated(const CcixConfig& c) {
    c.validate();
    return c;
}

RequestAgent::RequestAgent(sc_core::sc_module_name name, const CcixConfig& cfg, Atc* atc,
                           uint32_t pasid, core::Services& services, Sync sync)
    : sc_module(name),
      link_initiator("link_initiator"),
      snoop_target("snoop_target"),
      accel_target("accel_target"),
      cfg_(validated(cfg)),
      atc_(atc),
      pasid_(pasid),
      services_(services),
      sync_(sync ? std::move(sync) : Sync([](sc_time&) {})),
      home_(std::make_unique<LinkHome>(*this)),
      issue_(cfg_.ra.issue_ns, SC_NS),
      request_(cfg_.ra.request_ns, SC_NS),
      response_(cfg_.ra.response_ns, SC_NS),
      read_return_(cfg_.ra.read_return_ns, SC_NS),
      atomic_extra_(cfg_.ra.atomic_ns, SC_NS),
      snoop_time_(cfg_.ra.snoop_ns, SC_NS),
      loads_(services.stats.counter(this->name(), "loads", "accelerator loads")),
      stores_(services.stats.counter(this->name(), "stores", "accelerator stores")),
      atomics_(services.stats.counter(this->name(), "atomics", "accelerator atomics (far)")),
      snoops_(services.stats.counter(this->name(), "snoops", "snoops from the home agent")),
      snoop_data_(services.stats.counter(this->name(), "snoop_data", "snoops answered with data")),
      refused_(services.stats.counter(this->name(), "refused",
                                      "accesses refused: size, alignment, PASID", true)),
      ats_failures_(services.stats.counter(this->name(), "ats_failures",
                                           "accesses failed in translation (ATS)", true)),
      errors_(services.stats.counter(this->name(), "errors",
                                     "link or protocol errors, malformed snoops", true)),
      read_latency_(services.stats.distribution(this->name(), "latency.read", "ns",
                                                "accelerator load to data", true)),
      write_latency_(services.stats.distribution(this->name(), "latency.write", "ns",
                                                 "accelerator store to completion", true)),
      atomic_latency_(services.stats.distribution(this->name(), "latency.atomic", "ns",
                                                  "accelerator atomic to old value", true)),
      track_(services.trace.track(this->name())) {
    for (int i = 0; i < core::kCohRequests; ++i)
        requests_[i] = &services.stats.counter(
            this->name(), std::string("requests.") + core::to_string(core::CohRequest(i)),
            "CCIX requests sent to the home agent");
    // After the counters: the cache's name scopes its own statistics ("<ra>.sc.l2.hits").
    cache_ = std::make_unique<core::CoherentCache>(std::string(this->name()) + ".sc", cfg_.ra.cache,
                                                   *home_, services, [this](sc_time& d) {
                                                       if (!overlapping_) sync_(d);
                                                   });
    snoop_target.register_b_transport(this, &RequestAgent::snoop_b_transport);
    snoop_target.register_transport_dbg(this, &RequestAgent::snoop_dbg);
    accel_target.register_b_transport(this, &RequestAgent::accel_b_transport);
}

RequestAgent::~RequestAgent() = default;

static std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }

RaResult RequestAgent::fail(core::Counter& counter, const std::string& why) {
    counter.add();
    last_error_ = std::string(name()) + ": " + why;
    RaResult r;
    r.ok = false;
    r.error = last_error_;
    return r;
}

std::string RequestAgent::translate(uint64_t va, uint64_t& pa, uint64_t& page_end, sc_time& delay) {
    if (!atc_) {
        pa = va;
        page_end = ~0ull;
        return "";
    }
    const Atc::Result t = atc_->translate(va, delay);
    if (!t.ok) return "ATS failure for VA " + hex(va) + ": " + t.error;
    pa = t.physical;
    page_end = t.page_end;
    return "";
}

RaResult RequestAgent::access(Op op, uint32_t pasid, uint64_t va, uint8_t* bytes, unsigned length,
                              sc_time& delay, Mode mode) {
    const char* what = op == Op::Load ? "load" : "store";
    if (length < 1 || length > kCcixLineBytes)
        return fail(refused_, std::string(what) + " of " + std::to_string(length) + " B at " +
                                  hex(va) + ": 1 to 64 bytes");
    if (!bytes) return fail(refused_, std::string(what) + " without a buffer");
    if (atc_ && !mode.physical && pasid != pasid_)
        return fail(refused_, std::string(what) + " for PASID " + std::to_string(pasid) +
                                  ": the ATC translates for PASID " + std::to_string(pasid_));
    if (va + (length - 1) < va) return fail(refused_, std::string(what) + " wraps past 2^64");
    (op == Op::Load ? loads_ : stores_).add();
    const sc_time start = sc_core::sc_time_stamp() + delay;
    const uint64_t flow = services_.trace.enabled() ? services_.trace.new_flow() : 0;
    const core::TransactionTrace::FlowScope scope(services_.trace, flow);
    struct Current {  // lets evictions leave at the caller's time
        sc_time*& c;
        Current(sc_time*& cur, sc_time& d) : c(cur) { c = &d; }
        ~Current() { c = nullptr; }
    } current(current_, delay);
    delay += issue_;
    // One ATC lookup per page touched: the first piece's, and the second's past the page end.
    uint64_t base_va = 0, base_pa = 0, page_end = 0;
    bool translated = false;
    for (unsigned done = 0; done < length;) {
        const uint64_t v = va + done;
        const unsigned n =
            unsigned(std::min<uint64_t>(length - done, kCcixLineBytes - v % kCcixLineBytes));
        if (mode.physical) {
            base_va = base_pa = v;
            page_end = ~0ull;
            translated = true;
        } else if (!translated || v >= page_end) {
            const std::string why = translate(v, base_pa, page_end, delay);
            if (!why.empty()) return fail(ats_failures_, why);
            base_va = v;
            translated = true;
        }
        const uint64_t pa = base_pa + (v - base_va);
        try {
            if (op == Op::Load && !mode.allocate && !core::is_valid(cache_->state(pa)))
                cache_->read_once(pa, bytes + done, n, delay);
            else if (op == Op::Load)
                cache_->read(pa, bytes + done, n, delay);
            else
                cache_->write(pa, bytes + done, n, delay);
        } catch (const Failure& f) {
            return fail(errors_, f.what());
        }
        done += n;
    }
    if (op == Op::Load) delay += read_return_;
    const double ns = ns_of(sc_core::sc_time_stamp() + delay - start);
    (op == Op::Load ? read_latency_ : write_latency_).sample(ns);
    if (services_.trace.enabled())
        services_.trace.complete(track_, what, "ccix", start,
                                 sc_core::sc_time_stamp() + delay - start, flow,
                                 {{"va", hex(va)}, {"bytes", std::to_string(length)}});
    return RaResult{};
}

RaResult RequestAgent::transfer(bool write, uint32_t pasid, uint64_t va, uint8_t* bytes,
                                uint64_t length, sc_time& delay) {
    return lines(write, pasid, va, bytes, length, delay, Mode());
}

RaResult RequestAgent::read_physical(uint64_t pa, void* bytes, uint64_t length, sc_time& delay,
                                     bool allocate) {
    return lines(false, pasid_, pa, static_cast<uint8_t*>(bytes), length, delay,
                 Mode(true, allocate));
}

RaResult RequestAgent::lines(bool write, uint32_t pasid, uint64_t va, uint8_t* bytes,
                             uint64_t length, sc_time& delay, Mode mode) {
    if (length == 0) return fail(refused_, "transfer of 0 bytes at " + hex(va));
    // Lines overlap in annotated time, so none may wait for the kernel meanwhile: a thread caller
    // is brought up to date once, before the first line.
    sync_(delay);
    struct Overlap {
        bool& flag;
        explicit Overlap(bool& f) : flag(f) { flag = true; }
        ~Overlap() { flag = false; }
    } overlap(overlapping_);
    const sc_time t0 = delay;
    std::vector<sc_time> done;  // when each line's access completed
    sc_time end = t0;
    for (uint64_t off = 0; off < length;) {
        const uint64_t v = va + off;
        const unsigned n =
            unsigned(std::min<uint64_t>(length - off, kCcixLineBytes - v % kCcixLineBytes));
        const size_t k = done.size();
        sc_time d = t0 + issue_ * double(k);
        if (k >= cfg_.ra.max_outstanding) d = std::max(d, done[k - cfg_.ra.max_outstanding]);
        RaResult r = access(write ? Op::Store : Op::Load, pasid, v, bytes + off, n, d, mode);
        if (!r.ok) {
            delay = std::max(end, d);
            return r;
        }
        done.push_back(d);
        end = std::max(end, d);
        off += n;
    }
    delay = end;
    return RaResult{};
}

RaResult RequestAgent::load(uint32_t pasid, uint64_t va, void* bytes, unsigned length,
                            sc_time& delay) {
    return access(Op::Load, pasid, va, static_cast<uint8_t*>(bytes), length, delay);
}

RaResult RequestAgent::store(uint32_t pasid, uint64_t va, const void* bytes, unsigned length,
                             sc_time& delay) {
    // The cache only reads the bytes of a store.
    return access(Op::Store, pasid, va, const_cast<uint8_t*>(static_cast<const uint8_t*>(bytes)),
                  length, delay);
}

void RequestAgent::accel_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    if (gp.get_byte_enable_ptr() || gp.get_streaming_width() < gp.get_data_length() ||
        (!gp.is_read() && !gp.is_write())) {
        fail(refused_,
             "accelerator port: byte enables, streaming and ignore commands are not "
             "supported");
        return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    }
    const auto* tlp = gp.get_extension<core::TlpExt>();
    const uint32_t pasid = tlp && tlp->pasid ? tlp->pasid : pasid_;
    const uint64_t failures = ats_failures_.value();
    const RaResult r =
        gp.is_read()
            ? load(pasid, gp.get_address(), gp.get_data_ptr(), gp.get_data_length(), delay)
            : store(pasid, gp.get_address(), gp.get_data_ptr(), gp.get_data_length(), delay);
    if (r.ok) return gp.set_response_status(tlm::TLM_OK_RESPONSE);
    gp.set_response_status(ats_failures_.value() != failures ? tlm::TLM_ADDRESS_ERROR_RESPONSE
                                                             : tlm::TLM_GENERIC_ERROR_RESPONSE);
}

RaResult RequestAgent::atomic(uint32_t pasid, uint64_t va, const core::AtomicRequest& a,
                              sc_time& delay) {
    if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
        return fail(refused_, "atomic of " + std::to_string(a.size) + " B at " + hex(va) +
                                  ": 1, 2, 4 or 8 bytes");
    if (va % a.size)
        return fail(refused_, "atomic of " + std::to_string(a.size) + " B at " + hex(va) +
                                  " is not naturally aligned");
    if (atc_ && pasid != pasid_)
        return fail(refused_, "atomic for PASID " + std::to_string(pasid) +
                                  ": the ATC translates for PASID " + std::to_string(pasid_));
    atomics_.add();
    const sc_time start = sc_core::sc_time_stamp() + delay;
    const uint64_t flow = services_.trace.enabled() ? services_.trace.new_flow() : 0;
    const core::TransactionTrace::FlowScope scope(services_.trace, flow);
    delay += issue_;
    uint64_t pa = 0, page_end = 0;
    const std::string why = translate(va, pa, page_end, delay);
    if (!why.empty()) return fail(ats_failures_, why);
    delay += atomic_extra_;
    RaResult r;
    try {
        r.value = cache_->atomic(pa, a, true, delay);
    } catch (const Failure& f) {
        return fail(errors_, f.what());
    }
    delay += read_return_;
    const sc_time end = sc_core::sc_time_stamp() + delay;
    atomic_latency_.sample(ns_of(end - start));
    if (services_.trace.enabled())
        services_.trace.complete(track_, core::to_string(a.kind), "ccix", start, end - start, flow,
                                 {{"va", hex(va)}, {"bytes", std::to_string(a.size)}});
    return r;
}

RaResult RequestAgent::compare_and_swap(uint32_t pasid, uint64_t va, uint64_t expected,
                                        uint64_t desired, uint8_t size, sc_time& delay) {
    return atomic(pasid, va,
                  core::AtomicRequest{core::AtomicKind::Compare, core::AtomicOp::Add, size, desired,
                                      expected},
                  delay);
}

RaResult RequestAgent::fetch_add(uint32_t pasid, uint64_t va, uint64_t value, uint8_t size,
                                 sc_time& delay) {
    return atomic(pasid, va,
                  core::AtomicRequest{core::AtomicKind::Load, core::AtomicOp::Add, size, value, 0},
                  delay);
}

RaResult RequestAgent::swap(uint32_t pasid, uint64_t va, uint64_t value, uint8_t size,
                            sc_time& delay) {
    return atomic(pasid, va,
                  core::AtomicRequest{core::AtomicKind::Swap, core::AtomicOp::Add, size, value, 0},
                  delay);
}

void RequestAgent::watch(uint64_t pa, Watcher fn) {
    watched_[pa - pa % kCcixLineBytes] = std::move(fn);
}

void RequestAgent::unwatch(uint64_t pa) { watched_.erase(pa - pa % kCcixLineBytes); }

void RequestAgent::fire(uint64_t line, const sc_time& at) {
    auto it = watched_.find(line);
    if (it == watched_.end()) return;
    Watcher fn = std::move(it->second);
    watched_.erase(it);
    fn(at);
}

namespace {

std::string status_text(const tlm::tlm_generic_payload& gp, const LinkTlpExt& link) {
    return gp.get_response_string() + (link.error.empty() ? "" : " (" + link.error + ")");
}

}  // namespace

core::CoherentHome::Result RequestAgent::send(core::CohRequest req, uint64_t line, uint8_t* data,
                                              sc_time& delay, const core::AtomicRequest* a,
                                              unsigned offset) {
    const CcixOp op = request_op(req);
    requests_[int(req)]->add();
    CcixHeader h;
    h.op = op;
    h.tag = ++tag_;
    h.address = line;
    if (is_posted(op)) {
        uint8_t buf[kCcixMaxMessageBytes];
        h.length = uint8_t(expected_length(op));
        h.encode(buf);
        if (h.length) std::memcpy(buf + kCcixHeaderBytes, data, h.length);
        CcixTransactionPool::Lease lease(transactions_, true, buf, kCcixHeaderBytes + h.length,
                                         core::TlpExt::Type::CcixRequest,
                                         services_.trace.current_flow());
        CcixTransaction& t = *lease;
        // Write-backs of evicted lines leave at the accessing caller's time, off its path.
        sc_time at =
            current_ && (op == CcixOp::WriteBack || op == CcixOp::Evict) ? *current_ : delay;
        at += request_;
        link_initiator->b_transport(t.gp, at);
        if (op != CcixOp::WriteBack && op != CcixOp::Evict)
            delay = at;
        else if (!watched_.empty())
            fire(line, sc_core::sc_time_stamp() + at);
        if (!t.gp.is_response_ok()) {
            // Posted: nobody waits for an answer; the loss is counted and reported.
            errors_.add();
            last_error_ = std::string(name()) + ": " + to_string(op) + " of line " + hex(line) +
                          " refused: " + status_text(t.gp, t.link);
        }
        return {};
    }
    if (op == CcixOp::Atomic) {
        if (!a) throw Failure("Atomic without its operands");
        h.atomic_kind = a->kind;
        h.atomic_op = a->op;
        h.atomic_size = a->size;
        h.offset = uint8_t(offset);
        h.length = uint8_t(expected_length(op, a->kind));
    }
    const bool with_data =
        req == core::CohRequest::ReadShared || req == core::CohRequest::ReadUnique ||
        req == core::CohRequest::ReadOnce || req == core::CohRequest::ReadNoSnoop;
    uint8_t buf[kCcixMaxMessageBytes];
    CcixTransactionPool::Lease lease(
        transactions_, false, buf, kCcixHeaderBytes + (with_data ? kCcixLineBytes : 0),
        core::TlpExt::Type::CcixRequest, services_.trace.current_flow());
    CcixTransaction& t = *lease;
    lease.attach_message(h);
    if (op == CcixOp::Atomic) {
        for (int i = 0; i < 8; ++i) {
            t.message.bytes[kCcixHeaderBytes + i] = uint8_t(a->operand >> (8 * i));
            t.message.bytes[kCcixHeaderBytes + 8 + i] = uint8_t(a->compare >> (8 * i));
        }
    }
    delay += request_;
    link_initiator->b_transport(t.gp, delay);
    // Built only for an error: formatting it on every request cost the device path 3%.
    auto what = [&] { return std::string(to_string(op)) + " of line " + hex(line); };
    if (!t.gp.is_response_ok()) throw Failure(what() + " failed: " + status_text(t.gp, t.link));
    CcixHeader r;
    std::string why = CcixHeader::decode(buf, t.gp.get_data_length(), r);
    const CcixOp expect = with_data              ? CcixOp::CompData
                          : op == CcixOp::Atomic ? CcixOp::CompAtomic
                                                 : CcixOp::Comp;
    if (why.empty() && r.op != expect)
        why = std::string("answered with ") + to_string(r.op) + ", expected " + to_string(expect);
    if (why.empty() && r.tag != h.tag)
        why = "answered tag " + std::to_string(r.tag) + " for tag " + std::to_string(h.tag);
    if (!why.empty()) throw Failure(what() + ": " + why);
    delay += response_;
    if (with_data && data) std::memcpy(data, buf + kCcixHeaderBytes, kCcixLineBytes);
    core::CoherentHome::Result res;
    res.granted = r.state;
    if (op == CcixOp::Atomic) res.atomic_old = r.address;
    return res;
}

std::string RequestAgent::check_snoop(const tlm::tlm_generic_payload& gp, CcixHeader& h) const {
    const auto* m = gp.get_extension<CcixMessageExt>();
    if (!m) return "a VC1 transaction without a CCIX message";
    std::string why = CcixHeader::decode(m->bytes.data(), m->length, h);
    if (!why.empty()) return why;
    if (!is_snoop(h.op))
        return std::string(to_string(h.op)) + " is not a snoop: a request agent takes snoops only";
    if (!gp.is_read() || !gp.get_data_ptr() || gp.get_data_length() != kCcixMaxMessageBytes)
        return std::string("a snoop must be a read of ") + std::to_string(kCcixMaxMessageBytes) +
               " B (response header + line)";
    if (h.address % kCcixLineBytes) return "snoop of unaligned line address " + hex(h.address);
    return "";
}

void RequestAgent::snoop_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    CcixHeader h;
    const std::string why = check_snoop(gp, h);
    if (!why.empty()) {
        errors_.add();
        last_error_ = std::string(name()) + ": refused on VC1: " + why;
        return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    }
    snoops_.add();
    delay += snoop_time_;
    uint8_t* buf = gp.get_data_ptr();
    const core::SnoopResponse s =
        cache_->snoop(snoop_kind(h.op), h.address, buf + kCcixHeaderBytes, delay);
    if (s.data) snoop_data_.add();
    if (s.was_valid && (h.op == CcixOp::SnpUnique || h.op == CcixOp::SnpInvalidate) &&
        !watched_.empty())
        fire(h.address, sc_core::sc_time_stamp() + delay);
    CcixHeader r = h;
    r.op = s.data ? CcixOp::SnpRespData : CcixOp::SnpResp;
    r.length = s.data ? uint8_t(kCcixLineBytes) : 0;
    r.state = s.was_valid ? s.before : core::LineState::I;
    r.encode(buf);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned RequestAgent::snoop_dbg(tlm::tlm_generic_payload& gp) {
    CcixHeader h;
    if (!check_snoop(gp, h).empty()) return 0;
    uint8_t* buf = gp.get_data_ptr();
    const bool dirty = cache_->peek_dirty(h.address, buf + kCcixHeaderBytes);
    CcixHeader r = h;
    r.op = dirty ? CcixOp::SnpRespData : CcixOp::SnpResp;
    r.length = dirty ? uint8_t(kCcixLineBytes) : 0;
    r.state = cache_->state(h.address);
    r.encode(buf);
    return kCcixMaxMessageBytes;
}

}  // namespace canopy::link
