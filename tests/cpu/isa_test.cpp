// RV32IM instructions: each group runs a program that computes every case into DMEM, then the
// test compares the words with the values the ISA manual defines, edge cases included (shift
// amounts masked to 5 bits, signed vs unsigned compares, division by zero, INT_MIN / -1).
#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

using RegOp = uint32_t (*)(uint32_t, uint32_t, uint32_t);
using ImmOp = uint32_t (*)(uint32_t, uint32_t, int32_t);
using ShiftOp = uint32_t (*)(uint32_t, uint32_t, uint32_t);

struct RegCase {
    const char* what;
    RegOp op;
    uint32_t a, b, expect;
};
struct ImmCase {
    const char* what;
    ImmOp op;
    uint32_t a;
    int32_t imm;
    uint32_t expect;
};

class CpuIsa : public CpuTest {
  protected:
    // Runs `body` (which leaves case k's result in DMEM word k, s0 = DMEM base) and checks the
    // words against `expect`.
    void check(Asm& a, const std::vector<std::pair<std::string, uint32_t>>& expect) {
        a.exit_code(0);
        ASSERT_TRUE(run_program(a)) << trap_log();
        EXPECT_TRUE(traps.empty()) << trap_log();
        for (size_t k = 0; k < expect.size(); ++k)
            EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 4 * uint32_t(k)), expect[k].second)
                << expect[k].first << std::hex << " got 0x"
                << dmem_word(SPU_DMEM_BASE + 4 * uint32_t(k));
    }
    void run_reg(const std::vector<RegCase>& cases) {
        Asm a;
        a.li(s0, SPU_DMEM_BASE);
        std::vector<std::pair<std::string, uint32_t>> expect;
        for (size_t k = 0; k < cases.size(); ++k) {
            a.li(a1, cases[k].a)
                .li(a2, cases[k].b)(cases[k].op(a0, a1, a2))(sw(a0, s0, int32_t(4 * k)));
            expect.emplace_back(cases[k].what, cases[k].expect);
        }
        check(a, expect);
    }
    void run_imm(const std::vector<ImmCase>& cases) {
        Asm a;
        a.li(s0, SPU_DMEM_BASE);
        std::vector<std::pair<std::string, uint32_t>> expect;
        for (size_t k = 0; k < cases.size(); ++k) {
            a.li(a1, cases[k].a)(cases[k].op(a0, a1, cases[k].imm))(sw(a0, s0, int32_t(4 * k)));
            expect.emplace_back(cases[k].what, cases[k].expect);
        }
        check(a, expect);
    }
};

TEST_F(CpuIsa, RegisterArithmeticAndLogic) {
    run_reg({{"add", add, 5, 7, 12},
             {"add wraps", add, 0xffffffff, 1, 0},
             {"add overflow", add, 0x7fffffff, 1, 0x80000000},
             {"sub", sub, 5, 7, 0xfffffffe},
             {"sub INT_MIN", sub, 0, 0x80000000, 0x80000000},
             {"sll", sll, 1, 31, 0x80000000},
             {"sll masks the amount", sll, 1, 33, 2},
             {"slt -1 < 1", slt, 0xffffffff, 1, 1},
             {"slt 1 < -1", slt, 1, 0xffffffff, 0},
             {"slt equal", slt, 7, 7, 0},
             {"sltu 1 < max", sltu, 1, 0xffffffff, 1},
             {"sltu max < 1", sltu, 0xffffffff, 1, 0},
             {"xor", xor_, 0xf0f0f0f0, 0x0ff00ff0, 0xff00ff00},
             {"srl", srl, 0x80000000, 31, 1},
             {"srl masks the amount", srl, 0x80000000, 35, 0x10000000},
             {"sra negative", sra, 0x80000000, 31, 0xffffffff},
             {"sra negative by 4", sra, 0x80000000, 4, 0xf8000000},
             {"sra positive", sra, 0x7ffffff0, 4, 0x07ffffff},
             {"or", or_, 0xf0f0f0f0, 0x0ff00ff0, 0xfff0fff0},
             {"and", and_, 0xf0f0f0f0, 0x0ff00ff0, 0x00f000f0}});
}

TEST_F(CpuIsa, ImmediateArithmeticAndLogic) {
    run_imm({{"addi negative", addi, 5, -6, 0xffffffff},
             {"addi overflow", addi, 0x7fffffff, 1, 0x80000000},
             {"addi -2048", addi, 0, -2048, 0xfffff800},
             {"addi 2047", addi, 0, 2047, 2047},
             {"slti signed true", slti, uint32_t(-5), -4, 1},
             {"slti signed false", slti, 5, -4, 0},
             {"sltiu imm -1 is max", sltiu, 5, -1, 1},
             {"sltiu seqz of 0", sltiu, 0, 1, 1},
             {"sltiu seqz of 5", sltiu, 5, 1, 0},
             {"xori not", xori, 0xf0, -1, 0xffffff0f},
             {"ori", ori, 0x100, 0xff, 0x1ff},
             {"ori sign-extends", ori, 0x0f, -256, 0xffffff0f},
             {"andi", andi, 0xffffffff, 0x7ff, 0x7ff},
             {"andi sign-extends", andi, 0x12345678, -16, 0x12345670}});
}

TEST_F(CpuIsa, ImmediateShifts) {
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(a1, 1)(slli(a0, a1, 31))(sw(a0, s0, 0));
    a.li(a1, 0x80000000)(srli(a0, a1, 1))(sw(a0, s0, 4));
    a(srai(a0, a1, 1))(sw(a0, s0, 8));
    a(srai(a0, a1, 0))(sw(a0, s0, 12));
    a.li(a1, 0x7fffffff)(srai(a0, a1, 30))(sw(a0, s0, 16));
    check(a, {{"slli 31", 0x80000000},
              {"srli 1", 0x40000000},
              {"srai 1", 0xc0000000},
              {"srai 0", 0x80000000},
              {"srai positive", 1}});
}

TEST_F(CpuIsa, MultiplyDivideWithTheSpecsCornerCases) {
    const uint32_t kMin = 0x80000000;
    run_reg({{"mul", mul, 7, 6, 42},
             {"mul -1 * -1", mul, 0xffffffff, 0xffffffff, 1},
             {"mul overflow low", mul, kMin, 2, 0},
             {"mulh -1 * -1", mulh, 0xffffffff, 0xffffffff, 0},
             {"mulh INT_MIN^2", mulh, kMin, kMin, 0x40000000},
             {"mulh -2 * 3", mulh, uint32_t(-2), 3, 0xffffffff},
             {"mulh max^2", mulh, 0x7fffffff, 0x7fffffff, 0x3fffffff},
             {"mulhsu -1 * max", mulhsu, 0xffffffff, 0xffffffff, 0xffffffff},
             {"mulhsu 2 * max", mulhsu, 2, 0xffffffff, 1},
             {"mulhsu INT_MIN * max", mulhsu, kMin, 0xffffffff, 0x80000000},
             {"mulhu max * max", mulhu, 0xffffffff, 0xffffffff, 0xfffffffe},
             {"mulhu 2^31 * 2", mulhu, kMin, 2, 1},
             {"div", div, 20, 6, 3},
             {"div rounds toward zero", div, uint32_t(-20), 6, uint32_t(-3)},
             {"div by negative", div, 20, uint32_t(-6), uint32_t(-3)},
             {"div by zero", div, 20, 0, 0xffffffff},
             {"div INT_MIN / -1", div, kMin, 0xffffffff, kMin},
             {"divu", divu, 20, 6, 3},
             {"divu large", divu, 0xffffffff, 2, 0x7fffffff},
             {"divu by zero", divu, 20, 0, 0xffffffff},
             {"rem", rem, 20, 6, 2},
             {"rem sign of dividend", rem, uint32_t(-20), 6, uint32_t(-2)},
             {"rem by negative", rem, 20, uint32_t(-6), 2},
             {"rem by zero", rem, 0x1234, 0, 0x1234},
             {"rem INT_MIN % -1", rem, kMin, 0xffffffff, 0},
             {"remu", remu, 20, 6, 2},
             {"remu large", remu, 0xffffffff, 10, 5},
             {"remu by zero", remu, 0xfffffff0, 0, 0xfffffff0}});
}

TEST_F(CpuIsa, X0IsHardwiredToZero) {
    Asm a;
    a(addi(zero, zero, 5))(lui(zero, 0x12345))(add(a0, zero, zero));
    a.li(s0, SPU_DMEM_BASE).li(t0, 0xabcdef01)(sw(t0, s0, 0))(lw(zero, s0, 0));  // a load into x0
    a(add(a1, zero, zero))(jal(zero, 4))(csrrs(zero, csrn::mscratch, zero))(sw(zero, s0, 4));
    a.exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(zero), 0u);
    EXPECT_EQ(x(a0), 0u);
    EXPECT_EQ(x(a1), 0u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 4), 0u);
    EXPECT_EQ(core().reg(0), 0u);
    core().set_reg(0, 99);
    EXPECT_EQ(core().reg(0), 0u);
}

TEST_F(CpuIsa, LuiAndAuipc) {
    Asm a;
    a(lui(a0, 0x12345));
    const uint32_t at = a.pc();
    a(auipc(a1, 1))(auipc(a2, 0xfffff))(auipc(a3, 0));
    a(lui(a4, 0xfffff));
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0x12345000u);
    EXPECT_EQ(x(a1), at + 0x1000);
    EXPECT_EQ(x(a2), at + 4 - 0x1000);
    EXPECT_EQ(x(a3), at + 8);
    EXPECT_EQ(x(a4), 0xfffff000u);
}

TEST_F(CpuIsa, JumpsLinkAndTargets) {
    Asm a;
    a.li(s1, 0);
    a.jal(ra, "f");  // forward, with link
    const uint32_t link1 = a.pc();
    a.j("over");                                       // rd = x0: no link
    a.label("f")(addi(s1, s1, 1))(jalr(zero, ra, 0));  // return
    a.label("over");
    a.la(t0, "g")(addi(t0, t0, -3))(jalr(ra, t0, 4));  // target = (g + 1) & ~1 = g
    const uint32_t link2 = a.pc();
    a.j("done");
    a.label("g")(addi(s1, s1, 10))(addi(s2, ra, 0))(jalr(zero, ra, 0));
    a.label("done");
    a.la(t1, "h")(jalr(t1, t1, 0));  // rd == rs1: jump to the old value, then link
    const uint32_t link3 = a.pc();
    a.j("end");
    a.label("h")(addi(s3, t1, 0)).j("end");
    a.label("back")(addi(s1, s1, 100)).j("end2");
    a.label("end").j("back");  // a backward jump
    a.label("end2").exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(s1), 111u);
    EXPECT_EQ(x(ra), link2);
    EXPECT_EQ(x(s2), link2);
    EXPECT_EQ(x(s3), link3);
    EXPECT_NE(link1, 0u);
    EXPECT_TRUE(traps.empty()) << trap_log();
}

TEST_F(CpuIsa, BranchesTakenAndNotTaken) {
    struct Case {
        const char* what;
        Asm& (Asm::*branch)(uint32_t, uint32_t, const std::string&);
        uint32_t a, b;
        bool taken;
    };
    const Case cases[] = {
        {"beq equal", &Asm::beq, 5, 5, true},
        {"beq unequal", &Asm::beq, 5, 6, false},
        {"bne unequal", &Asm::bne, 5, 6, true},
        {"bne equal", &Asm::bne, 5, 5, false},
        {"blt -1 < 0", &Asm::blt, 0xffffffff, 0, true},
        {"blt 0 < -1", &Asm::blt, 0, 0xffffffff, false},
        {"blt equal", &Asm::blt, 3, 3, false},
        {"bge equal", &Asm::bge, 3, 3, true},
        {"bge 0 >= -1", &Asm::bge, 0, 0xffffffff, true},
        {"bge INT_MIN >= 0", &Asm::bge, 0x80000000, 0, false},
        {"bltu 0 < max", &Asm::bltu, 0, 0xffffffff, true},
        {"bltu max < 0", &Asm::bltu, 0xffffffff, 0, false},
        {"bgeu max >= 0", &Asm::bgeu, 0xffffffff, 0, true},
        {"bgeu 0 >= max", &Asm::bgeu, 0, 0xffffffff, false},
        {"bgeu equal", &Asm::bgeu, 7, 7, true},
    };
    Asm a;
    a.li(s0, SPU_DMEM_BASE);
    std::vector<std::pair<std::string, uint32_t>> expect;
    for (size_t k = 0; k < std::size(cases); ++k) {
        const std::string taken = "taken" + std::to_string(k), join = "join" + std::to_string(k);
        a.li(a1, cases[k].a).li(a2, cases[k].b)(addi(a0, zero, 0));
        (a.*cases[k].branch)(a1, a2, taken);
        a.j(join);
        a.label(taken)(addi(a0, zero, 1));
        a.label(join)(sw(a0, s0, int32_t(4 * k)));
        expect.emplace_back(cases[k].what, cases[k].taken);
    }
    check(a, expect);
}

TEST_F(CpuIsa, BackwardBranchLoop) {
    Asm a;
    a.li(t0, 10).li(a0, 0);
    a.label("loop")(addi(a0, a0, 3))(addi(t0, t0, -1)).bne(t0, zero, "loop");
    a.exit(a0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 30u);
}

TEST_F(CpuIsa, LoadsOfEveryWidthExtendCorrectly) {
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(s1, SPU_DMEM_BASE + 0x100);
    a(lb(a0, s1, 0))(sw(a0, s0, 0));    // 0x80 -> sign
    a(lbu(a0, s1, 0))(sw(a0, s0, 4));   // 0x80 -> zero
    a(lb(a0, s1, 1))(sw(a0, s0, 8));    // 0x7f
    a(lh(a0, s1, 2))(sw(a0, s0, 12));   // 0x80ff -> sign
    a(lhu(a0, s1, 2))(sw(a0, s0, 16));  // 0x80ff -> zero
    a(lh(a0, s1, 4))(sw(a0, s0, 20));   // 0x1234
    a(lw(a0, s1, 4))(sw(a0, s0, 24));   // 0x89ab1234
    a(lw(a0, s1, -4))(sw(a0, s0, 28));  // a negative offset
    a(lbu(a0, s1, 7))(sw(a0, s0, 32));  // 0x89
    build();
    const uint8_t data[] = {0x80, 0x7f, 0xff, 0x80, 0x34, 0x12, 0xab, 0x89};
    m->dmem.write(0x100, data, sizeof data);
    const uint32_t before = 0xcafef00d;
    m->dmem.write(0xfc, reinterpret_cast<const uint8_t*>(&before), 4);
    a.exit_code(0);
    load(a);
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 0), 0xffffff80u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 4), 0x80u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 8), 0x7fu);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 12), 0xffff80ffu);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 16), 0x80ffu);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 20), 0x1234u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 24), 0x89ab1234u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 28), 0xcafef00du);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 32), 0x89u);
}

TEST_F(CpuIsa, StoresOfEveryWidthWriteOnlyTheirBytes) {
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(t0, 0x11223344).li(t1, 0xffffffff);
    a(sw(t1, s0, 0))(sw(t1, s0, 4))(sw(t1, s0, 8));
    a(sb(t0, s0, 1));  // byte 0x44 at offset 1
    a(sh(t0, s0, 6));  // half 0x3344 at offset 6
    a(sw(t0, s0, 8));
    a.li(s1, SPU_DMEM_BASE + 0x20)(sb(t0, s1, -1));  // negative offset: byte at 0x1f
    a.exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 0), 0xffff44ffu);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 4), 0x3344ffffu);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 8), 0x11223344u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 0x1c), 0x44000000u);
}

TEST_F(CpuIsa, FenceIsANop) {
    Asm a;
    a.li(a0, 7)(fence())(addi(a0, a0, 1));
    a.exit(a0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 8u);
    EXPECT_TRUE(traps.empty());
}

}  // namespace
}  // namespace canopy::cpu::test
