// Experiments on the NAND model alone (Flash-Cosmos Sections 3-5, 7 and Table 1).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

std::vector<ExpRow> nand_characterisation(bool quick);

}  // namespace canopy::platform
