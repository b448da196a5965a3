// The willow-io experiment (Willow Sections 4.1-4.2; CALIBRATION.md "Willow"): Base-IO bandwidth
// and small-read IOPS on the prototype's PCIe 1.1 x8 link, Direct-IO against Base-IO through the
// host file system, and the 4 KiB read's time per part of the machine.
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

std::vector<ExpRow> willow_io(bool quick);

}  // namespace canopy::platform
