#include "ssd/ecc_engine.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

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
                  1e9);
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
    for (uint32_t i = 1; i < 2 * t; i += 2) {
        if (done[i]) continue;
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
        for (size_t k = 0; k < mp.size(); ++k) {
            if (mp[k] > 1) throw std::logic_error("BchCode: minimal polynomial not binary");
            if (mp[k]) {
                for (size_t q = 0; q < g.size(); ++q) prod[k + q] ^= g[q];
            }
        }
        g.swap(prod);
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

    // syn_table_[u][b] = b(alpha^i), i = 2u + 1: a byte's contribution to syndrome S_i.
    syn_table_.assign(size_t(t) * 256, 0);
    for (uint32_t u = 0; u < t; ++u) {
        const uint64_t i = 2 * u + 1;
        for (uint32_t b = 1; b < 256; ++b) {
            const uint32_t low = __builtin_ctz(b);
            syn_table_[size_t(u) * 256 + b] =
                uint16_t(syn_table_[size_t(u) * 256 + (b & (b - 1))] ^ alog_[(i * low) % n_]);
        }
    }
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

    std::vector<uint8_t> s(pb);
    for (i = 0; i < pb; ++i) s[i] = uint8_t(words[i / 8] >> (56 - 8 * (i % 8))) ^ parity[i];
    s[pb - 1] &= last_mask;

    // Syndromes S_i = s(alpha^i), i = 1..2t; the bytes hold s(x) * x^pad. Odd i by Horner over
    // the bytes, even i as squares (S_2i = S_i^2 in a binary code).
    std::vector<uint32_t> S(2 * size_t(t_) + 1, 0);
    std::vector<uint32_t> acc(t_, 0), step(t_);
    for (uint32_t u = 0; u < t_; ++u) step[u] = uint32_t((uint64_t(8) * (2 * u + 1)) % n_);
    for (uint32_t i = 0; i < pb; ++i) {
        const uint16_t* row = &syn_table_[s[i]];
        for (uint32_t u = 0; u < t_; ++u) {
            const uint32_t a = acc[u];
            acc[u] = (a ? alog_[log_[a] + step[u]] : 0) ^ row[size_t(u) * 256];
        }
    }
    for (uint32_t u = 0; u < t_; ++u) {
        const uint32_t i = 2 * u + 1;
        const uint32_t unpad = uint32_t((uint64_t(n_) - (uint64_t(i) * pad) % n_) % n_);
        S[i] = acc[u] ? alog_[log_[acc[u]] + unpad] : 0;
    }
    for (uint32_t i = 2; i <= 2 * t_; i += 2) S[i] = gf_mul(S[i / 2], S[i / 2]);

    // Berlekamp-Massey for the error locator Lambda(x) = prod (1 + X_l x). In a binary code every
    // other discrepancy is zero, so only even steps compute one.
    const size_t cap = 4 * size_t(t_) + 4;
    std::vector<uint32_t> C(cap, 0), B(cap, 0), T;
    C[0] = B[0] = 1;
    uint32_t L = 0, shift = 1, b = 1;
    for (uint32_t r = 0; r < 2 * t_; ++r) {
        if (r % 2) {
            ++shift;
            continue;
        }
        uint32_t d = S[r + 1];
        for (uint32_t i = 1; i <= L; ++i) d ^= gf_mul(C[i], S[r + 1 - i]);
        if (!d) {
            ++shift;
            continue;
        }
        const uint32_t coef = alog_[log_[d] + n_ - log_[b]];
        const bool grow = 2 * L <= r;
        if (grow) T = C;
        for (size_t i = 0; i + shift < cap; ++i) {
            if (B[i]) C[i + shift] ^= gf_mul(coef, B[i]);
        }
        if (grow) {
            L = r + 1 - L;
            B.swap(T);
            b = d;
            shift = 1;
        } else {
            ++shift;
        }
        if (L > t_) break;
    }
    res.uncorrectable = true;
    if (L == 0 || L > t_) return res;
    uint32_t deg = 0;
    for (size_t i = 0; i < cap; ++i) {
        if (C[i]) deg = uint32_t(i);
    }
    if (deg != L) return res;

    const uint32_t nbits = uint32_t(8 * len) + p_;
    std::vector<uint32_t> pos;
    if (!chien(C, L, nbits, pos)) return res;
    for (uint32_t k : pos) {
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
bool BchCode::chien(const std::vector<uint32_t>& lambda, uint32_t deg, uint32_t nbits,
                    std::vector<uint32_t>& positions) const {
    if (deg == 1) {
        const uint32_t k = log_[lambda[1]];
        if (k >= nbits) return false;
        positions.push_back(k);
        return true;
    }
    std::vector<uint32_t> cur, dec;
    for (uint32_t j = 1; j <= deg; ++j) {
        if (!lambda[j]) continue;
        cur.push_back(log_[lambda[j]]);
        dec.push_back(n_ - j % n_);  // adding n - j is stepping by -j
    }
    const size_t terms = cur.size();
    for (uint32_t k = 0; k < nbits; ++k) {
        uint32_t sum = 0;
        for (size_t j = 0; j < terms; ++j) {
            sum ^= alog_[cur[j]];
            const uint32_t e = cur[j] + dec[j];
            cur[j] = e >= n_ ? e - n_ : e;
        }
        if (sum == 1) {
            positions.push_back(k);
            if (positions.size() == deg) return true;
        }
    }
    return false;
}

}  // namespace canopy::ssd
