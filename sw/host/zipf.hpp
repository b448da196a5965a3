// Zipf-distributed accesses as fio's zipf option makes them (the Caching evaluation of Willow
// Section 4.4: "90% of the accesses go to 10% of the data"): the rank probabilities, the
// exponent that gives a 90/10 split, and a seeded sampler of ranks. Used by the Caching tests and
// the willow-apps experiment.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/rng.hpp"

namespace canopy::sw {

// p[i]: the probability of rank i (0 the hottest) among n, proportional to (i + 1)^-theta.
inline std::vector<double> zipf(uint64_t n, double theta) {
    std::vector<double> p(n);
    for (uint64_t i = 0; i < n; ++i) p[i] = std::pow(double(i + 1), -theta);
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    for (double& x : p) x /= sum;
    return p;
}

// The exponent that gives the top 10% of ranks 90% of the accesses ("90/10"), by bisection.
inline double theta_90_10(uint64_t n) {
    double lo = 0.1, hi = 4.0;
    for (int i = 0; i < 60; ++i) {
        const double mid = (lo + hi) / 2;
        const std::vector<double> p = zipf(n, mid);
        (std::accumulate(p.begin(), p.begin() + long(n / 10), 0.0) < 0.9 ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
}

// Ranks drawn from p by inverting its cumulative distribution.
class ZipfSampler {
  public:
    explicit ZipfSampler(const std::vector<double>& p) : cdf_(p.size()) {
        std::partial_sum(p.begin(), p.end(), cdf_.begin());
    }
    uint64_t operator()(core::Rng& rng) const {
        const double u = core::uniform01(rng);
        const auto r = uint64_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
        return std::min<uint64_t>(r, cdf_.size() - 1);
    }

  private:
    std::vector<double> cdf_;
};

}  // namespace canopy::sw
