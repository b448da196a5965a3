// A debugger session as a firmware engineer runs it: `canopy iss --gdb` with Debian's
// gdb-multiarch in batch mode against real firmware (sw/firmware/tests/gdb_target.c): break at
// a function, continue, read variables and registers, step, watch a variable, change one, and
// run to the exit, whose code the debugger's change decides.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "../canopy_process.hpp"
#include "../gdb_session.hpp"
#include "cpu/elf_loader.hpp"

using namespace canopy_test;

#ifdef CANOPY_FIRMWARE_DIR

TEST(PlatformGdb, BreakReadStepWatchAndRunToExit) {
    ASSERT_TRUE(have_gdb()) << "gdb-multiarch is installed by `make test`";
    auto d = scratch("gdb-session");
    const std::string elf = std::string(CANOPY_FIRMWARE_DIR) + "/gdb_target.elf";
    Background iss("iss --elf " + elf + " --gdb 0 --quiet --out " + d, d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0) << read_text(iss.err);
    // bump(by) adds `by` to counter for by = 1..5; main returns counter.
    const std::string script = d + "/session.gdb";
    std::ofstream(script) << "set confirm off\n"
                             "set pagination off\n"
                             "set architecture riscv:rv32\n"
                             "file "
                          << elf
                          << "\n"
                             "target remote localhost:"
                          << port
                          << "\n"
                             "info threads\n"
                             "break bump\n"
                             "continue\n"
                             "print by\n"
                             "print counter\n"
                             "print/x magic\n"
                             "print $pc == &bump\n"
                             "stepi\n"
                             "print $pc != &bump\n"
                             "delete\n"
                             "watch counter\n"
                             "continue\n"
                             "delete\n"
                             "set var counter = 100\n"
                             "continue\n";
    const GdbRun gdb = gdb_batch(d, {script}, 60);
    const std::string& log = gdb.log;
    EXPECT_EQ(gdb.status, 0) << log;
    EXPECT_NE(log.find("Breakpoint 1, bump (by=by@entry=1)"), std::string::npos) << log;
    EXPECT_NE(log.find("$1 = 1"), std::string::npos) << log;           // by
    EXPECT_NE(log.find("$2 = 0"), std::string::npos) << log;           // counter before the add
    EXPECT_NE(log.find("$3 = 0xc0ffee00"), std::string::npos) << log;  // magic, read from DMEM
    EXPECT_NE(log.find("$4 = 1"), std::string::npos) << log;           // stopped at bump
    EXPECT_NE(log.find("$5 = 1"), std::string::npos) << log;           // stepi moved the pc
    // The watchpoint fires when bump(1) stores counter = 1.
    EXPECT_NE(log.find("Old value = 0"), std::string::npos) << log;
    EXPECT_NE(log.find("New value = 1"), std::string::npos) << log;
    // counter = 100, then bump(2..5) adds 14: the program exits with 114 (gdb prints octal).
    EXPECT_NE(log.find("exited with code 0162"), std::string::npos) << log;
    EXPECT_EQ(iss.wait_exit(30), 114) << read_text(iss.err);
}

// stepi stops after exactly one instruction whatever it is: an ecall (at its trap handler), an
// mret (back at mepc), a fence with a breakpoint on it (stepping off a breakpoint in the RAM of
// `canopy iss`). GDB used to step by planting breakpoints at the pc it guessed comes next (the
// stub offered no vCont), so stepi over mret ran on to the end of the program.
TEST(PlatformGdb, StepiStopsAfterOneInstructionOfAnyKindAndCsrsAreRegisters) {
    ASSERT_TRUE(have_gdb());
    auto d = scratch("gdb-stepi");
    const std::string elf = std::string(CANOPY_FIRMWARE_DIR) + "/step_test.elf";
    const canopy::cpu::ElfImage image(elf);
    auto at = [&](const char* symbol) {
        char b[16];
        std::snprintf(b, sizeof b, "pc=%x\n", *image.symbol(symbol));
        return std::string(b);
    };
    Background iss("iss --elf " + elf + " --gdb 0 --quiet --out " + d, d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0) << read_text(iss.err);
    const std::string script = d + "/stepi.gdb";
    std::ofstream(script) << "set confirm off\nset pagination off\nset architecture riscv:rv32\n"
                          << "file " << elf << "\ntarget remote localhost:" << port << "\n"
                          << "break at_ecall\ncontinue\nstepi\nprintf \"pc=%x\\n\", $pc\n"
                          // In the handler: the CSRs and the privilege as GDB names them.
                          << "info registers mcause\nprintf \"priv=%d\\n\", $priv\n"
                          << "set $mscratch = 0x1234\nprintf \"mscratch=%x\\n\", $mscratch\n"
                          << "printf \"seg=%x\\n\", $seg_code_size\n"
                          << "break at_mret\ncontinue\nstepi\nprintf \"pc=%x\\n\", $pc\n"
                          << "break at_fence\ncontinue\nstepi\nprintf \"pc=%x\\n\", $pc\n"
                          << "continue\n";
    const GdbRun gdb = gdb_batch(d, {script}, 60);
    const std::string& log = gdb.log;
    EXPECT_EQ(gdb.status, 0) << log;
    const size_t ecall = log.find(at("handler")), mret = log.find(at("after_ecall"));
    char fence[16];
    std::snprintf(fence, sizeof fence, "pc=%x\n", *image.symbol("at_fence") + 4);
    const size_t off_fence = log.find(fence);
    EXPECT_NE(ecall, std::string::npos) << "stepi over ecall: " << log;
    EXPECT_NE(mret, std::string::npos) << "stepi over mret: " << log;
    EXPECT_NE(off_fence, std::string::npos) << "stepi off a breakpoint on a fence: " << log;
    EXPECT_TRUE(ecall < mret && mret < off_fence) << log;
    // The ecall's trap, read and written through the target description's registers.
    EXPECT_NE(log.find("mcause         0xb"), std::string::npos) << log;
    EXPECT_NE(log.find("priv=3\n"), std::string::npos) << log;
    EXPECT_NE(log.find("mscratch=1234\n"), std::string::npos) << log;
    // canopy iss opens the segments over its RAM (64 MiB): iss.user_reaches_ram
    EXPECT_NE(log.find("seg=4000000\n"), std::string::npos) << log;
    // The program then ends as it would have without the debugger: tohost = 1, a pass.
    EXPECT_NE(log.find("exited normally"), std::string::npos) << log;
    EXPECT_EQ(iss.wait_exit(30), 0) << read_text(iss.err);
}

TEST(PlatformGdb, DetachLetsTheProgramFinish) {
    ASSERT_TRUE(have_gdb());
    auto d = scratch("gdb-detach");
    const std::string elf = std::string(CANOPY_FIRMWARE_DIR) + "/gdb_target.elf";
    Background iss("iss --elf " + elf + " --gdb 0 --quiet --out " + d, d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0);
    const std::string cmd =
        "timeout 60 gdb-multiarch -nx -batch -ex 'set architecture riscv:rv32' -ex 'file " + elf +
        "' -ex 'target remote localhost:" + std::to_string(port) +
        "' -ex 'break bump' -ex 'continue' -ex 'detach' >" + d + "/gdb.out 2>&1";
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << read_text(d + "/gdb.out");
    // Breakpoints go with the debugger: the program runs to its end, 1+2+3+4+5.
    EXPECT_EQ(iss.wait_exit(30), 15) << read_text(iss.err);
}

// The remote protocol by hand, for what batch-mode GDB cannot do: interrupt a running target.
class Rsp {
  public:
    explicit Rsp(int port) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(uint16_t(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
        timeval tv{10, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~Rsp() { close(fd_); }
    bool ok() const { return ok_; }
    void send_raw(const std::string& s) { ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL); }
    void send_packet(const std::string& d) {
        unsigned sum = 0;
        for (char c : d) sum = (sum + uint8_t(c)) & 0xFF;
        char cs[3];
        std::snprintf(cs, sizeof cs, "%02x", sum);
        send_raw("$" + d + "#" + cs);
    }
    // The next packet's data ("" on timeout or close); acknowledges it.
    std::string reply() {
        std::string data;
        char c;
        while (recv(fd_, &c, 1, 0) == 1) {
            if (c != '$') continue;
            while (recv(fd_, &c, 1, 0) == 1 && c != '#') data += c;
            char cs[2];
            if (recv(fd_, cs, 2, MSG_WAITALL) != 2) return "";
            send_raw("+");
            return data;
        }
        return "";
    }

  private:
    int fd_ = -1;
    bool ok_ = false;
};

TEST(PlatformGdb, InterruptARunningTargetThenKill) {
    auto d = scratch("gdb-interrupt");
    // `idle` sleeps in wfi for ever: only the debugger can stop it.
    Background iss(
        "iss --elf " + std::string(CANOPY_FIRMWARE_DIR) + "/idle.elf --gdb 0 --quiet --out " + d,
        d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0);
    Rsp gdb(port);
    ASSERT_TRUE(gdb.ok());
    gdb.send_packet("?");
    EXPECT_EQ(gdb.reply().rfind("T02", 0), 0u);  // halted at reset
    gdb.send_packet("p20");                      // pc at reset: the ELF's entry, 0
    EXPECT_EQ(gdb.reply(), "00000000");
    gdb.send_packet("c");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gdb.send_raw("\x03");
    EXPECT_EQ(gdb.reply().rfind("T02thread:1;", 0), 0u);  // stopped by the interrupt
    gdb.send_packet("qfThreadInfo");
    EXPECT_EQ(gdb.reply(), "m1");
    gdb.send_packet("m10000,4");  // DMEM is readable while stopped
    EXPECT_EQ(gdb.reply().size(), 8u);
    gdb.send_packet("k");
    EXPECT_EQ(iss.wait_exit(30), 1) << "kill ends the simulation";
    // Said as what happened, not as a core gone idle.
    const std::string err = read_text(iss.err);
    EXPECT_NE(err.find("idle.elf: killed by the debugger at pc 0x"), std::string::npos) << err;
    EXPECT_EQ(err.find("went idle"), std::string::npos) << err;
}

// An experiment's machine under GDB hears Ctrl-C too: it runs in slices with the debugger
// served between them (Platform::simulate), as `canopy run` does.
TEST(PlatformGdb, InterruptAnExperimentsMachineThenKill) {
    auto d = scratch("gdb-exp-interrupt");
    Background exp("exp willow-io --quick --gdb 0 --quiet --out " + d, d);
    const int port = exp.port(30);
    ASSERT_GT(port, 0) << read_text(exp.err);
    Rsp gdb(port);
    ASSERT_TRUE(gdb.ok());
    gdb.send_packet("?");
    EXPECT_EQ(gdb.reply().rfind("T02", 0), 0u);  // halted at reset
    gdb.send_packet("c");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gdb.send_raw("\x03");
    EXPECT_EQ(gdb.reply().rfind("T02", 0), 0u);  // stopped by the interrupt, mid-experiment
    gdb.send_packet("qfThreadInfo");
    EXPECT_EQ(gdb.reply().rfind("m", 0), 0u);  // every SPU a thread
    gdb.send_packet("k");
    EXPECT_EQ(exp.wait_exit(60), 1) << read_text(exp.err);
    // Said as what happened; the experiment builds no further machine.
    const std::string err = read_text(exp.err);
    EXPECT_NE(err.find("canopy: killed by the debugger at "), std::string::npos) << err;
    EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
}

// One debugger at a time; a packet past the advertised PacketSize ends that connection (and
// the program runs on, as after a detach) instead of growing without bound.
TEST(PlatformGdb, ASecondDebuggerIsRefusedAndAnOversizedPacketDropsTheConnection) {
    auto d = scratch("gdb-hostile");
    const std::string elf = std::string(CANOPY_FIRMWARE_DIR) + "/gdb_target.elf";
    Background iss("iss --elf " + elf + " --gdb 0 --quiet --out " + d, d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0);
    Rsp first(port);
    ASSERT_TRUE(first.ok());
    first.send_packet("qSupported:swbreak+");
    EXPECT_NE(first.reply().find("PacketSize=4000;"), std::string::npos);
    {
        Rsp second(port);
        ASSERT_TRUE(second.ok());
        second.send_packet("qSupported");
        EXPECT_EQ(second.reply(), "E.canopy: another debugger is attached to this target");
    }
    first.send_packet("p20");  // the first session goes on
    EXPECT_EQ(first.reply(), "00000000");
    // 64 MiB without a '#': refused at 16 KiB, at once.
    const auto t0 = std::chrono::steady_clock::now();
    first.send_raw("$" + std::string(64 << 20, 'a'));
    EXPECT_EQ(iss.wait_exit(30), 15) << "the program runs on to its end: " << read_text(iss.err);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
    const std::string err = read_text(iss.err);
    EXPECT_NE(err.find("refused a second GDB connection"), std::string::npos) << err;
    EXPECT_NE(err.find("longer than the 16384 bytes the stub accepts"), std::string::npos) << err;
}

// A program with no trap handler stops in the debugger as a host program would: SIGILL.
TEST(PlatformGdb, ATrapLoopStopsWithTheFaultsSignal) {
    auto d = scratch("gdb-trap-loop");
    Background iss("iss --elf " + std::string(CANOPY_FIRMWARE_DIR) +
                       "/trap_loop_unmapped.elf --gdb 0 --quiet --out " + d,
                   d);
    const int port = iss.port(20);
    ASSERT_GT(port, 0);
    Rsp gdb(port);
    ASSERT_TRUE(gdb.ok());
    gdb.send_packet("c");
    EXPECT_EQ(gdb.reply(), "T04thread:1;");  // the handler's own illegal instruction
    gdb.send_packet("p383");                 // mcause: CSR 0x342 is register 0x41 + 0x342
    EXPECT_EQ(gdb.reply(), "02000000");
    gdb.send_packet("k");
    EXPECT_NE(iss.wait_exit(30), -1);
}

// The whole platform under GDB, as a firmware engineer debugs SPU-OS beside the host: `canopy
// run --gdb` on the default scenario, GDB started with the gdbinit the run wrote (SPU-OS and every
// installed app's symbols). Every SPU is a thread; a breakpoint in SPU-OS's RPC dispatch on spu3,
// conditional on a Base-IO request, stops the platform while the host does Base-IO; the trap CSRs
// and the segment registers are readable; stepi over the mret that enters the app lands on the
// app's first instruction in user mode; continue runs to the end. The stops take no simulated
// time, so the run's report and stats.json are byte-identical to a run without the debugger.
TEST(PlatformGdb, TheWholePlatformUnderGdbStopsAtAnRpcAndChangesNoResult) {
    ASSERT_TRUE(have_gdb());
    auto d = scratch("gdb-platform");
    const canopy_test::Run plain = run_canopy("run --quiet --out " + d + "/plain", d);
    ASSERT_EQ(plain.status, 0) << plain.err;
    Background run("run --quiet --gdb 0 --out " + d + "/gdb", d);
    ASSERT_GT(run.port(60), 0) << read_text(run.err);
    const std::string gdbinit = read_text(d + "/gdb/gdbinit");
    for (const char* elf : {"spu_os.elf", "app_base_io.elf", "app_direct_io.elf", "app_kv.elf"})
        EXPECT_NE(gdbinit.find(elf), std::string::npos) << gdbinit;
    const std::string script = d + "/session.gdb";
    std::ofstream(script) << "set pagination off\n"
                             "info threads\n"
                             "break spu_os_run_handler thread 4\n"
                             // app 1 is Base-IO (WillowStackConfig::base_io_app)
                             "condition 1 (spu_os_rpc.h.rpc_id >> 8) == 1\n"
                             "continue\n"
                             "printf \"app=%d\\n\", spu_os_rpc.h.rpc_id >> 8\n"
                             "info registers mcause\n"
                             "printf \"data segment %x+%x\\n\", $seg_data_base, $seg_data_size\n"
                             "delete\n"
                             "break *spu_os_mret\n"
                             "continue\n"
                             "printf \"mret to %x\\n\", $mepc\n"
                             "stepi\n"
                             "printf \"pc=%x priv=%d\\n\", $pc, $priv\n"
                             "delete\n"
                             "continue\n";
    const GdbRun gdb = gdb_batch(d, {d + "/gdb/gdbinit", script}, 300);
    const std::string& log = gdb.log;
    EXPECT_EQ(gdb.status, 0) << log;
    for (int i = 0; i < 8; ++i)
        EXPECT_NE(log.find("Thread " + std::to_string(i + 1) + " \"spu" + std::to_string(i) + "\""),
                  std::string::npos)
            << log;
    EXPECT_NE(log.find("Thread 4 \"spu3\" hit Breakpoint 1, spu_os_run_handler"), std::string::npos)
        << log;
    EXPECT_NE(log.find("app=1\n"), std::string::npos) << log;
    // SPU-OS serves requests in machine mode; the last trap it took was the ecall with which the
    // previous handler returned to it from user mode (mcause 8).
    EXPECT_NE(log.find("mcause         0x8"), std::string::npos) << log;
    // Base-IO runs in its own data slot, which the segment registers open (nonzero size).
    const std::regex seg("data segment ([0-9a-f]+)\\+([0-9a-f]+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(log, m, seg)) << log;
    EXPECT_NE(m[2], "0") << log;
    // stepi over the mret: at mepc, in user mode (0).
    const std::regex mret("mret to ([0-9a-f]+)\n");
    ASSERT_TRUE(std::regex_search(log, m, mret)) << log;
    EXPECT_NE(log.find("pc=" + m[1].str() + " priv=0\n"), std::string::npos) << log;
    EXPECT_NE(log.find("exited normally"), std::string::npos) << log;
    EXPECT_EQ(run.wait_exit(120), 0) << read_text(run.err);
    EXPECT_EQ(read_text(d + "/canopy.out"), plain.out);
    EXPECT_EQ(read_text(d + "/gdb/stats.json"), read_text(d + "/plain/stats.json"));
}

// Scheduler locking (`set scheduler-locking on`: vCont names one thread): only that SPU runs;
// the others stay where they stopped (here at reset) and say nothing. Before, an SPU held since
// reset reported a stop of its own (SIGINT) as soon as the platform ran on, and GDB's view broke.
TEST(PlatformGdb, SchedulerLockingRunsOneSpuWhileTheOthersStayStopped) {
    ASSERT_TRUE(have_gdb());
    auto d = scratch("gdb-locking");
    Background run(std::string("run --quiet --gdb 0 ") + canopy_test::kSmall + " --out " + d, d);
    ASSERT_GT(run.port(60), 0) << read_text(run.err);
    const std::string script = d + "/session.gdb";
    std::ofstream(script) << "set pagination off\n"
                             "set scheduler-locking on\n"
                             "break spu_os_kernel_rpc thread 1\n"
                             "continue\n"
                             "info threads\n"
                             "thread 2\n"
                             "printf \"spu1 pc=%x\\n\", $pc\n"
                             "delete\n"
                             "set scheduler-locking off\n"
                             "continue\n";
    const GdbRun gdb = gdb_batch(d, {d + "/gdbinit", script}, 300);
    const std::string& log = gdb.log;
    EXPECT_EQ(gdb.status, 0) << log;
    EXPECT_NE(log.find("Thread 1 \"spu0\" hit Breakpoint 1, spu_os_kernel_rpc"), std::string::npos)
        << log;
    EXPECT_EQ(log.find("SIGINT"), std::string::npos) << log;
    EXPECT_NE(log.find("(spu1, machine mode, stopped)"), std::string::npos) << log;
    EXPECT_NE(log.find("spu1 pc=0\n"), std::string::npos) << log;  // still at its reset vector
    EXPECT_NE(log.find("exited normally"), std::string::npos) << log;
    EXPECT_EQ(run.wait_exit(120), 0) << read_text(run.err);
}

// --gdb on a machine with no SPU firmware, or with a port out of range, is refused up front.
TEST(PlatformGdb, GdbWithNothingToDebugIsRefused) {
    auto d = scratch("gdb-refused");
    canopy_test::Run r = run_canopy("run --gdb 70000 --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--gdb"), std::string::npos) << r.err;
    r = run_canopy("run --gdb 0 --set scenario.willow=false --set ssd.firmware= --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("boots no SPU firmware"), std::string::npos) << r.err;
    r = run_canopy("exp pcie-latency --quick --gdb 0 --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("runs no SPU firmware"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("willow-io"), std::string::npos) << r.err;  // what can be debugged
}

#endif
