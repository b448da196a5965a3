// CSRs (the six instruction forms, read-only and x0 rules, counters, WARL fields), every
// exception path with its mcause/mtval/mepc, mret, and interrupts: timer via the CLINT at the
// right simulated time, external via set_irq, software via msip, priority, vectored mtvec, wfi.
#include <filesystem>
#include <fstream>

#include "../temp_dir.hpp"
#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

constexpr uint32_t kBadAddr = 0x40000000;  // mapped to nothing

// A handler that records mcause, mtval and mepc in s9, s10, s11 and exits with code 0x99.
void recording_handler(Asm& a) {
    a.label("handler").csrr(s9, csrn::mcause).csrr(s10, csrn::mtval).csrr(s11, csrn::mepc);
    a.exit_code(0x99);
}

class CpuCsr : public CpuTest {};
class CpuTrap : public CpuTest {
  protected:
    // Runs `body` with the recording handler installed; expects exactly one trap.
    void expect_trap(const std::function<void(Asm&)>& body, uint32_t mcause,
                     const std::function<uint32_t(const Asm&)>& mtval_of,
                     const std::string& epc_label, const CoreConfig& cfg = CoreConfig()) {
        Asm a;
        a.set_mtvec("handler");
        body(a);
        a.exit_code(1);  // not reached
        recording_handler(a);
        const uint32_t mtval = mtval_of(a);
        ASSERT_TRUE(run_program(a, cfg)) << trap_log();
        EXPECT_EQ(exit_code(), 0x99u) << trap_log();
        EXPECT_EQ(x(s9), mcause);
        EXPECT_EQ(x(s10), mtval);
        EXPECT_EQ(x(s11), a.addr(epc_label));
        ASSERT_EQ(traps.size(), 1u) << trap_log();
        EXPECT_EQ(traps[0].mcause, mcause);
        EXPECT_EQ(traps[0].mtval, mtval);
        EXPECT_EQ(traps[0].epc, a.addr(epc_label));
    }
};
class CpuInterrupt : public CpuTest {};

// RV32IM without the C extension: IALIGN 32.
CoreConfig without_c() {
    CoreConfig c;
    c.compressed = false;
    return c;
}

TEST_F(CpuCsr, AllSixFormsReadOldValueAndWrite) {
    Asm a;
    a.li(t0, 0xf0)(csrrw(a0, csrn::mscratch, t0));
    a.li(t1, 0x0f)(csrrs(a1, csrn::mscratch, t1));
    a.li(t2, 0x3c)(csrrc(a2, csrn::mscratch, t2));
    a(csrrwi(a3, csrn::mscratch, 5));
    a(csrrsi(a4, csrn::mscratch, 0x18));
    a(csrrci(a5, csrn::mscratch, 0x5));
    a.csrr(a6, csrn::mscratch);
    a(csrrw(zero, csrn::mscratch, t0)).csrr(a7, csrn::mscratch);  // rd = x0 still writes
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0u);
    EXPECT_EQ(x(a1), 0xf0u);
    EXPECT_EQ(x(a2), 0xffu);
    EXPECT_EQ(x(a3), 0xc3u);
    EXPECT_EQ(x(a4), 5u);
    EXPECT_EQ(x(a5), 0x1du);
    EXPECT_EQ(x(a6), 0x18u);
    EXPECT_EQ(x(a7), 0xf0u);
    EXPECT_EQ(core().csr(csrn::mscratch), 0xf0u);
    EXPECT_TRUE(traps.empty()) << trap_log();
}

TEST_F(CpuCsr, ReadOnlyCsrsReadWithX0AndTrapOnWrite) {
    Asm a;
    a.set_mtvec("handler");
    a(csrrs(s2, csrn::mhartid, zero));    // rs1 = x0: a read, no write
    a(csrrc(a1, csrn::mvendorid, zero));  // likewise
    a(csrrsi(a2, csrn::cycle, 0));        // uimm = 0: a read
    a(csrrci(a3, csrn::marchid, 0));
    a.label("write_ro")(csrrw(zero, csrn::cycle, t0));  // rd = x0 but a write: illegal
    a.exit_code(1);
    a.label("handler").csrr(s9, csrn::mcause).csrr(s10, csrn::mtval).csrr(s11, csrn::mepc);
    // A set with a non-x0 register writes even when the register holds zero: illegal too.
    a(addi(s8, s8, 1)).li(t1, 2).beq(s8, t1, "done");
    a.li(t0, 0).label("set_ro")(csrrs(a4, csrn::mimpid, t0)).exit_code(2);
    a.label("done").exit_code(0x99);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 0x99u) << trap_log();
    ASSERT_EQ(traps.size(), 2u) << trap_log();
    EXPECT_EQ(traps[0].mcause, cause::kIllegalInstr);
    EXPECT_EQ(traps[0].mtval, csrrw(zero, csrn::cycle, t0));
    EXPECT_EQ(traps[0].epc, a.addr("write_ro"));
    EXPECT_EQ(traps[1].mcause, cause::kIllegalInstr);
    EXPECT_EQ(traps[1].mtval, csrrs(a4, csrn::mimpid, t0));
    EXPECT_EQ(traps[1].epc, a.addr("set_ro"));
    EXPECT_EQ(x(s2), 0u);  // hart 0
    EXPECT_EQ(x(a1), 0u);
    EXPECT_GT(x(a2), 0u);
}

TEST_F(CpuCsr, MachineInformationAndStatus) {
    Asm a;
    a.csrr(a0, csrn::misa)
        .csrr(a1, csrn::mstatus)
        .csrr(a2, csrn::mvendorid)
        .csrr(a3, csrn::marchid);
    a.csrr(a4, csrn::mimpid).csrr(a5, csrn::mhartid);
    a.li(t0, 0)(csrrw(zero, csrn::misa, t0)).csrr(a6, csrn::misa);  // WARL: ignored
    a.li(t0, 0xffffffff).csrw(csrn::mstatus, t0).csrr(a7, csrn::mstatus);
    a.csrw(csrn::mie, t0).csrr(s2, csrn::mie);
    a.csrw(csrn::mip, t0).csrr(s3, csrn::mip);  // mip bits are driven by the lines only
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0x40101104u);  // MXL = 32, I, M, U, C
    EXPECT_EQ(x(a1), 0x1800u);      // MPP = M
    EXPECT_EQ(x(a2), 0u);
    EXPECT_EQ(x(a3), 0u);
    EXPECT_EQ(x(a4), 0u);
    EXPECT_EQ(x(a5), 0u);
    EXPECT_EQ(x(a6), 0x40101104u);
    EXPECT_EQ(x(a7), 0x1888u);  // MIE, MPIE, MPP
    EXPECT_EQ(x(s2), 0x888u);   // MSIE, MTIE, MEIE
    EXPECT_EQ(x(s3), 0u);
}

TEST_F(CpuCsr, MtvecModesAndMepcAlignment) {
    Asm a;
    a.li(t0, 0x102).csrw(csrn::mtvec, t0).csrr(a0, csrn::mtvec);  // mode 2 reserved -> direct
    a.li(t0, 0x101).csrw(csrn::mtvec, t0).csrr(a1, csrn::mtvec);
    a.li(t0, 0x203).csrw(csrn::mtvec, t0).csrr(a2, csrn::mtvec);  // mode 3 -> vectored
    a.li(t0, 0x1237).csrw(csrn::mepc, t0).csrr(a3, csrn::mepc);
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0x100u);
    EXPECT_EQ(x(a1), 0x101u);
    EXPECT_EQ(x(a2), 0x201u);
    EXPECT_EQ(x(a3), 0x1236u);  // IALIGN 16 with C: bit 0 only reads zero
}

TEST_F(CpuCsr, WithoutCMisaLacksItAndMepcIsWordAligned) {
    Asm a;
    a.csrr(a0, csrn::misa).li(t0, 0x1237).csrw(csrn::mepc, t0).csrr(a1, csrn::mepc);
    a.exit(zero);
    ASSERT_TRUE(run_program(a, without_c())) << trap_log();
    EXPECT_EQ(x(a0), 0x40101100u);  // MXL = 32, I, M, U
    EXPECT_EQ(x(a1), 0x1234u);
}

TEST_F(CpuCsr, CountersAndTheirShadows) {
    Asm a;
    a.csrr(a0, csrn::minstret).csrr(a1, csrn::instret);
    a.li(t0, 1000).csrw(csrn::minstret, t0).csrr(a2, csrn::minstret).csrr(a3, csrn::minstret);
    a.li(t0, 5).csrw(csrn::minstreth, t0).csrr(a4, csrn::instreth);
    a.li(t0, 0).csrw(csrn::mcycle, t0).csrr(a5, csrn::mcycle).csrr(a6, csrn::cycle);
    a.csrr(a7, csrn::cycleh);
    a.nops(250).csrr(s2, csrn::time).csrr(s3, csrn::timeh);  // > 2 us in
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0u);  // nothing retired before
    EXPECT_EQ(x(a1), 1u);
    EXPECT_EQ(x(a2), 1000u);  // the write wins over the writing instruction's retirement
    EXPECT_EQ(x(a3), 1001u);
    EXPECT_EQ(x(a4), 5u);
    EXPECT_EQ(x(a5), 0u);  // the next instruction reads the value written
    EXPECT_EQ(x(a6), 1u);
    EXPECT_EQ(x(a7), 0u);
    // mtime counts microseconds: about 270 instructions at 8 ns is 2 us.
    EXPECT_EQ(x(s2), 2u);
    EXPECT_EQ(x(s3), 0u);
    // The internal counters are not moved by the CSR writes.
    EXPECT_EQ(core().instret(), core().cycles());
    EXPECT_EQ(core().csr(csrn::minstreth), 5u);
}

// Zicsr: "the explicit write is done instead of the update from the side effect". A write to
// minstreth right after minstret = 0xFFFFFFFF replaces that instruction's retirement, which
// would otherwise carry into the half it writes (riscv-tests rv32mi instret_overflow).
TEST_F(CpuCsr, AWriteToMinstrethReplacesItsInstructionsIncrement) {
    Asm a;
    a.li(t0, 0xFFFFFFFFu).li(t1, 5).csrw(csrn::minstret, t0).csrw(csrn::minstreth, t1);
    a.csrr(a0, csrn::minstret).csrr(a1, csrn::minstreth);
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 0xFFFFFFFFu);  // no carry: the minstreth write retired nothing
    EXPECT_EQ(x(a1), 6u);           // the csrr of minstret retired and carried
}

// Optional CSRs as the specs allow them to be absent: no triggers (debug spec: tselect is WARL,
// tdata1.type 0 is "no trigger at this tselect"), and mcounteren, which a hart with user mode
// must have (privileged spec: WARL, may be read-only), read-only with every counter readable
// from user mode, as the core lets it. None traps (riscv-tests rv32mi breakpoint, csr).
TEST_F(CpuCsr, TriggerCsrsAndMcounterenExistAndKeepNoWrite) {
    constexpr uint32_t tselect = 0x7A0, tdata1 = 0x7A1, tdata2 = 0x7A2, mcounteren = 0x306;
    Asm a;
    a.li(t0, 1).csrw(tselect, t0).csrr(a0, tselect).csrr(a1, tdata1);
    a.li(t0, 0xFFFFFFFFu).csrw(tdata2, t0).csrr(a2, tdata2);
    a.csrw(mcounteren, zero).csrr(a3, mcounteren);
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(stat("spu0.core", "trap.illegal_instruction"), 0u) << trap_log();
    EXPECT_EQ(x(a0), 0u);  // the write of 1 did not stick: there is no trigger 1
    EXPECT_EQ(x(a1), 0u);  // type 0: no trigger
    EXPECT_EQ(x(a2), 0u);
    EXPECT_EQ(x(a3), 0xFFFFFFFFu);
}

TEST_F(CpuCsr, UnknownCsrIsIllegal) {
    Asm a;
    a.set_mtvec("handler");
    a.label("bad")(csrrs(a0, 0x100, zero));  // sstatus: no S-mode
    a.exit_code(1);
    recording_handler(a);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(s9), cause::kIllegalInstr);
    EXPECT_EQ(x(s10), csrrs(a0, 0x100, zero));
    EXPECT_EQ(x(s11), a.addr("bad"));
}

TEST_F(CpuTrap, IllegalInstructions) {
    Asm a;
    a.set_mtvec("handler").li(s8, 0);
    const uint32_t bad[] = {0x00000000u,
                            0xffffffffu,
                            0x0000007fu /* no such opcode */,
                            0x02001013u /* slli with bit 25 (RV64 shamt) */,
                            0x00003003u /* ld */,
                            0x40001033u /* sll with funct7 0x20 */,
                            0x10200073u /* sret */,
                            0x00002063u /* branch funct3 2 */,
                            0x04100033u /* add with funct7 2 */};
    for (size_t k = 0; k < std::size(bad); ++k) a.label("bad" + std::to_string(k))(bad[k]);
    a.exit_code(0);
    // Handler: count and skip the instruction.
    a.label("handler")(addi(s8, s8, 1))
        .csrr(t0, csrn::mepc)(addi(t0, t0, 4))
        .csrw(csrn::mepc, t0)(mret());
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 0u);
    EXPECT_EQ(x(s8), std::size(bad));
    ASSERT_EQ(traps.size(), std::size(bad)) << trap_log();
    for (size_t k = 0; k < std::size(bad); ++k) {
        EXPECT_EQ(traps[k].mcause, cause::kIllegalInstr);
        EXPECT_EQ(traps[k].mtval, bad[k]) << k;
        EXPECT_EQ(traps[k].epc, a.addr("bad" + std::to_string(k)));
    }
    EXPECT_EQ(stat("spu0.core", "trap.illegal_instruction"), std::size(bad));
}

TEST_F(CpuTrap, MisalignedJumpTrapsOnTheJumpWithoutLinking) {
    expect_trap(
        [](Asm& a) {
            a.la(t0, "somewhere")(addi(t0, t0, 2)).li(ra, 0x5555);
            a.label("jump")(jalr(ra, t0, 0));
            a.label("somewhere").nops(2);
        },
        cause::kInstrMisaligned, [](const Asm& a) { return a.addr("somewhere") + 2; }, "jump",
        without_c());
    EXPECT_EQ(x(ra), 0x5555u);
}

TEST_F(CpuTrap, MisalignedJalTarget) {
    expect_trap([](Asm& a) { a.li(ra, 0x5555).label("jump")(jal(ra, 6)).nops(3); },
                cause::kInstrMisaligned, [](const Asm& a) { return a.addr("jump") + 6; }, "jump",
                without_c());
    EXPECT_EQ(x(ra), 0x5555u);
}

// With C, a halfword is a valid target: the jump lands in the middle of a word and runs the
// 16-bit instruction there (c.li a0, 5), linking pc + 4 (the jal is a 32-bit one).
TEST_F(CpuTrap, WithCAJumpToAHalfwordRunsTheInstructionThere) {
    Asm a;
    a.li(ra, 0x5555).li(a0, 1).label("jump")(jal(ra, 6));
    a((0x4515u << 16) | 0x0001u);  // c.nop (jumped over), c.li a0, 5
    a.exit(a0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 5u);
    EXPECT_EQ(x(ra), a.addr("jump") + 4);
    EXPECT_TRUE(traps.empty()) << trap_log();
}

// Without C a 16-bit encoding is no instruction: two c.nops in a word trap as one illegal word.
TEST_F(CpuTrap, WithoutCACompressedEncodingIsIllegal) {
    expect_trap([](Asm& a) { a.label("here")(0x00010001u); }, cause::kIllegalInstr,
                [](const Asm&) { return 0x00010001u; }, "here", without_c());
}

TEST_F(CpuTrap, MisalignedBranchTargetOnlyWhenTaken) {
    Asm a;
    a.set_mtvec("handler").li(t0, 1);
    a(bne(t0, t0, 2));  // not taken: no trap
    a.label("br")(beq(t0, t0, 6));
    a.exit_code(1).nops(4);
    recording_handler(a);
    ASSERT_TRUE(run_program(a, without_c())) << trap_log();
    EXPECT_EQ(exit_code(), 0x99u);
    EXPECT_EQ(x(s9), cause::kInstrMisaligned);
    EXPECT_EQ(x(s10), a.addr("br") + 6);
    EXPECT_EQ(x(s11), a.addr("br"));
}

TEST_F(CpuTrap, MisalignedLoadsAndStoresTrapWithTheAddress) {
    Asm a;
    a.set_mtvec("handler").li(s0, SPU_DMEM_BASE + 0x40);
    a.label("l1")(lw(a0, s0, 2));
    a.label("l2")(lh(a0, s0, 1));
    a.label("l3")(lhu(a0, s0, 3));
    a.label("s1")(sw(a0, s0, 1));
    a.label("s2")(sh(a0, s0, 3));
    a(lb(a0, s0, 1))(sb(a0, s0, 3));  // bytes are never misaligned
    a.exit_code(0);
    a.label("handler").csrr(t0, csrn::mepc)(addi(t0, t0, 4)).csrw(csrn::mepc, t0)(mret());
    CoreConfig strict;
    strict.misaligned_access = false;
    ASSERT_TRUE(run_program(a, strict)) << trap_log();
    EXPECT_EQ(exit_code(), 0u);
    ASSERT_EQ(traps.size(), 5u) << trap_log();
    const uint32_t base = SPU_DMEM_BASE + 0x40;
    const Trap want[] = {{cause::kLoadMisaligned, base + 2, a.addr("l1")},
                         {cause::kLoadMisaligned, base + 1, a.addr("l2")},
                         {cause::kLoadMisaligned, base + 3, a.addr("l3")},
                         {cause::kStoreMisaligned, base + 1, a.addr("s1")},
                         {cause::kStoreMisaligned, base + 3, a.addr("s2")}};
    for (size_t k = 0; k < 5; ++k) {
        EXPECT_EQ(traps[k].mcause, want[k].mcause) << k;
        EXPECT_EQ(traps[k].mtval, want[k].mtval) << k;
        EXPECT_EQ(traps[k].epc, want[k].epc) << k;
    }
    EXPECT_EQ(dmem_word(base), 0u);  // nothing was stored by the trapping stores
}

TEST_F(CpuTrap, MisalignedLoadsAndStoresWorkInHardwareByDefault) {
    // Little-endian bytes 11 22 33 44 55 66 at DMEM+0x41..0x46, written by misaligned stores.
    Asm a;
    a.set_mtvec("handler").li(s0, SPU_DMEM_BASE + 0x40);
    a.li(t1, 0x44332211)(sw(t1, s0, 1));  // bytes 1..4
    a.li(t1, 0x6655)(sh(t1, s0, 5));      // bytes 5..6
    a(lw(s2, s0, 3));                     // bytes 3..6: 0x66554433
    a(lh(s3, s0, 5));                     // 0x6655, sign bit clear
    a(lhu(s4, s0, 1));                    // 0x2211
    a.exit_code(0);
    a.label("handler").exit_code(1);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 0u) << trap_log();
    EXPECT_TRUE(traps.empty()) << trap_log();
    EXPECT_EQ(x(s2), 0x66554433u);
    EXPECT_EQ(x(s3), 0x6655u);
    EXPECT_EQ(x(s4), 0x2211u);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 0x40), 0x33221100u);
}

TEST_F(CpuTrap, AccessFaultsFromUnmappedAddresses) {
    Asm a;
    a.set_mtvec("handler").li(s0, kBadAddr).li(s1, 0);
    a.label("ld")(lw(a0, s0, 0));
    a.label("st")(sw(a0, s0, 8));
    a.li(s1, 1).la(t0, "fetch_back");
    a.label("fetch")(jalr(zero, s0, 0x10));  // the jump itself is fine; the fetch faults
    a.label("fetch_back").exit_code(0);
    // Handler: resume after the instruction, or at fetch_back for the fetch fault.
    a.label("handler")
        .csrr(t1, csrn::mcause)
        .li(t2, cause::kInstrAccessFault)
        .beq(t1, t2, "fetch_fault");
    a.csrr(t1, csrn::mepc)(addi(t1, t1, 4)).csrw(csrn::mepc, t1)(mret());
    a.label("fetch_fault").csrw(csrn::mepc, t0)(mret());
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 0u);
    ASSERT_EQ(traps.size(), 3u) << trap_log();
    EXPECT_EQ(traps[0].mcause, cause::kLoadAccessFault);
    EXPECT_EQ(traps[0].mtval, kBadAddr);
    EXPECT_EQ(traps[0].epc, a.addr("ld"));
    EXPECT_EQ(traps[1].mcause, cause::kStoreAccessFault);
    EXPECT_EQ(traps[1].mtval, kBadAddr + 8);
    EXPECT_EQ(traps[1].epc, a.addr("st"));
    EXPECT_EQ(traps[2].mcause, cause::kInstrAccessFault);
    EXPECT_EQ(traps[2].mtval, kBadAddr + 0x10);
    EXPECT_EQ(traps[2].epc, kBadAddr + 0x10);
    EXPECT_EQ(stat("spu0.core", "trap.load_access_fault"), 1u);
    EXPECT_EQ(stat("spu0.core", "trap.store_access_fault"), 1u);
    EXPECT_EQ(stat("spu0.core", "trap.instruction_access_fault"), 1u);
}

TEST_F(CpuTrap, StoreToReadOnlyMemoryFaults) {
    build(CoreConfig(), "spu0", sized(SPU_IMEM_SIZE, 0, true));
    Asm a;
    a.set_mtvec("handler").li(s0, 0x100).li(t0, 0x1234);
    a(lw(a1, s0, 0));  // reads from the ROM are fine
    a.label("st")(sw(t0, s0, 0));
    a.exit_code(1);
    recording_handler(a);
    load(a);
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(x(s9), cause::kStoreAccessFault);
    EXPECT_EQ(x(s10), 0x100u);
    EXPECT_EQ(x(s11), a.addr("st"));
}

TEST_F(CpuTrap, EcallAndMretReturnAfterIt) {
    Asm a;
    a.set_mtvec("handler").li(a0, 0);
    a.label("call")(ecall())(addi(a0, a0, 1));
    a.exit(a0);
    a.label("handler")(addi(a0, a0, 10))
        .csrr(s9, csrn::mcause)
        .csrr(s10, csrn::mtval)
        .csrr(s11, csrn::mepc);
    a(addi(s11, s11, 4)).csrw(csrn::mepc, s11)(mret());
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 11u);
    EXPECT_EQ(x(s9), cause::kEcallM);
    EXPECT_EQ(x(s10), 0u);
    EXPECT_EQ(x(s11), a.addr("call") + 4);
    EXPECT_EQ(stat("spu0.core", "trap.ecall_m"), 1u);
}

TEST_F(CpuTrap, EbreakTrapsWithThePcInMtval) {
    expect_trap([](Asm& a) { a.nops(1).label("bp")(ebreak()); }, cause::kBreakpoint,
                [](const Asm& a) { return a.addr("bp"); }, "bp");
}

TEST_F(CpuTrap, MretRestoresMieFromMpie) {
    Asm a;
    a.set_mtvec("handler")(csrrsi(zero, csrn::mstatus, 8));  // MIE = 1
    a(ecall()).csrr(s2, csrn::mstatus);
    a(csrrci(zero, csrn::mstatus, 8))(ecall()).csrr(s4, csrn::mstatus);  // MIE = 0 at the trap
    a.exit_code(0);
    a.label("handler").csrr(t0, csrn::mstatus);
    a.beq(s1, zero, "first")(addi(s3, t0, 0)).j("ret");
    a.label("first")(addi(s1, t0, 0));
    a.label("ret").csrr(t1, csrn::mepc)(addi(t1, t1, 4)).csrw(csrn::mepc, t1)(mret());
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(s1), 0x1880u);  // in the handler: MIE 0, MPIE 1 (MIE was 1)
    EXPECT_EQ(x(s2), 0x88u);    // after mret: MIE 1 again, MPIE 1, MPP = U (least privileged)
    EXPECT_EQ(x(s3), 0x1800u);  // second trap with MIE 0: MPIE 0
    EXPECT_EQ(x(s4), 0x80u);    // mret: MIE = MPIE = 0, MPIE = 1, MPP = U
}

TEST_F(CpuTrap, TrapsAppearInTheTransactionTrace) {
    canopy_test::TempDir dir;
    services.trace.open(dir.file("trace.json"));
    expect_trap([](Asm& a) { a.label("call")(ecall()); }, cause::kEcallM,
                [](const Asm&) { return 0u; }, "call");
    services.trace.close();
    const std::string text = canopy_test::read_text(dir.file("trace.json"));
    EXPECT_NE(text.find("\"name\":\"ecall_m\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"mcause\":\"0xb\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"epc\":"), std::string::npos) << text;
    EXPECT_NE(text.find("\"dur\":0.000000"), std::string::npos) << text;
    EXPECT_NE(text.find("spu0.core"), std::string::npos) << text;
}

TEST_F(CpuInterrupt, TimerInterruptFromTheClintAtTheRightTime) {
    Asm a;
    a.set_mtvec("handler");
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MTIMECMP)
        .li(t1, 50)(sw(t1, t0, 0))(sw(zero, t0, 4));  // 50 us
    a.li(t1, 1u << 7).csrw(csrn::mie, t1)(csrrsi(zero, csrn::mstatus, 8));
    a.label("spin")(addi(a0, a0, 1)).j("spin");
    a.label("handler").csrr(s10, csrn::mcycle).csrr(s9, csrn::mcause).csrr(s11, csrn::time);
    a.exit_code(0x77);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(s9), cause::kInterrupt | cause::kMti);
    // 50 us = 6250 cycles; taken at the core's next quantum boundary (1 us = 125 cycles).
    EXPECT_GE(x(s10), 6250u);
    EXPECT_LE(x(s10), 6250u + 125u + 2u);
    EXPECT_GE(x(s11), 50u);
    EXPECT_LE(x(s11), 51u);
    EXPECT_EQ(stat("spu0.clint", "timer_interrupts"), 1u);
    EXPECT_EQ(stat("spu0.core", "interrupts"), 1u);
    EXPECT_EQ(stat("spu0.core", "trap.interrupt_mti"), 1u);
}

TEST_F(CpuInterrupt, ExternalInterruptThroughSetIrq) {
    build();
    timeline().at(sc_time(20, SC_US), [this] { core().set_irq(cause::kMei, true); });
    Asm a;
    a.set_mtvec("handler");
    a.li(t1, 1u << 11).csrw(csrn::mie, t1)(csrrsi(zero, csrn::mstatus, 8));
    a.label("spin")(addi(a0, a0, 1)).j("spin");
    a.label("handler").csrr(s10, csrn::mcycle).csrr(s9, csrn::mcause).csrr(s8, csrn::mip);
    a.exit_code(0x77);
    load(a);
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(x(s9), cause::kInterrupt | cause::kMei);
    EXPECT_GE(x(s10), 2500u);
    EXPECT_LE(x(s10), 2500u + 125u + 2u);
    EXPECT_EQ(x(s8) & (1u << 11), 1u << 11);
}

TEST_F(CpuInterrupt, PriorityExternalThenSoftwareThenTimer) {
    build();
    timeline().at(sc_time(1, SC_US), [this] { core().set_irq(cause::kMei, true); });
    Asm a;
    a.set_mtvec("handler").li(s1, 0);
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MSIP).li(t1, 1)(sw(t1, t0, 0));               // MSIP
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MTIMECMP)(sw(zero, t0, 0))(sw(zero, t0, 4));  // MTIP now
    a.label("wait").csrr(t1, csrn::mip).li(t2, 0x888)(and_(t1, t1, t2)).bne(t1, t2, "wait");
    a.li(t1, 0x888).csrw(csrn::mie, t1)(csrrsi(zero, csrn::mstatus, 8));
    a.label("idle").csrr(t1, csrn::mie).bne(t1, zero, "idle");
    a.exit(s1);
    // Record the cause, mask it, return.
    a.label("handler").csrr(t0, csrn::mcause)(andi(t0, t0, 0xf))(slli(s1, s1, 4))(or_(s1, s1, t0));
    a.li(t1, 1)(sll(t1, t1, t0))(csrrc(zero, csrn::mie, t1))(mret());
    load(a);
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(exit_code(), 0xb37u) << trap_log();
}

TEST_F(CpuInterrupt, SoftwareInterruptAndVectoredMtvec) {
    Asm a;
    a.set_mtvec("vectors", 1);
    a(ecall());  // an exception goes to the base even in vectored mode
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MSIP).li(t1, 1)(sw(t1, t0, 0));
    a.li(t1, 1u << 3).csrw(csrn::mie, t1)(csrrsi(zero, csrn::mstatus, 8));
    a.label("spin").j("spin");
    a.label("vectors").j("exception");  // base + 0
    a.j("bad").j("bad").j("msi").j("bad").j("bad").j("bad").j("bad").j("bad").j("bad").j("bad").j(
        "bad");
    a.label("exception")(addi(s2, s2, 1))
        .csrr(t1, csrn::mepc)(addi(t1, t1, 4))
        .csrw(csrn::mepc, t1)(mret());
    a.label("msi").csrr(s9, csrn::mcause)(addi(s3, s3, 1)).exit_code(0x33);
    a.label("bad").exit_code(0xbad);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 0x33u) << trap_log();
    EXPECT_EQ(x(s9), cause::kInterrupt | cause::kMsi);
    EXPECT_EQ(x(s2), 1u);
    EXPECT_EQ(stat("spu0.clint", "software_interrupts"), 1u);
}

TEST_F(CpuInterrupt, DisabledInterruptIsNotTaken) {
    build();
    timeline().at(sc_time(2, SC_US), [this] { core().set_irq(cause::kMei, true); });
    Asm a;
    a.set_mtvec("handler").li(t1, 1u << 11).csrw(csrn::mie, t1);  // MIE stays 0
    a.li(t0, 2000).label("loop")(addi(t0, t0, -1)).bne(t0, zero, "loop");
    a.csrr(a1, csrn::mip).exit_code(0);
    a.label("handler").exit_code(0xbad);
    load(a);
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 0u);
    EXPECT_EQ(x(a1), 1u << 11);
    EXPECT_TRUE(traps.empty()) << trap_log();
}

TEST_F(CpuInterrupt, WfiSleepsUntilTheTimerWhileTimePassesAndInstretDoesNot) {
    Asm a;
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MTIMECMP).li(t1, 100)(sw(t1, t0, 0))(sw(zero, t0, 4));
    a.li(t1, 1u << 7).csrw(csrn::mie, t1);  // enabled in mie, MIE = 0: wfi wakes, no trap
    a.csrr(s2, csrn::minstret);
    a.label("wfi")(wfi());
    a.csrr(s3, csrn::minstret).csrr(s4, csrn::mcycle).csrr(s5, csrn::time);
    a.exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_TRUE(traps.empty()) << trap_log();
    EXPECT_EQ(x(s3) - x(s2), 2u);  // the csrr and the wfi only
    EXPECT_GE(x(s4), 12500u);      // 100 us at 125 MHz
    EXPECT_LE(x(s4), 12502u);
    EXPECT_EQ(x(s5), 100u);
    EXPECT_GE(m->exit.time(), sc_time(100, SC_US));
    EXPECT_LT(m->exit.time(), sc_time(100.1, SC_US));
    const auto* sleep =
        dynamic_cast<const core::Sum*>(services.stats.find("spu0.core", "wfi_sleep"));
    ASSERT_NE(sleep, nullptr);
    EXPECT_GT(sleep->value(), 99000.0);
    EXPECT_LT(sleep->value(), 100000.0);
    EXPECT_EQ(core().instret(), x(s3) + 3 + 5);  // three csrr, then li a0, li t6, sw
}

TEST_F(CpuInterrupt, WfiWakesIntoTheHandlerWhenEnabled) {
    build();
    timeline().at(sc_time(30, SC_US), [this] { core().set_irq(cause::kMei, true); });
    Asm a;
    a.set_mtvec("handler").li(t1, 1u << 11).csrw(csrn::mie, t1)(csrrsi(zero, csrn::mstatus, 8));
    a.label("sleep")(wfi());
    a.label("after").exit_code(1);
    a.label("handler").csrr(s11, csrn::mepc).csrr(s10, csrn::mcycle).exit_code(0x55);
    load(a);
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 0x55u);
    EXPECT_EQ(x(s11), a.addr("after"));  // wfi retired; the interrupt returns after it
    EXPECT_GE(x(s10), 3750u);
    EXPECT_LE(x(s10), 3753u);
}

TEST_F(CpuInterrupt, WfiWithAnInterruptAlreadyPendingDoesNotSleep) {
    Asm a;
    a.li(t0, SPU_CLINT_BASE + SPU_CLINT_MTIMECMP)(sw(zero, t0, 0))(sw(zero, t0, 4));  // MTIP now
    a.li(t1, 1u << 7).csrw(csrn::mie, t1)(wfi()).csrr(s4, csrn::mcycle).exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_LT(x(s4), 20u);
}

}  // namespace
}  // namespace canopy::cpu::test
