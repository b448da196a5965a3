#include "ssd/randomiser.hpp"

#include <cstring>
#include <initializer_list>

#include "core/rng.hpp"

namespace canopy::ssd {

namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;  // SplitMix64's increment

// The keystream word in memory order, so that one 64-bit XOR scrambles 8 bytes in place.
inline uint64_t native(uint64_t little_endian_word) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(little_endian_word);
#else
    return little_endian_word;
#endif
}

}  // namespace

uint64_t Randomiser::page_key(uint32_t channel, uint32_t die, uint32_t plane, uint32_t block,
                              uint32_t page) const {
    // One mixing round per field: each round is a bijection of the running value for a fixed
    // field, and the field enters before the mix, so neighbouring addresses get unrelated keys.
    uint64_t h = core::splitmix64(seed_);
    for (uint32_t f : {channel, die, plane, block, page}) h = core::splitmix64(h ^ f);
    return h;
}

uint64_t Randomiser::keystream_word(uint64_t key, uint64_t i) {
    return core::splitmix64(key + i * kGolden);
}

void Randomiser::apply(uint64_t key, uint64_t offset, uint8_t* data, size_t len) const {
    if (len == 0) return;
    uint64_t word = offset / 8;
    unsigned byte = unsigned(offset % 8);
    // The head: bytes up to the next word boundary.
    if (byte != 0) {
        uint64_t k = keystream_word(key, word++);
        for (; byte < 8 && len > 0; ++byte, --len) *data++ ^= uint8_t(k >> (8 * byte));
    }
    // Whole words; memcpy keeps unaligned buffers legal and compiles to plain loads and stores.
    for (; len >= 8; len -= 8, data += 8) {
        uint64_t v;
        std::memcpy(&v, data, 8);
        v ^= native(keystream_word(key, word++));
        std::memcpy(data, &v, 8);
    }
    // The tail.
    if (len > 0) {
        uint64_t k = keystream_word(key, word);
        for (unsigned b = 0; b < len; ++b) data[b] ^= uint8_t(k >> (8 * b));
    }
}

}  // namespace canopy::ssd
