// Latency percentiles as storage benchmarks report them: nearest rank over every sample (fio's
// percentiles, the replay's table), not a histogram's approximation.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy::scenarios {

// Nearest-rank percentile `p` (0 ... 100) of sorted values; 0 for none.
inline double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace canopy::scenarios
