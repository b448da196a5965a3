// The willow-io experiment (Willow Sections 4.1-4.2; CALIBRATION.md "Willow"): Base-IO bandwidth
// and small-read IOPS on the prototype's PCIe 1.1 x8 link, Direct-IO against Base-IO through the
// host file system, and the 4 KiB read's time per part of the machine.
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// Starts from the prototype's machine (prototype_config, changed by --config/--set); the rows on
// NAND put its store on the flash array (store_on_flash).
std::vector<ExpRow> willow_io(const ExpOptions& options);

}  // namespace canopy::platform
