// Timing (cycles per instruction class, clock, memory latency as stall cycles) and the memory
// paths: DMI on and off give the same results and the same time, the decode cache is dropped
// by stores to code, fence.i, debug writes and DMI invalidation, and debug access works.
#include <cstring>

#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

class CpuTiming : public CpuTest {};
class CpuMemory : public CpuTest {
  protected:
    // Two machines side by side ("on" and "off"), each with its own config; the simulation
    // stops when both programs have exited.
    void build_pair(const CoreConfig& on, const CoreConfig& off,
                    const MemoryConfig& imem = sized(SPU_IMEM_SIZE),
                    const MemoryConfig& dmem = sized(SPU_DMEM_SIZE)) {
        a_ = std::make_unique<Machine>("on", on, services, console_out, imem, dmem);
        b_ = std::make_unique<Machine>("off", off, services, console_out, imem, dmem);
        for (Machine* mm : {a_.get(), b_.get()})
            mm->exit.on_exit([this, mm](uint32_t code) {
                mm->core.notify_exit(code);
                if (++exits_ == 2) sc_core::sc_stop();
            });
    }
    void load_both(const Asm& a) {
        const auto w = a.words();
        for (Machine* mm : {a_.get(), b_.get()})
            mm->imem.write(a.base(), reinterpret_cast<const uint8_t*>(w.data()), 4 * w.size());
    }
    void expect_same() {
        ASSERT_TRUE(a_->exit.exited());
        ASSERT_TRUE(b_->exit.exited());
        EXPECT_EQ(a_->exit.code(), b_->exit.code());
        EXPECT_EQ(a_->exit.time(), b_->exit.time());
        for (unsigned r = 1; r < 32; ++r) EXPECT_EQ(a_->core.reg(r), b_->core.reg(r)) << "x" << r;
        EXPECT_EQ(a_->core.instret(), b_->core.instret());
        EXPECT_EQ(a_->core.cycles(), b_->core.cycles());
        EXPECT_EQ(0, std::memcmp(a_->dmem.data(), b_->dmem.data(), a_->dmem.size()));
    }
    std::unique_ptr<Machine> a_, b_;
    int exits_ = 0;
};

TEST_F(CpuTiming, NInstructionsAt125MHzTakeNTimes8ns) {
    const uint32_t n = 1000;
    Asm a;
    a.nops(int(n)).exit(zero);  // li t6 (2) + sw
    ASSERT_TRUE(run_program(a));
    EXPECT_EQ(m->exit.time(), sc_time(8.0 * (n + 2), SC_NS));  // the store starts after n + 2
    EXPECT_EQ(core().instret(), n + 3);
    EXPECT_EQ(core().cycles(), n + 3);
}

TEST_F(CpuTiming, CpiSettingsChangeIt) {
    const uint32_t n = 1000;
    CoreConfig cfg;
    cfg.cpi_alu = 3;
    cfg.cpi_store = 2;
    Asm a;
    a.nops(int(n)).exit(zero);
    ASSERT_TRUE(run_program(a, cfg));
    EXPECT_EQ(m->exit.time(), sc_time(8.0 * 3 * (n + 2), SC_NS));
    EXPECT_EQ(core().cycles(), 3 * (n + 2) + 2);
    EXPECT_EQ(core().instret(), n + 3);
}

TEST_F(CpuTiming, MultiplyDivideAndTakenBranchCosts) {
    CoreConfig cfg;
    cfg.cpi_mul = 4;
    cfg.cpi_div = 20;
    cfg.cpi_branch_taken = 3;
    Asm a;
    a.li(t0, 10).li(t1, 3);  // 4 cycles
    a.label("loop")(mul(a1, t0, t0))(div(a2, t0, t1))(addi(t0, t0, -1)).bne(t0, zero, "loop");
    a.exit(zero);
    ASSERT_TRUE(run_program(a, cfg));
    const uint64_t loop = 9 * (4 + 20 + 1 + 3) + (4 + 20 + 1 + 1);
    EXPECT_EQ(core().cycles(), 4 + loop + 3);
    EXPECT_EQ(m->exit.time(), sc_time(8.0 * (4 + loop + 2), SC_NS));
    EXPECT_EQ(core().instret(), 4 + 40 + 3);
}

TEST_F(CpuTiming, ClockFrequencySetsTheCycle) {
    CoreConfig cfg;
    cfg.clock_mhz = 100;
    Asm a;
    a.nops(500).exit(zero);
    ASSERT_TRUE(run_program(a, cfg));
    EXPECT_EQ(m->exit.time(), sc_time(10.0 * 502, SC_NS));
}

TEST_F(CpuTiming, TrapsCostOneCycleAndDoNotRetire) {
    Asm a;
    a.set_mtvec("handler");  // 3 instructions
    a(ecall());
    a.label("handler").exit(zero);
    ASSERT_TRUE(run_program(a));
    EXPECT_EQ(core().instret(), 3u + 3u);
    EXPECT_EQ(core().cycles(), 3u + 1u + 3u);
}

TEST_F(CpuTiming, ConfigKeysAndDefaults) {
    CoreConfig cfg;
    core::Params p;
    cfg.describe(p);
    std::map<std::string, std::string> got;
    for (const auto& i : p.infos()) got[i.key] = i.default_text;
    for (const char* k : {"clock_mhz", "cpi_alu", "cpi_load", "cpi_store", "cpi_branch_taken",
                          "cpi_mul", "cpi_div", "quantum_ns", "dmi", "reset_pc"})
        EXPECT_TRUE(got.count(k)) << k;
    EXPECT_EQ(got["cpi_alu"], "1");
    bool willow = false;
    for (const auto& i : p.infos())
        if (i.key == "clock_mhz") willow = i.description.find("Willow") != std::string::npos;
    EXPECT_TRUE(willow);

    core::ConfigSource src;
    src.set("spu.core.clock_mhz=250");
    src.set("spu.core.dmi=false");
    src.set("spu.core.reset_pc=0x100");
    CoreConfig loaded;
    core::Params q(&src);
    core::Params scoped = q.scope("spu").scope("core");
    loaded.describe(scoped);
    EXPECT_EQ(loaded.clock_mhz, 250.0);
    EXPECT_FALSE(loaded.dmi);
    EXPECT_EQ(loaded.reset_pc, 0x100u);
}

TEST_F(CpuTiming, ResetPcFromTheConfig) {
    CoreConfig cfg;
    cfg.reset_pc = 0x200;
    build(cfg);
    Asm a(0x200);
    a.exit_code(5);
    load(a);
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 5u);
}

// A program that exercises every memory path: a table in DMEM summed and rewritten in a loop,
// calls, bytes and halves, console output.
Asm checksum_program() {
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(t0, 64).li(t1, 0x9e3779b9);
    a.label("fill")(mul(t2, t0, t1))(sw(t2, s0, 0))(addi(s0, s0, 4))(addi(t0, t0, -1))
        .bne(t0, zero, "fill");
    a.li(s1, 0).li(s2, 20);
    a.label("pass").li(s0, SPU_DMEM_BASE).li(t0, 64);
    a.label("sum")(lw(t2, s0, 0)).jal(ra, "mix")(sw(t2, s0, 0))(lbu(t3, s0, 1))(add(s1, s1, t3));
    a(lh(t3, s0, 2))(xor_(s1, s1, t3))(sh(s1, s0, 2));
    a(addi(s0, s0, 4))(addi(t0, t0, -1)).bne(t0, zero, "sum");
    a(addi(s2, s2, -1)).bne(s2, zero, "pass");
    a.puts("sum done\n").exit(s1);
    a.label("mix")(slli(t3, t2, 5))(xor_(t2, t2, t3))(srli(t3, t2, 7))(xor_(t2, t2, t3))(
        add(t2, t2, s1))(jalr(zero, ra, 0));
    return a;
}

TEST_F(CpuMemory, DmiOnAndOffGiveTheSameResultsAndTime) {
    CoreConfig on, off;
    off.dmi = false;
    build_pair(on, off);
    load_both(checksum_program());
    run(sc_time(100, sc_core::SC_MS));
    expect_same();
    EXPECT_GT(stat("on.core", "loads.dmi"), 2000u);
    EXPECT_EQ(stat("on.core", "loads.bus"), 0u);
    EXPECT_EQ(stat("off.core", "loads.dmi"), 0u);
    EXPECT_EQ(stat("off.core", "loads.bus"), stat("on.core", "loads.dmi"));
    EXPECT_EQ(stat("off.core", "fetches.bus"), b_->core.instret());
    EXPECT_EQ(stat("on.core", "fetches.bus"), 0u);
    EXPECT_EQ(stat("on.core", "stores.bus"), 10u);  // the console's 9 bytes and the exit code
    EXPECT_EQ(stat("off.core", "stores.bus"), stat("on.core", "stores.dmi") + 10u);
    EXPECT_NE(console_out.str().find("on.core: sum done\n"), std::string::npos);
    EXPECT_NE(console_out.str().find("off.core: sum done\n"), std::string::npos);
}

TEST_F(CpuMemory, MemoryLatencyBecomesStallCyclesWithAndWithoutDmi) {
    CoreConfig on, off;
    off.dmi = false;
    build_pair(on, off, sized(SPU_IMEM_SIZE, 8.0), sized(SPU_DMEM_SIZE, 20.0));
    Asm a;
    a.li(s0, SPU_DMEM_BASE)(lw(a0, s0, 0))(sw(a0, s0, 4))(lw(a1, s0, 4)).exit(zero);
    load_both(a);
    run();
    expect_same();
    // 8 instructions; each fetch stalls 1 cycle (8 ns), each DMEM access 3 (20 ns -> 24 ns).
    EXPECT_EQ(a_->core.cycles(), 8u + 8u + 3u * 3u);
}

TEST_F(CpuMemory, StoreToCodeInvalidatesItsDecodeEvenWithoutFenceI) {
    Asm a;
    a.li(a0, 0).jal(ra, "f");
    a.la(t0, "f").li(t1, addi(a0, a0, 10))(sw(t1, t0, 0));  // patch f
    a.jal(ra, "f").exit(a0);
    a.label("f")(addi(a0, a0, 1))(jalr(zero, ra, 0));
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 11u);
}

TEST_F(CpuMemory, SelfModifyingCodeWithFenceI) {
    Asm a;
    a.li(a0, 0).li(s1, 3);
    a.label("again").jal(ra, "f");
    a.la(t0, "f")(lw(t1, t0, 0))
        .li(t2, 1u << 20)(add(t1, t1, t2))(sw(t1, t0, 0))(fence_i());  // imm += 1
    a(addi(s1, s1, -1)).bne(s1, zero, "again");
    a.exit(a0);
    a.label("f")(addi(a0, a0, 1))(jalr(zero, ra, 0));
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(exit_code(), 1u + 2u + 3u);
}

TEST_F(CpuMemory, FenceIMakesOutsideWritesToCodeVisible) {
    build();
    Asm a;
    a.li(a0, 0).jal(ra, "f");
    a.label("pause").jal(ra, "f");  // f still decoded: the outside write is not seen yet
    a(fence_i()).jal(ra, "f");      // now it is
    a.exit(a0);
    a.label("f")(addi(a0, a0, 1))(jalr(zero, ra, 0));
    load(a);
    core().add_breakpoint(a.addr("pause"));
    run();
    ASSERT_EQ(core().stop_reason(), StopReason::Breakpoint);
    ASSERT_EQ(core().pc(), a.addr("pause"));
    const uint32_t patched = addi(a0, a0, 10);
    m->imem.write(a.addr("f"), reinterpret_cast<const uint8_t*>(&patched), 4);  // no invalidate
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 1u + 1u + 10u);
}

TEST_F(CpuMemory, DebugWriteInvalidatesDecodes) {
    build();
    Asm a;
    a.li(a0, 0).jal(ra, "f");
    a.label("pause").jal(ra, "f");
    a.exit(a0);
    a.label("f")(addi(a0, a0, 1))(jalr(zero, ra, 0));
    load(a);
    core().add_breakpoint(a.addr("pause"));
    run();
    ASSERT_EQ(core().pc(), a.addr("pause"));
    const uint32_t patched = addi(a0, a0, 10);
    ASSERT_TRUE(core().debug_write(a.addr("f"), reinterpret_cast<const uint8_t*>(&patched), 4));
    core().resume();
    run();
    ASSERT_TRUE(exited());
    EXPECT_EQ(exit_code(), 11u);
}

TEST_F(CpuMemory, DebugReadAndWriteThroughTheBus) {
    build();
    const uint8_t bytes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ASSERT_TRUE(core().debug_write(SPU_DMEM_BASE + 0x21, bytes, sizeof bytes));
    uint8_t back[9] = {};
    ASSERT_TRUE(core().debug_read(SPU_DMEM_BASE + 0x21, back, sizeof back));
    EXPECT_EQ(0, std::memcmp(bytes, back, sizeof bytes));
    EXPECT_EQ(m->dmem.data()[0x21], 1);
    uint8_t b;
    EXPECT_FALSE(core().debug_read(0x40000000, &b, 1));  // nothing there
    uint8_t across[8];
    EXPECT_FALSE(
        core().debug_read(SPU_DMEM_BASE + SPU_DMEM_SIZE - 4, across, 8));  // runs into the gap
    EXPECT_TRUE(core().debug_read(SPU_DMEM_BASE + SPU_DMEM_SIZE - 4, across, 4));
}

TEST_F(CpuMemory, RevokedDmiFallsBackAndIsAcquiredAgain) {
    build();
    // At 5 us the memories withdraw their DMI pointers (as if remapped).
    timeline().at(sc_time(5, SC_US), [this] {
        m->imem.revoke_dmi();
        m->dmem.revoke_dmi();
    });
    Asm a;
    a.li(s0, SPU_DMEM_BASE).li(t0, 2000).li(a0, 0);
    a.label("loop")(sw(t0, s0, 0))(lw(t1, s0, 0))(add(a0, a0, t1))(addi(t0, t0, -1))
        .bne(t0, zero, "loop");
    a.exit(a0);
    load(a);
    run();
    ASSERT_TRUE(exited()) << trap_log();
    EXPECT_EQ(exit_code(), 2000u * 2001u / 2u);
    // Decoded twice: before and after the revocation.
    EXPECT_GE(core().decodes(), 2u * 5u);
    EXPECT_EQ(stat("spu0.core", "loads.bus"), 0u);
    EXPECT_EQ(stat("spu0.core", "loads.dmi"), 2000u);
}

}  // namespace
}  // namespace canopy::cpu::test
