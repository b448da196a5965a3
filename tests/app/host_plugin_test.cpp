// Host programs built outside Canopy (include/canopy/host_program.h, issue #30 item 1): `canopy
// run --host-program CORE=PATH.so[:SYMBOL]` loads a shared library built in C against the public
// header alone (tests/app/plugins/) and runs it on a simulated host core beside the default
// scenario; its memory goes through the core's MMU and caches, a fault stops only it, and a
// library canopy cannot run is refused before anything is built.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../canopy_process.hpp"

namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;
using nlohmann::json;

const std::string kPlugins = CANOPY_TEST_PLUGINS;
// The default scenario holds host cores 0-3 (dma-check, Willow's kernel and user, the lock
// table): a fifth core is free.
const std::string kMachine = std::string(canopy_test::kSmall) + " --set host.cores=5";

TEST(HostPlugin, RunsOnAFreeCoreThroughItsMmuAndCaches) {
    const std::string d = scratch("plugin-run");
    auto r = run_canopy("run --out " + d + "/out " + kMachine + " --host-program 4=" + kPlugins +
                            "/memcheck.so --host-arg 4096",
                        d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("host.core4: checked 4096 bytes, 0 wrong"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("host.core4: on host.core4 of 5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Host program " + kPlugins +
                         "/memcheck.so (canopy_host_main) on host.core4: exit 0 after"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("host program 4=" + kPlugins + "/memcheck.so ok"), std::string::npos)
        << r.out;
    const json s = json::parse(slurp(d + "/out/stats.json"));
    const json& p = s["modules"]["host.core4.program"];
    EXPECT_EQ(p["exit_code"], 0);
    EXPECT_GE(p["time"].get<double>(), 1000.0);  // it computed 1 us
    EXPECT_EQ(p["lines"], 2);
    // 64 stores and 64 loads of 64 B, each through the core (and the atomics).
    const json& core = s["modules"]["host.core4"];
    EXPECT_GE(core["loads"].get<double>(), 64);
    EXPECT_GE(core["stores"].get<double>(), 64);
    EXPECT_GE(core["atomics"].get<double>(), 2);
    EXPECT_NE(slurp(d + "/out/console/host.core4.log").find("checked 4096 bytes, 0 wrong"),
              std::string::npos);
    // The same run again: the same statistics, byte for byte.
    auto again = run_canopy("run --out " + d + "/again " + kMachine +
                                " --host-program 4=" + kPlugins + "/memcheck.so --host-arg 4096",
                            d);
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(slurp(d + "/out/stats.json"), slurp(d + "/again/stats.json"));
}

// A fault ends the program where it faulted (the line after never prints); the run says so and
// fails, the rest of the platform still runs to its end.
TEST(HostPlugin, AFaultStopsOnlyTheProgram) {
    const std::string d = scratch("plugin-fault");
    auto r = run_canopy(
        "run --out " + d + "/out " + kMachine + " --host-program 4=" + kPlugins + "/fault.so", d);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.out.find("host.core4: before the fault"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("unreachable"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("on host.core4: FAULT: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Willow ok"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("/fault.so FAILED"), std::string::npos) << r.out;
}

// What canopy cannot run is refused before anything is built: status 2, the option and the
// library named, nothing written.
TEST(HostPlugin, WhatCannotRunIsRefusedFirst) {
    const std::string d = scratch("plugin-bad");
    struct Case {
        std::string option, says;
    };
    const std::string memcheck = kPlugins + "/memcheck.so";
    for (const Case& c : std::vector<Case>{
             {"--host-program 4=" + kPlugins + "/nothing.so", "no such file"},
             {"--host-program 4=" + memcheck + ":no_such_entry", "no such symbol"},
             {"--host-program 4=" + kPlugins + "/wrong_abi.so", "ABI version 999"},
             {"--host-program 4=" + kPlugins + "/no_abi.so", "not a Canopy host program"},
             {"--host-program 1=" + memcheck, "Willow scenario's host kernel"},
             {"--host-program 7=" + memcheck, "cores 0..4"},
             {"--host-program four=" + memcheck, "CORE=PATH.so"},
             {"--host-arg 1", "--host-arg 1"},
             {"--host-program 4=" + d, "no such file"}}) {
        const std::string out = d + "/out";
        std::filesystem::remove_all(out);
        auto r = run_canopy("run --out " + out + " " + kMachine + " " + c.option, d);
        EXPECT_EQ(r.status, 2) << c.option << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.option << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(out + "/stats.json")) << c.option;
    }
}

}  // namespace
