// The default scenario of `canopy run` until the rest of the platform exists: one bulk bitwise
// AND of `scenario.operands` bit vectors stored on every plane of the array, computed three ways
// as in Flash-Cosmos Figure 7 -- by Flash-Cosmos (one intra-block MWS per plane), by ParaBit
// (one sensing per operand, accumulating in the S-latch) and by outside-storage processing
// (every operand read out of the die) -- with each in-flash result checked against a software
// oracle of the same data.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "platform/flash_player.hpp"
#include "platform/platform_config.hpp"

namespace canopy::scenarios {

std::vector<platform::FlashOp> build_fc_demo(const platform::PlatformConfig& cfg);
// How the demonstration went, for the run's summary line.
struct FcDemoVerdict {
    bool ok = true;       // false: a command was refused, or ESP operands gave wrong bits
    std::string summary;  // "ok", "FAILED", or why the wrong bits are what the paper predicts
};
// Checks the results, prints a comparison and records it under the "scenario" statistics.
FcDemoVerdict report_fc_demo(const platform::PlatformConfig& cfg,
                             const platform::FlashPlayer& player, core::StatsRegistry& stats,
                             std::ostream& out);

}  // namespace canopy::scenarios
