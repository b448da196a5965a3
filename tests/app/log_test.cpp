// Logs by component as a user sets them: the SPU consoles log at info (shown by default,
// silenced by --quiet, kept whole in OUT/console/spuN.log whatever the level), `--log` rules
// turn one module up or down, every line carries its simulated time and its module's name, bad
// rules are refused before anything runs, and no level changes what the run simulates.
#include <gtest/gtest.h>

#include <regex>

#include "../canopy_process.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"

using namespace canopy_test;

namespace {

// Writes into DIR/`out`; the process's stdout and stderr go to DIR.
Run run_small(const std::string& dir, const std::string& out, const std::string& extra) {
    return run_canopy(std::string("run ") + kSmall + " --out " + dir + out + " " + extra, dir);
}

bool has(const std::string& text, const std::string& regex) {
    return std::regex_search(text, std::regex(regex));
}

// SPU-OS's boot line of SPU n (of the two kSmall has), without the time, and as the log prints it.
std::string boot_line(int n) {
    return "spu-os " + std::to_string(SPU_OS_ABI_VERSION) + ": node " + std::to_string(n) +
           " of 2, ";
}
std::string boot(int n) {
    return R"(\d+\.\d{6} us device\.ssd\.spu)" + std::to_string(n) + ": " + boot_line(n);
}

}  // namespace

TEST(PlatformLogs, ConsolesAndModulesLogByLevelAndNoLevelChangesTheRun) {
    auto d = scratch("logs");
    const canopy_test::Run plain = run_small(d, "/plain", "");
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_TRUE(has(plain.out, boot(0))) << plain.out.substr(0, 600);
    EXPECT_TRUE(has(plain.out, boot(1))) << plain.out.substr(0, 600);
    EXPECT_EQ(slurp(d + "/plain/console/spu1.log").rfind(boot_line(1), 0), 0u);

    const canopy_test::Run quiet = run_small(d, "/quiet", "--quiet");
    ASSERT_EQ(quiet.status, 0) << quiet.err;
    EXPECT_EQ(quiet.out.find("spu-os"), std::string::npos) << quiet.out.substr(0, 600);
    // Silenced, still kept whole.
    EXPECT_EQ(slurp(d + "/quiet/console/spu0.log"), slurp(d + "/plain/console/spu0.log"));

    const canopy_test::Run one = run_small(d, "/one", "--quiet --log 'device.ssd.spu1=info'");
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_FALSE(has(one.out, boot(0))) << one.out.substr(0, 600);
    EXPECT_TRUE(has(one.out, boot(1))) << one.out.substr(0, 600);

    // Turned up: every command of flash controller 0, with its outcome; nobody else's.
    const canopy_test::Run flash =
        run_small(d, "/flash", "--quiet --log 'device.ssd.flash0=debug'");
    ASSERT_EQ(flash.status, 0) << flash.err;
    EXPECT_TRUE(has(
        flash.out,
        R"(\d+\.\d{6} us device\.ssd\.flash0: \w+ die \d+ block \d+ page \d+: \w+ after [0-9.]+ ns)"))
        << flash.out.substr(0, 600);
    EXPECT_FALSE(has(flash.out, R"(device\.ssd\.flash1: )"));

    // Everything at debug (every trap the SPU cores take, too): the same run.
    const canopy_test::Run all = run_small(d, "/all", "--quiet --log '*=debug'");
    ASSERT_EQ(all.status, 0) << all.err;
    EXPECT_TRUE(has(all.out, R"(device\.ssd\.spu0\.core: ecall_u at pc 0x)"))
        << all.out.substr(0, 600);
    for (const char* run : {"/quiet", "/one", "/flash", "/all"})
        EXPECT_EQ(slurp(d + run + "/stats.json"), slurp(d + "/plain/stats.json")) << run;
}

TEST(PlatformLogs, BadRulesAreRefusedBeforeTheRun) {
    auto d = scratch("logs-bad");
    for (const char* rule : {"device.ssd.spu0", "device.ssd.spu0=loud", "=debug"}) {
        const canopy_test::Run r = run_small(d, "/bad", std::string("--log '") + rule + "'");
        EXPECT_EQ(r.status, 2) << rule;
        EXPECT_NE(r.err.find("--log"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("PATTERN=LEVEL"), std::string::npos) << r.err;
        EXPECT_EQ(r.out.find("simulated"), std::string::npos) << r.out;
    }
    const canopy_test::Run none =
        run_small(d, "/bad", "--log 'device.ssd.spu9=debug'");  // kSmall has two SPUs
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.err.find("matches no module"), std::string::npos) << none.err;
}
