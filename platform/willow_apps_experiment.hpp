// The willow-apps experiment (Willow Sections 4.3-4.5; CALIBRATION.md "Willow"): SSD Apps against
// what a host does without them, on the prototype's machine (platform/willow_prototype.hpp).
//  - Atomic-Writes against a host write-ahead log (ARIES-style): TPC-B-like transactions of four
//    64-byte updates from 1..6 threads; transactions per second.
//  - Key-Value against a host key-value store over the file system (Base-IO): mean GET and PUT.
//  - Caching against FlashCache (a host cache on Base-IO), both before the disk model: Zipf
//    90/10 hit ratios, hit latencies, mean reads and writes.
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// Starts from the prototype's machine (prototype_config, changed by --config/--set); TPC-B gets
// at least a host core per thread.
std::vector<ExpRow> willow_apps(const ExpOptions& options);

}  // namespace canopy::platform
