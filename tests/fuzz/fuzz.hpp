// What every fuzz target shares: the input as text, and the rule that user input may be refused
// only with an InputError (a clear exit 2). Any other exception escapes, and libFuzzer reports
// it as a crash, as it does a signal, a sanitizer finding, a timeout or too much memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace canopy::fuzz {

inline std::string text(const uint8_t* data, size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

template <class F>
void refused_only_as_input_error(F&& parse) {
    try {
        parse();
    } catch (const canopy::InputError&) {
        // the expected way to say no
    }
}

}  // namespace canopy::fuzz
