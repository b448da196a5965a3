// The flash controller's ECC engine: a binary BCH code per codeword, as the LDPC-less BCH
// engines of SSD controllers (one encoder on the program path, one decoder on the read path,
// each codeword's parity stored in the page's spare area). The code here is the real thing:
// data is encoded and decoded bit-exactly, so the raw bit errors the NAND model injects are
// corrected (up to t per codeword) or reported as uncorrectable; EccConfig adds the engine's
// time per codeword, which the flash controller charges.
//
// Bit order (the codeword as a polynomial over GF(2)): the data bytes in order, each MSB first,
// are the highest coefficients, followed by the parity_bits() parity bits, parity byte 0 first,
// MSB first; the last parity bit is the coefficient of x^0. The low 8 * parity_bytes() -
// parity_bits() bits of the last parity byte are padding: encode writes them as zero, decode
// ignores them and never changes them. A codeword shorter than data_bytes() is the same code
// further shortened (leading zero data bytes left out), so its parity is the same as that of
// the data with zero bytes prepended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/config.hpp"

namespace canopy::ssd {

struct EccConfig {
    uint32_t codeword_bytes = 1024;  // data bytes per codeword [issue: default 1 KiB]
    // [assumed: 16 KiB-page TLC controllers correct 40-72 bits per KiB; 16 codewords of 126
    // parity bytes fit the 2,208-byte spare]
    uint32_t t_bits = 72;          // bits corrected per codeword
    double t_decode_ns = 1000.0;   // pipelined decoder latency per codeword without errors
    double t_correct_ns = 1500.0;  // extra when a codeword has errors (Berlekamp-Massey + Chien)
    double t_encode_ns = 200.0;    // encoder latency per codeword (LFSR, overlaps the transfer)
    // A simulation shortcut, not a hardware feature: a codeword whose raw bit errors the NAND
    // model reports, no more than t of them, is corrected by undoing them; the decoder (a
    // bounded-distance decoder of distance 2t + 1) gives exactly that. Off: every codeword
    // through the decoder.
    bool known_error_shortcut = true;
    // Relative to the caller's scope (the flash controller describes it under ssd.flash.ecc).
    // Ranges only; whether a GF(2^m) with m <= 16 fits codeword_bytes and t_bits is checked by
    // BchCode's constructor.
    void describe(core::Params& p);
};

// A binary BCH code over GF(2^m), shortened to the data length: m is the smallest (5..16) with
// data_bits + m * t <= 2^m - 1. Corrects up to t bit errors anywhere in data + parity; more errors
// are reported as uncorrectable (never silently returned as good data, except for the rare
// miscorrection any bounded-distance decoder has: a received word within t of another codeword).
class BchCode {
  public:
    // Throws canopy::InputError("config", "ssd.flash.ecc", reason) when t == 0, data_bytes == 0
    // or no m <= 16 fits. `max_lane_words` caps the SIMD width the encoder's LFSR uses (2: SSE2
    // or NEON, 4: AVX2, 8: AVX-512; the widest the CPU has by default): for tests of each kernel.
    // It caps the decoder's Chien search likewise (below 4: scalar, 4: AVX2, 8: AVX-512 + GFNI).
    BchCode(uint32_t data_bytes, uint32_t t, uint32_t max_lane_words = 8);

    uint32_t m() const { return m_; }
    uint32_t t() const { return t_; }
    uint32_t data_bytes() const { return data_bytes_; }
    uint32_t parity_bits() const { return p_; }  // degree of the generator polynomial (<= m*t)
    uint32_t parity_bytes() const { return (p_ + 7) / 8; }

    // Writes parity_bytes() bytes. `len` <= data_bytes() (a shorter codeword is allowed, e.g. a
    // small metadata codeword); `data` may be null when len == 0.
    void encode(const uint8_t* data, size_t len, uint8_t* parity) const;

    struct Result {
        bool uncorrectable = false;
        uint32_t corrected = 0;  // bits flipped back (data + parity)
    };
    // Corrects `data` and `parity` in place. On uncorrectable, leaves them unchanged.
    Result decode(uint8_t* data, size_t len, uint8_t* parity) const;

    // The LFSR over `len` data bytes with a table of `entry`-word entries (internal).
    using Kernel = void (*)(const uint64_t* table, uint32_t entry, const uint8_t* data, size_t len,
                            uint64_t* words);

  private:
    uint32_t gf_mul(uint32_t a, uint32_t b) const {
        return (a && b) ? alog_[log_[a] + log_[b]] : 0;
    }
    // The remainder register (parity_bits bits, left-aligned in nw_ words) after `len`
    // data bytes.
    void remainder(const uint8_t* data, size_t len, uint64_t* words) const;
    // Roots of the locator lambda[0..deg] (lambda[0] = 1) among the codeword's `nbits`
    // positions, written to `positions`; false when not all deg are found.
    bool chien(const uint32_t* lambda, uint32_t deg, uint32_t nbits, uint32_t* positions) const;

    uint32_t data_bytes_, t_, m_ = 0, n_ = 0, p_ = 0;
    uint32_t nw_ = 0;                   // 64-bit words of the remainder register
    Kernel kernel_ = nullptr;           // the LFSR for this CPU and register size
    uint32_t simd_chien_ = 0;           // positions per step of the SIMD Chien search (0: scalar)
    std::vector<uint32_t> alog_, log_;  // alog_ doubled (2n entries) so sums need no mod
    std::vector<uint64_t> table_;       // [16 byte positions][256 values][nw_]
    // Syndromes: the minimal polynomials of the odd syndromes packed into groups of total degree
    // D <= 56; the remainder is reduced modulo each group's product P times x^(56 - D) (a
    // multiple of P, so the residue has the same values at P's roots), a byte at a time.
    std::vector<uint64_t> grp_table_;  // [group][256]: byte v (the overflow) times x^56 mod P'
    // The residues evaluated at alpha^i for up to 4 odd syndromes at once (16 bits each) with
    // one 16-entry table per residue nibble.
    std::vector<uint32_t> unit_grp_;  // [unit]: its group
    std::vector<uint32_t> unit_syn_;  // [unit][4]: i of each lane (0: unused)
    std::vector<uint64_t> unit_tab_;  // [unit][14 nibbles][16]
};

// One codeword of a page as the flash controller's decoder takes it: its data at `data_at`
// (`len` bytes) and its parity at `parity_at` in `page`, corrected in place. An erased codeword
// (no more than t zeros: all ones with raw errors) reads as ones, as controllers detect it;
// otherwise, when `flips` lists the raw bit errors the NAND model reports for the page (bit i is
// bit i % 8 of byte i / 8, increasing) and no more than t fall in the codeword (the last parity
// byte's padding aside), they are undone: the BCH decoder, of distance 2t + 1, gives exactly that
// (EccConfig::known_error_shortcut). Else the decoder.
struct PageCodeword {
    bool erased = false, uncorrectable = false;
    uint32_t corrected = 0;  // bits: zeros of an erased codeword, or errors corrected
};
PageCodeword decode_page_codeword(const BchCode& code, uint8_t* page, uint32_t data_at,
                                  uint32_t len, uint32_t parity_at,
                                  const std::vector<uint64_t>* flips);

}  // namespace canopy::ssd
