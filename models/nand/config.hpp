// Parameters of the NAND flash array. Defaults follow Flash-Cosmos (MICRO'22): its Table 1
// evaluation SSD and the characterisation of 48-layer 3D TLC chips (Sections 5 and 7); values
// the paper does not give are marked "assumed" with the reason.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.hpp"

namespace canopy::nand {

struct Geometry {
    uint32_t channels = 8;          // Table 1
    uint32_t dies_per_channel = 8;  // Table 1
    uint32_t planes_per_die = 2;    // Table 1
    uint32_t blocks_per_plane =
        8192;  // Table 1: 2,048 blocks x 4 sub-blocks; our block = sub-block
    uint32_t wordlines_per_block = 48;  // Section 5.1: 48 cells per NAND string
    uint32_t page_bytes = 16384;        // Section 5.1: 16 KiB pages
    uint32_t spare_bytes = 2208;        // assumed: common spare area of 16 KiB-page 3D TLC parts

    uint32_t page_total_bytes() const { return page_bytes + spare_bytes; }
    uint32_t page_words() const { return (page_total_bytes() + 7) / 8; }
    uint64_t dies() const { return uint64_t(channels) * dies_per_channel; }
    void describe(core::Params& p);
};

struct Timing {
    double t_read_slc_us = 22.5;   // Section 5.1 / Table 1: tR in SLC mode
    double t_read_mlc_us = 40.0;   // assumed: between SLC and TLC
    double t_read_tlc_us = 60.0;   // Figure 7 worked example: tR = 60 us
    double t_prog_slc_us = 200.0;  // Table 1
    double t_prog_mlc_us = 500.0;  // Table 1
    double t_prog_tlc_us = 700.0;  // Table 1
    double esp_factor = 2.0;  // Table 1: tESP = 400 us = 2 x tPROG(SLC); >= 1.9 gives zero errors
    double t_erase_us = 3500.0;         // Section 2.1: 3-5 ms; assumed 3.5 ms
    double t_xor_us = 2.0;              // assumed: one latch-to-latch logic step, no sensing
    double t_cache_busy_us = 3.0;       // assumed: tRCBSY, S-latch to C-latch move of a cache read
    double t_reset_us = 5.0;            // assumed: ONFI tRST when idle
    double t_feature_us = 1.0;          // assumed: ONFI tFEAT
    double t_wb_ns = 100.0;             // assumed: ONFI tWB, last command cycle to busy
    double t_ccs_ns = 300.0;            // assumed: ONFI tCCS, column change to data out
    double t_whr_ns = 80.0;             // assumed: ONFI tWHR, command to status data out
    double channel_rate_mbps = 1200.0;  // Table 1 / Figure 7: 1.2 GB/s per channel
    double t_cmd_cycle_ns = 10.0;       // assumed: one command or address cycle on the bus
    // tMWS over tR, from Figures 12 and 13 (Section 5.2), interpolated linearly in between.
    double mws_intra_at_8wl = 0.008;       // "< 1% for up to 8 wordlines"
    double mws_intra_at_48wl = 0.033;      // "+3.3% for all 48"
    uint32_t mws_inter_hidden_blocks = 8;  // "hidden by bitline precharge up to 8 blocks"
    double mws_inter_at_32blk = 0.363;     // "+36.3% for 32 blocks"
    // Section 5.2: with the 4-block cap a chip can run every MWS at one fixed tMWS, the worst
    // case under the cap (1.033 tR); false: each MWS takes its characterised latency.
    bool mws_fixed_latency = false;
    void describe(core::Params& p);
};

struct Power {
    double p_read_mw = 50.0;     // assumed: ~20 mA at 2.5 V array current during sensing
    double prog_vs_read = 1.0;   // assumed: program and read currents are alike (ONFI ICC1/ICC2)
    double erase_vs_read = 1.9;  // Figure 14: erase sits between 4-block (1.8x) and 5-block MWS
    double mws_2blk_vs_read = 1.34;          // Figure 14: +34% at 2 blocks
    double mws_4blk_vs_read = 1.80;          // Figure 14: about +80% at 4 blocks
    double mws_intra_saving_at_48wl = 0.10;  // assumed: VREF instead of VPASS on selected WLs
    uint32_t mws_max_blocks = 4;             // Section 5.2: power cap on inter-block MWS
    double io_pj_per_byte = 40.0;            // assumed: 5 pJ/bit NV-DDR3 I/O
    void describe(core::Params& p);
};

struct Reliability {
    // RBER = rber_slc_ref * mode * wear(pe)/wear(ref) * age(t)/age(ref) * no_randomisation * esp
    double rber_slc_ref = 8.6e-4;      // SLC, randomised, at the reference wear and age
    double ref_pe_cycles = 10000;      // Section 5.1: worst case tested, 10K P/E cycles
    double ref_retention_days = 365;   // Section 5.1: 1-year retention at 30 C
    double wear_per_kcycle = 0.5;      // assumed: wear(pe) = 1 + 0.5 * pe/1000
    double age_per_decade = 1.0;       // assumed: age(t) = 1 + log10(1 + days)
    double mlc_vs_slc = 4.0;           // Section 3.2: MLC RBER up to 4x SLC
    double tlc_vs_slc = 12.0;          // assumed: TLC about 3x MLC
    double no_rand_slc = 1.91;         // Section 3.2: disabling randomisation, SLC
    double no_rand_mlc = 4.92;         // Section 3.2: disabling randomisation, MLC (also TLC)
    double esp_tenfold_factor = 1.6;   // Figure 11: median block, +60% tESP gives 10x lower RBER
    double esp_zero_factor = 1.9;      // Figure 11: tESP >= 1.9 tPROG gives zero bit errors
    double esp_decades_at_zero = 8.6;  // just below 1.9: 10^-8.6 x (below 2.07e-12 from 8.6e-4)
    double retention_days = 0;         // age added to every page, to study aged data
    uint32_t initial_pe_cycles = 0;    // wear every block starts with
    bool inject_errors = true;         // sense with bit errors drawn from the model
    void describe(core::Params& p);
};

struct NandConfig {
    Geometry geometry;
    Timing timing;
    Power power;
    Reliability reliability;
    bool functional = true;  // false: timing-only, keeps no data (for full-scale runs)
    // A simulation aid: pages the controller randomises are kept as their units' tokens and bytes
    // shared among pages (platform::compact_nand_pages) rather than whole; no result changes.
    bool compact_pages = true;
    void describe(core::Params& p);  // under "nand."
};

}  // namespace canopy::nand
