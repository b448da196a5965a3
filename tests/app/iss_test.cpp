// `canopy iss` as a firmware engineer uses it: real firmware from sw/firmware (built with the
// simulator, CANOPY_FIRMWARE_DIR) runs on one SPU core; its console output and exit code come
// back; the instruction limit, a faulting program and a bad ELF each end the run the way the
// README says.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>

#include "../canopy_process.hpp"
#include "cpu/spu_map.h"

using namespace canopy_test;
using nlohmann::json;

namespace {

std::string hex32(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

// Exit status 2, one line on stderr that contains every `parts`.
void expect_input_error(const Run& r, std::initializer_list<std::string> parts) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    for (const auto& p : parts)
        EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in: " << r.err;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

#ifdef CANOPY_FIRMWARE_DIR
std::string firmware(const std::string& name) {
    return std::string(CANOPY_FIRMWARE_DIR) + "/" + name + ".elf";
}
#define NEED_FIRMWARE()
#else
std::string firmware(const std::string&) { return ""; }
#define NEED_FIRMWARE() GTEST_SKIP() << "no RISC-V cross compiler: the firmware was not built"
#endif

Run iss(const std::string& args, const std::string& dir) {
    return run_canopy("iss --out " + dir + " " + args, dir);
}

}  // namespace

TEST(PlatformIss, SelfTestRunsAndReportsOverTheConsole) {
    NEED_FIRMWARE();
    auto d = scratch("iss-selftest");
    auto r = iss("--elf " + firmware("selftest"), d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(has(r.out, "cpu: canopy firmware self-test\n")) << r.out;
    EXPECT_TRUE(has(r.out, "cpu: crc32(\"123456789\"): 0xcbf43926 ok\n")) << r.out;
    EXPECT_TRUE(has(r.out, "cpu: div overflow: 0x80000000 ok\n")) << r.out;
    EXPECT_TRUE(has(r.out, "cpu: self-test passed: 0 failed\n")) << r.out;
    EXPECT_FALSE(has(r.out, "FAIL")) << r.out;
    EXPECT_TRUE(has(r.out, "exit code 0 after")) << r.out;
    EXPECT_TRUE(has(r.out, "cpu.instructions")) << r.out;  // the summary
    json s = json::parse(slurp(d + "/stats.json"));
    EXPECT_EQ(s["end"], "exit");
    EXPECT_EQ(s["exit_code"], 0);
    EXPECT_EQ(s["config"]["iss.core.clock_mhz"], "125");
    const uint64_t n = s["modules"]["cpu"]["instructions"].get<uint64_t>();
    EXPECT_EQ(s["instructions"].get<uint64_t>(), n);
    EXPECT_GT(n, 10000u);
    // One instruction per cycle at 125 MHz: the run lasts about n * 8 ns.
    EXPECT_NEAR(s["sim_time_ns"].get<double>(), 8.0 * n, 0.05 * 8.0 * n);
    EXPECT_GT(s["modules"]["console"]["lines"].get<uint64_t>(), 20u);
}

TEST(PlatformIss, ExitCodeIsTheProgramsAndOutputsAreDeterministic) {
    NEED_FIRMWARE();
    auto a = scratch("iss-exit-a"), b = scratch("iss-exit-b");
    auto ra = iss("--quiet --trace --elf " + firmware("gdb_target"), a);
    auto rb = iss("--quiet --trace --vcd " + firmware("gdb_target"), b);  // positional ELF
    EXPECT_EQ(ra.status, 15) << ra.err;                                   // 1 + 2 + 3 + 4 + 5
    EXPECT_EQ(rb.status, 15) << rb.err;
    EXPECT_EQ(ra.out, "cpu: counter=15\n");  // --quiet: the program's output only
    EXPECT_EQ(ra.err, "");
    EXPECT_EQ(slurp(a + "/trace.json"), slurp(b + "/trace.json"));
    EXPECT_EQ(slurp(a + "/stats.json"), slurp(b + "/stats.json"));
    EXPECT_EQ(json::parse(slurp(a + "/stats.json"))["exit_code"], 15);
    // The waves hold the core's program counter.
    const std::string vcd = slurp(b + "/waves.vcd");
    EXPECT_TRUE(has(vcd, "$var")) << rb.out;
    EXPECT_TRUE(has(vcd, "pc")) << vcd.substr(0, 2000);
}

TEST(PlatformIss, InstructionLimitEndsTheRunWithStatus3) {
    NEED_FIRMWARE();
    auto d = scratch("iss-limit");
    auto r = iss("--quiet --max-instructions 1000 --elf " + firmware("selftest"), d);
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(has(r.err, "instruction limit reached: 1000 instructions")) << r.err;
    EXPECT_FALSE(has(r.out, "self-test passed"));
    json s = json::parse(slurp(d + "/stats.json"));
    EXPECT_EQ(s["end"], "instruction-limit");
    EXPECT_EQ(s["instructions"], 1000);
    // The same from the config.
    auto c = iss("--quiet --set iss.max_instructions=2000 --elf " + firmware("selftest"), d);
    EXPECT_EQ(c.status, 3);
    EXPECT_TRUE(has(c.err, "instruction limit reached: 2000 instructions")) << c.err;
}

TEST(PlatformIss, FirmwareFaultsAreReportedByTheTrapHandler) {
    NEED_FIRMWARE();
    auto d = scratch("iss-fault");
    auto ill = iss("--quiet --elf " + firmware("fault_illegal"), d);
    EXPECT_EQ(ill.status, 128 + 2) << ill.err;  // SPU_TRAP_EXIT_EXCEPTION + illegal instruction
    EXPECT_TRUE(has(ill.out, "cpu: about to fault\n")) << ill.out;
    EXPECT_TRUE(has(ill.out, "cpu: trap: illegal instruction (mcause=0x00000002 mepc=0x"))
        << ill.out;
    EXPECT_FALSE(has(ill.out, "still running")) << ill.out;
    auto load = iss("--quiet --elf " + firmware("fault_unmapped"), d);
    EXPECT_EQ(load.status, 128 + 5) << load.err;  // load access fault
    EXPECT_TRUE(has(load.out, "cpu: trap: load access fault (mcause=0x00000005")) << load.out;
    EXPECT_TRUE(has(load.out, "mtval=0x40000000)")) << load.out;  // the unmapped address
    EXPECT_FALSE(has(load.out, "still running")) << load.out;
}

// No trap handler (mtvec 0, where the IMEM's zeros are an illegal instruction): each way of
// faulting used to loop at mtvec for ever, never retiring, so not even --max-instructions ended
// it. Now the loop is seen at its first turn: status 4 and a line naming the fault that led in.
TEST(PlatformIss, AFaultWithNoTrapHandlerEndsTheRunAsATrapLoop) {
    NEED_FIRMWARE();
    auto d = scratch("iss-trap-loop");
    const std::pair<const char*, std::string> cases[] = {
        {"illegal", "illegal_instruction at pc 0x80000004 (mcause 0x00000002"},
        {"ecall", "ecall_m at pc 0x80000004 (mcause 0x0000000b"},
        {"ebreak", "breakpoint at pc 0x80000004 (mcause 0x00000003, mtval 0x80000004)"},
        {"unmapped", "load_access_fault at pc 0x80000008 (mcause 0x00000005, mtval 0x40000000)"},
        {"misaligned", "instruction_address_misaligned at pc 0x80000001"},
        {"jump0",
         "illegal_instruction at pc 0x00000000 (mcause 0x00000002, mtval 0x00000000), "
         "at mtvec 0x00000000 traps to itself"}};
    for (const auto& [fault, said] : cases) {
        auto r = iss("--quiet --elf " + firmware("trap_loop_" + std::string(fault)), d);
        EXPECT_EQ(r.status, 4) << fault << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_TRUE(has(r.err, "stuck in a trap loop: " + said)) << r.err;
        EXPECT_TRUE(has(r.err, "no trap handler is installed")) << r.err;
        EXPECT_EQ(json::parse(slurp(d + "/stats.json"))["end"], "trap-loop");
    }
}

// A trap entry counts toward the limit as an instruction does: `nop; ecall` stops after the
// nop (limit 1) or after the ecall's trap (limit 2), before the loop is ever seen.
TEST(PlatformIss, TrapEntriesCountTowardTheInstructionLimit) {
    NEED_FIRMWARE();
    auto d = scratch("iss-trap-limit");
    auto one = iss("--quiet --max-instructions 1 --elf " + firmware("trap_loop_ecall"), d);
    EXPECT_EQ(one.status, 3) << one.err;
    EXPECT_TRUE(has(one.err, "1 instructions retired and 0 traps taken, pc 0x80000004;"))
        << one.err;
    auto two = iss("--quiet --max-instructions 2 --elf " + firmware("trap_loop_ecall"), d);
    EXPECT_EQ(two.status, 3) << two.err;
    EXPECT_TRUE(has(two.err,
                    "1 instructions retired and 1 traps taken, pc 0x00000000, last "
                    "trap mcause 0x0000000b at mepc 0x80000004"))
        << two.err;
}

TEST(PlatformIss, ACoreNothingCanWakeEndsTheRun) {
    NEED_FIRMWARE();
    auto d = scratch("iss-idle");
    auto r = iss("--quiet --elf " + firmware("idle"), d);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_TRUE(has(r.out, "cpu: waiting for an interrupt nobody sends\n")) << r.out;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(has(r.err, "the core went idle at pc 0x")) << r.err;
    EXPECT_EQ(json::parse(slurp(d + "/stats.json"))["end"], "idle");
}

// The riscv-tests' p environment runs each test in user mode in the RAM (mret with MPP = U).
// With no SPU control block to open the segment registers, `canopy iss` opens them over the RAM
// (iss.user_reaches_ram); closed, as an SPU's are at reset, the first user fetch is refused.
TEST(PlatformIss, UserModeRunsInTheRamAsTheIsaTestsNeed) {
    NEED_FIRMWARE();
    auto d = scratch("iss-user-ram");
    auto r = iss("--quiet --elf " + firmware("user_ram"), d);
    EXPECT_EQ(r.status, 0) << r.err;  // the ecall came from user mode with the word right
    r = iss("--quiet --set iss.user_reaches_ram=false --elf " + firmware("user_ram"), d);
    EXPECT_EQ(r.status, 11) << r.err;  // mcause 1 + 10: instruction access fault
}

// rvc.S checks every 16-bit instruction against its 32-bit expansion, their traps, and code
// rewritten under the decode cache; it reports the number of the first check that failed.
TEST(PlatformIss, CompressedInstructionsDoWhatTheirExpansionsDo) {
    NEED_FIRMWARE();
    auto d = scratch("iss-rvc");
    auto r = iss("--quiet --elf " + firmware("rvc"), d);
    EXPECT_EQ(r.status, 0) << "failed check " << r.status << ": " << r.err;
}

TEST(PlatformIss, ToHostEndsRiscvTestStylePrograms) {
    NEED_FIRMWARE();
    auto d = scratch("iss-tohost");
    auto pass = iss("--elf " + firmware("tohost_pass"), d);
    EXPECT_EQ(pass.status, 0) << pass.err;
    EXPECT_TRUE(has(pass.out, "exit code 0 (tohost)")) << pass.out;
    EXPECT_EQ(json::parse(slurp(d + "/stats.json"))["end"], "tohost");
    auto fail = iss("--quiet --elf " + firmware("tohost_fail"), d);
    EXPECT_EQ(fail.status, 5) << fail.err;  // the failing test's number
    // Without the RAM the program is linked for, it does not load.
    expect_input_error(
        iss("--set iss.ram_size_mib=0 --elf " + firmware("tohost_pass"), d),
        {firmware("tohost_pass"), "segment [0x80000000", "outside memory",
         "imem [0x00000000, " + hex32(SPU_IMEM_SIZE) + ")",
         "dmem [" + hex32(SPU_DMEM_BASE) + ", " + hex32(SPU_DMEM_BASE + SPU_DMEM_SIZE) + ")"});
    // RAM moved elsewhere: the same.
    expect_input_error(iss("--set iss.ram_base=0x40000000 --elf " + firmware("tohost_pass"), d),
                       {"outside memory", "ram [0x40000000, 0x44000000)"});
}

TEST(PlatformIss, BadElfIsOneLineWithStatus2) {
    auto d = scratch("iss-bad-elf");
    expect_input_error(iss("--elf " + d + "/missing.elf", d), {d + "/missing.elf", "cannot open"});
    std::ofstream(d + "/text.elf") << "not an executable\n";
    expect_input_error(iss("--elf " + d + "/text.elf", d), {d + "/text.elf", "not an ELF file"});
    const std::string host = std::string(CANOPY_BINARY_DIR) + "/canopy";  // x86-64, 64-bit
    expect_input_error(iss("--elf " + host, d), {host, "64-bit"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
#ifdef CANOPY_FIRMWARE_DIR
    std::string fw = slurp(firmware("selftest"));
    std::ofstream(d + "/cut.elf", std::ios::binary) << fw.substr(0, 5000);
    expect_input_error(iss("--elf " + d + "/cut.elf", d), {d + "/cut.elf", "truncated"});
    fw[18] = 62, fw[19] = 0;  // e_machine: x86-64
    std::ofstream(d + "/x86.elf", std::ios::binary) << fw;
    expect_input_error(iss("--elf " + d + "/x86.elf", d), {d + "/x86.elf", "not RISC-V"});
#endif
}

TEST(PlatformIss, BadOptionsAndConfig) {
    auto d = scratch("iss-options");
    expect_input_error(iss("", d), {"canopy iss", "elf"});
    expect_input_error(iss("--elf x.elf --max-instrutions 5", d),
                       {"--max-instrutions", "did you mean '--max-instructions'"});
    expect_input_error(iss("--elf x.elf --gdb 70000", d),
                       {"--gdb 70000", "out of range [0, 65535]"});
    expect_input_error(iss("--elf x.elf --gdb port", d), {"gdb"});
    expect_input_error(iss("--elf x.elf --set iss.core.clok_mhz=100", d),
                       {"iss.core.clok_mhz", "did you mean 'iss.core.clock_mhz'"});
    expect_input_error(iss("--elf x.elf --set iss.ram_base=0x10000", d),
                       {"iss.ram_base", "overlaps dmem"});
    expect_input_error(iss("--elf x.elf --set iss.ram_base=0xfff00000", d),
                       {"iss.ram_base", "32-bit"});
    // The platform's keys are not the harness's.
    expect_input_error(iss("--elf x.elf --set nand.geometry.channels=2", d),
                       {"nand.geometry.channels", "unknown"});
}

TEST(PlatformIss, HelpAndConfigDump) {
    auto d = scratch("iss-help");
    auto h = run_canopy("iss --help", d);
    EXPECT_EQ(h.status, 0);
    for (const char* o :
         {"--elf", "--max-instructions", "--gdb", "--trace", "--vcd", "--out", "--quiet", "--set"})
        EXPECT_TRUE(has(h.out, o)) << o;
    EXPECT_TRUE(has(run_canopy("--help", d).out, "iss"));
    auto dump = run_canopy("config --dump --iss --set iss.core.clock_mhz=250", d);
    ASSERT_EQ(dump.status, 0) << dump.err;
    for (const char* k : {"iss.core.clock_mhz", "iss.core.cpi_div", "iss.core.quantum_ns",
                          "iss.ram_base", "iss.ram_size_mib", "iss.max_instructions"})
        EXPECT_TRUE(has(dump.out, k)) << k;
    EXPECT_TRUE(has(dump.out, "from --set"));
    EXPECT_FALSE(has(dump.out, "nand."));
}
