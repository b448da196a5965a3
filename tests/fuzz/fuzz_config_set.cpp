// `--set key=value` overrides (models/core/config.cpp): one per input line, each parsed as the
// described parameter's type and range-checked, then the unknown-key check.
#include <sstream>

#include "fuzz.hpp"
#include "fuzz_config.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::refused_only_as_input_error([&] {
        core::ConfigSource source;
        std::istringstream lines(fuzz::text(data, size));
        for (std::string line; std::getline(lines, line);) source.set(line);
        fuzz::bind_and_check(source);
    });
    return 0;
}
