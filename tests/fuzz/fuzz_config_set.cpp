// `--set key=value` overrides (models/core/config.cpp): one per input line, each parsed as the
// described parameter's type and range-checked, then the unknown-key check.
#include <sstream>

#include "core/config.hpp"
#include "cpu/rv32_core.hpp"
#include "fuzz.hpp"
#include "nand/config.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::refused_only_as_input_error([&] {
        core::ConfigSource source;
        std::istringstream lines(fuzz::text(data, size));
        for (std::string line; std::getline(lines, line);) source.set(line);
        core::Params params(&source);
        nand::NandConfig nand;
        nand.describe(params);
        cpu::CoreConfig core;
        core::Params c = params.scope("core");
        core.describe(c);
        source.check_all_used(params.keys());
    });
    return 0;
}
