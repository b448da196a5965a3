// Run control through the public API, as the GDB stub and `canopy iss` use it: halt, step,
// resume, breakpoints (with and without DMI), watchpoints, the instruction limit, ebreak with a
// debugger attached, stepping from an on_stop callback, halting from another process and in wfi.
#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

using sc_core::sc_time;
using sc_core::SC_US;

class CpuDebug : public CpuTest {
  protected:
    // Records every stop.
    void watch_stops() {
        core().on_stop([this](Rv32Core& c, StopReason r) { stops.push_back({r, c.pc()}); });
    }
    struct Stop {
        StopReason reason;
        uint32_t pc;
    };
    std::vector<Stop> stops;
};

TEST_F(CpuDebug, HaltBeforeStartThenStepThenResume) {
    build();
    watch_stops();
    Asm a;
    a(addi(a0, zero, 1))(addi(a0, a0, 1))(addi(a0, a0, 1)).exit(a0);
    load(a);
    core().halt();
    EXPECT_TRUE(core().halted());
    run();
    EXPECT_TRUE(core().halted());
    EXPECT_EQ(core().stop_reason(), StopReason::Halted);
    EXPECT_EQ(core().pc(), 0u);
    EXPECT_EQ(core().instret(), 0u);
    core().step();
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::Step);
    EXPECT_EQ(core().pc(), 4u);
    EXPECT_EQ(core().instret(), 1u);
    EXPECT_EQ(x(a0), 1u);
    core().step();
    run();
    EXPECT_EQ(core().pc(), 8u);
    EXPECT_EQ(x(a0), 2u);
    EXPECT_TRUE(core().halted());
    core().resume();
    EXPECT_FALSE(core().halted());
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 3u);
    ASSERT_EQ(stops.size(), 4u);
    EXPECT_EQ(stops[0].reason, StopReason::Halted);
    EXPECT_EQ(stops[1].reason, StopReason::Step);
    EXPECT_EQ(stops[2].reason, StopReason::Step);
    EXPECT_EQ(stops[3].reason, StopReason::Exit);
    EXPECT_EQ(core().stop_reason(), StopReason::Exit);
    EXPECT_TRUE(core().exited());
    EXPECT_EQ(core().exit_code(), 3u);
}

// A loop of three iterations with a breakpoint on its body.
Asm loop_program() {
    Asm a;
    a.li(t0, 3).li(a0, 0);
    a.label("body")(addi(a0, a0, 1))(addi(t0, t0, -1)).bne(t0, zero, "body");
    a.exit(a0);
    return a;
}

TEST_F(CpuDebug, BreakpointStopsBeforeTheInstructionEveryTime) {
    build();
    watch_stops();
    Asm a = loop_program();
    load(a);
    core().add_breakpoint(a.addr("body"));
    std::vector<uint32_t> a0_at_stop;
    for (int k = 0; k < 10 && !exited(); ++k) {
        run();
        if (exited()) break;
        EXPECT_EQ(core().stop_reason(), StopReason::Breakpoint);
        EXPECT_EQ(core().pc(), a.addr("body"));
        a0_at_stop.push_back(x(a0));
        core().resume();
    }
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 3u);
    EXPECT_EQ(a0_at_stop, (std::vector<uint32_t>{0, 1, 2}));  // the addi had not run yet
}

TEST_F(CpuDebug, BreakpointWithoutDmi) {
    CoreConfig cfg;
    cfg.dmi = false;
    build(cfg);
    Asm a = loop_program();
    load(a);
    core().add_breakpoint(a.addr("body"));
    int hits = 0;
    for (int k = 0; k < 10 && !exited(); ++k) {
        run();
        if (exited()) break;
        EXPECT_EQ(core().pc(), a.addr("body"));
        ++hits;
        core().resume();
    }
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 3u);
    EXPECT_EQ(hits, 3);
}

TEST_F(CpuDebug, RemovedBreakpointNoLongerStops) {
    build();
    Asm a = loop_program();
    load(a);
    core().add_breakpoint(a.addr("body"));
    run();
    ASSERT_EQ(core().stop_reason(), StopReason::Breakpoint);
    core().remove_breakpoint(a.addr("body"));
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 3u);
}

TEST_F(CpuDebug, StepOffABreakpointRunsItsInstruction) {
    build();
    Asm a = loop_program();
    load(a);
    core().add_breakpoint(a.addr("body"));
    run();
    ASSERT_EQ(core().pc(), a.addr("body"));
    core().step();
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::Step);
    EXPECT_EQ(core().pc(), a.addr("body") + 4);
    EXPECT_EQ(x(a0), 1u);
}

TEST_F(CpuDebug, WriteWatchpointStopsAfterTheStore) {
    build();
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(t0, 0x1234);
    a(lw(t1, s0, 0x40));  // a read does not trigger a write watch
    a.label("store")(sh(t0, s0, 0x42));
    a.label("after")(addi(a0, zero, 7)).exit(a0);
    load(a);
    core().add_watchpoint(SPU_DMEM_BASE + 0x40, 4, Rv32Core::Watch::Write);
    run();
    ASSERT_FALSE(exited());
    EXPECT_EQ(core().stop_reason(), StopReason::Watchpoint);
    EXPECT_EQ(core().pc(), a.addr("after"));
    EXPECT_EQ(core().watch_hit_address(), SPU_DMEM_BASE + 0x42);
    EXPECT_EQ(dmem_word(SPU_DMEM_BASE + 0x40), 0x12340000u);
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 7u);
}

TEST_F(CpuDebug, ReadAndAccessWatchpoints) {
    build();
    Asm a;
    a.li(s0, SPU_DMEM_BASE)(sw(zero, s0, 0x80));  // a write: the read watch stays quiet
    a.label("load")(lbu(t1, s0, 0x83));
    a.label("after")(sw(t1, s0, 0x90));
    a.label("after2").exit(zero);
    load(a);
    core().add_watchpoint(SPU_DMEM_BASE + 0x80, 4, Rv32Core::Watch::Read);
    core().add_watchpoint(SPU_DMEM_BASE + 0x90, 1, Rv32Core::Watch::Access);
    run();
    ASSERT_EQ(core().stop_reason(), StopReason::Watchpoint);
    EXPECT_EQ(core().pc(), a.addr("after"));
    core().resume();
    run();
    ASSERT_EQ(core().stop_reason(), StopReason::Watchpoint);
    EXPECT_EQ(core().pc(), a.addr("after2"));
    core().remove_watchpoint(SPU_DMEM_BASE + 0x80, 4, Rv32Core::Watch::Read);
    core().remove_watchpoint(SPU_DMEM_BASE + 0x90, 1, Rv32Core::Watch::Access);
    core().resume();
    run();
    ASSERT_TRUE(exited());
}

TEST_F(CpuDebug, InstructionLimitStopsExactly) {
    build();
    Asm a;
    a.label("spin")(addi(a0, a0, 1)).j("spin");
    load(a);
    core().set_instruction_limit(1001);
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::InstructionLimit);
    EXPECT_EQ(core().instret(), 1001u);
    EXPECT_EQ(x(a0), 501u);
    core().set_instruction_limit(5000);
    core().resume();
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::InstructionLimit);
    EXPECT_EQ(core().instret(), 5000u);
}

TEST_F(CpuDebug, EbreakStopsTheCoreWhenADebuggerIsAttached) {
    build();
    core().set_debugger_attached(true);
    Asm a;
    a(addi(a0, zero, 1)).label("bp")(ebreak())(addi(a0, zero, 2)).exit(a0);
    load(a);
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::Breakpoint);
    EXPECT_EQ(core().pc(), a.addr("bp"));
    EXPECT_EQ(core().instret(), 1u);
    EXPECT_TRUE(traps.empty()) << trap_log();
    core().set_pc(a.addr("bp") + 4);  // the debugger moves past it
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 2u);
}

TEST_F(CpuDebug, SteppingFromAnOnStopCallbackTracesEveryPc) {
    build();
    Asm a;
    a.li(t0, 2);
    a.label("loop")(addi(t0, t0, -1)).bne(t0, zero, "loop");
    a.exit(zero);
    load(a);
    std::vector<uint32_t> pcs;
    core().on_stop([&](Rv32Core& c, StopReason r) {
        if (r == StopReason::Exit) return;
        pcs.push_back(c.pc());
        c.step();
    });
    core().halt();
    run();
    ASSERT_TRUE(exited());
    const uint32_t l = a.addr("loop");
    EXPECT_EQ(pcs, (std::vector<uint32_t>{0, 4, l, l + 4, l, l + 4, l + 8, l + 12, l + 16}));
}

TEST_F(CpuDebug, HaltFromAnotherProcessThenSetPcAndResume) {
    build();
    timeline().at(sc_time(10, SC_US), [this] { core().halt(); });
    Asm a;
    a.label("spin")(addi(a0, a0, 1)).j("spin");
    a.label("other").exit_code(9);
    load(a);
    run();
    EXPECT_EQ(core().stop_reason(), StopReason::Halted);
    EXPECT_GE(core().local_time(), sc_time(10, SC_US));
    EXPECT_LE(core().local_time(), sc_time(11.1, SC_US));
    EXPECT_EQ(sc_core::sc_time_stamp(), core().local_time());  // synchronised when it stopped
    core().set_pc(a.addr("other"));
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 9u);
}

TEST_F(CpuDebug, StoppedTimeIsNotCounted) {
    build();
    // The core is halted from the start; another process moves time to 50 us and resumes it.
    timeline().at(sc_time(50, SC_US), [this] { core().resume(); });
    Asm a;
    a.csrr(a0, csrn::mcycle).exit(a0);
    load(a);
    core().halt();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 0u);  // mcycle did not count the halted 50 us
    EXPECT_EQ(m->exit.time(), sc_time(50, SC_US) + sc_time(8 * 3, sc_core::SC_NS));
}

TEST_F(CpuDebug, HaltWhileAsleepInWfi) {
    build();
    timeline().at(sc_time(20, SC_US), [this] { core().halt(); });
    timeline().at(sc_time(30, SC_US), [this] { core().resume(); });
    watch_stops();
    Asm a;
    a.label("sleep")(wfi());
    a.label("after").exit_code(4);
    load(a);
    run();
    ASSERT_TRUE(exited());
    ASSERT_GE(stops.size(), 1u);
    EXPECT_EQ(stops[0].reason, StopReason::Halted);
    EXPECT_EQ(stops[0].pc, a.addr("after"));
    EXPECT_GE(m->exit.time(), sc_time(30, SC_US));
}

}  // namespace
}  // namespace canopy::cpu::test
