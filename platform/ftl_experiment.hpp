// The ftl experiment (issue "Flash controller, ECC and a firmware FTL"): write amplification and
// write latency of the FTL on the modelled flash under sustained uniform random writes, at
// over-provisioning of 7, 14, 20 and 28 % (platform/ftl_experiment.cpp).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// On the machine's NAND timing, flash controller and SSD memory (`nand.*`, `ssd.flash.*`,
// `ssd.dram.*`; --config/--set change them), one channel of 2 dies of the experiment's size.
std::vector<ExpRow> ftl_experiment(const ExpOptions& options);

}  // namespace canopy::platform
