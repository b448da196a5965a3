#include "link/ccix_config.hpp"

#include "core/error.hpp"

namespace canopy::link {

void CcixConfig::apply_profile() {
    core::CoherentCacheConfig& c = ra.cache;
    if (profile == "u280") {
        // Xilinx System Cache IP (PG118) in CCIX mode, one level; size and ways assumed.
        ra.issue_ns = 12.0;  // 3 cycles of the 250 MHz AXI interconnect (assumed)
        c.l1 = core::CacheGeometry{0, 4, 64};
        c.l2 = core::CacheGeometry{256 * 1024, 4, 64};
        c.l1_hit_ns = 0.0;
        c.l2_hit_ns = 48.0;  // 12 cycles at 250 MHz: E3's 80 ns write less issue and ATC hit
        // Read misses allocate with ReadShared, PG118's "CCIX Property Translation" for a read
        // miss allocating (ARCACHE x101/x111); ARCACHE 1101/1111 would make it ReadUnique.
        c.read_unique = false;
    } else if (profile == "vck5000") {
        // CPM (AM016): a 1 MiB L2 with 64 B lines behind a small L1; every access crosses the
        // asynchronous CPI bridge from the fabric (assumed 70 ns, so an L1 hit gives E3's 150 ns).
        ra.issue_ns = 82.0;
        c.l1 = core::CacheGeometry{32 * 1024, 4, 64};    // size and ways assumed ("small", AM016)
        c.l2 = core::CacheGeometry{1024 * 1024, 8, 64};  // 1 MiB (AM016); 8 ways assumed
        c.l1_hit_ns = 48.0;                              // assumed equal to the u280's SC
        c.l2_hit_ns = 40.0;                              // assumed
        c.read_unique = false;  // assumed: the CPM's L2 reads shared, as a CHI RN-F's loads do
    } else {
        throw InputError("config", "link.ccix.profile",
                         "expected one of u280, vck5000, got '" + profile + "'");
    }
}

CcixConfig CcixConfig::preset(const std::string& profile) {
    CcixConfig c;
    c.profile = profile;
    c.apply_profile();
    return c;
}

void CcixConfig::describe(core::Params& p) {
    core::Params x = p.scope("link").scope("ccix");
    x.choice("profile", profile, {"u280", "vck5000"},
             "device: u280 (soft CCIX, one-level system cache) or vck5000 (CPM, L1 + L2); sets "
             "the ra.issue_ns and ra.sc.* defaults [CCIX paper III-B, III-C]");
    apply_profile();  // the preset becomes the default of the keys below
    x("esm.host", esm_host,
      "host supports Extended Speed Mode [assumed off: the paper's figures are at 16 GT/s]")(
        "esm.device", esm_device, "device supports Extended Speed Mode [AM016: CPM 20/25 GT/s]")(
        "esm.rate_gt_s", esm_rate_gt_s, "GT/s",
        "ESM rate per lane when both ends support it, 20 or 25 [CCIX paper III-A: 25]", 20.0, 25.0);
    core::Params r = x.scope("ra");
    r("issue_ns", ra.issue_ns, "ns",
      "accelerator request to the system cache [assumed; profile: u280 12, vck5000 82 with the "
      "CPI crossing; fits E3]",
      0.0, 1e6)("request_ns", ra.request_ns, "ns",
                "RA builds a CCIX request on a miss [assumed; fits E2 ~700 ns]", 0.0, 1e6)(
        "response_ns", ra.response_ns, "ns", "RA takes a response and fills the cache [assumed]",
        0.0, 1e6)("read_return_ns", ra.read_return_ns, "ns",
                  "read data back to the accelerator [E3: read - write = 20 ns]", 0.0, 1e6)(
        "atomic_ns", ra.atomic_ns, "ns",
        "extra AXI steps of a device atomic [assumed; fits E5 740-800 ns]", 0.0,
        1e6)("snoop_ns", ra.snoop_ns, "ns", "RA handles one snoop [assumed]", 0.0, 1e6);
    r("max_outstanding", ra.max_outstanding, "",
      "line requests of one transfer in flight at once [calibrated to E1: CCIX read throughput "
      "and the 2-4 KiB read latency crossover, CCIX paper IV Exp. 1]",
      1, 1024);
    core::Params s = r.scope("sc");
    core::CoherentCacheConfig& c = ra.cache;
    s("l1.size_bytes", c.l1.size_bytes, "B",
      "system cache L1, 0 = none [profile: u280 0, vck5000 32 KiB assumed]", 0,
      1ull << 30)("l1.ways", c.l1.ways, "ways", "L1 associativity [assumed]", 1, 64)(
        "l1.hit_ns", c.l1_hit_ns, "ns", "L1 hit [assumed; vck5000 48, fits E3]", 0.0, 1e6)(
        "l2.size_bytes", c.l2.size_bytes, "B",
        "system cache last level [u280 256 KiB assumed (PG118 System Cache); vck5000 1 MiB "
        "(AM016 CPM L2)]",
        1024, 1ull << 32)("l2.ways", c.l2.ways, "ways", "last-level associativity [assumed]", 1,
                          64)("l2.hit_ns", c.l2_hit_ns, "ns",
                              "last-level hit beyond the L1 [u280 48 fits E3; vck5000 40 assumed]",
                              0.0, 1e6);
    s("read_unique", c.read_unique,
      "read misses ask for a unique copy (ReadUnique), else ReadShared [PG118 System Cache: "
      "ReadShared for ARCACHE x101/x111, ReadUnique for 1101/1111; vck5000 assumed shared]");
    core::Params h = x.scope("ha");
    h("request_ns", ha.request_ns, "ns",
      "host CCIX gateway per request, CCIX <-> CHI [assumed; fits E2]", 0.0,
      1e6)("snoop_ns", ha.snoop_ns, "ns", "host CCIX gateway per snoop [assumed]", 0.0, 1e6);
}

void CcixConfig::validate() const {
    if (profile != "u280" && profile != "vck5000")
        throw InputError("config", "link.ccix.profile",
                         "expected one of u280, vck5000, got '" + profile + "'");
    if (esm_rate_gt_s != 20.0 && esm_rate_gt_s != 25.0)
        throw InputError("config", "link.ccix.esm.rate_gt_s",
                         "CCIX ESM runs at 20 or 25 GT/s, got " + std::to_string(esm_rate_gt_s));
    auto geometry = [](const core::CacheGeometry& g, const std::string& key) {
        g.validate(key);
        if (g.line_bytes != 64)
            throw InputError("config", key + ".line_bytes",
                             "CCIX lines are 64 B, got " + std::to_string(g.line_bytes));
    };
    if (ra.cache.has_l1()) geometry(ra.cache.l1, "link.ccix.ra.sc.l1");
    geometry(ra.cache.l2, "link.ccix.ra.sc.l2");
}

EsmNegotiation negotiate_esm(const CcixConfig& ccix, const PcieConfig& link) {
    EsmNegotiation n;
    n.base_gt_s = link.gigatransfers_per_s();
    n.rate_gt_s = n.base_gt_s;
    if (!ccix.esm_host && !ccix.esm_device)
        n.reason = "neither end supports ESM";
    else if (!ccix.esm_host)
        n.reason = "the host (home agent) does not support ESM";
    else if (!ccix.esm_device)
        n.reason = "the device (request agent) does not support ESM";
    else if (link.generation != 4)
        n.reason = "ESM extends a PCIe 4.0 link; this one is generation " +
                   std::to_string(link.generation);
    if (!n.reason.empty()) return n;
    n.enabled = true;
    n.rate_gt_s = ccix.esm_rate_gt_s;
    return n;
}

PcieConfig esm_link_config(const CcixConfig& ccix, const PcieConfig& link, EsmNegotiation* esm) {
    const EsmNegotiation n = negotiate_esm(ccix, link);
    if (esm) *esm = n;
    PcieConfig c = link;
    if (n.enabled) c.rate_override_gt_s = n.rate_gt_s;  // both VCs: one physical layer
    return c;
}

}  // namespace canopy::link
