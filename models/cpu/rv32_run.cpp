// The SPU core's run loop: the SystemC thread that executes pre-decoded instructions, leaving its
// fast path only when something needs attention (boundary(), rv32_csr.cpp). It has compiler
// options of its own (CMakeLists.txt) because it dispatches through computed gotos.
#include "cpu/rv32_core.hpp"

#include <cstdint>
#include <cstring>

#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

// ---------------------------------------------------------------------------------------------
// The run loop. Threaded dispatch (GCC's labels as values) over pre-decoded instructions; the
// hot state lives in locals, and every call out of the loop saves it to the members and
// reloads it after. One comparison per instruction (cycles against limit_) covers the quantum,
// run control, the instruction limit and pending interrupts: whatever needs attention sets
// limit_ to 0.

void Rv32Core::thread() {
    anchor_ticks_ = sc_core::sc_time_stamp().value();
    anchor_cycle_ = cycle_;
    sync_cycle_ = cycle_ + quantum_cycles_;
    need_resolve_ = true;

    static const void* const kDispatch[kOpCount] = {
#define CANOPY_LABEL(n) &&op_##n,
#define CANOPY_LABEL_C(n) &&op_C##n,
        CANOPY_RV32_OPS(CANOPY_LABEL) CANOPY_RVC_OPS(CANOPY_LABEL_C)
#undef CANOPY_LABEL
#undef CANOPY_LABEL_C
    };
    uint32_t* const x = x_.data();
    uint32_t pc, cbase, csize;
    Insn *ip, *cinsn;
    uint64_t cyc, ret, limit;
    uint32_t ca, cl, cs, cb, cm, cd;

#define SAVE() (pc_ = pc, ip_ = ip, cycle_ = cyc, instret_ = ret)
#define LOAD()                                                                            \
    (pc = pc_, ip = ip_, cyc = cycle_, ret = instret_, limit = limit_, cbase = cur_base_, \
     csize = cur_size_, cinsn = cur_insn_, ca = c_alu_, cl = c_load_, cs = c_store_,      \
     cb = c_branch_, cm = c_mul_, cd = c_div_)
#define DISPATCH() goto* kDispatch[ip->op]
#define NEXT()                                            \
    do {                                                  \
        if (__builtin_expect(cyc >= limit, 0)) goto slow; \
        DISPATCH();                                       \
    } while (0)
    // The next instruction, `len` bytes on (a decode-cache slot per halfword): STEP for 32-bit
    // instructions; their 16-bit twins (kC<op>) take the same handler with len 2.
#define STEP_LEN(cost, len)                                 \
    do {                                                    \
        ++ret, cyc += (cost), pc += (len), ip += (len) / 2; \
        NEXT();                                             \
    } while (0)
#define STEP(cost) STEP_LEN(cost, 4)
#define TRAP(c, tval)      \
    do {                   \
        SAVE();            \
        trap((c), (tval)); \
        LOAD();            \
        goto slow;         \
    } while (0)
    // A jump to `t`: misaligned targets trap on the jump (rd unwritten).
#define CHECK_TARGET(t) \
    if (__builtin_expect((t)&ialign_mask_, 0)) TRAP(cause::kInstrMisaligned, (t))
#define GO(t)                                  \
    do {                                       \
        ++ret, cyc += cb, pc = (t);            \
        const uint32_t o_ = pc - cbase;        \
        if (__builtin_expect(o_ < csize, 1)) { \
            ip = cinsn + (o_ >> 1);            \
        } else {                               \
            SAVE();                            \
            ip_ = resolve_slow(pc);            \
            LOAD();                            \
        }                                      \
        NEXT();                                \
    } while (0)
#define BRANCH(cond, len)                          \
    do {                                           \
        if (cond) {                                \
            const uint32_t t_ = uint32_t(ip->imm); \
            CHECK_TARGET(t_);                      \
            GO(t_);                                \
        }                                          \
        STEP_LEN(ca, len);                         \
    } while (0)
    // Loads and stores: alignment, then the last DMI region used, then the slow path.
#define LOAD_OP(T, bytes, extend, len)                                          \
    do {                                                                        \
        const uint32_t a_ = x[ip->rs1] + uint32_t(ip->imm);                     \
        const bool mis_ = (bytes) > 1 && __builtin_expect(a_ & ((bytes)-1), 0); \
        if (mis_ && !cfg_.misaligned_access) TRAP(cause::kLoadMisaligned, a_);  \
        const uint32_t o_ = a_ - ld_base_;                                      \
        uint32_t v_;                                                            \
        if (__builtin_expect(o_ < ld_size_ && !mis_, 1)) {                      \
            T t_;                                                               \
            std::memcpy(&t_, ld_mem_ + o_, sizeof t_);                          \
            v_ = extend(t_);                                                    \
            cyc += ld_lat_;                                                     \
            ++n_dmi_loads_;                                                     \
        } else {                                                                \
            SAVE();                                                             \
            const bool ok_ = load_slow(a_, (bytes), v_);                        \
            LOAD();                                                             \
            if (!ok_) goto slow;                                                \
            v_ = extend(T(v_));                                                 \
        }                                                                       \
        x[ip->rd] = v_;                                                         \
        STEP_LEN(cl, len);                                                      \
    } while (0)
#define STORE_OP(T, bytes, len)                                                             \
    do {                                                                                    \
        const uint32_t a_ = x[ip->rs1] + uint32_t(ip->imm);                                 \
        const bool mis_ = (bytes) > 1 && __builtin_expect(a_ & ((bytes)-1), 0);             \
        if (mis_ && !cfg_.misaligned_access) TRAP(cause::kStoreMisaligned, a_);             \
        const T v_ = T(x[ip->rs2]);                                                         \
        const uint32_t o_ = a_ - st_base_;                                                  \
        if (__builtin_expect(o_ < st_size_ && !mis_, 1)) {                                  \
            std::memcpy(st_mem_ + o_, &v_, sizeof v_);                                      \
            cyc += st_lat_;                                                                 \
            ++n_dmi_stores_;                                                                \
            if (__builtin_expect(a_ - code_lo_ < code_span_, 0)) code_written(a_, (bytes)); \
        } else {                                                                            \
            SAVE();                                                                         \
            const bool ok_ = store_slow(a_, (bytes), v_);                                   \
            LOAD();                                                                         \
            if (!ok_) goto slow;                                                            \
        }                                                                                   \
        STEP_LEN(cs, len);                                                                  \
    } while (0)
#define SEXT8(v) uint32_t(int32_t(int8_t(v)))
#define SEXT16(v) uint32_t(int32_t(int16_t(v)))
#define ZEXT(v) uint32_t(v)
#define SYSTEM(call) \
    do {             \
        SAVE();      \
        call;        \
        LOAD();      \
        NEXT();      \
    } while (0)

    limit_ = 0;
    LOAD();
slow:
    SAVE();
    boundary();
    LOAD();
    DISPATCH();

op_Undecoded:
    decode_at(ip, pc);
    DISPATCH();
op_End:
    SAVE();
    ip_ = resolve_slow(pc);
    LOAD();
    NEXT();
op_FetchFault:
    TRAP(cause::kInstrAccessFault, pc);
op_FetchMisaligned:
    TRAP(cause::kInstrMisaligned, pc);
op_Breakpoint:
    SAVE();
    if (pc == skip_bp_pc_) {
        // Resuming over this breakpoint: run the instruction memory holds, once.
        skip_bp_pc_ = kNoSkip;
        uint32_t raw;
        if (!fetch_insn(pc, raw)) {
            trap(cause::kInstrAccessFault, pc);
            LOAD();
            goto slow;
        }
        single_[0] = decode(raw, pc, cfg_.compressed);
        ip_ = &single_[0];
        LOAD();
        DISPATCH();
    }
    pending_stop_ = StopReason::Breakpoint;
    limit_ = 0;
    LOAD();
    goto slow;
op_Illegal:
    TRAP(cause::kIllegalInstr, uint32_t(ip->imm));

    // An instruction with a 16-bit twin: its handler twice, for len 4 and 2.
#define TWIN(name, ...)              \
    op_##name : {                    \
        constexpr uint32_t kLen = 4; \
        __VA_ARGS__                  \
    }                                \
    op_C##name : {                   \
        constexpr uint32_t kLen = 2; \
        __VA_ARGS__                  \
    }

    TWIN(Lui, x[ip->rd] = uint32_t(ip->imm); STEP_LEN(ca, kLen);)
    TWIN(Jal, const uint32_t t = uint32_t(ip->imm); CHECK_TARGET(t); x[ip->rd] = pc + kLen; GO(t);)
    TWIN(Jalr, const uint32_t t = (x[ip->rs1] + uint32_t(ip->imm)) & ~1u; CHECK_TARGET(t);
         x[ip->rd] = pc + kLen; GO(t);)
    TWIN(Beq, BRANCH(x[ip->rs1] == x[ip->rs2], kLen);)
    TWIN(Bne, BRANCH(x[ip->rs1] != x[ip->rs2], kLen);)
op_Blt:
    BRANCH(int32_t(x[ip->rs1]) < int32_t(x[ip->rs2]), 4);
op_Bge:
    BRANCH(int32_t(x[ip->rs1]) >= int32_t(x[ip->rs2]), 4);
op_Bltu:
    BRANCH(x[ip->rs1] < x[ip->rs2], 4);
op_Bgeu:
    BRANCH(x[ip->rs1] >= x[ip->rs2], 4);

op_Lb:
    LOAD_OP(uint8_t, 1, SEXT8, 4);
op_Lh:
    LOAD_OP(uint16_t, 2, SEXT16, 4);
    TWIN(Lw, LOAD_OP(uint32_t, 4, ZEXT, kLen);)
op_Lbu:
    LOAD_OP(uint8_t, 1, ZEXT, 4);
op_Lhu:
    LOAD_OP(uint16_t, 2, ZEXT, 4);
op_Sb:
    STORE_OP(uint8_t, 1, 4);
op_Sh:
    STORE_OP(uint16_t, 2, 4);
    TWIN(Sw, STORE_OP(uint32_t, 4, kLen);)

    TWIN(Addi, x[ip->rd] = x[ip->rs1] + uint32_t(ip->imm); STEP_LEN(ca, kLen);)
op_Slti:
    x[ip->rd] = int32_t(x[ip->rs1]) < ip->imm;
    STEP(ca);
op_Sltiu:
    x[ip->rd] = x[ip->rs1] < uint32_t(ip->imm);
    STEP(ca);
op_Xori:
    x[ip->rd] = x[ip->rs1] ^ uint32_t(ip->imm);
    STEP(ca);
op_Ori:
    x[ip->rd] = x[ip->rs1] | uint32_t(ip->imm);
    STEP(ca);
    TWIN(Andi, x[ip->rd] = x[ip->rs1] & uint32_t(ip->imm); STEP_LEN(ca, kLen);)
    TWIN(Slli, x[ip->rd] = x[ip->rs1] << ip->imm; STEP_LEN(ca, kLen);)
    TWIN(Srli, x[ip->rd] = x[ip->rs1] >> ip->imm; STEP_LEN(ca, kLen);)
    TWIN(Srai, x[ip->rd] = uint32_t(int32_t(x[ip->rs1]) >> ip->imm); STEP_LEN(ca, kLen);)

    TWIN(Add, x[ip->rd] = x[ip->rs1] + x[ip->rs2]; STEP_LEN(ca, kLen);)
    TWIN(Sub, x[ip->rd] = x[ip->rs1] - x[ip->rs2]; STEP_LEN(ca, kLen);)
op_Sll:
    x[ip->rd] = x[ip->rs1] << (x[ip->rs2] & 31);
    STEP(ca);
op_Slt:
    x[ip->rd] = int32_t(x[ip->rs1]) < int32_t(x[ip->rs2]);
    STEP(ca);
op_Sltu:
    x[ip->rd] = x[ip->rs1] < x[ip->rs2];
    STEP(ca);
    TWIN(Xor, x[ip->rd] = x[ip->rs1] ^ x[ip->rs2]; STEP_LEN(ca, kLen);)
op_Srl:
    x[ip->rd] = x[ip->rs1] >> (x[ip->rs2] & 31);
    STEP(ca);
op_Sra:
    x[ip->rd] = uint32_t(int32_t(x[ip->rs1]) >> (x[ip->rs2] & 31));
    STEP(ca);
    TWIN(Or, x[ip->rd] = x[ip->rs1] | x[ip->rs2]; STEP_LEN(ca, kLen);)
    TWIN(And, x[ip->rd] = x[ip->rs1] & x[ip->rs2]; STEP_LEN(ca, kLen);)

op_Mul:
    x[ip->rd] = x[ip->rs1] * x[ip->rs2];
    STEP(cm);
op_Mulh:
    x[ip->rd] =
        uint32_t(uint64_t(int64_t(int32_t(x[ip->rs1])) * int64_t(int32_t(x[ip->rs2]))) >> 32);
    STEP(cm);
op_Mulhsu:  // |signed x unsigned| < 2^63: fits in int64
    x[ip->rd] = uint32_t(uint64_t(int64_t(int32_t(x[ip->rs1])) * int64_t(x[ip->rs2])) >> 32);
    STEP(cm);
op_Mulhu:
    x[ip->rd] = uint32_t((uint64_t(x[ip->rs1]) * x[ip->rs2]) >> 32);
    STEP(cm);
op_Div : {
    const int32_t a = int32_t(x[ip->rs1]), b = int32_t(x[ip->rs2]);
    x[ip->rd] = b == 0 ? ~0u : (a == INT32_MIN && b == -1) ? uint32_t(a) : uint32_t(a / b);
    STEP(cd);
}
op_Divu : {
    const uint32_t a = x[ip->rs1], b = x[ip->rs2];
    x[ip->rd] = b == 0 ? ~0u : a / b;
    STEP(cd);
}
op_Rem : {
    const int32_t a = int32_t(x[ip->rs1]), b = int32_t(x[ip->rs2]);
    x[ip->rd] = b == 0 ? uint32_t(a) : (a == INT32_MIN && b == -1) ? 0u : uint32_t(a % b);
    STEP(cd);
}
op_Remu : {
    const uint32_t a = x[ip->rs1], b = x[ip->rs2];
    x[ip->rd] = b == 0 ? a : a % b;
    STEP(cd);
}

op_Fence:  // one hart, memory accesses in program order: nothing to order
    STEP(ca);
op_FenceI:
op_Ecall:
op_Ebreak:
op_Mret:
op_Wfi:
    SYSTEM(system_insn(*ip));
op_Csrrw:
op_Csrrs:
op_Csrrc:
op_Csrrwi:
op_Csrrsi:
op_Csrrci:
    SYSTEM(csr_insn(*ip));

#undef SAVE
#undef LOAD
#undef DISPATCH
#undef NEXT
#undef STEP
#undef STEP_LEN
#undef TWIN
#undef TRAP
#undef CHECK_TARGET
#undef GO
#undef BRANCH
#undef LOAD_OP
#undef STORE_OP
#undef SEXT8
#undef SEXT16
#undef ZEXT
#undef SYSTEM
}

}  // namespace canopy::cpu
