// Simulated time as a number, for statistics and experiments.
#pragma once

#include <systemc>

namespace canopy::core {

// `t` in ns, as a ratio of integer time values: exact for whole picoseconds (unlike
// to_seconds() * 1e9) and inline (to_seconds() is a library call, on every sampled access).
inline double ns_of(const sc_core::sc_time& t) {
    static const sc_core::sc_time ns(1, sc_core::SC_NS);
    return t / ns;
}

}  // namespace canopy::core
