// The flash controller's data randomiser (models/ssd/randomiser.hpp): XOR round trips, the
// keystream addressed by position (sub-ranges at any offset), distinct streams per page and seed,
// and the statistics that make scrambled pages look random to the cells.
//
// Bounds, for the 131072 bits of a 16 KiB page of fair coin flips: the fraction of ones has a
// standard deviation of 0.5 / sqrt(131072) = 0.0014, so +/- 0.01 is about 7 sigma. The longest run
// of equal bits is about log2(131072) = 17; a run of 40 or more starts at a given bit with
// probability 2^-40, so anywhere in the page with probability about 131072 x 2^-40 = 1e-7.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "ssd/randomiser.hpp"

namespace canopy::ssd {
namespace {

constexpr size_t kPage = 16384;

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(core::splitmix64(seed + i));
    return v;
}

double ones_fraction(const std::vector<uint8_t>& v) {
    uint64_t ones = 0;
    for (uint8_t b : v) ones += __builtin_popcount(b);
    return double(ones) / double(v.size() * 8);
}

size_t longest_run(const std::vector<uint8_t>& v) {
    size_t best = 0, run = 0;
    int last = -1;
    for (uint8_t byte : v)
        for (int b = 0; b < 8; ++b) {
            int bit = (byte >> b) & 1;
            run = bit == last ? run + 1 : 1;
            last = bit;
            best = std::max(best, run);
        }
    return best;
}

TEST(Randomiser, RoundTripRestoresThePage) {
    Randomiser r(42);
    auto orig = random_bytes(kPage, 7);
    auto data = orig;
    uint64_t key = r.page_key(1, 2, 1, 100, 5);
    r.apply(key, 0, data.data(), data.size());
    EXPECT_NE(data, orig);
    r.apply(key, 0, data.data(), data.size());
    EXPECT_EQ(data, orig);
}

TEST(Randomiser, SubRangeAtOddOffsetsDescrambles) {
    Randomiser r(3);
    auto orig = random_bytes(kPage, 11);
    auto scrambled = orig;
    uint64_t key = r.page_key(0, 0, 0, 0, 0);
    r.apply(key, 0, scrambled.data(), scrambled.size());
    // Offsets and lengths around word boundaries: inside one word, crossing one, many words.
    const size_t offsets[] = {0, 1, 3, 7, 8, 9, 13, 15, 4095, 8191, kPage - 9, kPage - 1};
    const size_t lengths[] = {0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 63, 1000, 4097};
    for (size_t off : offsets)
        for (size_t len : lengths) {
            if (off + len > kPage) continue;
            // A copy in its own buffer, shifted by one byte so the XOR runs on unaligned memory.
            std::vector<uint8_t> buf(len + 1);
            std::copy(scrambled.begin() + off, scrambled.begin() + off + len, buf.begin() + 1);
            r.apply(key, off, buf.data() + 1, len);
            EXPECT_TRUE(std::equal(buf.begin() + 1, buf.end(), orig.begin() + off))
                << "offset " << off << " length " << len;
        }
}

TEST(Randomiser, PiecewiseScramblingEqualsWholePage) {
    Randomiser r(9);
    auto whole = random_bytes(kPage, 5);
    auto pieces = whole;
    uint64_t key = r.page_key(3, 1, 0, 17, 2);
    r.apply(key, 0, whole.data(), whole.size());
    for (size_t off = 0, len = 1; off < kPage; off += len, len = len * 3 % 37 + 1)
        r.apply(key, off, pieces.data() + off, std::min(len, kPage - off));
    EXPECT_EQ(pieces, whole);
}

TEST(Randomiser, KeystreamIsLittleEndianWords) {
    Randomiser r(1);
    uint64_t key = r.page_key(0, 0, 0, 0, 1);
    std::vector<uint8_t> zero(16, 0);
    r.apply(key, 0, zero.data(), zero.size());
    for (size_t i = 0; i < 16; ++i)
        EXPECT_EQ(zero[i], uint8_t(Randomiser::keystream_word(key, i / 8) >> (8 * (i % 8))));
}

TEST(Randomiser, EveryPageHasItsOwnStream) {
    Randomiser r(42);
    std::vector<uint64_t> keys;
    // Neighbours along each address field of the same page.
    keys.push_back(r.page_key(0, 0, 0, 0, 0));
    keys.push_back(r.page_key(1, 0, 0, 0, 0));
    keys.push_back(r.page_key(0, 1, 0, 0, 0));
    keys.push_back(r.page_key(0, 0, 1, 0, 0));
    keys.push_back(r.page_key(0, 0, 0, 1, 0));
    keys.push_back(r.page_key(0, 0, 0, 0, 1));
    for (uint32_t p = 2; p < 64; ++p) keys.push_back(r.page_key(0, 0, 0, 0, p));
    std::vector<std::vector<uint8_t>> streams;
    for (uint64_t k : keys) {
        std::vector<uint8_t> page(kPage, 0);
        r.apply(k, 0, page.data(), page.size());
        streams.push_back(page);
    }
    for (size_t i = 0; i < streams.size(); ++i)
        for (size_t j = i + 1; j < streams.size(); ++j) {
            EXPECT_NE(keys[i], keys[j]) << i << " " << j;
            // Unrelated streams agree in about half their bits.
            std::vector<uint8_t> diff(kPage);
            for (size_t b = 0; b < kPage; ++b) diff[b] = streams[i][b] ^ streams[j][b];
            EXPECT_NEAR(ones_fraction(diff), 0.5, 0.01) << i << " " << j;
        }
}

TEST(Randomiser, ConstantPagesComeOutBalancedWithoutLongRuns) {
    Randomiser r(2026);
    for (uint8_t fill : {uint8_t(0x00), uint8_t(0xFF)})
        for (uint32_t block : {0u, 1u, 511u}) {
            std::vector<uint8_t> page(kPage, fill);
            r.apply(r.page_key(2, 3, 1, block, 7), 0, page.data(), page.size());
            EXPECT_NEAR(ones_fraction(page), 0.5, 0.01) << int(fill) << " block " << block;
            EXPECT_LT(longest_run(page), 40u) << int(fill) << " block " << block;
        }
}

TEST(Randomiser, SeedChangesTheStream) {
    Randomiser a(1), b(2);
    EXPECT_NE(a.page_key(0, 0, 0, 0, 0), b.page_key(0, 0, 0, 0, 0));
    std::vector<uint8_t> pa(kPage, 0), pb(kPage, 0);
    a.apply(a.page_key(4, 5, 0, 6, 7), 0, pa.data(), pa.size());
    b.apply(b.page_key(4, 5, 0, 6, 7), 0, pb.data(), pb.size());
    EXPECT_NE(pa, pb);
}

TEST(Randomiser, EqualSeedsAreDeterministic) {
    Randomiser a(77), b(77);
    EXPECT_EQ(a.page_key(1, 2, 3, 4, 5), b.page_key(1, 2, 3, 4, 5));
    auto pa = random_bytes(kPage, 1), pb = pa;
    a.apply(a.page_key(1, 2, 3, 4, 5), 123, pa.data(), pa.size() - 123);
    b.apply(b.page_key(1, 2, 3, 4, 5), 123, pb.data(), pb.size() - 123);
    EXPECT_EQ(pa, pb);
}

}  // namespace
}  // namespace canopy::ssd
