// A config file (models/core/config.cpp): JSON text flattened into dotted keys, then bound to
// described parameters with their type and range checks, then the unknown-key check.
#include "fuzz.hpp"
#include "fuzz_config.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::refused_only_as_input_error([&] {
        core::ConfigSource source;
        source.load_text(fuzz::text(data, size), "fuzz.json");
        fuzz::bind_and_check(source);
    });
    return 0;
}
