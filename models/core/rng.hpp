// Seeded randomness. Every module draws from its own generator whose seed is derived from the
// run's seed and the module's name, so adding a module does not perturb the others and the
// same config and seed give the same results.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace canopy::core {

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

inline uint64_t derive_seed(uint64_t seed, std::string_view name) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (char c : name) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    return splitmix64(seed ^ h);
}

using Rng = std::mt19937_64;

// Uniform in [0, 1) from the top 53 bits: the same value on every standard library.
inline double uniform01(Rng& g) { return double(g() >> 11) * 0x1.0p-53; }

}  // namespace canopy::core
