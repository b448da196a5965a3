// Latency and power of multi-wordline sensing from the Flash-Cosmos characterisation
// (Section 5.2, Figures 12-14), as factors of a page read's tR and power.
#pragma once

#include <cstdint>

#include "nand/config.hpp"

namespace canopy::nand {

// tMWS / tR for `blocks` block slots whose largest page bitmap selects `wordlines`:
// 1 + intra(wordlines) + inter(blocks), each piecewise linear through the published points
// (8 and 48 wordlines, 8 and 32 blocks), extended at the last slope. `wordlines_per_block` is
// kept for the interface; the curves do not stretch with the configured string length.
double mws_latency_factor(const Timing& t, uint32_t wordlines, uint32_t blocks,
                          uint32_t wordlines_per_block);

// MWS power / read power: inter-block activation through (1, 1), (2, 1.34), (4, 1.80) and on
// beyond at the last slope, times the intra-block saving of VREF over VPASS on selected WLs
// (linear in the selected wordlines, mws_intra_saving_at_48wl at 48).
double mws_power_factor(const Power& p, uint32_t wordlines, uint32_t blocks,
                        uint32_t wordlines_per_block);

}  // namespace canopy::nand
