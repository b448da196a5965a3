// Raw bit error model of Flash-Cosmos Sections 3.2 and 5 (Figures 8 and 11):
//
//   RBER = rber_slc_ref x mode x wear(pe)/wear(ref) x age(t)/age(ref) x no_rand x esp(f)
//
//   mode     SLC and ESP 1, MLC 4 (Section 3.2: "up to 4x SLC"), TLC 12 (assumed)
//   wear     1 + wear_per_kcycle x pe/1000                    (assumed linear growth)
//   age      1 + age_per_decade x log10(1 + days)             (assumed log growth)
//   no_rand  1 when randomised, else 1.91 (SLC/ESP) or 4.92 (MLC/TLC)      (Section 3.2)
//   esp(f)   ESP pages only, f = tESP/tPROG: 10^-(f-1)/(1.6-1) up to f = 1.6 (Figure 11,
//            median block: +60% gives 10x lower), then log-linear to 10^-8.6 just below 1.9,
//            and exactly 0 from 1.9 on (Figure 11: zero errors over 4.83e11 bits)
//
// The reference point (SLC, randomised, 10K P/E cycles, 1 year) is 8.6e-4, the SLC figure in
// CALIBRATION.md, about 12 orders of magnitude above a 1e-15 UBER as Section 3.2 observes.
// Errors are drawn independently per sensed bit at every sensing, from a seeded generator.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "nand/config.hpp"

namespace canopy::nand {

enum class CellMode : uint8_t { Erased, Slc, Mlc, Tlc, Esp };

// How a page's data was randomised before it reached the cells: not at all (in-flash computing
// operands), by the die's own scrambler (prefix 9Ah; a normal read undoes it on the die), or by
// the flash controller's randomiser (prefix 9Bh: only a hint that the cells hold random data).
enum class Scramble : uint8_t { None, OnDie, Controller };
const char* mode_name(CellMode m);

class ReliabilityModel {
  public:
    explicit ReliabilityModel(const Reliability& r) : r_(r) {}
    double rber(CellMode mode, double pe_cycles, double age_days, bool randomised,
                double esp_factor) const;
    // The ESP term alone (1 for f = 1, 0 from esp_zero_factor on).
    double esp_reduction(double esp_factor) const;

  private:
    double wear(double pe) const;
    double age(double days) const;
    Reliability r_;
};

// Flips each of the first `bits` bits of `words` with probability `p`, by geometric skipping
// (cost proportional to the number of flips, not of bits). Returns the number of flips; appends
// their positions to `flipped` (increasing; bit i is bit i % 64 of word i / 64) when given.
uint64_t inject_bit_errors(core::Rng& rng, uint64_t* words, uint64_t bits, double p,
                           std::vector<uint64_t>* flipped = nullptr);

}  // namespace canopy::nand
