// The SPU core's instruction decoder: RV32IM + Zicsr words into the pre-decoded form the run loop
// dispatches on (Insn, rv32_internal.hpp). It runs once per decode-cache slot (per instruction
// only without DMI), so it need not be inlined into the run loop.
#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

namespace {

// The low `bits` of `v` as a signed number (no shifts of negative values: those are UB in C++17).
inline int32_t sext(uint32_t v, unsigned bits) {
    const uint32_t sign = 1u << (bits - 1);
    return int32_t(((v & ((sign << 1) - 1)) ^ sign) - sign);
}

}  // namespace

// Decodes one instruction at `pc`. PC-relative results (AUIPC, branch and jump targets) are
// computed here once, so AUIPC becomes a LUI of the final value.
Insn decode(uint32_t raw, uint32_t pc) {
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
