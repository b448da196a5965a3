// Experiments on the NAND model alone (Flash-Cosmos Sections 3-5, 7 and Table 1).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// On the machine's NAND (`nand.*`, by default the paper's; --config/--set change it): one die
// for the MWS, ESP, tDMA and error rows, the whole array for the write bandwidth. The error
// draws come from sim.seed.
std::vector<ExpRow> nand_characterisation(const ExpOptions& options);

}  // namespace canopy::platform
