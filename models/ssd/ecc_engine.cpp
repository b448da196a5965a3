#include "ssd/ecc_engine.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace canopy::ssd {

namespace {

// Primitive polynomials of GF(2^m), m = 5..16 (the usual table of the smallest-weight ones, bit
// i = coefficient of x^i). The constructor checks each is primitive before using it.
constexpr uint32_t kPrimitive[17] = {0,      0,      0,      0,      0,      0x25,
                                     0x43,   0x83,   0x11d,  0x211,  0x409,  0x805,
                                     0x1053, 0x201b, 0x402b, 0x8003, 0x1002d};
constexpr uint32_t kMinM = 5, kMaxM = 16;

[[noreturn]] void fail(const std::string& why) { throw InputError("config", "ssd.flash.ecc", why); }

// The remainder register works on lanes of 64-bit words (GCC/Clang vector extension), so shifting
// it by two words is one shuffle per lane: 2 words (SSE2, NEON) everywhere, 4 (AVX2) or 8
// (AVX-512) where the CPU has them. The table's entries are padded to a multiple of 8 words so
// any lane width fits; the padding is more zero bits below the left-aligned register. The tables
// take 16 x 256 entries: 512 KiB for the default code (1,001 parity bits in 1,024).
typedef uint64_t v2u __attribute__((vector_size(16)));
typedef uint64_t v4u __attribute__((vector_size(32)));
typedef uint64_t v8u __attribute__((vector_size(64)));

inline uint64_t load_be64(const uint8_t* p) {
    uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w = (w << 8) | p[i];  // compiles to a load and a bswap
    return w;
}

// Up to 8 bytes as a big-endian word, right-aligned.
inline uint64_t head_word(const uint8_t* d, size_t head) {
    uint64_t w = 0;
    for (size_t i = 0; i < head; ++i) w = (w << 8) | d[i];
    return w;
}

// {a, b} shifted by two words: the lane after the register moves on by 128 bits.
#if defined(__clang__)
#define CANOPY_NEXT2_W2(a, b) (b)
#define CANOPY_NEXT2_W4(a, b) __builtin_shufflevector(a, b, 2, 3, 4, 5)
#define CANOPY_NEXT2_W8(a, b) __builtin_shufflevector(a, b, 2, 3, 4, 5, 6, 7, 8, 9)
#else
#define CANOPY_NEXT2_W2(a, b) (b)
#define CANOPY_NEXT2_W4(a, b) __builtin_shuffle(a, b, v4u{2, 3, 4, 5})
#define CANOPY_NEXT2_W8(a, b) __builtin_shuffle(a, b, v8u{2, 3, 4, 5, 6, 7, 8, 9})
#endif

// The systematic encoder's LFSR, 128 data bits per step (slice-by-16 byte tables): with the
// register R left-aligned (its x^(p-1) bit the MSB of word 0) and the next 128 message bits D,
// R' = (R << 128) ^ table(top two words of R ^ D), where table(v) = (v(x) * x^p mod g)
// left-aligned is the XOR of one entry per byte of v. Each step's table loads depend on the
// previous step's result, so that chain's latency bounds the speed: 128-bit steps halve it
// against 64-bit ones for the same loads per byte. NV lanes fixed at compile time keep the
// register in vector registers; NV == 0 is any size. `entry` is a table entry's size in words.
// A macro because the target attribute differs per lane width and no vector may cross a call.
#define CANOPY_LFSR(NAME, VT, W, NEXT2, ATTR)                                                 \
    template <uint32_t NV>                                                                    \
    ATTR void NAME(const uint64_t* tab, uint32_t entry_rt, const uint8_t* d, size_t len,      \
                   uint64_t* words) {                                                         \
        const uint32_t entry = NV ? NV * W : entry_rt, nv = entry / W;                        \
        constexpr uint32_t kLocal = NV ? NV + 1 : 1;                                          \
        struct Lane {                                                                         \
            VT v;                                                                             \
        };                                                                                    \
        Lane local[kLocal];                                                                   \
        std::vector<Lane> heap;                                                               \
        Lane* s = local;                                                                      \
        if (!NV) {                                                                            \
            heap.resize(nv + 1);                                                              \
            s = heap.data();                                                                  \
        }                                                                                     \
        for (uint32_t j = 0; j < nv; ++j) std::memcpy(&s[j].v, words + W * j, sizeof(VT));    \
        s[nv].v = VT{} ^ VT {};                                                               \
        const size_t stride = 256 * size_t(entry);                                            \
        /* A length not a multiple of 16: leading zero bits leave the register at zero, so */ \
        /* the first step takes the odd bytes right-aligned. */                               \
        const size_t head = len % 16;                                                         \
        uint64_t w0 = 0, w1 = 0;                                                              \
        if (head > 8) {                                                                       \
            w0 = head_word(d, head - 8);                                                      \
            w1 = load_be64(d + head - 8);                                                     \
        } else if (head) {                                                                    \
            w1 = head_word(d, head);                                                          \
        } else if (len) {                                                                     \
            w0 = load_be64(d);                                                                \
            w1 = load_be64(d + 8);                                                            \
        }                                                                                     \
        for (size_t i = head ? head : 16; i <= len; i += 16) {                                \
            w0 ^= s[0].v[0];                                                                  \
            w1 ^= s[0].v[1];                                                                  \
            const uint64_t* p[16];                                                            \
            for (int k = 0; k < 8; ++k) {                                                     \
                p[k] = tab + k * stride + ((w0 >> (56 - 8 * k)) & 0xff) * entry;              \
                p[k + 8] = tab + (k + 8) * stride + ((w1 >> (56 - 8 * k)) & 0xff) * entry;    \
            }                                                                                 \
            for (uint32_t j = 0; j < nv; ++j) {                                               \
                VT x = NEXT2(s[j].v, s[j + 1].v), y;                                          \
                const size_t o = W * size_t(j);                                               \
                for (int k = 0; k < 16; ++k) {                                                \
                    std::memcpy(&y, p[k] + o, sizeof y);                                      \
                    x ^= y;                                                                   \
                }                                                                             \
                s[j].v = x;                                                                   \
            }                                                                                 \
            if (i + 16 <= len) {                                                              \
                w0 = load_be64(d + i);                                                        \
                w1 = load_be64(d + i + 8);                                                    \
            }                                                                                 \
        }                                                                                     \
        for (uint32_t j = 0; j < nv; ++j) std::memcpy(words + W * j, &s[j].v, sizeof(VT));    \
    }

CANOPY_LFSR(lfsr2, v2u, 2, CANOPY_NEXT2_W2, )
#if defined(__x86_64__) && defined(__GNUC__)
#define CANOPY_X86_KERNELS 1
CANOPY_LFSR(lfsr4, v4u, 4, CANOPY_NEXT2_W4, __attribute__((target("avx2"))))
CANOPY_LFSR(lfsr8, v8u, 8, CANOPY_NEXT2_W8, __attribute__((target("avx512f"))))
#endif

// Registers up to 2,048 bits (m = 16, t = 128) get kernels of their own size.
constexpr BchCode::Kernel kLfsr2[] = {
    lfsr2<0>, lfsr2<1>,  lfsr2<2>,  lfsr2<3>,  lfsr2<4>,  lfsr2<5>,  lfsr2<6>,  lfsr2<7>, lfsr2<8>,
    lfsr2<9>, lfsr2<10>, lfsr2<11>, lfsr2<12>, lfsr2<13>, lfsr2<14>, lfsr2<15>, lfsr2<16>};
#ifdef CANOPY_X86_KERNELS
constexpr BchCode::Kernel kLfsr4[] = {lfsr4<0>, lfsr4<1>, lfsr4<2>, lfsr4<3>, lfsr4<4>,
                                      lfsr4<5>, lfsr4<6>, lfsr4<7>, lfsr4<8>};
constexpr BchCode::Kernel kLfsr8[] = {lfsr8<0>, lfsr8<1>, lfsr8<2>, lfsr8<3>, lfsr8<4>};
#endif

template <size_t N>
BchCode::Kernel pick(const BchCode::Kernel (&k)[N], uint32_t lanes) {
    return k[lanes < N ? lanes : 0];
}

// The widest lanes this CPU runs.
BchCode::Kernel choose_kernel(uint32_t entry_words, uint32_t max_lane_words) {
#ifdef CANOPY_X86_KERNELS
    __builtin_cpu_init();  // may run before main, from a static constructor
    if (max_lane_words >= 8 && __builtin_cpu_supports("avx512f")) {
        return pick(kLfsr8, entry_words / 8);
    }
    if (max_lane_words >= 4 && __builtin_cpu_supports("avx2")) {
        return pick(kLfsr4, entry_words / 4);
    }
#else
    (void)max_lane_words;
#endif
    return pick(kLfsr2, entry_words / 2);
}

// The residues of the `len` bytes (MSB first, the highest coefficients first) modulo K groups'
// degree-56 polynomials side by side, each in a register: `tab` holds 256 entries per group (the
// overflow byte times x^56, reduced).
template <int K>
void reduce_groups(const uint8_t* bytes, size_t len, const uint64_t* tab, uint64_t* out) {
    constexpr uint64_t kMask56 = (uint64_t(1) << 56) - 1;
    uint64_t r[K] = {};
    for (size_t i = 0; i < len; ++i) {
        const uint64_t byte = bytes[i];
        for (int q = 0; q < K; ++q) {
            r[q] = (((r[q] << 8) ^ byte) & kMask56) ^ tab[q * 256 + (r[q] >> 48)];
        }
    }
    for (int q = 0; q < K; ++q) out[q] = r[q];
}

// Decoder scratch, reused by each thread's calls so that decoding allocates nothing once warm.
struct Scratch {
    std::vector<uint8_t> s, tabs;
    std::vector<uint64_t> r;
    std::vector<uint32_t> S, C, B, T, pos, cur, dec;
};

Scratch& scratch() {
    thread_local Scratch sc;
    return sc;
}

#ifdef CANOPY_X86_KERNELS
// The SIMD Chien search, W (32 or 64) positions at a time: per locator term j, the values
// lambda_j alpha^(-jk) of positions k0..k0+W-1 as two byte planes (low and high byte of each),
// and the step to k0+W (a multiplication by the constant c = alpha^(-Wj), linear over GF(2)) as
// one 16-entry table per input nibble and output byte, looked up with pshufb. Each term's block
// in `tabs` is 2W bytes of state and 128 bytes of tables; returns the number of terms. With
// GFNI (W = 64), the step is four 8x8 bit matrices (gf2p8affineqb) instead of the tables.
uint32_t chien_setup(uint32_t W, bool gfni, const uint32_t* alog, const uint32_t* logt, uint32_t n,
                     uint32_t m, const uint32_t* lam, uint32_t deg, uint8_t* tabs) {
    uint32_t terms = 0;
    const size_t block = 2 * W + (gfni ? 32 : 128);
    for (uint32_t j = 1; j <= deg; ++j) {
        if (!lam[j]) continue;
        uint8_t* e = tabs + block * terms++;
        const uint32_t jj = j % n, step = uint32_t((uint64_t(W) * j) % n);
        uint32_t idx = logt[lam[j]];
        for (uint32_t s = 0; s < W; ++s) {  // the first W positions
            const uint32_t v = alog[idx];
            e[s] = uint8_t(v);
            e[W + s] = uint8_t(v >> 8);
            idx = idx >= jj ? idx - jj : idx + n - jj;
        }
        uint32_t basis[16];  // x^b times alpha^(-Wj); alog has 2n entries
        for (uint32_t b = 0; b < 16; ++b) basis[b] = b < m ? alog[n - step + b] : 0;
        if (gfni) {  // four 8x8 bit matrices (in byte, out byte), row i of the output in byte 7-i
            for (uint32_t in = 0; in < 2; ++in) {
                for (uint32_t out = 0; out < 2; ++out) {
                    uint64_t a = 0;
                    for (uint32_t i = 0; i < 8; ++i) {
                        uint64_t row = 0;
                        for (uint32_t j = 0; j < 8; ++j) {
                            row |= uint64_t((basis[8 * in + j] >> (8 * out + i)) & 1) << j;
                        }
                        a |= row << (8 * (7 - i));
                    }
                    std::memcpy(e + 2 * W + 8 * (2 * in + out), &a, 8);
                }
            }
            continue;
        }
        for (uint32_t q = 0; q < 4; ++q) {  // nibble q of the input
            uint8_t* lo = e + 2 * W + 32 * q;
            uint8_t* hi = lo + 16;
            uint32_t tab[16];
            tab[0] = 0;
            for (uint32_t v = 1; v < 16; ++v) {
                tab[v] = tab[v & (v - 1)] ^ basis[4 * q + __builtin_ctz(v)];
            }
            for (uint32_t v = 0; v < 16; ++v) {
                lo[v] = uint8_t(tab[v]);
                hi[v] = uint8_t(tab[v] >> 8);
            }
        }
    }
    return terms;
}

// Records the hits of `mask` (bit s: position k0 + s) below nbits; true when all deg are found.
inline bool chien_hits(uint64_t mask, uint32_t k0, uint32_t nbits, uint32_t deg,
                       uint32_t* positions, uint32_t& found) {
    while (mask) {
        const uint32_t k = k0 + uint32_t(__builtin_ctzll(mask));
        mask &= mask - 1;
        if (k >= nbits) break;
        positions[found++] = k;
        if (found == deg) return true;
    }
    return false;
}

__attribute__((target("avx2"))) uint32_t chien_avx2(const uint32_t* alog, const uint32_t* logt,
                                                    uint32_t n, uint32_t m, const uint32_t* lam,
                                                    uint32_t deg, uint32_t nbits, uint8_t* tabs,
                                                    uint32_t* positions) {
    const uint32_t terms = chien_setup(32, false, alog, logt, n, m, lam, deg, tabs);
    const __m256i nib = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1),
                  zero = _mm256_setzero_si256();
    uint32_t found = 0;
    for (uint32_t k0 = 0; k0 < nbits; k0 += 32) {
        __m256i slo = zero, shi = zero;
        for (uint32_t j = 0; j < terms; ++j) {
            uint8_t* e = tabs + 192 * size_t(j);  // 64 state bytes, 128 table bytes
            const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e));
            const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e + 32));
            slo = _mm256_xor_si256(slo, lo);
            shi = _mm256_xor_si256(shi, hi);
            const __m256i n0 = _mm256_and_si256(lo, nib);
            const __m256i n1 = _mm256_and_si256(_mm256_srli_epi16(lo, 4), nib);
            const __m256i n2 = _mm256_and_si256(hi, nib);
            const __m256i n3 = _mm256_and_si256(_mm256_srli_epi16(hi, 4), nib);
            const uint8_t* t = e + 64;  // the 16-byte tables, the same in both halves
#define CANOPY_TAB(x) \
    _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + 16 * (x))))
            __m256i nlo = _mm256_shuffle_epi8(CANOPY_TAB(0), n0);
            __m256i nhi = _mm256_shuffle_epi8(CANOPY_TAB(1), n0);
            nlo = _mm256_xor_si256(nlo, _mm256_shuffle_epi8(CANOPY_TAB(2), n1));
            nhi = _mm256_xor_si256(nhi, _mm256_shuffle_epi8(CANOPY_TAB(3), n1));
            nlo = _mm256_xor_si256(nlo, _mm256_shuffle_epi8(CANOPY_TAB(4), n2));
            nhi = _mm256_xor_si256(nhi, _mm256_shuffle_epi8(CANOPY_TAB(5), n2));
            nlo = _mm256_xor_si256(nlo, _mm256_shuffle_epi8(CANOPY_TAB(6), n3));
            nhi = _mm256_xor_si256(nhi, _mm256_shuffle_epi8(CANOPY_TAB(7), n3));
#undef CANOPY_TAB
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(e), nlo);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(e + 32), nhi);
        }
        // Lambda(alpha^-k) = 0 where the terms sum to 1 (lambda_0 = 1).
        const __m256i hit =
            _mm256_and_si256(_mm256_cmpeq_epi8(slo, one), _mm256_cmpeq_epi8(shi, zero));
        const uint64_t mask = uint32_t(_mm256_movemask_epi8(hit));
        if (chien_hits(mask, k0, nbits, deg, positions, found)) return found;
    }
    return found;
}

// Not instrumented for pointer overflow: clang 14 with -fsanitize=pointer-overflow miscompiles
// this function (no report, wrong positions: every decode uncorrectable on a GFNI machine).
__attribute__((target("avx512f,avx512bw,gfni"), no_sanitize("pointer-overflow"))) uint32_t
chien_gfni(const uint32_t* alog, const uint32_t* logt, uint32_t n, uint32_t m, const uint32_t* lam,
           uint32_t deg, uint32_t nbits, uint8_t* tabs, uint32_t* positions) {
    const uint32_t terms = chien_setup(64, true, alog, logt, n, m, lam, deg, tabs);
    const __m512i one = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    uint32_t found = 0;
    for (uint32_t k0 = 0; k0 < nbits; k0 += 64) {
        __m512i slo = zero, shi = zero;
        for (uint32_t j = 0; j < terms; ++j) {
            uint8_t* e = tabs + 160 * size_t(j);
            const __m512i lo = _mm512_loadu_si512(e);
            const __m512i hi = _mm512_loadu_si512(e + 64);
            slo = _mm512_xor_si512(slo, lo);
            shi = _mm512_xor_si512(shi, hi);
            uint64_t a[4];
            std::memcpy(a, e + 128, sizeof a);
            const __m512i nlo =
                _mm512_xor_si512(_mm512_gf2p8affine_epi64_epi8(lo, _mm512_set1_epi64(a[0]), 0),
                                 _mm512_gf2p8affine_epi64_epi8(hi, _mm512_set1_epi64(a[2]), 0));
            const __m512i nhi =
                _mm512_xor_si512(_mm512_gf2p8affine_epi64_epi8(lo, _mm512_set1_epi64(a[1]), 0),
                                 _mm512_gf2p8affine_epi64_epi8(hi, _mm512_set1_epi64(a[3]), 0));
            _mm512_storeu_si512(e, nlo);
            _mm512_storeu_si512(e + 64, nhi);
        }
        const uint64_t mask = _mm512_cmpeq_epi8_mask(slo, one) & _mm512_cmpeq_epi8_mask(shi, zero);
        if (chien_hits(mask, k0, nbits, deg, positions, found)) return found;
    }
    return found;
}
#endif

}  // namespace

void EccConfig::describe(core::Params& p) {
    p("codeword_bytes", codeword_bytes, "B", "data bytes per codeword [issue: default 1 KiB]", 1,
      8189)("t_bits", t_bits, "bit",
            "bit errors corrected per codeword [assumed: 16 KiB-page TLC controllers correct "
            "40-72 bits per KiB; 16 codewords of 126 parity bytes fit the 2,208-byte spare]",
            1, 4095)("t_decode_ns", t_decode_ns, "ns",
                     "pipelined decoder latency per codeword without errors [assumed]", 0.0, 1e9)(
        "t_correct_ns", t_correct_ns, "ns",
        "extra decoder time for a codeword with errors (Berlekamp-Massey + Chien search) "
        "[assumed]",
        0.0, 1e9)("t_encode_ns", t_encode_ns, "ns",
                  "encoder latency per codeword (LFSR, pipelined with the transfer) [assumed]", 0.0,
                  1e9)("known_error_shortcut", known_error_shortcut,
                       "simulation speed only: undo the raw bit errors the NAND model reports "
                       "instead of decoding (the same result when there are at most t_bits)");
}

BchCode::BchCode(uint32_t data_bytes, uint32_t t, uint32_t max_lane_words)
    : data_bytes_(data_bytes), t_(t) {
    if (t == 0) fail("t_bits must be at least 1 (a BCH code corrects at least one bit)");
    if (data_bytes == 0) fail("codeword_bytes must be at least 1");
    const uint64_t data_bits = uint64_t(data_bytes) * 8;
    for (uint32_t m = kMinM; m <= kMaxM && !m_; ++m) {
        if (data_bits + uint64_t(m) * t <= (uint64_t(1) << m) - 1) m_ = m;
    }
    if (!m_) {
        fail("no binary BCH code over GF(2^m) with m <= 16 holds " + std::to_string(data_bytes) +
             " data bytes and corrects " + std::to_string(t) +
             " bits (needs data bits + m * t <= 2^m - 1): lower t_bits or codeword_bytes");
    }
    n_ = (1u << m_) - 1;

    // GF(2^m): alpha^i for i in [0, 2n) so that a sum of two logs needs no reduction.
    alog_.assign(2 * size_t(n_), 0);
    log_.assign(size_t(n_) + 1, 0);
    uint32_t x = 1;
    for (uint32_t i = 0; i < n_; ++i) {
        if (i && x == 1) throw std::logic_error("BchCode: polynomial not primitive");
        alog_[i] = alog_[i + n_] = x;
        log_[x] = i;
        x <<= 1;
        if (x >> m_) x ^= kPrimitive[m_];
    }

    // g(x) = product of the minimal polynomials of alpha^1, alpha^3, ..., alpha^(2t-1): one per
    // distinct cyclotomic coset. Binary polynomials as one coefficient per byte, index = degree.
    std::vector<uint8_t> g{1};
    std::vector<bool> done(n_, false);
    std::vector<uint32_t> coset_of(2 * size_t(t), 0);  // odd i < 2t: index into minpolys
    std::vector<uint32_t> minpolys;                    // bit k = coefficient of x^k
    for (uint32_t i = 1; i < 2 * t; i += 2) {
        if (done[i]) {
            for (uint32_t c = 0; c < minpolys.size() && !coset_of[i]; ++c) {
                // i lies in an earlier coset: find it by the polynomial's root alpha^i.
                uint32_t v = 0;
                for (uint32_t k = 0; k <= m_; ++k) {
                    if ((minpolys[c] >> k) & 1) v ^= alog_[(uint64_t(i) * k) % n_];
                }
                if (!v) coset_of[i] = c + 1;
            }
            if (!coset_of[i]) throw std::logic_error("BchCode: coset not found");
            coset_of[i] -= 1;
            continue;
        }
        std::vector<uint32_t> mp{1};  // over GF(2^m): product of (x + alpha^j), j in the coset
        uint32_t j = i;
        do {
            done[j] = true;
            mp.push_back(0);
            for (size_t k = mp.size() - 1; k > 0; --k) mp[k] = mp[k - 1] ^ gf_mul(mp[k], alog_[j]);
            mp[0] = gf_mul(mp[0], alog_[j]);
            j = uint32_t((uint64_t(j) * 2) % n_);
        } while (j != i);
        std::vector<uint8_t> prod(g.size() + mp.size() - 1, 0);
        uint32_t bits = 0;
        for (size_t k = 0; k < mp.size(); ++k) {
            if (mp[k] > 1) throw std::logic_error("BchCode: minimal polynomial not binary");
            if (mp[k]) {
                bits |= 1u << k;
                for (size_t q = 0; q < g.size(); ++q) prod[k + q] ^= g[q];
            }
        }
        g.swap(prod);
        coset_of[i] = uint32_t(minpolys.size());
        minpolys.push_back(bits);
    }
    p_ = uint32_t(g.size() - 1);
    nw_ = 8 * ((p_ + 511) / 512);  // words per table entry and register
    const uint32_t nw = nw_;
    kernel_ = choose_kernel(nw, max_lane_words);

    // rem[q] = x^(p+q) mod g, left-aligned in nw words, for q = 0..127.
    std::vector<uint64_t> rem(128 * size_t(nw), 0), glow(nw, 0);
    for (uint32_t k = 0; k < p_; ++k) {  // g without x^p is x^p mod g
        if (!g[k]) continue;
        const uint32_t u = p_ - 1 - k;  // bit index from the register's MSB
        glow[u / 64] |= uint64_t(1) << (63 - u % 64);
    }
    std::vector<uint64_t> r = glow;
    for (uint32_t q = 0; q < 128; ++q) {
        std::copy(r.begin(), r.end(), rem.begin() + size_t(q) * nw);
        const bool carry = r[0] >> 63;  // the x^p coefficient after multiplying by x
        for (uint32_t w = 0; w < nw; ++w) r[w] = (r[w] << 1) | (w + 1 < nw ? r[w + 1] >> 63 : 0);
        if (carry) {
            for (uint32_t w = 0; w < nw; ++w) r[w] ^= glow[w];
        }
    }
    // table_[k][v]: byte v at byte k of a 128-bit step (k = 0 the most significant, so
    // multiplied by x^(120 - 8k)), times x^p, mod g.
    const uint32_t bits = 8, slices = 128 / bits, values = 1u << bits;
    table_.assign(size_t(slices) * values * nw, 0);
    for (uint32_t k = 0; k < slices; ++k) {
        for (uint32_t b = 1; b < values; ++b) {
            const uint32_t low = __builtin_ctz(b);
            uint64_t* dst = &table_[(size_t(k) * values + b) * nw];
            const uint64_t* prev = &table_[(size_t(k) * values + (b & (b - 1))) * nw];
            const uint64_t* bit = &rem[size_t(128 - bits * (k + 1) + low) * nw];
            for (uint32_t w = 0; w < nw; ++w) dst[w] = prev[w] ^ bit[w];
        }
    }

    // The minimal polynomials packed in order into groups of total degree <= 56 (the product P
    // of a group fits a word with room for a byte's overflow), and per group the table of byte
    // v times x^D mod P, D = deg P.
    std::vector<uint32_t> group_of(minpolys.size());
    std::vector<uint64_t> prods;
    std::vector<uint32_t> degs;
    for (uint32_t c = 0; c < minpolys.size(); ++c) {
        const uint32_t d = 31 - __builtin_clz(minpolys[c]);
        if (prods.empty() || degs.back() + d > 56) {
            prods.push_back(1);
            degs.push_back(0);
        }
        uint64_t prod = 0;  // carry-less product
        for (uint32_t k = 0; k <= d; ++k) {
            if ((minpolys[c] >> k) & 1) prod ^= prods.back() << k;
        }
        prods.back() = prod;
        degs.back() += d;
        group_of[c] = uint32_t(prods.size() - 1);
    }
    grp_table_.assign(prods.size() * 256, 0);
    for (size_t q = 0; q < prods.size(); ++q) {
        const uint64_t P = prods[q] << (56 - degs[q]);  // degree 56
        for (uint32_t v = 1; v < 256; ++v) {
            uint64_t x = uint64_t(v) << 56;  // only x^56..x^63 to reduce
            for (uint32_t bit = 63; bit >= 56; --bit) {
                if ((x >> bit) & 1) x ^= P << (bit - 56);
            }
            grp_table_[q * 256 + v] = x;
        }
    }
    // S_i is the group's residue (of s(x) x^pad) at alpha^i, times alpha^(-i pad).
    const uint32_t pad = 8 * parity_bytes() - p_;
    for (uint32_t q = 0; q < prods.size(); ++q) {
        uint32_t lane = 4;
        for (uint32_t u = 0; u < t; ++u) {
            const uint64_t i = 2 * u + 1;
            if (group_of[coset_of[i]] != q) continue;
            if (lane == 4) {
                unit_grp_.push_back(q);
                unit_syn_.insert(unit_syn_.end(), 4, 0);
                unit_tab_.insert(unit_tab_.end(), 14 * 16, 0);
                lane = 0;
            }
            unit_syn_[unit_syn_.size() - 4 + lane] = uint32_t(i);
            uint64_t* tab = &unit_tab_[unit_tab_.size() - 14 * 16];
            for (uint32_t k = 0; k < 14; ++k) {
                uint64_t vals[16] = {0};  // this lane's values of nibble k
                for (uint32_t v = 1; v < 16; ++v) {
                    const uint32_t bit = 4 * k + __builtin_ctz(v);
                    vals[v] = vals[v & (v - 1)] ^ alog_[(i * (bit + n_ - pad)) % n_];
                    tab[k * 16 + v] ^= vals[v] << (16 * lane);
                }
            }
            ++lane;
        }
    }
#ifdef CANOPY_X86_KERNELS
    if (max_lane_words >= 8 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("gfni")) {
        simd_chien_ = 64;
    } else if (max_lane_words >= 4 && __builtin_cpu_supports("avx2")) {
        simd_chien_ = 32;
    }
#endif
}

void BchCode::remainder(const uint8_t* data, size_t len, uint64_t* words) const {
    std::memset(words, 0, sizeof(uint64_t) * nw_);
    kernel_(table_.data(), nw_, data, len, words);
}

void BchCode::encode(const uint8_t* data, size_t len, uint8_t* parity) const {
    if (len > data_bytes_) throw std::invalid_argument("BchCode::encode: longer than the code");
    std::vector<uint64_t> words(nw_);
    remainder(data, len, words.data());
    for (uint32_t i = 0; i < parity_bytes(); ++i) {
        parity[i] = uint8_t(words[i / 8] >> (56 - 8 * (i % 8)));  // pad bits are zero
    }
}

BchCode::Result BchCode::decode(uint8_t* data, size_t len, uint8_t* parity) const {
    if (len > data_bytes_) throw std::invalid_argument("BchCode::decode: longer than the code");
    Result res;
    const uint32_t pb = parity_bytes(), pad = 8 * pb - p_;
    uint64_t stack_words[32];
    std::vector<uint64_t> heap;
    uint64_t* words = stack_words;
    if (nw_ > 32) {
        heap.resize(nw_);
        words = heap.data();
    }
    remainder(data, len, words);
    // The received word's remainder mod g: the data's remainder plus the received parity.
    // The register as bytes, compared with the received parity a word at a time.
    const uint8_t last_mask = uint8_t(0xff << pad);
    uint64_t diff = 0;
    uint32_t i = 0;
    for (; i + 8 < pb; i += 8) diff |= words[i / 8] ^ load_be64(parity + i);  // the last byte:
    for (; i < pb; ++i) {  // below, without its pad bits
        const uint8_t m = i + 1 == pb ? last_mask : 0xff;
        diff |= (uint8_t(words[i / 8] >> (56 - 8 * (i % 8))) ^ parity[i]) & m;
    }
    if (!diff) return res;  // a codeword: the common case

    Scratch& sc = scratch();
    sc.s.resize(pb);
    uint8_t* s = sc.s.data();
    for (i = 0; i < pb; ++i) s[i] = uint8_t(words[i / 8] >> (56 - 8 * (i % 8))) ^ parity[i];
    s[pb - 1] &= last_mask;

    // Syndromes S_i = s(alpha^i), i = 1..2t; the bytes hold s(x) * x^pad. For odd i, s(x) x^pad
    // is reduced modulo the product P of its group of minimal polynomials (a byte at a time, all
    // groups side by side), and the residue (degree < 56) evaluated at alpha^i; even i as squares
    // (S_2i = S_i^2 in a binary code).
    const size_t groups = grp_table_.size() / 256;
    sc.r.assign(groups, 0);
    uint64_t* r = sc.r.data();
    const uint64_t* gt = grp_table_.data();
    size_t q = 0;
    for (; q + 4 <= groups; q += 4) reduce_groups<4>(s, pb, gt + q * 256, r + q);
    switch (groups - q) {
        case 3:
            reduce_groups<3>(s, pb, gt + q * 256, r + q);
            break;
        case 2:
            reduce_groups<2>(s, pb, gt + q * 256, r + q);
            break;
        case 1:
            reduce_groups<1>(s, pb, gt + q * 256, r + q);
            break;
        default:
            break;
    }
    sc.S.assign(2 * size_t(t_) + 1, 0);
    uint32_t* S = sc.S.data();
    for (size_t e = 0; e < unit_grp_.size(); ++e) {
        const uint64_t res = r[unit_grp_[e]];
        const uint64_t* tab = &unit_tab_[e * 14 * 16];
        uint64_t v = 0;
        for (uint32_t k = 0; k < 14; ++k) v ^= tab[k * 16 + ((res >> (4 * k)) & 15)];
        for (uint32_t lane = 0; lane < 4; ++lane) {
            const uint32_t i = unit_syn_[4 * e + lane];
            if (i) S[i] = uint32_t(v >> (16 * lane)) & 0xffff;
        }
    }
    for (uint32_t i = 2; i <= 2 * t_; i += 2) S[i] = gf_mul(S[i / 2], S[i / 2]);

    // Berlekamp-Massey for the error locator Lambda(x) = prod (1 + X_l x). In a binary code every
    // other discrepancy is zero, so only even steps compute one. deg(C) stays <= 2t.
    const size_t cap = 2 * size_t(t_) + 2;
    sc.C.assign(cap, 0);
    sc.B.assign(cap, 0);
    sc.T.resize(cap);
    uint32_t *C = sc.C.data(), *B = sc.B.data(), *T = sc.T.data();
    C[0] = B[0] = 1;
    uint32_t L = 0, shift = 1, b = 1, degB = 0, degC = 0;
    for (uint32_t r = 0; r < 2 * t_; r += 2) {
        uint32_t d = S[r + 1];
        for (uint32_t i = 1; i <= L; ++i) d ^= gf_mul(C[i], S[r + 1 - i]);
        if (!d) {
            shift += 2;
            continue;
        }
        uint32_t lcoef = log_[d] + n_ - log_[b];  // log of d / b
        if (lcoef >= n_) lcoef -= n_;
        const bool grow = 2 * L <= r;
        const uint32_t old_degC = degC;
        if (grow) std::memcpy(T, C, sizeof(uint32_t) * (degC + 1));
        for (uint32_t i = 0; i <= degB && i + shift < cap; ++i) {
            if (B[i]) C[i + shift] ^= alog_[lcoef + log_[B[i]]];
        }
        if (degB + shift > degC) degC = std::min<uint32_t>(degB + shift, uint32_t(cap - 1));
        if (grow) {
            L = r + 1 - L;
            // B takes the old C; clear what is left of the old B above it.
            for (uint32_t i = old_degC + 1; i <= degB; ++i) B[i] = 0;
            std::memcpy(B, T, sizeof(uint32_t) * (old_degC + 1));
            degB = old_degC;
            b = d;
            shift = 2;
        } else {
            shift += 2;
        }
        if (L > t_) break;
    }
    res.uncorrectable = true;
    if (L == 0 || L > t_) return res;
    uint32_t deg = 0;
    for (uint32_t i = 0; i <= degC; ++i) {
        if (C[i]) deg = i;
    }
    if (deg != L) return res;

    const uint32_t nbits = uint32_t(8 * len) + p_;
    sc.pos.resize(L);
    uint32_t* pos = sc.pos.data();
    if (!chien(C, L, nbits, pos)) return res;
    for (uint32_t e = 0; e < L; ++e) {
        const uint32_t k = pos[e];
        if (k < p_) {
            const uint32_t q = p_ - 1 - k;
            parity[q / 8] ^= uint8_t(0x80 >> (q % 8));
        } else {
            const uint32_t q = uint32_t(8 * len) - 1 - (k - p_);
            data[q / 8] ^= uint8_t(0x80 >> (q % 8));
        }
    }
    res.uncorrectable = false;
    res.corrected = L;
    return res;
}

// Error positions k (the bit of x^k) are where Lambda(alpha^-k) = 0. One error is solved
// directly; otherwise a Chien search over the shortened codeword's positions only, each term
// kept as a log that steps by -j per position.
bool BchCode::chien(const uint32_t* lambda, uint32_t deg, uint32_t nbits,
                    uint32_t* positions) const {
    if (deg == 1) {
        const uint32_t k = log_[lambda[1]];
        if (k >= nbits) return false;
        positions[0] = k;
        return true;
    }
    Scratch& sc = scratch();
#ifdef CANOPY_X86_KERNELS
    if (simd_chien_ == 64) {
        sc.tabs.resize(160 * size_t(deg));
        return chien_gfni(alog_.data(), log_.data(), n_, m_, lambda, deg, nbits, sc.tabs.data(),
                          positions) == deg;
    }
    if (simd_chien_ == 32) {
        sc.tabs.resize(192 * size_t(deg));
        return chien_avx2(alog_.data(), log_.data(), n_, m_, lambda, deg, nbits, sc.tabs.data(),
                          positions) == deg;
    }
#endif
    sc.cur.clear();
    sc.dec.clear();
    for (uint32_t j = 1; j <= deg; ++j) {
        if (!lambda[j]) continue;
        sc.cur.push_back(log_[lambda[j]]);
        sc.dec.push_back(n_ - j % n_);  // adding n - j is stepping by -j
    }
    uint32_t* cur = sc.cur.data();
    const uint32_t* dec = sc.dec.data();
    const uint32_t* alog = alog_.data();
    const size_t terms = sc.cur.size();
    const uint32_t n = n_;
    uint32_t found = 0;
    for (uint32_t k = 0; k < nbits; ++k) {
        uint32_t sum = 0;
        for (size_t j = 0; j < terms; ++j) {
            const uint32_t c = cur[j];
            sum ^= alog[c];
            const uint32_t e = c + dec[j];
            cur[j] = e >= n ? e - n : e;
        }
        if (sum == 1) {
            positions[found++] = k;
            if (found == deg) return true;
        }
    }
    return false;
}

PageCodeword decode_page_codeword(const BchCode& code, uint8_t* page, uint32_t data_at,
                                  uint32_t len, uint32_t parity_at,
                                  const std::vector<uint64_t>* flips) {
    PageCodeword out;
    uint8_t* data = page + data_at;
    uint8_t* parity = page + parity_at;
    const uint32_t pb = code.parity_bytes(), t = code.t();
    uint32_t zeros = 0;
    for (uint32_t i = 0; i < len && zeros <= t; ++i) zeros += 8 - __builtin_popcount(data[i]);
    for (uint32_t i = 0; i < pb && zeros <= t; ++i) zeros += 8 - __builtin_popcount(parity[i]);
    if (zeros <= t) {
        std::memset(data, 0xFF, len);
        out.erased = true;
        out.corrected = zeros;
        return out;
    }
    if (flips) {
        const uint64_t pad_byte = parity_at + pb - 1, pad = 8 * pb - code.parity_bits();
        auto at = [&](uint64_t byte) {
            return std::lower_bound(flips->begin(), flips->end(), byte * 8);
        };
        auto counted = [&](uint64_t bit) { return bit >> 3 != pad_byte || (bit & 7) >= pad; };
        const auto d0 = at(data_at), d1 = at(uint64_t(data_at) + len);
        const auto p0 = at(parity_at), p1 = at(uint64_t(parity_at) + pb);
        const uint64_t n = uint64_t(d1 - d0) + uint64_t(std::count_if(p0, p1, counted));
        if (n <= t) {
            for (auto it = d0; it != d1; ++it) page[*it >> 3] ^= uint8_t(1u << (*it & 7));
            for (auto it = p0; it != p1; ++it)
                if (counted(*it)) page[*it >> 3] ^= uint8_t(1u << (*it & 7));
            out.corrected = uint32_t(n);
            return out;
        }
    }
    const BchCode::Result res = code.decode(data, len, parity);
    out.uncorrectable = res.uncorrectable;
    out.corrected = res.corrected;
    return out;
}

}  // namespace canopy::ssd
