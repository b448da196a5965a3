// The SPU core's instruction decoder: RV32IMC + Zicsr instructions into the pre-decoded form the
// run loop dispatches on (Insn, rv32_internal.hpp). A compressed instruction becomes the Insn of
// the 32-bit instruction it stands for (RISC-V unprivileged spec, "C" Standard Extension), with
// length 2. It runs once per decode-cache slot (per instruction
// only without DMI), so it need not be inlined into the run loop.
#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

namespace {

// The low `bits` of `v` as a signed number (no shifts of negative values: those are UB in C++17).
inline int32_t sext(uint32_t v, unsigned bits) {
    const uint32_t sign = 1u << (bits - 1);
    return int32_t(((v & ((sign << 1) - 1)) ^ sign) - sign);
}

// Bits hi..lo of `v`, shifted down.
inline uint32_t bits(uint32_t v, unsigned hi, unsigned lo) {
    return (v >> lo) & ((2u << (hi - lo)) - 1);
}

// A 16-bit instruction (RV32C; the F and D forms are illegal: the core has no floating point).
// Immediates are scattered as the spec's tables give them; rd', rs1', rs2' name x8-x15.
Insn decode_compressed(uint32_t c, uint32_t pc) {
    const uint32_t rd = bits(c, 11, 7), rs2 = bits(c, 6, 2), b12 = bits(c, 12, 12);
    const uint32_t rdp = 8 + bits(c, 4, 2), rs1p = 8 + bits(c, 9, 7);
    const int32_t imm6 = sext((b12 << 5) | rs2, 6);
    const uint32_t lw_off = (bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6);
    Insn i = illegal(c);
    switch ((c & 3) << 3 | bits(c, 15, 13)) {  // in octal: the quadrant, then funct3
        case 000: {  // C.ADDI4SPN: addi rd', sp, nzuimm; nzuimm 0 is reserved (and 0x0000 illegal)
            const uint32_t nz = (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) |
                                (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 3);
            if (nz) i = make(kAddi, rdp, 2, 0, int32_t(nz));
            break;
        }
        case 002:  // C.LW
            i = make(kLw, rdp, rs1p, 0, int32_t(lw_off));
            break;
        case 006:  // C.SW
            i = make(kSw, 0, rs1p, rdp, int32_t(lw_off));
            break;
        case 010:  // C.ADDI (C.NOP with rd 0)
            i = make(kAddi, rd, rd, 0, imm6);
            break;
        case 011:    // C.JAL: jal ra, offset
        case 015: {  // C.J: jal zero, offset
            const int32_t off =
                sext((b12 << 11) | (bits(c, 11, 11) << 4) | (bits(c, 10, 9) << 8) |
                         (bits(c, 8, 8) << 10) | (bits(c, 7, 7) << 6) | (bits(c, 6, 6) << 7) |
                         (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5),
                     12);
            i = make(kJal, bits(c, 15, 13) == 1 ? 1 : 0, 0, 0, int32_t(pc + uint32_t(off)));
            break;
        }
        case 012:  // C.LI: addi rd, zero, imm
            i = make(kAddi, rd, 0, 0, imm6);
            break;
        case 013:
            if (rd == 2) {  // C.ADDI16SP: addi sp, sp, nzimm (x16); 0 is reserved
                const int32_t nz = sext((b12 << 9) | (bits(c, 6, 6) << 4) | (bits(c, 5, 5) << 6) |
                                            (bits(c, 4, 3) << 7) | (bits(c, 2, 2) << 5),
                                        10);
                if (nz) i = make(kAddi, 2, 2, 0, nz);
            } else if (imm6) {  // C.LUI: lui rd, nzimm; 0 is reserved
                i = make(kLui, rd, 0, 0, int32_t(uint32_t(imm6) << 12));
            }
            break;
        case 014:
            switch (bits(c, 11, 10)) {
                case 0:  // C.SRLI; shamt[5] = 1 is for custom extensions on RV32
                    if (!b12) i = make(kSrli, rs1p, rs1p, 0, int32_t(rs2));
                    break;
                case 1:  // C.SRAI
                    if (!b12) i = make(kSrai, rs1p, rs1p, 0, int32_t(rs2));
                    break;
                case 2:  // C.ANDI
                    i = make(kAndi, rs1p, rs1p, 0, imm6);
                    break;
                case 3: {  // C.SUB, C.XOR, C.OR, C.AND (b12 set: RV64's SUBW, ADDW)
                    static constexpr uint8_t ops[4] = {kSub, kXor, kOr, kAnd};
                    if (!b12) i = make(ops[bits(c, 6, 5)], rs1p, rs1p, rdp);
                    break;
                }
            }
            break;
        case 016:    // C.BEQZ
        case 017: {  // C.BNEZ
            const int32_t off = sext((b12 << 8) | (bits(c, 11, 10) << 3) | (bits(c, 6, 5) << 6) |
                                         (bits(c, 4, 3) << 1) | (bits(c, 2, 2) << 5),
                                     9);
            i = make(bits(c, 13, 13) ? kBne : kBeq, 0, rs1p, 0, int32_t(pc + uint32_t(off)));
            break;
        }
        case 020:  // C.SLLI
            if (!b12) i = make(kSlli, rd, rd, 0, int32_t(rs2));
            break;
        case 022:  // C.LWSP; rd 0 is reserved
            if (rd)
                i = make(kLw, rd, 2, 0,
                         int32_t((b12 << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6)));
            break;
        case 024:
            if (!b12) {
                if (rs2)
                    i = make(kAdd, rd, 0, rs2);  // C.MV
                else if (rd)
                    i = make(kJalr, 0, rd, 0, 0);  // C.JR; rd 0 is reserved
            } else if (rs2) {
                i = make(kAdd, rd, rd, rs2);  // C.ADD
            } else {
                i = rd ? make(kJalr, 1, rd, 0, 0) : make(kEbreak);  // C.JALR, C.EBREAK
            }
            break;
        case 026:  // C.SWSP
            i = make(kSw, 0, 2, rs2, int32_t((bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6)));
            break;
    }
    switch (i.op) {  // the twin that steps 2 bytes
#define CANOPY_TWIN(n) \
    case k##n:         \
        i.op = kC##n;  \
        break;
        CANOPY_RVC_OPS(CANOPY_TWIN)
#undef CANOPY_TWIN
    }
    return i;
}

}  // namespace

// Decodes one instruction at `pc`. PC-relative results (AUIPC, branch and jump targets) are
// computed here once, so AUIPC becomes a LUI of the final value.
Insn decode(uint32_t raw, uint32_t pc, bool rvc) {
    if (rvc && is_compressed(raw)) return decode_compressed(raw & 0xffff, pc);
    const uint32_t opcode = raw & 0x7f, rd = (raw >> 7) & 31, f3 = (raw >> 12) & 7,
                   rs1 = (raw >> 15) & 31, rs2 = (raw >> 20) & 31, f7 = raw >> 25;
    const int32_t i_imm = sext(raw >> 20, 12);
    const int32_t s_imm = sext(((raw >> 25) << 5) | ((raw >> 7) & 31), 12);
    const int32_t b_imm = sext(((raw >> 31) << 12) | (((raw >> 7) & 1) << 11) |
                                   (((raw >> 25) & 0x3f) << 5) | (((raw >> 8) & 0xf) << 1),
                               13);
    const int32_t j_imm = sext(((raw >> 31) << 20) | (raw & 0xff000) | (((raw >> 20) & 1) << 11) |
                                   (((raw >> 21) & 0x3ff) << 1),
                               21);
    switch (opcode) {
        case 0x37:
            return make(kLui, rd, 0, 0, int32_t(raw & 0xfffff000u));
        case 0x17:
            return make(kLui, rd, 0, 0, int32_t(pc + (raw & 0xfffff000u)));  // AUIPC
        case 0x6f:
            return make(kJal, rd, 0, 0, int32_t(pc + uint32_t(j_imm)));
        case 0x67:
            if (f3 != 0) break;
            return make(kJalr, rd, rs1, 0, i_imm);
        case 0x63: {
            static constexpr uint8_t ops[8] = {kBeq, kBne, kIllegal, kIllegal,
                                               kBlt, kBge, kBltu,    kBgeu};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], 0, rs1, rs2, int32_t(pc + uint32_t(b_imm)));
        }
        case 0x03: {
            static constexpr uint8_t ops[8] = {kLb,  kLh,  kLw,      kIllegal,
                                               kLbu, kLhu, kIllegal, kIllegal};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], rd, rs1, 0, i_imm);
        }
        case 0x23: {
            static constexpr uint8_t ops[8] = {kSb,      kSh,      kSw,      kIllegal,
                                               kIllegal, kIllegal, kIllegal, kIllegal};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], 0, rs1, rs2, s_imm);
        }
        case 0x13:
            switch (f3) {
                case 0:
                    return make(kAddi, rd, rs1, 0, i_imm);
                case 2:
                    return make(kSlti, rd, rs1, 0, i_imm);
                case 3:
                    return make(kSltiu, rd, rs1, 0, i_imm);
                case 4:
                    return make(kXori, rd, rs1, 0, i_imm);
                case 6:
                    return make(kOri, rd, rs1, 0, i_imm);
                case 7:
                    return make(kAndi, rd, rs1, 0, i_imm);
                case 1:  // RV32: shamt[5] (bit 25) must be zero
                    if (f7 != 0) break;
                    return make(kSlli, rd, rs1, 0, int32_t(rs2));
                case 5:
                    if (f7 == 0) return make(kSrli, rd, rs1, 0, int32_t(rs2));
                    if (f7 == 0x20) return make(kSrai, rd, rs1, 0, int32_t(rs2));
                    break;
            }
            break;
        case 0x33:
            if (f7 == 0) {
                static constexpr uint8_t ops[8] = {kAdd, kSll, kSlt, kSltu, kXor, kSrl, kOr, kAnd};
                return make(ops[f3], rd, rs1, rs2);
            }
            if (f7 == 1) {
                static constexpr uint8_t ops[8] = {kMul, kMulh, kMulhsu, kMulhu,
                                                   kDiv, kDivu, kRem,    kRemu};
                return make(ops[f3], rd, rs1, rs2);
            }
            if (f7 == 0x20 && f3 == 0) return make(kSub, rd, rs1, rs2);
            if (f7 == 0x20 && f3 == 5) return make(kSra, rd, rs1, rs2);
            break;
        case 0x0f:  // MISC-MEM: reserved fields are ignored, as the spec asks of base
                    // implementations
            if (f3 == 0) return make(kFence);
            if (f3 == 1) return make(kFenceI);
            break;
        case 0x73:
            if (f3 == 0) {
                if (rd != 0 || rs1 != 0) break;
                switch (raw >> 20) {
                    case 0x000:
                        return make(kEcall);
                    case 0x001:
                        return make(kEbreak);
                    case 0x302:
                        return make(kMret);
                    case 0x105:
                        return make(kWfi);
                }
                break;
            }
            if (f3 == 4) break;
            {
                static constexpr uint8_t ops[8] = {kIllegal, kCsrrw,  kCsrrs,  kCsrrc,
                                                   kIllegal, kCsrrwi, kCsrrsi, kCsrrci};
                return make(ops[f3], rd, rs1, 0, int32_t(raw >> 20));
            }
    }
    return illegal(raw);
}

}  // namespace canopy::cpu
