// The flash controller's data randomiser (scrambler): before a page of ordinary data is
// programmed, the controller XORs it with a pseudo-random keystream seeded by the page's physical
// address, so that the cells of a wordline and its neighbours hold a random mix of states whatever
// the host writes (long runs of one state worsen interference and retention errors). Reading
// XORs with the same keystream again. Pages written for in-flash computing bypass it: bitwise
// operations across wordlines only make sense on the stored data itself (Flash-Cosmos,
// Section 3.2, which measures the reliability cost of going without it).
//
// The keystream of a page with key K is the SplitMix64 sequence started at K: word i is
// core::splitmix64(K + i * 0x9e3779b97f4a7c15), covering bytes 8i..8i+7 of the page,
// little-endian (byte 8i is the word's low byte). Any word can be computed on its own, so a
// sub-range of a page (a partial read, a column offset) descrambles without the bytes before it.
// The key mixes the seed with channel, die, plane, block and page, so every page's stream differs
// and a different seed (another controller) gives different streams.
#pragma once

#include <cstddef>
#include <cstdint>

namespace canopy::ssd {

class Randomiser {
  public:
    explicit Randomiser(uint64_t seed) : seed_(seed) {}

    // The key of one physical page: channel, die, plane, block, page (wordline) mixed with the
    // seed.
    uint64_t page_key(uint32_t channel, uint32_t die, uint32_t plane, uint32_t block,
                      uint32_t page) const;

    // XORs `len` bytes that sit at byte `offset` of the page with the page's keystream; applying
    // it twice restores the data. Scrambling a whole page, then descrambling any sub-range at its
    // offset gives the original bytes.
    void apply(uint64_t key, uint64_t offset, uint8_t* data, size_t len) const;

    // Word `i` of the keystream of the page with `key` (bytes 8i..8i+7, little-endian).
    static uint64_t keystream_word(uint64_t key, uint64_t i);

    uint64_t seed() const { return seed_; }

  private:
    uint64_t seed_;
};

}  // namespace canopy::ssd
