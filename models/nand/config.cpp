#include "nand/config.hpp"

namespace canopy::nand {

void Geometry::describe(core::Params& p) {
    p("channels", channels, "", "flash channels", 1, 64)("dies_per_channel", dies_per_channel, "",
                                                         "dies sharing each channel", 1, 64)(
        "planes_per_die", planes_per_die, "", "planes per die", 1, 8)(
        "blocks_per_plane", blocks_per_plane, "", "blocks (sub-blocks) per plane", 1, 1u << 16)(
        "wordlines_per_block", wordlines_per_block, "", "wordlines (cells) per NAND string", 1, 64)(
        "page_bytes", page_bytes, "B", "page data bytes", 8, 1u << 20)(
        "spare_bytes", spare_bytes, "B", "page spare (OOB) bytes", 0, 1u << 16);
}

void Timing::describe(core::Params& p) {
    p("t_read_slc_us", t_read_slc_us, "us", "page read tR, SLC mode [FC Table 1]", 0.001, 1e6)(
        "t_read_mlc_us", t_read_mlc_us, "us", "page read tR, MLC mode [assumed]", 0.001, 1e6)(
        "t_read_tlc_us", t_read_tlc_us, "us", "page read tR, TLC mode [FC Fig. 7]", 0.001, 1e6)(
        "t_prog_slc_us", t_prog_slc_us, "us", "program tPROG, SLC mode [FC Table 1]", 0.001, 1e7)(
        "t_prog_mlc_us", t_prog_mlc_us, "us", "program tPROG, MLC mode [FC Table 1]", 0.001, 1e7)(
        "t_prog_tlc_us", t_prog_tlc_us, "us", "program tPROG, TLC mode [FC Table 1]", 0.001, 1e7)(
        "esp_factor", esp_factor, "x",
        "default tESP / tPROG(SLC), settable per die by SET FEATURES 90h [FC Table 1]", 1.0,
        4.0)("t_erase_us", t_erase_us, "us", "block erase tBERS [FC 2.1: 3-5 ms]", 0.001, 1e8)(
        "t_xor_us", t_xor_us, "us", "latch XOR [assumed]", 0.0, 1e6)(
        "t_cache_busy_us", t_cache_busy_us, "us", "cache read tRCBSY [assumed]", 0.0, 1e6)(
        "t_reset_us", t_reset_us, "us", "RESET tRST [assumed]", 0.0, 1e6)(
        "t_feature_us", t_feature_us, "us", "SET/GET FEATURES tFEAT [assumed]", 0.0, 1e6)(
        "t_wb_ns", t_wb_ns, "ns", "command to busy tWB [assumed]", 0.0, 1e6)(
        "t_ccs_ns", t_ccs_ns, "ns", "column change to data tCCS [assumed]", 0.0, 1e6)(
        "t_whr_ns", t_whr_ns, "ns", "command to status out tWHR [assumed]", 0.0, 1e6)(
        "channel_rate_mbps", channel_rate_mbps, "MB/s", "channel data rate [FC Table 1]", 1.0, 1e6)(
        "t_cmd_cycle_ns", t_cmd_cycle_ns, "ns", "one command/address bus cycle [assumed]", 0.0,
        1e6)("mws_intra_at_8wl", mws_intra_at_8wl, "x",
             "tMWS/tR - 1, intra-block, 8 wordlines [FC Fig. 12]", 0.0,
             10.0)("mws_intra_at_48wl", mws_intra_at_48wl, "x",
                   "tMWS/tR - 1, intra-block, 48 wordlines [FC Fig. 12]", 0.0,
                   10.0)("mws_inter_hidden_blocks", mws_inter_hidden_blocks, "",
                         "blocks whose WL precharge hides under BL precharge [FC Fig. 13]", 1,
                         256)("mws_inter_at_32blk", mws_inter_at_32blk, "x",
                              "tMWS/tR - 1, inter-block, 32 blocks [FC Fig. 13]", 0.0, 10.0)(
        "mws_fixed_latency", mws_fixed_latency,
        "every MWS takes the worst-case tMWS under the block cap [FC 5.2]");
}

void Power::describe(core::Params& p) {
    p("p_read_mw", p_read_mw, "mW", "die power while sensing a page [assumed]", 0.0, 1e5)(
        "prog_vs_read", prog_vs_read, "x", "program power / read power [assumed]", 0.0, 100.0)(
        "erase_vs_read", erase_vs_read, "x", "erase power / read power [FC Fig. 14]", 0.0, 100.0)(
        "mws_2blk_vs_read", mws_2blk_vs_read, "x", "2-block MWS power / read power [FC Fig. 14]",
        0.0, 100.0)("mws_4blk_vs_read", mws_4blk_vs_read, "x",
                    "4-block MWS power / read power [FC Fig. 14]", 0.0,
                    100.0)("mws_intra_saving_at_48wl", mws_intra_saving_at_48wl, "x",
                           "intra-block MWS power saving at 48 WLs [assumed]", 0.0,
                           1.0)("mws_max_blocks", mws_max_blocks, "",
                                "block slots an MWS may activate (power cap) [FC 5.2]", 1, 32)(
        "io_pj_per_byte", io_pj_per_byte, "pJ", "channel I/O energy per byte [assumed]", 0.0, 1e6);
}

void Reliability::describe(core::Params& p) {
    p("rber_slc_ref", rber_slc_ref, "",
      "RBER of randomised SLC pages at the reference wear/age [CALIBRATION]", 0.0,
      0.5)("ref_pe_cycles", ref_pe_cycles, "", "reference P/E cycles [FC 5.1]", 0.0, 1e7)(
        "ref_retention_days", ref_retention_days, "d", "reference retention age [FC 5.1]", 0.0,
        1e5)("wear_per_kcycle", wear_per_kcycle, "",
             "wear factor growth per 1000 P/E cycles [assumed]", 0.0, 100.0)(
        "age_per_decade", age_per_decade, "", "age factor growth per decade of days [assumed]", 0.0,
        100.0)("mlc_vs_slc", mlc_vs_slc, "x", "MLC RBER / SLC RBER [FC 3.2]", 0.0, 1e6)(
        "tlc_vs_slc", tlc_vs_slc, "x", "TLC RBER / SLC RBER [assumed]", 0.0, 1e6)(
        "no_rand_slc", no_rand_slc, "x", "RBER increase without randomisation, SLC/ESP [FC 3.2]",
        0.0, 1e3)("no_rand_mlc", no_rand_mlc, "x",
                  "RBER increase without randomisation, MLC/TLC [FC 3.2]", 0.0,
                  1e3)("esp_tenfold_factor", esp_tenfold_factor, "x",
                       "tESP/tPROG giving 10x lower RBER [FC Fig. 11]", 1.0,
                       4.0)("esp_zero_factor", esp_zero_factor, "x",
                            "tESP/tPROG from which no bit errors occur [FC Fig. 11]", 1.0, 4.0)(
        "esp_decades_at_zero", esp_decades_at_zero, "",
        "RBER decades removed just below esp_zero_factor [FC 5.2]", 1.0,
        30.0)("retention_days", retention_days, "d", "retention age added to every page", 0.0, 1e5)(
        "initial_pe_cycles", initial_pe_cycles, "", "P/E cycles every block starts with", 0,
        1000000)("inject_errors", inject_errors, "inject raw bit errors when sensing");
}

void NandConfig::describe(core::Params& p) {
    core::Params n = p.scope("nand");
    n("functional", functional, "keep page data and compute results (false: timing only)");
    n("compact_pages", compact_pages,
      "keep a store page programmed in time as its units, each distinct unit once (a simulation "
      "aid: no result changes; false keeps every page whole)");
    core::Params g = n.scope("geometry");
    geometry.describe(g);
    core::Params t = n.scope("timing");
    timing.describe(t);
    core::Params w = n.scope("power");
    power.describe(w);
    core::Params r = n.scope("reliability");
    reliability.describe(r);
}

}  // namespace canopy::nand
