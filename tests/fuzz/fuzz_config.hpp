// What both config targets do once the user's values are in a source: bind them to described
// parameters (the NAND array's under "nand.", an RV32 core's under "core.") with their type and
// range checks, then refuse any key nobody described.
#pragma once

#include "core/config.hpp"
#include "cpu/rv32_core.hpp"
#include "nand/config.hpp"

namespace canopy::fuzz {

inline void bind_and_check(const core::ConfigSource& source) {
    core::Params params(&source);
    nand::NandConfig nand;
    nand.describe(params);
    cpu::CoreConfig core;
    core::Params c = params.scope("core");
    core.describe(c);
    source.check_all_used(params.keys());
}

}  // namespace canopy::fuzz
