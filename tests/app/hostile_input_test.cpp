// Input a careless or hostile user gives (issue "Every input surface hardened"): each case is a
// clear error naming the input and the place, exit status 2, before anything is simulated and
// without writing any output; never a crash, a hang, a wrap-around or memory without bound.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../canopy_process.hpp"

using namespace canopy_test;

namespace {

// Status 2, one line on stderr holding every piece of `expect`, nothing simulated.
void expect_refused(const Run& r, std::initializer_list<std::string> expect) {
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    for (const auto& e : expect)
        EXPECT_NE(r.err.find(e), std::string::npos) << e << " in " << r.err;
    EXPECT_EQ(r.out.find("simulated"), std::string::npos) << r.out;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

// -1 used to become 2^32-1 threads (a segfault) or 2^64-1 instructions (no limit at all).
TEST(HostileInput, NegativeAndOversizedNumbersAreRefusedNotWrapped) {
    const std::string d = scratch("hostile-numbers");
    const std::string trace = source("traces/block/random_4k.csv");
    for (const char* bad : {"-1", "4294967295", "99999999999999999999", "2.5", "+3", ""}) {
        const canopy_test::Run r = run_canopy(
            "replay --trace " + trace + " --threads '" + std::string(bad) + "' --out " + d, d);
        expect_refused(r, {"canopy replay", "--threads"});
    }
    expect_refused(run_canopy("replay --trace " + trace + " --max -1 --out " + d, d),
                   {"--max", "whole number"});
    expect_refused(run_canopy("run --seed -1 --out " + d, d), {"canopy run", "--seed"});
    expect_refused(run_canopy("iss --elf x.elf --max-instructions -1 --out " + d, d),
                   {"--max-instructions"});
    expect_refused(run_canopy("iss --elf x.elf --gdb 65536 --out " + d, d),
                   {"--gdb 65536", "out of range [0, 65535]"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
}

// Every file a user names is a regular file (or a pipe) of a bounded size.
TEST(HostileInput, FilesThatAreNotFilesAreRefused) {
    const std::string d = scratch("hostile-files");
    expect_refused(run_canopy("run --config /dev/zero --out " + d, d),
                   {"/dev/zero", "not a regular file"});
    expect_refused(run_canopy("flash --script /dev/zero --out " + d, d),
                   {"/dev/zero", "not a regular file"});
    expect_refused(run_canopy("flash --script " + d + " --out " + d, d),
                   {d, "is a directory, not a command script"});
    expect_refused(run_canopy("iss --elf /dev/zero --out " + d, d),
                   {"/dev/zero", "not a regular file"});
    expect_refused(run_canopy("replay --trace /dev/zero --out " + d, d),
                   {"/dev/zero", "not a regular file"});
    expect_refused(run_canopy("run --config /proc/self/mem --out " + d, d), {"/proc/self/mem"});
    // A data file of a script: named with the script's line.
    write_file(d + "/dir.fcs", "program ch0.die0.plane0.block1.wl0 data=file:/dev/zero\n");
    expect_refused(run_canopy("flash --script " + d + "/dir.fcs --out " + d, d),
                   {"dir.fcs: line 1", "/dev/zero", "not a regular file"});
    write_file(d + "/dir2.fcs", "program ch0.die0.plane0.block1.wl0 data=file:" + d + "\n");
    expect_refused(run_canopy("flash --script " + d + "/dir2.fcs --out " + d, d),
                   {"dir2.fcs: line 1", "is a directory"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
}

TEST(HostileInput, ATooLargeConfigIsRefusedBeforeItIsRead) {
    const std::string d = scratch("hostile-large");
    write_file(d + "/big.json", "{\"sim\": {\"seed\": 1}}" + std::string(5 << 20, ' '));
    expect_refused(run_canopy("config --dump --config " + d + "/big.json", d),
                   {"big.json", "larger than 4 MiB"});
}

// The JSON reader stops at a NUL; what followed used to pass unread.
TEST(HostileInput, ConfigBytesAfterANulAreRefused) {
    const std::string d = scratch("hostile-nul");
    write_file(d + "/nul.json", std::string("{\"sim\": {\"seed\": 7}}\0garbage", 29));
    expect_refused(run_canopy("config --dump --config " + d + "/nul.json", d),
                   {"nul.json", "byte 20", "NUL"});
}

// Quadratic memory in the depth used to make a 300 KB file cost 4 GB.
TEST(HostileInput, DeeplyNestedConfigIsRefusedAtTheDepthLimit) {
    const std::string d = scratch("hostile-deep");
    const int levels = 60000;
    std::string text;
    for (int i = 0; i < levels; ++i) text += "{\"a\":";
    text += "1";
    for (int i = 0; i < levels; ++i) text += "}";
    write_file(d + "/deep.json", text);
    expect_refused(run_canopy("config --dump --config " + d + "/deep.json", d),
                   {"deep.json", "nested deeper than 16 levels"});
}

// A JSON value has the parameter's JSON type: "7" is text, not a number.
TEST(HostileInput, ConfigValuesOfTheWrongJsonTypeAreRefused) {
    const std::string d = scratch("hostile-types");
    auto refused = [&](const std::string& json, std::initializer_list<std::string> expect) {
        write_file(d + "/c.json", json);
        expect_refused(run_canopy("config --dump --config " + d + "/c.json", d), expect);
    };
    refused(R"({"sim": {"seed": "7"}})", {"key sim.seed", "expected an integer, not a string"});
    refused(R"({"nand": {"functional": 1}})", {"key nand.functional", "expected true or false"});
    refused(R"({"nand": {"functional": "false"}})", {"key nand.functional", "true or false"});
    refused(R"({"scenario": {"host_program": 5}})", {"key scenario.host_program", "a string"});
    // JSON has no hex numbers: an integer may be written as a hex string, and --set stays text.
    write_file(d + "/hex.json", R"({"iss": {"ram_base": "0x90000000"}})");
    canopy_test::Run r = run_canopy("config --dump --iss --config " + d + "/hex.json", d);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("2415919104"), std::string::npos) << r.out;  // 0x90000000
    r = run_canopy("config --dump --set sim.seed=7 --set nand.functional=false", d);
    EXPECT_EQ(r.status, 0) << r.err;
}

// A directory the run cannot write used to be found only after the whole simulation.
TEST(HostileInput, AnUnwritableOutputDirectoryIsFoundBeforeSimulating) {
    const std::string d = scratch("hostile-out");
    for (const std::string& cmd :
         {std::string("run"), "flash --script " + source("traces/flash/basic.fcs")}) {
        const canopy_test::Run r = run_canopy(cmd + " --out /proc/self", d);
        expect_refused(r, {"--out", "/proc/self", "cannot write there"});
    }
    expect_refused(run_canopy("exp atomics --quick --out /proc/self", d),
                   {"--out", "/proc/self", "cannot write there"});
    write_file(d + "/a-file", "");
    expect_refused(run_canopy("run --out " + d + "/a-file", d),
                   {"--out", "a-file", "cannot create the directory"});
}

TEST(HostileInput, ScriptLinesTheirCommandsDoNotTakeAreRefused) {
    const std::string d = scratch("hostile-script");
    auto refused = [&](const std::string& script, std::initializer_list<std::string> expect) {
        write_file(d + "/s.fcs", script);
        expect_refused(run_canopy("flash --script " + d + "/s.fcs --out " + d, d), expect);
    };
    refused("status ch0.die0 garbage\n", {"s.fcs: line 1", "status: unexpected 'garbage'"});
    refused("reset ch0.die0\nxor ch0.die0.plane0 more\n", {"line 2", "xor: unexpected 'more'"});
    refused("get-feature ch0.die0 0x01 0x02\n", {"line 1", "get-feature: unexpected '0x02'"});
    // More hex than a page holds (Table 1: 16 KiB + spare).
    refused("program ch0.die0.plane0.block1.wl0 data=hex:" + std::string(2 * 40000, 'a') + "\n",
            {"line 1", "data=hex", "more than a page"});
    // 100 MWS operands do not fit one command sequence: said at the line, not an internal error.
    std::string mws = "mws ch0.die0.plane0";
    for (int b = 0; b < 100; ++b) mws += " block" + std::to_string(b) + ":0";
    refused(mws + "\n", {"line 1", "mws: too many operands for one command"});
    refused("# a comment\n" + std::string(2 << 20, 'x') + "\n",
            {"line 2", "longer than 1048576 characters"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
}

TEST(HostileInput, ABlockTraceWithoutLineEndsIsRefusedAtTheLineLimit) {
    const std::string d = scratch("hostile-trace");
    write_file(d + "/t.csv", std::string(100000, '7'));
    expect_refused(run_canopy("replay --trace " + d + "/t.csv --out " + d, d),
                   {"t.csv: line 1", "longer than 4096 characters"});
}

// Keys that contradict the machine or each other used to be clamped or skipped in silence
// (Willow "skipped", a 9th die of 8 ignored, a reset pc nothing started from).
TEST(HostileInput, ConfigurationsTheMachineCannotRunAreRefused) {
    const std::string d = scratch("hostile-config");
    auto refused = [&](const std::string& set, std::initializer_list<std::string> expect) {
        expect_refused(run_canopy("run --set '" + set + "' --out " + d, d), expect);
    };
    refused("scenario.dies=9", {"scenario.dies=9", "a channel has 8 dies"});
    refused("scenario.operands=49", {"scenario.operands=49", "a block has 48"});
    refused("scenario.firmware_dir=/nonexistent",
            {"scenario.firmware_dir=/nonexistent", "/nonexistent/spu_os.elf is not a file"});
    refused("scenario.firmware_dir=", {"scenario.firmware_dir=", "is empty"});
    refused("ssd.spu.core.reset_pc=0xdead0000",
            {"spu_os.elf", "entry point 0x0 is not the SPU's reset pc 0xdead0000"});
    refused("host.cores=1", {"host.cores=1", "at least 3 cores", "scenario.willow=false"});
    refused("host.cores=3", {"host.cores=3", "at least 4 cores", "lock_table_locks=0"});
    // One wordline per block: 2.5 MB of store per SPU cannot hold Willow's 13 MB of regions.
    expect_refused(run_canopy("run --set nand.geometry.wordlines_per_block=1 --set "
                              "scenario.operands=1 --out " +
                                  d,
                              d),
                   {"nand.geometry", "too little for Willow's"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
    // Said the other way round, each runs: a machine without those parts.
    const canopy_test::Run ok = run_canopy(
        "run --set host.cores=1 --set scenario.willow=false --set scenario.lock_table_locks=0 "
        "--set scenario.dies=1 --out " +
            d,
        d);
    EXPECT_EQ(ok.status, 0) << ok.err;
}

// A request bigger than what the replay can address used to allocate its size (1 TiB: an
// internal error) or write past the device (a firmware fault); a timestamp gap beyond what
// simulated time can count used to run for ever.
TEST(HostileInput, ReplayRequestsAndGapsBeyondTheMachineAreRefused) {
    const std::string d = scratch("hostile-replay");
    for (const char* size : {"1073741824", "1099511627776", "9223372036854775808"}) {
        write_file(d + "/t.csv",
                   "128166372000000000,s,0,Read,0,4096,100\n"
                   "128166372000000001,s,0,Write,0," +
                       std::string(size) + ",100\n");
        expect_refused(run_canopy("replay --trace " + d + "/t.csv --out " + d, d),
                       {"t.csv: line 2", "a request of " + std::string(size) + " B",
                        "larger than the replayed region"});
    }
    write_file(d + "/t.csv", "0,s,0,Read,0,4096,100\n100000000000000000,s,0,Read,0,4096,100\n");
    expect_refused(run_canopy("replay --timed --trace " + d + "/t.csv --out " + d, d),
                   {"t.csv: line 2", "more than 200 days after the first request"});
    EXPECT_FALSE(std::filesystem::exists(d + "/stats.json"));
}
