// Internal to models/cpu: what the parts of the RV32 core (Rv32Core, rv32_core.hpp) share. Only
// the core's own sources include it; it is no interface. The core is split by concern:
//   rv32_core.cpp    configuration, construction, the public API, time
//   rv32_debug.cpp   debug access and run control (halt, step, breakpoints, watchpoints)
//   rv32_decode.cpp  the instruction decoder (decode-cache misses only)
//   rv32_memory.cpp  fetch through decode caches over DMI regions; data access
//   rv32_csr.cpp     instruction boundaries, interrupts, traps, CSRs, system instructions
//   rv32_run.cpp     the run loop
// Small members called across the parts, some per instruction, are defined here inline, so that
// the split costs no speed: their callers inline them as when the core was one file.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/rv32_core.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "the RV32 ISS reads and writes guest memory in host byte order: it needs a little-endian host"
#endif

namespace canopy::cpu {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using Insn = Rv32Core::Insn;

// ---------------------------------------------------------------------------------------------
// Instructions

// Every operation the run loop dispatches on. The first ones are not instructions: a cache slot
// not decoded yet, the end of a cache (refetch), fetch faults and a breakpoint.
// clang-format off
#define CANOPY_RV32_OPS(X)                                                                      \
    X(Undecoded) X(End) X(FetchFault) X(FetchMisaligned) X(Breakpoint) X(Illegal)              \
    X(Lui) X(Jal) X(Jalr) X(Beq) X(Bne) X(Blt) X(Bge) X(Bltu) X(Bgeu)                          \
    X(Lb) X(Lh) X(Lw) X(Lbu) X(Lhu) X(Sb) X(Sh) X(Sw)                                          \
    X(Addi) X(Slti) X(Sltiu) X(Xori) X(Ori) X(Andi) X(Slli) X(Srli) X(Srai)                    \
    X(Add) X(Sub) X(Sll) X(Slt) X(Sltu) X(Xor) X(Srl) X(Sra) X(Or) X(And)                      \
    X(Mul) X(Mulh) X(Mulhsu) X(Mulhu) X(Div) X(Divu) X(Rem) X(Remu)                            \
    X(Fence) X(FenceI) X(Ecall) X(Ebreak) X(Mret) X(Wfi)                                       \
    X(Csrrw) X(Csrrs) X(Csrrc) X(Csrrwi) X(Csrrsi) X(Csrrci)
// The operations a 16-bit (C extension) instruction expands to that step on to the next
// instruction: each has a twin, kC<name>, which does the same and steps 2 bytes instead of 4, so
// that the 32-bit path pays nothing for C. (C.EBREAK is an Ebreak: it never steps.)
#define CANOPY_RVC_OPS(X)                                                                       \
    X(Lui) X(Jal) X(Jalr) X(Beq) X(Bne) X(Lw) X(Sw) X(Addi) X(Andi) X(Slli) X(Srli) X(Srai)    \
    X(Add) X(Sub) X(Xor) X(Or) X(And)
// clang-format on

enum Op : uint8_t {
#define CANOPY_ENUM(n) k##n,
#define CANOPY_ENUM_C(n) kC##n,
    CANOPY_RV32_OPS(CANOPY_ENUM) CANOPY_RVC_OPS(CANOPY_ENUM_C)
#undef CANOPY_ENUM
#undef CANOPY_ENUM_C
        kOpCount
};

inline constexpr uint8_t kSink = 32;  // writes to x0 land here; nothing reads it

// mstatus / mie / mip bits.
inline constexpr uint32_t kMie = 1u << 3, kMpie = 1u << 7, kMpp = 3u << 11;
inline constexpr uint32_t kMsip = 1u << cause::kMsi, kMtip = 1u << cause::kMti,
                          kMeip = 1u << cause::kMei;
inline constexpr uint32_t kIrqMask = kMsip | kMtip | kMeip;

inline constexpr uint32_t kLineBytes = 64;  // invalidation granule of the decode cache

inline Insn make(uint8_t op, uint32_t rd = 0, uint32_t rs1 = 0, uint32_t rs2 = 0, int32_t imm = 0) {
    return Insn{op, uint8_t(rd == 0 ? kSink : rd), uint8_t(rs1), uint8_t(rs2), imm};
}
inline Insn illegal(uint32_t raw) { return Insn{kIllegal, kSink, 0, 0, int32_t(raw)}; }

// Whether the instruction whose low half is `low` is a 16-bit (compressed) one.
inline bool is_compressed(uint32_t low) { return (low & 3) != 3; }

// The decoder (rv32_decode.cpp): only for decode-cache slots not decoded yet, or without a cache.
// `raw` holds the instruction from its first byte (a compressed one in the low half); `rvc`: the
// C extension is there (else a compressed encoding is illegal).
Insn decode(uint32_t raw, uint32_t pc, bool rvc);

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A region of the address space a target granted DMI for.
struct Rv32Core::Region {
    uint64_t lo, hi;  // inclusive, within 32 bits
    uint8_t* mem;     // host address of `lo`
    bool rd, wr;
    uint32_t rlat, wlat;  // cycles per access
};

// Decoded instructions of (part of) one DMI region, one slot per halfword (an instruction starts
// on any of them with C) plus End sentinels.
struct Rv32Core::CodeCache {
    uint32_t base, size;  // bytes, multiples of 4
    uint8_t* mem;
    uint32_t fetch_stall;
    std::vector<Insn> insn;
    std::vector<uint64_t> lines;  // which 64-byte lines hold decoded slots
};

// ---------------------------------------------------------------------------------------------
// Small members called across the parts of the core, some per instruction (without DMI every
// fetch goes through resolve_slow and fetch_word): inline, as when the core was one file.

inline uint64_t Rv32Core::local_ticks() const {
    return anchor_ticks_ + (cycle_ - anchor_cycle_) * period_;
}

// The kernel may have moved past the core while it was stopped: stopped time is not counted.
inline void Rv32Core::reanchor_if_behind() {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now > local_ticks()) anchor_ticks_ = now, anchor_cycle_ = cycle_;
}

inline void Rv32Core::set_costs(uint32_t fetch_stall) {
    fetch_stall_ = fetch_stall;
    c_alu_ = cfg_.cpi_alu + fetch_stall;
    c_load_ = cfg_.cpi_load + fetch_stall;
    c_store_ = cfg_.cpi_store + fetch_stall;
    c_branch_ = cfg_.cpi_branch_taken + fetch_stall;
    c_mul_ = cfg_.cpi_mul + fetch_stall;
    c_div_ = cfg_.cpi_div + fetch_stall;
}

inline Insn* Rv32Core::resolve(uint32_t pc) {
    const uint32_t off = pc - cur_base_;
    if (off < cur_size_) return cur_insn_ + (off >> 1);
    return resolve_slow(pc);
}

// A system or CSR instruction (run outside the loop; none has a 16-bit form) retires: on to the
// next, 4 bytes (two halfword slots) on.
inline void Rv32Core::retire_and_step() { ++instret_, cycle_ += c_alu_, pc_ += 4, ip_ += 2; }

inline void Rv32Core::drop_fast_paths() { ld_size_ = st_size_ = 0; }

}  // namespace canopy::cpu
