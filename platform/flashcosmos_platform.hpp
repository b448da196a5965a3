// The platform side of `canopy exp flashcosmos`: the paper's three workloads, small, on the whole
// platform with real firmware (SPU-OS, the Flash-Cosmos app, the host library of
// sw/host/flash_cosmos): every system's time and whether its result is the host's. The paper
// publishes no value for this machine (Willow's SPUs and ring, one RPC per SPU at a time), so
// the rows stand beside the model's, not against the paper. One child process (run_isolated).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// Rows P.* for `options.workload` (empty or "all": the three), on `options.platform()` with 8
// SPUs, each on a channel of 2 dies, and the store on the flash. Throws when the firmware was
// not built.
std::vector<ExpRow> flashcosmos_platform_rows(const ExpOptions& options);

}  // namespace canopy::platform
