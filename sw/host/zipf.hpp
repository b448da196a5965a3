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

// Zipf ranks over n items in constant memory, as fio's zipf:theta draws them (Gray et al.,
// "Quickly generating billion-record synthetic databases", SIGMOD 1994, the generator fio's
// lib/zipf.c uses): zeta(n) summed over at most kMaxZetaTerms terms, as fio does, and the rank
// then scattered over the items by a hash so the hot items are not all at the start.
class ZipfGenerator {
  public:
    static constexpr uint64_t kMaxZetaTerms = 10'000'000;  // fio's ZIPF_MAX_GEN
    ZipfGenerator(uint64_t n, double theta) : n_(n ? n : 1), theta_(theta) {
        const uint64_t terms = std::min(n_, kMaxZetaTerms);
        for (uint64_t i = 1; i <= terms; ++i) zetan_ += std::pow(double(i), -theta_);
        const double zeta2 = 1.0 + std::pow(2.0, -theta_);
        alpha_ = 1.0 / (1.0 - theta_);
        eta_ = (1.0 - std::pow(2.0 / double(n_), 1.0 - theta_)) / (1.0 - zeta2 / zetan_);
    }
    // The rank (0 the hottest) before scattering.
    uint64_t rank(core::Rng& rng) const {
        const double u = core::uniform01(rng), uz = u * zetan_;
        if (uz < 1.0) return 0;
        if (uz < 1.0 + std::pow(0.5, theta_)) return std::min<uint64_t>(1, n_ - 1);
        const double r = double(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_);
        return std::min<uint64_t>(n_ - 1, r > 0 ? uint64_t(r) : 0);
    }
    // An item: the rank scattered by a hash.
    uint64_t operator()(core::Rng& rng) const { return core::splitmix64(rank(rng)) % n_; }

  private:
    uint64_t n_;
    double theta_, zetan_ = 0, alpha_ = 0, eta_ = 0;
};

}  // namespace canopy::sw
