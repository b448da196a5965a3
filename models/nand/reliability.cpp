#include "nand/reliability.hpp"

#include <cmath>

namespace canopy::nand {

const char* mode_name(CellMode m) {
    switch (m) {
        case CellMode::Erased:
            return "erased";
        case CellMode::Slc:
            return "SLC";
        case CellMode::Mlc:
            return "MLC";
        case CellMode::Tlc:
            return "TLC";
        case CellMode::Esp:
            return "ESP";
    }
    return "?";
}

double ReliabilityModel::wear(double pe) const { return 1.0 + r_.wear_per_kcycle * pe / 1000.0; }
double ReliabilityModel::age(double days) const {
    return 1.0 + r_.age_per_decade * std::log10(1.0 + std::max(0.0, days));
}

double ReliabilityModel::esp_reduction(double f) const {
    if (f >= r_.esp_zero_factor) return 0.0;
    if (f <= 1.0) return 1.0;
    double decades;
    if (f <= r_.esp_tenfold_factor)
        decades = (f - 1.0) / (r_.esp_tenfold_factor - 1.0);
    else
        decades = 1.0 + (f - r_.esp_tenfold_factor) / (r_.esp_zero_factor - r_.esp_tenfold_factor) *
                            (r_.esp_decades_at_zero - 1.0);
    return std::pow(10.0, -decades);
}

double ReliabilityModel::rber(CellMode mode, double pe, double days, bool randomised,
                              double esp_factor) const {
    double m, no_rand;
    switch (mode) {
        case CellMode::Erased:
            return 0.0;  // never-programmed cells: no neighbours to disturb them
        case CellMode::Slc:
            m = 1.0, no_rand = r_.no_rand_slc;
            break;
        case CellMode::Esp:
            m = esp_reduction(esp_factor), no_rand = r_.no_rand_slc;
            break;
        case CellMode::Mlc:
            m = r_.mlc_vs_slc, no_rand = r_.no_rand_mlc;
            break;
        case CellMode::Tlc:
            m = r_.tlc_vs_slc, no_rand = r_.no_rand_mlc;
            break;
        default:
            return 0.0;
    }
    double p = r_.rber_slc_ref * m * wear(pe) / wear(r_.ref_pe_cycles) * age(days) /
               age(r_.ref_retention_days) * (randomised ? 1.0 : no_rand);
    return std::min(p, 0.5);
}

uint64_t inject_bit_errors(core::Rng& rng, uint64_t* words, uint64_t bits, double p,
                           std::vector<uint64_t>* flipped) {
    if (!(p > 0.0) || bits == 0) return 0;
    uint64_t flips = 0;
    if (p >= 0.5) {  // too dense to skip: flip bit by bit
        for (uint64_t b = 0; b < bits; ++b)
            if (core::uniform01(rng) < p) {
                words[b >> 6] ^= 1ull << (b & 63), ++flips;
                if (flipped) flipped->push_back(b);
            }
        return flips;
    }
    const double log_q = std::log1p(-p);
    uint64_t b = 0;
    for (;;) {
        // Bits skipped before the next flip: geometric with success probability p.
        double u = 1.0 - core::uniform01(rng);  // (0, 1]
        double skip = std::floor(std::log(u) / log_q);
        if (skip >= double(bits - b)) break;
        b += uint64_t(skip);
        words[b >> 6] ^= 1ull << (b & 63);
        ++flips;
        if (flipped) flipped->push_back(b);
        if (++b >= bits) break;
    }
    return flips;
}

}  // namespace canopy::nand
