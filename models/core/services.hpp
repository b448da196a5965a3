// What every model is handed at construction: the statistics registry, the transaction trace,
// the waveform file, the logs and the run's seed.
#pragma once

#include <cstdint>

#include "core/log.hpp"
#include "core/stats.hpp"
#include "core/trace.hpp"
#include "core/waves.hpp"

namespace canopy::core {

struct Services {
    StatsRegistry stats;
    TransactionTrace trace;
    Waves waves;
    Log log;
    uint64_t seed = 1;
};

}  // namespace canopy::core
