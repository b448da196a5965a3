// User mode and the SPU's segments (Willow 3.1 "Code and Data Protection"): mret into an SSD App
// running in U mode, loads, stores and fetches confined to its segments (faults name the
// address; the fast paths and decode caches may not reach past a segment), the privileged
// instructions and CSRs refused in U mode, ecall from U, and the return to machine mode on a trap.
#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

constexpr uint32_t kData = SPU_DMEM_BASE + 0x1000;  // the app's data segment
constexpr uint32_t kDataSize = 0x100;

class CpuUser : public CpuTest {
  protected:
    // Machine-mode prologue: enter `body` (labelled app .. app_end) in U mode. The handler
    // records mcause, mtval, mepc in s9, s10, s11 and mstatus in s8, then exits with 0x99.
    void run_app(const std::function<void(Asm&)>& body, bool with_segments = true) {
        Asm a;
        a.set_mtvec("handler");
        a.li(t0, 0x1800)(csrrc(zero, csrn::mstatus, t0));  // MPP = U
        a.la(t1, "app").csrw(csrn::mepc, t1)(mret());
        a.label("app");
        body(a);
        a.label("app_end");
        a.nops(4);  // beyond the code segment, still in IMEM
        a.label("handler")
            .csrr(s9, csrn::mcause)
            .csrr(s10, csrn::mtval)
            .csrr(s11, csrn::mepc)
            .csrr(s8, csrn::mstatus);
        a.exit_code(0x99);
        build();
        load(a);
        if (with_segments)
            core().set_segments(
                {a.addr("app"), a.addr("app_end") - a.addr("app"), kData, kDataSize});
        prog = a;
        run();
        ASSERT_TRUE(exited()) << trap_log();
        EXPECT_EQ(exit_code(), 0x99u) << trap_log();
        EXPECT_EQ(core().privilege(), Privilege::Machine);  // the trap returned to SPU-OS
    }
    Asm prog;
};

TEST_F(CpuUser, AppRunsInItsSegmentsAndEcallsAsUser) {
    run_app([](Asm& a) {
        a.li(t2, kData).li(t3, 0x1234)(sw(t3, t2, 0))(lw(a1, t2, 0));
        a(sw(t3, t2, kDataSize - 4))(lw(a2, t2, kDataSize - 4));  // last word of the segment
        a.csrr(a3, csrn::cycle);                                  // user counters are readable
        a(ecall());
    });
    EXPECT_EQ(x(s9), cause::kEcallU);
    EXPECT_EQ(stat("spu0.core", "trap.ecall_u"), 1u);  // named, beside trap.ecall_m
    EXPECT_EQ(x(s11), prog.addr("app_end") - 4);
    EXPECT_EQ(x(a1), 0x1234u);
    EXPECT_EQ(x(a2), 0x1234u);
    EXPECT_GT(x(a3), 0u);
    EXPECT_EQ((x(s8) >> 11) & 3, 0u);  // MPP = U: the trap came from user mode
    EXPECT_EQ(dmem_word(kData), 0x1234u);
}

TEST_F(CpuUser, StoreJustPastTheDataSegmentFaultsEvenAfterAFastPathStore) {
    run_app([](Asm& a) {
        a.li(t2, kData).li(t3, 7)(sw(t3, t2, 0))(sw(t3, t2, 4));  // the fast path is warm
        a(sw(t3, t2, kDataSize));                                 // one word past the end
        a(ecall());
    });
    EXPECT_EQ(x(s9), cause::kStoreAccessFault);
    EXPECT_EQ(x(s10), kData + kDataSize);
    EXPECT_EQ(x(s11), prog.addr("app_end") - 8);
    EXPECT_EQ(dmem_word(kData + kDataSize), 0u);  // nothing written
}

TEST_F(CpuUser, LoadBeforeTheDataSegmentAndMisalignedStraddleFault) {
    run_app([](Asm& a) {
        a.li(t2, kData)(lw(a1, t2, 0))(lw(a1, t2, -4));
        a(ecall());
    });
    EXPECT_EQ(x(s9), cause::kLoadAccessFault);
    EXPECT_EQ(x(s10), kData - 4);
}

TEST_F(CpuUser, MisalignedWordStraddlingTheSegmentEndFaults) {
    run_app([](Asm& a) {
        a.li(t2, kData + kDataSize - 2).li(t3, -1)(sw(t3, t2, 0));
        a(ecall());
    });
    EXPECT_EQ(x(s9), cause::kStoreAccessFault);
    EXPECT_EQ(x(s10), kData + kDataSize - 2);
}

TEST_F(CpuUser, RunningOffTheCodeSegmentFaultsAtItsEnd) {
    run_app([](Asm& a) { a(addi(a1, zero, 5))(addi(a2, zero, 6)); });
    EXPECT_EQ(x(s9), cause::kInstrAccessFault);
    EXPECT_EQ(x(s10), prog.addr("app_end"));
    EXPECT_EQ(x(s11), prog.addr("app_end"));
    EXPECT_EQ(x(a2), 6u);  // the segment's code ran
}

TEST_F(CpuUser, JumpIntoSpuOsCodeFaultsWithTheTarget) {
    run_app([](Asm& a) { a.la(t2, "handler")(jalr(zero, t2, 0)); });
    EXPECT_EQ(x(s9), cause::kInstrAccessFault);
    EXPECT_EQ(x(s10), prog.addr("handler"));
}

TEST_F(CpuUser, MachineCsrsMretAndWfiAreIllegalInUserMode) {
    run_app([](Asm& a) { a.csrr(a1, csrn::mstatus); });
    EXPECT_EQ(x(s9), cause::kIllegalInstr);
    EXPECT_EQ(x(s11), prog.addr("app"));
}

TEST_F(CpuUser, MretInUserModeIsIllegal) {
    run_app([](Asm& a) { a(mret()); });
    EXPECT_EQ(x(s9), cause::kIllegalInstr);
    EXPECT_EQ(x(s10), 0x30200073u);
}

TEST_F(CpuUser, WfiInUserModeIsIllegal) {
    run_app([](Asm& a) { a(wfi()); });
    EXPECT_EQ(x(s9), cause::kIllegalInstr);
    EXPECT_EQ(x(s10), 0x10500073u);
}

TEST_F(CpuUser, WithoutSegmentsUserModeReachesNothing) {
    run_app([](Asm& a) { a(addi(a1, zero, 1)); }, false);
    EXPECT_EQ(x(s9), cause::kInstrAccessFault);
    EXPECT_EQ(x(s10), prog.addr("app"));
    EXPECT_EQ(x(a1), 0u);
}

TEST_F(CpuUser, MachineInterruptsAreTakenInUserModeWhateverMie) {
    Asm a;
    a.set_mtvec("handler");
    a.li(t1, 1u << 11).csrw(csrn::mie, t1);  // MEIE; mstatus.MIE stays 0
    a.li(t0, 0x1800)(csrrc(zero, csrn::mstatus, t0));
    a.la(t1, "app").csrw(csrn::mepc, t1)(mret());
    a.label("app")(addi(s2, s2, 1)).j("app");
    a.label("app_end");
    a.label("handler").csrr(s9, csrn::mcause).csrr(s8, csrn::mstatus).csrr(s11, csrn::mepc);
    a.exit_code(0x99);
    build();
    timeline().at(sc_core::sc_time(20, sc_core::SC_US),
                  [this] { core().set_irq(cause::kMei, true); });
    load(a);
    core().set_segments({a.addr("app"), a.addr("app_end") - a.addr("app"), kData, kDataSize});
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(x(s9), cause::kInterrupt | cause::kMei);
    EXPECT_EQ((x(s8) >> 11) & 3, 0u);  // taken from user mode
    EXPECT_GE(x(s11), a.addr("app"));
    EXPECT_LT(x(s11), a.addr("app_end"));
    EXPECT_GT(x(s2), 1000u);  // the app ran until then (2,500 cycles, two instructions a turn)
}

}  // namespace
}  // namespace canopy::cpu::test
