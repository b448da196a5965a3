// The flash controller's BCH code (models/ssd/ecc_engine.hpp): geometry (m, parity size), round
// trips, exactly t errors corrected anywhere in data and parity, t + 1 errors flagged with the
// buffers untouched, shortened codewords, constructor errors and the config's keys. Plain tests:
// no simulation. Random data and error positions come from fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "ssd/ecc_engine.hpp"

namespace canopy::ssd::test {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes random_bytes(std::mt19937_64& rng, size_t n) {
    Bytes b(n);
    for (auto& x : b) x = uint8_t(rng());
    return b;
}

// Flips `count` distinct bits of the codeword (data bits first, then the parity bits; pad bits
// of the last parity byte are not part of the code). `forced` positions are flipped first.
void flip_bits(std::mt19937_64& rng, const BchCode& code, Bytes& data, Bytes& parity,
               uint32_t count, std::vector<uint32_t> forced = {}) {
    const uint32_t nbits = uint32_t(data.size() * 8) + code.parity_bits();
    std::vector<uint32_t> pos = forced;
    std::uniform_int_distribution<uint32_t> pick(0, nbits - 1);
    while (pos.size() < count) {
        const uint32_t q = pick(rng);
        if (std::find(pos.begin(), pos.end(), q) == pos.end()) pos.push_back(q);
    }
    for (uint32_t q : pos) {
        if (q < data.size() * 8) {
            data[q / 8] ^= uint8_t(0x80 >> (q % 8));
        } else {
            q -= uint32_t(data.size() * 8);
            parity[q / 8] ^= uint8_t(0x80 >> (q % 8));
        }
    }
}

struct Shape {
    uint32_t data_bytes, t;
};
const Shape kShapes[] = {{1024, 72}, {1024, 40}, {512, 8}, {32, 4}};

TEST(BchCode, GeometryOfTheDefaultCode) {
    BchCode c(1024, 72);
    EXPECT_EQ(c.m(), 14u);  // 8192 + 13 * 72 > 8191, 8192 + 14 * 72 <= 16383
    EXPECT_EQ(c.t(), 72u);
    EXPECT_EQ(c.data_bytes(), 1024u);
    EXPECT_LE(c.parity_bits(), 14u * 72u);
    EXPECT_GT(c.parity_bits(), 13u * 72u);
    EXPECT_EQ(c.parity_bytes(), 126u);
    // 16 codewords fit the 2,208-byte spare of a 16 KiB page.
    EXPECT_LE(16 * c.parity_bytes(), 2208u);

    BchCode small(32, 4);  // 256 + 9 * 4 <= 511
    EXPECT_EQ(small.m(), 9u);
    EXPECT_EQ(small.parity_bits(), 36u);  // no coset of 1, 3, 5, 7 is short in GF(2^9)
    EXPECT_EQ(small.parity_bytes(), 5u);
}

TEST(BchCode, RoundTripWithoutErrors) {
    std::mt19937_64 rng(1);
    for (const Shape& s : kShapes) {
        BchCode c(s.data_bytes, s.t);
        for (int trial = 0; trial < 5; ++trial) {
            Bytes data = random_bytes(rng, s.data_bytes), parity(c.parity_bytes(), 0xee);
            c.encode(data.data(), data.size(), parity.data());
            const uint32_t pad = 8 * c.parity_bytes() - c.parity_bits();
            EXPECT_EQ(parity.back() & ((1u << pad) - 1), 0u) << "pad bits are zero";
            const Bytes d0 = data, p0 = parity;
            const auto r = c.decode(data.data(), data.size(), parity.data());
            EXPECT_FALSE(r.uncorrectable);
            EXPECT_EQ(r.corrected, 0u);
            EXPECT_EQ(data, d0);
            EXPECT_EQ(parity, p0);
        }
    }
}

TEST(BchCode, ParityIsLinearAndZeroForZeroData) {
    BchCode c(64, 6);
    std::mt19937_64 rng(2);
    Bytes a = random_bytes(rng, 64), b = random_bytes(rng, 64), ab(64);
    for (size_t i = 0; i < 64; ++i) ab[i] = a[i] ^ b[i];
    Bytes pa(c.parity_bytes()), pb(c.parity_bytes()), pab(c.parity_bytes()), z(64, 0),
        pz(c.parity_bytes(), 0xff);
    c.encode(a.data(), 64, pa.data());
    c.encode(b.data(), 64, pb.data());
    c.encode(ab.data(), 64, pab.data());
    c.encode(z.data(), 64, pz.data());
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pab[i], pa[i] ^ pb[i]);
    EXPECT_EQ(pz, Bytes(c.parity_bytes(), 0));
}

TEST(BchCode, CorrectsExactlyTErrorsAnywhere) {
    std::mt19937_64 rng(3);
    for (const Shape& s : kShapes) {
        BchCode c(s.data_bytes, s.t);
        const uint32_t last = s.data_bytes * 8 + c.parity_bits() - 1;
        for (int trial = 0; trial < 50; ++trial) {
            Bytes data = random_bytes(rng, s.data_bytes), parity(c.parity_bytes());
            c.encode(data.data(), data.size(), parity.data());
            const Bytes d0 = data, p0 = parity;
            // Every fifth trial includes the first data bit and the last parity bit.
            std::vector<uint32_t> forced;
            if (trial % 5 == 0) forced = {0, last};
            flip_bits(rng, c, data, parity, s.t, forced);
            const auto r = c.decode(data.data(), data.size(), parity.data());
            ASSERT_FALSE(r.uncorrectable) << s.data_bytes << "/" << s.t << " trial " << trial;
            EXPECT_EQ(r.corrected, s.t);
            EXPECT_EQ(data, d0);
            EXPECT_EQ(parity, p0);
        }
    }
}

TEST(BchCode, CorrectsFewerErrorsAndErrorsOnlyInParity) {
    std::mt19937_64 rng(4);
    BchCode c(1024, 72);
    for (uint32_t e : {1u, 2u, 3u, 17u}) {
        Bytes data = random_bytes(rng, 1024), parity(c.parity_bytes());
        c.encode(data.data(), data.size(), parity.data());
        const Bytes d0 = data, p0 = parity;
        flip_bits(rng, c, data, parity, e);
        const auto r = c.decode(data.data(), data.size(), parity.data());
        EXPECT_FALSE(r.uncorrectable);
        EXPECT_EQ(r.corrected, e);
        EXPECT_EQ(data, d0);
        EXPECT_EQ(parity, p0);
    }
    Bytes data = random_bytes(rng, 1024), parity(c.parity_bytes());
    c.encode(data.data(), data.size(), parity.data());
    const Bytes p0 = parity;
    parity[0] ^= 0x80;    // the first parity bit
    parity[125] ^= 0x80;  // the first bit of the last parity byte (parity bit 1000)
    const auto r = c.decode(data.data(), data.size(), parity.data());
    EXPECT_FALSE(r.uncorrectable);
    EXPECT_EQ(r.corrected, 2u);
    EXPECT_EQ(parity, p0);
}

TEST(BchCode, PadBitsOfTheLastParityByteAreIgnored) {
    BchCode c(1024, 72);
    const uint32_t pad = 8 * c.parity_bytes() - c.parity_bits();
    ASSERT_GT(pad, 0u);
    std::mt19937_64 rng(5);
    Bytes data = random_bytes(rng, 1024), parity(c.parity_bytes());
    c.encode(data.data(), data.size(), parity.data());
    parity.back() ^= uint8_t((1u << pad) - 1);  // set every pad bit
    const Bytes d0 = data, p0 = parity;
    const auto r = c.decode(data.data(), data.size(), parity.data());
    EXPECT_FALSE(r.uncorrectable);
    EXPECT_EQ(r.corrected, 0u);
    EXPECT_EQ(parity, p0) << "decode leaves pad bits as they are";
    EXPECT_EQ(data, d0);
}

// t + 1 errors are beyond the code. With t = 72 over GF(2^14), a random word of weight t + 1 off
// a codeword lies within t of another codeword with probability about 2^-1001 * V(9200, 72)
// ~ 2^-1001 * 2^620: never. For small t (e.g. 4 over GF(2^9), 36 parity bits) a miscorrection
// happens in roughly 1 of (2^36 / V(292, 4)) ~ 1 in 20 words, so only large t is asserted.
TEST(BchCode, TPlusOneErrorsAreFlaggedAndBuffersUntouched) {
    std::mt19937_64 rng(6);
    for (const Shape& s : {Shape{1024, 72}, Shape{1024, 40}}) {
        BchCode c(s.data_bytes, s.t);
        const int trials = s.t == 72 ? 200 : 50;
        for (int trial = 0; trial < trials; ++trial) {
            Bytes data = random_bytes(rng, s.data_bytes), parity(c.parity_bytes());
            c.encode(data.data(), data.size(), parity.data());
            flip_bits(rng, c, data, parity, s.t + 1);
            const Bytes d1 = data, p1 = parity;
            const auto r = c.decode(data.data(), data.size(), parity.data());
            ASSERT_TRUE(r.uncorrectable) << s.data_bytes << "/" << s.t << " trial " << trial;
            EXPECT_EQ(data, d1);
            EXPECT_EQ(parity, p1);
        }
    }
}

TEST(BchCode, ManyMoreErrorsAreFlagged) {
    std::mt19937_64 rng(7);
    BchCode c(1024, 72);
    for (uint32_t e : {100u, 500u, 4000u}) {
        Bytes data = random_bytes(rng, 1024), parity(c.parity_bytes());
        c.encode(data.data(), data.size(), parity.data());
        flip_bits(rng, c, data, parity, e);
        const Bytes d1 = data, p1 = parity;
        const auto r = c.decode(data.data(), data.size(), parity.data());
        EXPECT_TRUE(r.uncorrectable) << e;
        EXPECT_EQ(data, d1);
        EXPECT_EQ(parity, p1);
    }
}

// A codeword shorter than the code (any length 1..data_bytes, not only multiples of 8) is the
// same code with leading zero data bytes dropped.
TEST(BchCode, ShortenedCodewordsOfAnyLength) {
    std::mt19937_64 rng(8);
    BchCode c(1024, 72);
    for (size_t len : {size_t(1), size_t(2), size_t(7), size_t(8), size_t(9), size_t(15),
                       size_t(63), size_t(100), size_t(1023)}) {
        Bytes data = random_bytes(rng, len), parity(c.parity_bytes());
        c.encode(data.data(), len, parity.data());
        Bytes padded(1024 - len, 0), pp(c.parity_bytes());
        padded.insert(padded.end(), data.begin(), data.end());
        c.encode(padded.data(), padded.size(), pp.data());
        EXPECT_EQ(parity, pp) << len;

        const Bytes d0 = data, p0 = parity;
        const uint32_t e = std::min<uint32_t>(72, uint32_t(len * 8 + c.parity_bits()) / 2);
        flip_bits(rng, c, data, parity, e, {0, uint32_t(len * 8 + c.parity_bits() - 1)});
        const auto r = c.decode(data.data(), len, parity.data());
        ASSERT_FALSE(r.uncorrectable) << len;
        EXPECT_EQ(r.corrected, e);
        EXPECT_EQ(data, d0);
        EXPECT_EQ(parity, p0);
    }
}

TEST(BchCode, SmallCodesAndOddParityWidths) {
    std::mt19937_64 rng(9);
    for (const Shape& s : {Shape{1, 1}, Shape{3, 2}, Shape{16, 3}, Shape{100, 13}, Shape{2048, 60},
                           Shape{4096, 100}}) {
        BchCode c(s.data_bytes, s.t);
        for (int trial = 0; trial < 10; ++trial) {
            Bytes data = random_bytes(rng, s.data_bytes), parity(c.parity_bytes());
            c.encode(data.data(), data.size(), parity.data());
            const Bytes d0 = data, p0 = parity;
            flip_bits(rng, c, data, parity, s.t);
            const auto r = c.decode(data.data(), data.size(), parity.data());
            ASSERT_FALSE(r.uncorrectable) << s.data_bytes << "/" << s.t;
            EXPECT_EQ(r.corrected, s.t);
            EXPECT_EQ(data, d0);
            EXPECT_EQ(parity, p0);
        }
    }
}

// The encoder's LFSR has one kernel per SIMD width; all must give the same parity and decode.
TEST(BchCode, EveryLfsrKernelAgrees) {
    std::mt19937_64 rng(10);
    for (const Shape& s : {Shape{1024, 72}, Shape{32, 4}, Shape{4096, 100}, Shape{8189, 1}}) {
        BchCode wide(s.data_bytes, s.t), avx2(s.data_bytes, s.t, 4), narrow(s.data_bytes, s.t, 2);
        for (size_t len : {size_t(s.data_bytes), size_t(s.data_bytes - 1), size_t(5)}) {
            Bytes data = random_bytes(rng, len), p1(wide.parity_bytes()), p2(p1), p3(p1);
            wide.encode(data.data(), len, p1.data());
            avx2.encode(data.data(), len, p2.data());
            narrow.encode(data.data(), len, p3.data());
            EXPECT_EQ(p1, p2) << s.data_bytes << "/" << s.t << " len " << len;
            EXPECT_EQ(p1, p3) << s.data_bytes << "/" << s.t << " len " << len;
            const Bytes d0 = data;
            flip_bits(rng, narrow, data, p3, std::min<uint32_t>(s.t, 8));
            const auto r = narrow.decode(data.data(), len, p3.data());
            EXPECT_FALSE(r.uncorrectable);
            EXPECT_EQ(data, d0);
            EXPECT_EQ(p3, p1);
        }
    }
}

// The Chien search has an AVX-512 (64 positions a step), an AVX2 (32) and a scalar version,
// picked like the LFSR kernels by max_lane_words and the CPU; each must find every root, also at
// the edges of a step's block of positions and at the first data bit (the last position).
TEST(BchCode, EveryChienSearchAgrees) {
    std::mt19937_64 rng(11);
    for (const Shape& s :
         {Shape{1024, 72}, Shape{4096, 100}, Shape{32, 4}, Shape{100, 13}, Shape{3, 2}}) {
        for (uint32_t lanes : {8u, 4u, 2u}) {
            BchCode c(s.data_bytes, s.t, lanes);
            const uint32_t nbits = s.data_bytes * 8 + c.parity_bits();
            // Codeword indices of the bits of x^k at block edges (k = 0 is the last parity bit).
            std::vector<uint32_t> edges;
            for (uint32_t k : {0u, 31u, 32u, 63u, 64u, 127u, 128u, nbits - 1}) {
                if (k < nbits) edges.push_back(nbits - 1 - k);
            }
            std::sort(edges.begin(), edges.end());
            edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
            for (uint32_t e : {2u, 3u, 8u, s.t}) {
                if (e > s.t) continue;
                for (int trial = 0; trial < 4; ++trial) {
                    Bytes data = random_bytes(rng, s.data_bytes), parity(c.parity_bytes());
                    c.encode(data.data(), data.size(), parity.data());
                    const Bytes d0 = data, p0 = parity;
                    std::vector<uint32_t> forced;
                    for (size_t k = 0; k < edges.size() && forced.size() < e; ++k) {
                        if ((k + size_t(trial)) % 2 == 0 || e >= edges.size()) {
                            forced.push_back(edges[k]);
                        }
                    }
                    flip_bits(rng, c, data, parity, e, forced);
                    const auto r = c.decode(data.data(), data.size(), parity.data());
                    ASSERT_FALSE(r.uncorrectable)
                        << s.data_bytes << "/" << s.t << " lanes " << lanes << " errors " << e;
                    EXPECT_EQ(r.corrected, e);
                    EXPECT_EQ(data, d0);
                    EXPECT_EQ(parity, p0);
                }
            }
        }
    }
}

void expect_input_error(uint32_t data_bytes, uint32_t t, const std::string& words) {
    try {
        BchCode c(data_bytes, t);
        FAIL() << "no error for " << data_bytes << "/" << t;
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "config");
        EXPECT_EQ(e.place(), "ssd.flash.ecc");
        EXPECT_NE(e.message().find(words), std::string::npos) << e.message();
    }
}

TEST(BchCode, ImpossibleCodesAreInputErrors) {
    expect_input_error(1024, 0, "t_bits");
    expect_input_error(0, 8, "codeword_bytes");
    expect_input_error(1024, 4000, "m <= 16");  // 8192 + 16 * 4000 > 65535
    expect_input_error(8190, 1, "m <= 16");     // 65520 data bits + 16 > 65535
    EXPECT_NO_THROW(BchCode(8189, 1));
}

// A page's codeword as the flash controller decodes it (decode_page_codeword): when the raw bit
// errors are known and no more than t fall in the codeword, undoing them gives exactly what the
// BCH decoder gives (data, parity, count); flips outside the codeword and in the last parity
// byte's pad bits count for neither; with t + 1 the decoder decides (uncorrectable); an erased
// codeword with a few zeros reads as ones.
TEST(BchCode, KnownErrorsUndoneAsTheDecoderCorrectsThem) {
    const BchCode c(1024, 72);
    const uint32_t pb = c.parity_bytes(), pad = 8 * pb - c.parity_bits();
    ASSERT_GT(pad, 0u);
    const uint32_t data_at = 100, parity_at = 2000, size = 2200;  // in the page, as in a spare
    std::mt19937_64 rng(9);
    for (uint32_t errors : {0u, 1u, 37u, 72u, 73u, 90u}) {
        Bytes page = random_bytes(rng, size);
        c.encode(page.data() + data_at, 1024, page.data() + parity_at);
        const Bytes clean = page;
        std::vector<uint64_t> code_bits;  // the codeword's bits as page positions
        for (uint64_t i = 0; i < 1024 * 8; ++i) code_bits.push_back(data_at * 8 + i);
        for (uint64_t i = 0; i < pb * 8; ++i)
            if (i / 8 + 1 < pb || i % 8 >= pad) code_bits.push_back(parity_at * 8 + i);
        std::shuffle(code_bits.begin(), code_bits.end(), rng);
        std::vector<uint64_t> flips(code_bits.begin(), code_bits.begin() + errors);
        // Others the die reports too: before the data, between data and parity, a pad bit.
        flips.insert(flips.end(), {7, 8 * 1500 + 3, (parity_at + pb - 1) * 8 + pad - 1});
        std::sort(flips.begin(), flips.end());
        for (uint64_t b : flips) page[b / 8] ^= uint8_t(1u << (b % 8));
        Bytes decoded = page, undone = page;
        const auto d = c.decode(decoded.data() + data_at, 1024, decoded.data() + parity_at);
        const PageCodeword r =
            decode_page_codeword(c, undone.data(), data_at, 1024, parity_at, &flips);
        EXPECT_EQ(undone, decoded) << errors << " errors";
        EXPECT_EQ(r.uncorrectable, d.uncorrectable) << errors;
        EXPECT_EQ(r.corrected, d.corrected) << errors;
        EXPECT_FALSE(r.erased);
        if (errors <= c.t()) {
            EXPECT_EQ(r.corrected, errors);
            EXPECT_TRUE(std::equal(clean.begin() + data_at, clean.begin() + data_at + 1024,
                                   undone.begin() + data_at));
        } else {
            EXPECT_TRUE(r.uncorrectable);
        }
    }
    Bytes erased(size, 0xFF);
    for (uint32_t b : {data_at * 8 + 5, parity_at * 8 + 9}) erased[b / 8] ^= uint8_t(1u << (b % 8));
    const PageCodeword e =
        decode_page_codeword(c, erased.data(), data_at, 1024, parity_at, nullptr);
    EXPECT_TRUE(e.erased);
    EXPECT_EQ(e.corrected, 2u);
    EXPECT_EQ(erased[data_at], 0xFF);
}

TEST(EccConfig, DescribedWithUnitsAndRanges) {
    EccConfig c;
    core::Params p;
    core::Params scoped = p.scope("ssd").scope("flash").scope("ecc");
    c.describe(scoped);
    EXPECT_EQ(p.keys(), (std::vector<std::string>{
                            "ssd.flash.ecc.codeword_bytes", "ssd.flash.ecc.t_bits",
                            "ssd.flash.ecc.t_decode_ns", "ssd.flash.ecc.t_correct_ns",
                            "ssd.flash.ecc.t_encode_ns", "ssd.flash.ecc.known_error_shortcut"}));
    core::ConfigSource src;
    src.set("ssd.flash.ecc.t_bits=0");
    EccConfig bad;
    core::Params pb(&src);
    core::Params sb = pb.scope("ssd").scope("flash").scope("ecc");
    EXPECT_THROW(bad.describe(sb), InputError);
    core::ConfigSource ok;
    ok.set("ssd.flash.ecc.t_bits=40");
    EccConfig good;
    core::Params pg(&ok);
    core::Params sg = pg.scope("ssd").scope("flash").scope("ecc");
    good.describe(sg);
    EXPECT_EQ(good.t_bits, 40u);
}

}  // namespace
}  // namespace canopy::ssd::test
