// Parameters of the CCIX coherent link: the device's request agent (RA) with its system cache,
// the host's home agent (HA) and Extended Speed Mode (CCIX-vs-PCIe paper, seeds/003 Sections
// III-IV). Keys under "link.ccix."; sources in each description ("assumed" with the reason when
// the paper gives no value).
//
// Device profile (`profile`), applied as a preset of the system cache and the RA's issue path
// before the explicit keys are read (so a key given by the user overrides its preset):
//   u280     Alveo U280: soft CCIX on XDMA with Xilinx's System Cache IP (PG118) as the one-level
//            system cache, next to the CCIX Traffic Generator in the same fabric
//   vck5000  Versal: the hardened CPM (AM016) with its 1 MiB L2 behind a small L1; the fabric
//            reaches the CPM's caches through its asynchronous CPI bridge and CHI
//
// Calibration (CALIBRATION.md) with the defaults of the other models (ATC hit 20 ns, link 180 ns
// per traversal at Gen4 x8, home request 20 ns, SLC 30 ns, DRAM 100 ns):
//   E3 local hit = issue_ns + ATC hit + cache hit (+ read_return_ns for reads):
//      u280 12 + 20 + 48 = 80 ns write, 100 ns read; vck5000 (an L1 hit) 82 + 20 + 48 = 150 ns,
//      170 ns. The vck5000's larger L2 holds working sets the u280's SC cannot, so it is faster
//      on large transfers, as the paper saw.
//   E2 64 B read, SC miss, ATC hit (u280) = 80 + ra.request_ns + link up (181.5) + ha.request_ns
//      + home 20 + DRAM 100 + link down with 80 B (186.3) + ra.response_ns + read_return_ns
//      = 699.9 ns (published ~700).
//   E5 device AtomicCompare on a hot lock (u280) = issue + ATC + SC issue (48) + atomic_ns +
//      request + link + HA + home 20 + SLC 30 + link with 16 B + response + return = 765.8 ns
//      (published 740-800).
//   E1 CCIX small reads ~33% below PCIe-DMA: the CCIX side is E2's 700 ns, the DMA side the DMA
//      engine's (link/dma_engine.hpp); multi-line reads keep ra.max_outstanding lines in flight,
//      which sets the CCIX read bandwidth of E1's throughput ratios and the 2-4 KiB crossover.
#pragma once

#include <cstdint>
#include <string>

#include "core/coherent_cache.hpp"
#include "core/config.hpp"
#include "link/pcie_config.hpp"

namespace canopy::link {

struct CcixRequestAgentConfig {
    // The accelerator's request to the system cache (AXI4-MM from the CTG; on the vck5000 also
    // the PL-to-CPM crossing). Set by the profile.
    double issue_ns = 12.0;
    // Assumed: the RA's soft logic (250 MHz) turning a cache miss into a CCIX request message and
    // handing it to the PCIe controller (10 cycles); with response_ns fits E2's ~700 ns.
    double request_ns = 40.0;
    // Assumed: taking the response from the PCIe controller and filling the cache (8 cycles).
    double response_ns = 32.0;
    // Read data back to the accelerator: the read/write difference of E3 (100 - 80 ns).
    double read_return_ns = 20.0;
    // Atomics are "multi-step sequences of AXI4-MM requests" on the RA side (paper IV Exp. 5):
    // their extra steps; assumed 140 ns to land E5's 740-800 ns.
    double atomic_ns = 140.0;
    // Assumed: a snoop's system-cache lookup and response message (10 cycles).
    double snoop_ns = 40.0;
    // Line requests of one multi-line transfer in flight at once (the system cache's outstanding
    // misses). Calibrated to E1 [CCIX paper IV Exp. 1]: with ~700 ns per line miss (E2) the CCIX
    // read bandwidth is max_outstanding x 64 B / 700 ns; E1's read throughput ratios (3.3x,
    // 1.29x, 0.87x at 1, 16, 32 KiB) need ~3.3-3.9 GB/s beside a ~12-14 GB/s DMA engine, and
    // CCIX reads must stay shorter than DMA reads up to 2 KiB and be longer from 4 KiB: 40 (at
    // 700 ns, 3.7 GB/s). It was an assumed 16 (PG118's System Cache tracks 16-32 transactions),
    // which gives 1.5 GB/s and a crossover below 2 KiB; the paper does not say how the U280's
    // soft RA reaches more.
    uint32_t max_outstanding = 40;
    // The system cache: l2 is the last level (u280: the only one), l1 optional. Set by the profile.
    core::CoherentCacheConfig cache;
};

struct CcixHomeAgentConfig {
    // Assumed: the N1-SDP's CCIX gateway (CMN-600 CXG) converting a CCIX request to CHI and the
    // response back; with the RA's times fits E2.
    double request_ns = 40.0;
    // Assumed: the gateway turning a CHI snoop into a CCIX snoop and the answer back.
    double snoop_ns = 20.0;
};

struct CcixConfig {
    std::string profile = "u280";
    CcixRequestAgentConfig ra;
    CcixHomeAgentConfig ha;
    // Extended Speed Mode: negotiated at link start, on only when both ends support it.
    bool esm_host = false;        // assumed: the paper does not say the N1-SDP ran ESM; its figures
                                  // are read at PCIe 4.0's 16 GT/s
    bool esm_device = true;       // both boards' controllers support 20/25 GT/s (AM016, PG213)
    double esm_rate_gt_s = 25.0;  // paper III-A: ESM raises 16 to 25 GT/s

    CcixConfig() { apply_profile(); }
    // Sets the cache geometry and latencies of `profile`; throws InputError for an unknown one.
    void apply_profile();
    static CcixConfig preset(const std::string& profile);
    void describe(core::Params& p);  // under "link.ccix."
    void validate() const;           // throws InputError naming the key
};

// Extended Speed Mode as negotiated during CCIX discovery (paper III-A: enabled automatically at
// boot when both the RA and the HA support it). It changes the physical layer, so it applies to
// both VCs of the link.
struct EsmNegotiation {
    bool enabled = false;
    double base_gt_s = 0;  // the link's PCIe rate per lane
    double rate_gt_s = 0;  // the rate the link runs at
    std::string reason;    // why ESM is off, "" when on
};
EsmNegotiation negotiate_esm(const CcixConfig& ccix, const PcieConfig& link);

// The link's config after ESM negotiation: the negotiated per-lane rate as its rate override
// (unchanged when ESM is off); `esm` (optional) says what was negotiated and why.
PcieConfig esm_link_config(const CcixConfig& ccix, const PcieConfig& link, EsmNegotiation* esm);

}  // namespace canopy::link
