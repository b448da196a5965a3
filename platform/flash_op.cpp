#include "platform/flash_op.hpp"

#include <algorithm>

#include "core/rng.hpp"

namespace canopy::platform {

void DataSpec::generate(std::vector<uint8_t>& out, uint32_t length) const {
    switch (kind) {
        case None:
            out.assign(length, 0xFF);
            break;
        case Hex:
        case File:
            out.assign(bytes.begin(), bytes.begin() + std::min<size_t>(bytes.size(), length));
            break;
        case Fill:
            out.assign(length, bytes.empty() ? 0xFF : bytes[0]);
            break;
        case Random: {
            // Documented in traces/README.md: the SplitMix64 stream seeded with `seed`; a bit is 1
            // with probability t/65536, t = round(density x 65536), by combining one stream word
            // per binary digit of t from the lowest set digit up (OR for a 1, AND for a 0).
            uint64_t state = seed;
            auto next = [&state] {
                uint64_t v = core::splitmix64(state);  // the standard SplitMix64 stream
                state += 0x9e3779b97f4a7c15ull;
                return v;
            };
            const uint32_t t = uint32_t(density * 65536.0 + 0.5);
            const int low = t == 0 || t >= 65536 ? 16 : __builtin_ctz(t);
            out.assign((length + 7) / 8 * 8, 0);
            for (size_t w = 0; w < out.size() / 8; ++w) {
                uint64_t v = t >= 65536 ? ~0ull : 0;
                for (int k = low; k < 16; ++k) v = (t >> k) & 1 ? (v | next()) : (v & next());
                for (int i = 0; i < 8; ++i) out[w * 8 + i] = uint8_t(v >> (8 * i));
            }
            out.resize(length);
            break;
        }
    }
    if (invert)
        for (auto& b : out) b = uint8_t(~b);
}

}  // namespace canopy::platform
