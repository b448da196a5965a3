#include "nand/timing.hpp"

#include <algorithm>

namespace canopy::nand {

// Linear through (x0, y0) and (x1, y1), extended past x1 at the same slope.
static double line(double x, double x0, double y0, double x1, double y1) {
    return x1 == x0 ? y1 : y0 + (x - x0) * (y1 - y0) / (x1 - x0);
}

// The published intra-block points sit at 8 and 48 selected wordlines (Figure 12 reads 1..48
// wordlines of a 48-cell string); they stay at those counts whatever the configured string
// length, so that a parameter named "..._at_48wl" holds at 48 wordlines.
static constexpr double kPublishedWordlines = 48;

double mws_latency_factor(const Timing& t, uint32_t wordlines, uint32_t blocks,
                          uint32_t /*wordlines_per_block*/) {
    double intra = 0;
    if (wordlines > 1)
        intra = wordlines <= 8 ? line(wordlines, 1, 0, 8, t.mws_intra_at_8wl)
                               : line(wordlines, 8, t.mws_intra_at_8wl, kPublishedWordlines,
                                      t.mws_intra_at_48wl);
    double inter = 0;
    if (blocks > t.mws_inter_hidden_blocks)
        inter = line(blocks, t.mws_inter_hidden_blocks, 0, 32, t.mws_inter_at_32blk);
    return 1.0 + intra + inter;
}

double mws_power_factor(const Power& p, uint32_t wordlines, uint32_t blocks,
                        uint32_t /*wordlines_per_block*/) {
    double inter = blocks <= 2 ? line(blocks, 1, 1.0, 2, p.mws_2blk_vs_read)
                               : line(blocks, 2, p.mws_2blk_vs_read, 4, p.mws_4blk_vs_read);
    double intra = 1.0;
    if (wordlines > 1)
        intra = std::max(0.0, 1.0 - p.mws_intra_saving_at_48wl * double(wordlines - 1) /
                                        (kPublishedWordlines - 1));
    return inter * intra;
}

}  // namespace canopy::nand
