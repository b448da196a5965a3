// The SPU devices around the core (console, exit device, CLINT, router, memory), the core's
// statistics and waves, and two cores side by side.
#include <cstring>
#include <stdexcept>

#include "../temp_dir.hpp"
#include "cpu_harness.hpp"

namespace canopy::cpu::test {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

class CpuDevices : public CpuTest {};

// The forward interface of a target socket, to call a device directly.
template <class Socket>
tlm::tlm_fw_transport_if<>& fw(Socket& s) {
    return *s.get_base_export().operator->();
}

TEST_F(CpuDevices, ConsoleLinesArePrefixedWithTheCoreName) {
    Asm a;
    a.puts("hello\nworld\n").puts("no newline").exit_code(0);
    ASSERT_TRUE(run_program(a)) << trap_log();
    m->console.flush();  // the partial line (also printed at the end of the simulation)
    EXPECT_EQ(console_out.str(),
              "spu0.core: hello\nspu0.core: world\nspu0.core: no newline [line cut short]\n");
    EXPECT_EQ(stat("spu0.console", "bytes"), 22u);
    EXPECT_EQ(stat("spu0.console", "lines"), 3u);
}

TEST_F(CpuDevices, ConsoleOwnerDefaultsToTheEnclosingModule) {
    struct Spu : sc_core::sc_module {
        Console console;
        Spu(sc_core::sc_module_name n, core::Services& s, std::ostream& o)
            : sc_module(n), console("console", s, "", o) {}
    };
    std::ostringstream out;
    Spu spu("spu3", services, out);
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay;
    uint8_t c = 'x';
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(SPU_CONSOLE_TX);
    gp.set_data_ptr(&c);
    gp.set_data_length(1);
    gp.set_streaming_width(1);
    fw(spu.console.socket).b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    spu.console.flush();
    EXPECT_EQ(out.str(), "spu3: x [line cut short]\n");
}

TEST_F(CpuDevices, ExitDeviceRecordsCodeAndTimeAndStopsTheCore) {
    Asm a;
    a.nops(10).exit_code(42);
    ASSERT_TRUE(run_program(a));
    EXPECT_EQ(m->exit.code(), 42u);
    EXPECT_EQ(m->exit.time(), sc_time(8 * 14, SC_NS));
    EXPECT_TRUE(core().exited());
    EXPECT_EQ(core().exit_code(), 42u);
    EXPECT_EQ(core().stop_reason(), StopReason::Exit);
    EXPECT_EQ(core().instret(), 15u);  // nothing ran after the exit store
    EXPECT_EQ(stat("spu0.exit", "exits"), 1u);
}

TEST_F(CpuDevices, ClintMtimeFollowsSimulatedTimeAndMtimecmpReadsBack) {
    Asm a;
    a.nops(400);  // 3.2 us
    a.li(s0, SPU_CLINT_BASE + SPU_CLINT_MTIME).li(s1, SPU_CLINT_BASE + SPU_CLINT_MTIMECMP);
    a(lw(a0, s0, 0))(lw(a1, s0, 4));
    a.li(t0, 0x12345678)(sw(t0, s1, 0))(sw(t0, s1, 4));
    a(lw(a2, s1, 0))(lw(a3, s1, 4));
    a.li(t0, 1000)(sw(t0, s0, 0))(lw(a4, s0, 0));  // mtime is writable
    a.csrr(a5, csrn::time);
    a.exit(zero);
    ASSERT_TRUE(run_program(a)) << trap_log();
    EXPECT_EQ(x(a0), 3u);
    EXPECT_EQ(x(a1), 0u);
    EXPECT_EQ(x(a2), 0x12345678u);
    EXPECT_EQ(x(a3), 0x12345678u);
    EXPECT_EQ(x(a4), 1000u);
    EXPECT_EQ(x(a5), 1000u);  // the time CSR reads the CLINT
    EXPECT_EQ(m->clint.mtimecmp(0), 0x1234567812345678ull);
}

TEST_F(CpuDevices, ClintRefusesBytesAndUnmappedOffsets) {
    Asm a;
    a.set_mtvec("handler").li(s0, SPU_CLINT_BASE + SPU_CLINT_MTIME).li(s1, SPU_CLINT_BASE);
    a(lb(a0, s0, 0));
    a(sw(a0, s1, 0x100));  // no register there
    a.exit_code(0);
    a.label("handler").csrr(t0, csrn::mepc)(addi(t0, t0, 4)).csrw(csrn::mepc, t0)(mret());
    ASSERT_TRUE(run_program(a));
    ASSERT_EQ(traps.size(), 2u) << trap_log();
    EXPECT_EQ(traps[0].mcause, cause::kLoadAccessFault);
    EXPECT_EQ(traps[0].mtval, SPU_CLINT_BASE + SPU_CLINT_MTIME);
    EXPECT_EQ(traps[1].mcause, cause::kStoreAccessFault);
}

TEST_F(CpuDevices, CoreStatistics) {
    Asm a;
    a.set_mtvec("handler").li(s0, SPU_DMEM_BASE);
    a(sw(s0, s0, 0))(lw(a0, s0, 0))(lw(a1, s0, 0))(ecall());
    a.label("back").exit_code(0);
    a.label("handler").la(t0, "back").csrw(csrn::mepc, t0)(mret());
    ASSERT_TRUE(run_program(a));
    EXPECT_EQ(stat("spu0.core", "instructions"), core().instret());
    EXPECT_EQ(stat("spu0.core", "cycles"), core().cycles());
    EXPECT_EQ(stat("spu0.core", "loads.dmi"), 2u);
    EXPECT_EQ(stat("spu0.core", "stores.dmi"), 1u);
    EXPECT_EQ(stat("spu0.core", "stores.bus"), 1u);  // the exit code
    EXPECT_EQ(stat("spu0.core", "loads.bus"), 0u);
    EXPECT_EQ(stat("spu0.core", "trap.ecall_m"), 1u);
    EXPECT_EQ(stat("spu0.core", "trap.illegal_instruction"), 0u);
    EXPECT_EQ(stat("spu0.core", "interrupts"), 0u);
    EXPECT_GT(core().decodes(), 10u);
    // The instruction count is a key statistic (in the summary).
    std::ostringstream summary;
    services.stats.print_summary(summary, 1000.0);
    EXPECT_NE(summary.str().find("instructions"), std::string::npos) << summary.str();
}

TEST_F(CpuDevices, WavesShowThePcAndPrivilege) {
    canopy_test::TempDir dir;
    services.waves.open(dir.file("waves.vcd"));
    Asm a;
    a.li(t0, 3000).label("loop")(addi(t0, t0, -1)).bne(t0, zero, "loop").exit_code(0);
    ASSERT_TRUE(run_program(a));
    services.waves.close();
    const std::string vcd = canopy_test::read_text(dir.file("waves.vcd"));
    EXPECT_NE(vcd.find(" pc "), std::string::npos) << vcd.substr(0, 2000);
    EXPECT_NE(vcd.find(" priv "), std::string::npos) << vcd.substr(0, 2000);
    EXPECT_NE(vcd.find("b1000 "),
              std::string::npos);  // the loop's pc, 0x8, sampled at a sync point
}

TEST_F(CpuDevices, RouterRejectsOverlapsAndAnswersUnmappedWithAddressErrors) {
    EXPECT_THROW(Router("r1", {{"a", 0, 0x100}, {"b", 0x80, 0x100}}), std::invalid_argument);
    EXPECT_THROW(Router("r2", {{"a", 0, 0}}), std::invalid_argument);
    Router r("r3", {{"a", 0x1000, 0x100}, {"b", 0x3000, 0x100}});
    EXPECT_EQ(r.decode(0x1000), 0);
    EXPECT_EQ(r.decode(0x10ff), 0);
    EXPECT_EQ(r.decode(0x1100), -1);
    EXPECT_EQ(r.decode(0x3050), 1);
    EXPECT_EQ(r.decode(0), -1);
}

TEST_F(CpuDevices, MemoryRefusesOutOfRangeAndRomWrites) {
    MemoryConfig rom_cfg = sized(64, 5.0, true);
    Memory rom("rom", rom_cfg, services);
    tlm::tlm_generic_payload gp;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    uint32_t v = 0xabcd;
    gp.set_data_ptr(reinterpret_cast<uint8_t*>(&v));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(0);
    fw(rom.socket).b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_COMMAND_ERROR_RESPONSE);
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(62);
    fw(rom.socket).b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    gp.set_address(60);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    fw(rom.socket).b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    EXPECT_EQ(v, 0u);  // zero-initialised
    EXPECT_EQ(delay, sc_time(5, SC_NS));
    tlm::tlm_dmi dmi;
    EXPECT_TRUE(fw(rom.socket).get_direct_mem_ptr(gp, dmi));
    EXPECT_TRUE(dmi.is_read_allowed());
    EXPECT_FALSE(dmi.is_write_allowed());
    EXPECT_EQ(dmi.get_end_address(), 63u);
    EXPECT_EQ(dmi.get_read_latency(), sc_time(5, SC_NS));
    const uint8_t bytes[4] = {1, 2, 3, 4};
    rom.write(60, bytes, 4);  // loaders may write a ROM
    EXPECT_EQ(rom.data()[63], 4);
    EXPECT_THROW(rom.write(62, bytes, 4), std::out_of_range);
}

TEST_F(CpuDevices, TwoCoresSideBySide) {
    Machine one("spu0", CoreConfig(), services, console_out, sized(SPU_IMEM_SIZE),
                sized(SPU_DMEM_SIZE));
    CoreConfig slow;
    slow.clock_mhz = 62.5;
    Machine two("spu1", slow, services, console_out, sized(SPU_IMEM_SIZE), sized(SPU_DMEM_SIZE));
    int done = 0;
    for (Machine* mm : {&one, &two})
        mm->exit.on_exit([&done, mm](uint32_t code) {
            mm->core.notify_exit(code);
            if (++done == 2) sc_core::sc_stop();
        });
    Asm a;
    a.li(t0, 5000)
        .label("loop")(addi(t0, t0, -1))
        .bne(t0, zero, "loop")
        .puts("done\n")
        .exit_code(0);
    const auto w = a.words();
    for (Machine* mm : {&one, &two})
        mm->imem.write(0, reinterpret_cast<const uint8_t*>(w.data()), 4 * w.size());
    sc_core::sc_start(sc_time(10, sc_core::SC_MS));
    ASSERT_TRUE(one.exit.exited());
    ASSERT_TRUE(two.exit.exited());
    EXPECT_EQ(two.exit.time(), one.exit.time() * 2.0);
    EXPECT_EQ(console_out.str(), "spu0.core: done\nspu1.core: done\n");
}

}  // namespace
}  // namespace canopy::cpu::test
