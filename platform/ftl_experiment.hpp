// The ftl experiment (issue "Flash controller, ECC and a firmware FTL"): write amplification and
// write latency of the FTL on the modelled flash under sustained uniform random writes, at
// over-provisioning of 7, 14, 20 and 28 % (platform/ftl_experiment.cpp).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

std::vector<ExpRow> ftl_experiment(bool quick);

}  // namespace canopy::platform
