// A config file (models/core/config.cpp): JSON text flattened into dotted keys, then bound to
// described parameters with their type and range checks, then the unknown-key check.
#include "core/config.hpp"
#include "cpu/rv32_core.hpp"
#include "fuzz.hpp"
#include "nand/config.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::refused_only_as_input_error([&] {
        core::ConfigSource source;
        source.load_text(fuzz::text(data, size), "fuzz.json");
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
