// Every register block of the machine, declared once as data in its model, gathered here for
// `canopy regs`: the C headers the firmware and host drivers include (the firmware build writes
// them with `canopy regs --c-headers DIR`) and the tables of docs/registers.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/register_bank.hpp"

namespace canopy::platform {

struct RegisterBlock {
    std::string source;  // the file that declares the map, for the header's "generated from"
    std::function<core::RegisterMap()> map;
};

// In the order docs/registers.md shows them.
const std::vector<RegisterBlock>& register_blocks();

// The C header file name of a block: "<block>_regs.h".
std::string header_name(const core::RegisterMap& map);

}  // namespace canopy::platform
