#include "link/atc.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

namespace {
constexpr uint64_t kSmallPage = 4096;
constexpr uint64_t kSizeBit = 1ull << 11, kWriteBit = 2, kReadBit = 1;
std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }
}  // namespace

const std::vector<uint64_t>& atc_page_sizes() {
    static const std::vector<uint64_t> sizes = {4ull << 10, 64ull << 10, 2ull << 20, 32ull << 20,
                                                1ull << 30};
    return sizes;
}

uint64_t AtsEntry::encode() const {
    uint64_t raw = physical_page & ~(kSmallPage - 1);
    if (page_bytes > kSmallPage) {
        // Bits 12 .. k-2 set, bit k-1 clear, for a page of 2^k bytes.
        raw |= kSizeBit | ((page_bytes / 2 - 1) & ~(kSmallPage - 1));
        raw &= ~(page_bytes / 2);
    }
    if (read) raw |= kReadBit;
    if (write) raw |= kWriteBit;
    return raw;
}

AtsEntry AtsEntry::decode(uint64_t raw) {
    AtsEntry e;
    e.read = raw & kReadBit;
    e.write = raw & kWriteBit;
    e.page_bytes = kSmallPage;
    if (raw & kSizeBit) {
        uint64_t bit = kSmallPage;  // count the ones from bit 12 up
        while (bit && (raw & bit)) bit <<= 1;
        e.page_bytes = bit ? bit * 2 : 0;  // 0: malformed (all ones)
    }
    e.physical_page = e.page_bytes ? raw & ~(e.page_bytes - 1) : 0;
    return e;
}

void AtcConfig::describe(core::Params& p) {
    core::Params a = p.scope("link").scope("atc");
    a("entries", entries, "", "translations the device's ATC holds [assumed: a small ATC]", 1,
      65536)("ways", ways, "", "associativity; = entries for fully associative [assumed]", 1,
             65536)("hit_latency_ns", hit_latency_ns, "ns", "ATC lookup time [assumed]", 0.0, 1e6)(
        "miss_overhead_ns", miss_overhead_ns, "ns",
        "ATC/ATS-switch time around one ATS request on a miss [CCIX paper IV "
        "Exp. 2: 2453 - 617 - 700 ns; includes the ATS request's link round trip, which a "
        "bench modelling the link (exp ats-cost) charges on the link and subtracts here]",
        0.0, 1e7)("max_outstanding", max_outstanding, "",
                  "ATS translation requests in flight at once; 1 = blocking [assumed: 8 covers "
                  "the pages of a 32 KiB transfer, CCIX paper IV Exp. 2]",
                  1, 1024);
}

void AtcConfig::validate() const {
    if (max_outstanding == 0)
        throw InputError("config", "link.atc.max_outstanding", "must be at least 1, got 0");
    if (ways == 0 || entries == 0 || entries % ways)
        throw InputError("config", "link.atc.entries",
                         "must be a non-zero multiple of link.atc.ways (" + std::to_string(ways) +
                             "), got " + std::to_string(entries));
}

Atc::Atc(sc_core::sc_module_name name, const AtcConfig& cfg, core::Services& services)
    : sc_module(name),
      ats_initiator("ats_initiator"),
      cfg_((cfg.validate(), cfg)),
      services_(services),
      sets_(cfg.entries / cfg.ways),
      entries_(cfg.entries),
      slot_free_(cfg.max_outstanding, sc_core::SC_ZERO_TIME),
      hit_latency_(cfg.hit_latency_ns, sc_core::SC_NS),
      miss_overhead_(cfg.miss_overhead_ns, sc_core::SC_NS),
      lookups_(services.stats.counter(this->name(), "lookups", "translations asked", true)),
      hits_(services.stats.counter(this->name(), "hits", "lookups a valid entry answered", true)),
      misses_(services.stats.counter(this->name(), "misses", "lookups sent to the host", true)),
      failures_(services.stats.counter(this->name(), "failures", "failed translations", true)),
      evictions_(services.stats.counter(this->name(), "evictions", "valid entries replaced")),
      invalidations_(services.stats.counter(this->name(), "invalidations", "entries dropped")),
      latency_(services.stats.distribution(this->name(), "latency", "ns",
                                           "translation latency, lookup to answer", true)) {}

uint32_t Atc::set_of(uint64_t va, uint64_t page_bytes) const {
    return uint32_t((va / page_bytes) % sets_);
}

const Atc::Entry* Atc::find(uint64_t va) const {
    for (uint64_t size : atc_page_sizes()) {
        const Entry* set = &entries_[size_t(set_of(va, size)) * cfg_.ways];
        for (uint32_t w = 0; w < cfg_.ways; ++w)
            if (set[w].valid && set[w].page_bytes == size && set[w].va_page == (va & ~(size - 1)))
                return &set[w];
    }
    return nullptr;
}

Atc::Entry* Atc::find(uint64_t va) {
    return const_cast<Entry*>(static_cast<const Atc*>(this)->find(va));
}

bool Atc::contains(uint64_t va) const { return find(va) != nullptr; }

void Atc::insert(uint64_t va, const AtsEntry& t) {
    Entry* set = &entries_[size_t(set_of(va, t.page_bytes)) * cfg_.ways];
    Entry* victim = &set[0];
    for (uint32_t w = 0; w < cfg_.ways; ++w) {
        if (!set[w].valid) {
            victim = &set[w];
            break;
        }
        if (set[w].last_use < victim->last_use) victim = &set[w];
    }
    if (victim->valid) evictions_.add();
    *victim = Entry{
        true, va & ~(t.page_bytes - 1), t.physical_page, t.page_bytes, t.read, t.write, ++tick_};
}

std::string Atc::request(uint64_t va, AtsEntry& out, sc_core::sc_time& delay) {
    uint8_t data[kAtsEntryBytes] = {};
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(va & ~(kSmallPage - 1));  // ATS requests carry a 4 KiB-aligned address
    gp.set_data_ptr(data);
    gp.set_data_length(kAtsEntryBytes);
    gp.set_streaming_width(kAtsEntryBytes);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    auto* tlp = new core::TlpExt;  // owned and freed by the payload
    tlp->type = core::TlpExt::Type::AtsTranslate;
    tlp->at = core::TlpExt::AddressType::TranslationRequest;
    gp.set_extension(tlp);
    auto* request = new core::RequestExt;  // the trace's flow of the access being translated
    request->flow = services_.trace.current_flow();
    gp.set_extension(request);
    ats_initiator->b_transport(gp, delay);
    if (!gp.is_response_ok())
        return "ATS request for " + hex(va) + " answered " + gp.get_response_string();
    uint64_t raw = 0;
    for (uint32_t i = 0; i < kAtsEntryBytes; ++i) raw |= uint64_t(data[i]) << (8 * i);
    out = AtsEntry::decode(raw);
    if (!out.success()) return "ATS translation of " + hex(va) + " failed: no access (R = W = 0)";
    bool supported = false;
    for (uint64_t s : atc_page_sizes()) supported |= s == out.page_bytes;
    if (!supported)
        return "ATS translation of " + hex(va) + " returned an unsupported page size of " +
               std::to_string(out.page_bytes) + " B";
    return "";
}

Atc::Result Atc::translate(uint64_t va, sc_core::sc_time& delay) {
    const sc_core::sc_time start = delay;
    lookups_.add();
    delay += hit_latency_;
    Result r;
    if (Entry* e = find(va)) {
        hits_.add();
        e->last_use = ++tick_;
        r.ok = r.hit = true;
        r.page_bytes = e->page_bytes;
        r.physical = e->pa_page + (va - e->va_page);
        r.page_end = e->va_page + e->page_bytes;
    } else {
        misses_.add();
        // The request takes the slot that frees first; it holds it until its answer.
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        auto slot = std::min_element(slot_free_.begin(), slot_free_.end());
        if (*slot > now + delay) {
            r.slot_wait = *slot - now - delay;
            delay = *slot - now;
        }
        delay += miss_overhead_;
        AtsEntry t;
        r.error = request(va, t, delay);
        *slot = now + delay;
        if (r.error.empty()) {
            insert(va, t);
            const uint64_t va_page = va & ~(t.page_bytes - 1);
            r.ok = true;
            r.page_bytes = t.page_bytes;
            r.physical = t.physical_page + (va - va_page);
            r.page_end = va_page + t.page_bytes;
        } else {
            failures_.add();
            r.error = std::string(name()) + ": " + r.error;
        }
    }
    latency_.sample(ns_of(delay - start));
    return r;
}

bool Atc::invalidate(uint64_t va) {
    Entry* e = find(va);
    if (!e) return false;
    e->valid = false;
    invalidations_.add();
    return true;
}

uint64_t Atc::invalidate(uint64_t va, uint64_t bytes) {
    uint64_t n = 0;
    for (Entry& e : entries_) {
        if (e.valid && e.va_page < va + bytes && va < e.va_page + e.page_bytes) {
            e.valid = false;
            ++n;
        }
    }
    invalidations_.add(n);
    return n;
}

void Atc::invalidate_all() {
    for (Entry& e : entries_)
        if (e.valid) {
            e.valid = false;
            invalidations_.add();
        }
}

double ats_link_round_trip_ns(const PcieConfig& c) {
    const Tlp req{TlpKind::AtsRequest, 0, kAtsEntryBytes};
    const Tlp cpl{TlpKind::AtsCompletion, 0, kAtsEntryBytes};
    return c.upstream.total_ns() + c.downstream.total_ns() +
           serialisation_ns(c, tlp_wire_bytes(c, req)) +
           serialisation_ns(c, tlp_wire_bytes(c, cpl));
}

AtcConfig atc_for_modelled_link(const PcieConfig& link) {
    AtcConfig c;
    c.miss_overhead_ns = std::max(0.0, c.miss_overhead_ns - ats_link_round_trip_ns(link));
    return c;
}

}  // namespace canopy::link
