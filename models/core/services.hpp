// What every model is handed at construction: the statistics registry, the transaction trace,
// the waveform file and the run's seed.
#pragma once

#include <cstdint>

#include "core/stats.hpp"
#include "core/trace.hpp"
#include "core/waves.hpp"

namespace canopy::core {

struct Services {
    StatsRegistry stats;
    TransactionTrace trace;
    Waves waves;
    uint64_t seed = 1;
};

}  // namespace canopy::core
