#include "host/iommu.hpp"

#include <string>

#include "core/error.hpp"
#include "core/sim_time.hpp"

namespace canopy::host {

using sc_core::SC_NS;
using sc_core::sc_time;

using core::ns_of;

void IommuConfig::describe(core::Params& p) {
    p("iotlb_entries", iotlb_entries, "entries", "IOTLB entries (assumed)", 1, 1 << 20);
    p("iotlb_ways", iotlb_ways, "ways", "IOTLB associativity (assumed)", 1, 1 << 20);
    p("processing_ns", processing_ns, "ns",
      "fixed cost of one ATS request at the IOMMU; 617 ns (seeds/003 Sec. IV) minus 4 walk reads",
      0.0, 1e6);
    p("prefetch_pages", prefetch_pages, "pages",
      "translations of the following pages fetched into the IOTLB after each request (assumed)", 0,
      1024);
}

void IommuConfig::validate() const {
    if (iotlb_ways == 0 || iotlb_entries % iotlb_ways != 0)
        throw InputError("config", "host.iommu.iotlb_entries",
                         "must be a multiple of host.iommu.iotlb_ways (" +
                             std::to_string(iotlb_entries) + " entries, " +
                             std::to_string(iotlb_ways) + " ways)");
}

Iommu::Iommu(sc_core::sc_module_name name, const IommuConfig& cfg, core::Services& services)
    : sc_module(name),
      walk_socket("walk_socket"),
      cfg_((cfg.validate(), cfg)),
      iotlb_(cfg.iotlb_entries, cfg.iotlb_ways, page_sizes()),
      requests_(services.stats.counter(this->name(), "requests", "ATS translation requests", true)),
      hits_(services.stats.counter(this->name(), "iotlb_hits", "requests hitting the IOTLB")),
      misses_(services.stats.counter(this->name(), "iotlb_misses", "requests missing the IOTLB")),
      walks_(services.stats.counter(this->name(), "walks", "page-table walks, prefetches too")),
      walk_reads_(services.stats.counter(this->name(), "walk_reads", "page-table reads")),
      failures_(services.stats.counter(
          this->name(), "failures", "ATS failures (unmapped VA, unknown PASID, bad walk)", true)),
      prefetches_(services.stats.counter(this->name(), "prefetches",
                                         "translations prefetched into the IOTLB")),
      invalidations_(services.stats.counter(this->name(), "invalidations",
                                            "IOTLB entries dropped by invalidation")),
      walk_latency_(services.stats.distribution(this->name(), "latency.walk", "ns",
                                                "page-table walk time of a request's miss")),
      latency_(services.stats.distribution(this->name(), "latency.ats", "ns",
                                           "request to answer, per ATS request", true)),
      services_(services),
      track_(services.trace.track(this->name())) {}

void Iommu::attach(uint32_t pasid, AddressSpace& space) {
    roots_[pasid] = space.root();
    space.on_unmap([this, pasid](uint64_t va, uint64_t bytes) { invalidate(pasid, va, bytes); });
}

bool Iommu::iotlb_contains(uint32_t pasid, uint64_t va) const { return iotlb_.contains(pasid, va); }

AtsResult Iommu::walk(uint32_t pasid, uint64_t va, sc_time& delay) {
    AtsResult r;
    auto root = roots_.find(pasid);
    if (root == roots_.end()) return r;
    walks_.add();
    auto read = [&](uint64_t pa, uint64_t& desc) {
        uint8_t buf[8] = {};
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(buf);
        gp.set_data_length(8);
        gp.set_streaming_width(8);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        walk_socket->b_transport(gp, delay);
        walk_reads_.add();
        for (int i = 7; i >= 0; --i) desc = (desc << 8) | buf[i];
        return gp.is_response_ok();  // false: a table pointer beyond host memory
    };
    auto leaf = walk_tables(root->second, va, read, &r.walk_reads);
    if (!leaf) return r;
    r.ok = true;
    r.pa = leaf->pa;
    r.va_base = leaf->va_base;
    r.pa_base = leaf->pa_base;
    r.page_bytes = leaf->page_bytes;
    return r;
}

AtsResult Iommu::translate(uint32_t pasid, uint64_t va, sc_time& delay) {
    sc_time start = delay;
    requests_.add();
    delay += sc_time(cfg_.processing_ns, SC_NS);
    AtsResult r;
    if (const auto* e = iotlb_.lookup(pasid, va)) {
        hits_.add();
        r.ok = r.iotlb_hit = true;
        r.va_base = e->va_base;
        r.pa_base = e->pa_base;
        r.page_bytes = e->page_bytes;
        r.pa = e->pa_base + (va - e->va_base);
    } else {
        misses_.add();
        sc_time before = delay;
        r = walk(pasid, va, delay);
        if (r.walk_reads) walk_latency_.sample(ns_of(delay - before));
        if (r.ok) iotlb_.insert(pasid, r.va_base, r.pa_base, r.page_bytes);
    }
    latency_.sample(ns_of(delay - start));
    if (services_.trace.enabled())
        services_.trace.complete(track_, r.iotlb_hit ? "translate" : "translate (walk)", "host",
                                 sc_core::sc_time_stamp() + start, delay - start,
                                 services_.trace.current_flow(),
                                 {{"pasid", std::to_string(pasid)},
                                  {"va", core::TransactionTrace::hex(va)},
                                  {"ok", r.ok ? "yes" : "no"}});
    if (!r.ok) {
        failures_.add();
        return r;
    }
    // Pre-translation of the pages that follow, off the requester's path.
    uint64_t next = r.va_base + r.page_bytes;
    for (uint32_t k = 0; k < cfg_.prefetch_pages; ++k) {
        if (const auto* e = iotlb_.lookup(pasid, next)) {  // already cached: look further on
            next = e->va_base + e->page_bytes;
            continue;
        }
        sc_time untimed = sc_core::SC_ZERO_TIME;
        AtsResult p = walk(pasid, next, untimed);
        if (!p.ok) break;
        iotlb_.insert(pasid, p.va_base, p.pa_base, p.page_bytes);
        prefetches_.add();
        next = p.va_base + p.page_bytes;
    }
    return r;
}

void Iommu::invalidate(uint32_t pasid, uint64_t va, uint64_t bytes) {
    invalidations_.add(iotlb_.invalidate(pasid, va, bytes));
    for (auto& l : invalidate_listeners_) l(pasid, va, bytes);
}

void Iommu::invalidate_all() { invalidations_.add(iotlb_.invalidate_all()); }

}  // namespace canopy::host
