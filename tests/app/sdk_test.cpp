// Bring your own (issue #30, docs/sdk.md): SSD Apps built with the SDK and installed with
// `canopy run --app`, TLM-2.0 models loaded with `--model` where they attach (a BAR0 window, a
// ring node, a flash channel), host programs with `--host-program`; and the examples of
// examples/, built against an installed Canopy and run together in one platform.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "../canopy_process.hpp"
#include "../gdb_session.hpp"
#include "examples/count_records/count_records_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"

#ifdef CANOPY_FIRMWARE_DIR

namespace {

using canopy_test::run_canopy;
using canopy_test::run_program;
using canopy_test::scratch;
using canopy_test::slurp;
using canopy_test::source;
using nlohmann::json;

const std::string kFirmware = CANOPY_FIRMWARE_DIR;
const std::string kPlugins = CANOPY_TEST_PLUGINS, kModels = CANOPY_TEST_MODELS;
// The default scenario holds host cores 0-3: a fifth is free for a program from outside.
const std::string kMachine = std::string(canopy_test::kSmall) + " --set host.cores=5";
constexpr unsigned kSpus = 2;  // kSmall's

// A run refused before anything is built: status 2, one line naming the input and the reason.
void expect_refused(const std::string& args, const std::string& says) {
    const std::string d = scratch("sdk-refused");
    const auto r = run_canopy(args + " --quiet --out " + d + "/out", d);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

std::string shell(const std::string& cmd, const std::string& log) {
    const int s = std::system(("(" + cmd + ") >" + log + " 2>&1").c_str());
    return WIFEXITED(s) && WEXITSTATUS(s) == 0 ? "" : slurp(log);
}

// Installs the build into a prefix, builds the three examples against it with their own
// CMakeLists (cmake -S examples/NAME), runs them together on the installed canopy: the SSD App
// on every SPU, the CRC unit on the ring, the host program on host.core4. Each SPU's count and
// CRC must be the host's own, and a read past the granted region refused. Then the same run
// under GDB stops in the app's handler.
TEST(BringYourOwn, TheExamplesBuildAgainstAnInstalledCanopyAndRunTogether) {
    const std::string d = scratch("sdk-examples"), prefix = d + "/prefix";
    ASSERT_EQ(shell("cmake --install " + std::string(CANOPY_BINARY_DIR) + " --prefix " + prefix,
                    d + "/install.log"),
              "");
    const std::string found = " -DCMAKE_PREFIX_PATH=" + prefix;
    for (const auto& [name, extra] :
         {std::pair<std::string, std::string>{
              "count_records",
              " -DCMAKE_TOOLCHAIN_FILE=" + prefix + "/share/canopy/sdk/toolchain-rv32.cmake"},
          {"crc_accelerator", ""},
          {"count_client", ""}}) {
        const std::string b = d + "/" + name;
        ASSERT_EQ(shell("cmake -S " + source("examples/" + name) + " -B " + b + found + extra +
                            " && cmake --build " + b,
                        d + "/" + name + ".log"),
                  "")
            << name;
    }
    const std::string canopy = prefix + "/bin/canopy";
    const std::string together = kMachine + " --model " + d +
                                 "/crc_accelerator/libcrc_accelerator.so --app count_records=" + d +
                                 "/count_records/count_records.elf --host-program 4=" + d +
                                 "/count_client/libcount_client.so";
    const auto r = run_program(canopy, "run --trace --out " + d + "/out " + together, d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    // host.core4: SPU s: 256 records, key 3 in W (app: A, T us), CRC-32 C (CRC unit: U), past
    // the region: 0xP; right
    const std::regex line(
        "host\\.core4: SPU ([0-9]+): 256 records, key 3 in ([0-9]+) \\(app: ([0-9]+), [0-9.]+ "
        "us\\), CRC-32 ([0-9a-f]{8}) \\(CRC unit: ([0-9a-f]{8})\\), past the region: 0x([0-9a-f]+)"
        "; right");
    unsigned spus = 0;
    for (std::sregex_iterator i(r.out.begin(), r.out.end(), line), end; i != end; ++i, ++spus) {
        const std::smatch& m = *i;
        EXPECT_EQ(std::stoul(m[1]), spus);
        EXPECT_EQ(m[2], m[3]) << m[0];  // the app's count is the host's
        // 256 records over 8 keys: some, not all, have key 3.
        EXPECT_GT(std::stoul(m[2]), 0u);
        EXPECT_LT(std::stoul(m[2]), 256u);
        EXPECT_EQ(m[4], m[5]) << m[0];  // the CRC unit's CRC-32 is the host's
        EXPECT_EQ(std::stoul(m[6], nullptr, 16), CR_ERROR | SPU_OS_E_PERMISSION) << m[0];
    }
    EXPECT_EQ(spus, kSpus) << r.out;
    EXPECT_NE(r.out.find("host.core4: 2 SPUs, 0 wrong"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SSD App count_records (" + d +
                         "/count_records/count_records.elf): app 16 in slot 5 of every SPU"),
              std::string::npos)
        << r.out;
    // The default scenario's own parts still ran (the app took Caching's slot, which it does not
    // use).
    EXPECT_NE(r.out.find("Summary: flash ok, host program ok, Willow ok, lock table ok, host "
                         "program 4="),
              std::string::npos)
        << r.out;
    const json s = json::parse(slurp(d + "/out/stats.json"));
    const json& crc = s["modules"]["model.crc"];
    EXPECT_EQ(crc["requests"], kSpus);  // one CR_CHECKSUM per SPU
    EXPECT_EQ(crc["bytes"], kSpus * 256 * sizeof(record));
    // Set-up plus 4 KiB at 4 B/ns, per request (the model's documented defaults).
    EXPECT_DOUBLE_EQ(crc["busy"].get<double>(), kSpus * (20.0 + 256 * sizeof(record) / 4.0));
    EXPECT_EQ(s["modules"]["host.core4.program"]["exit_code"], 0);
    EXPECT_EQ(s["config"]["model.crc.bytes_per_ns"], "4");
    // Its trace track: a slice per request, in the "model" category.
    const json t = json::parse(slurp(d + "/out/trace.json"));
    unsigned slices = 0;
    for (const json& e : t["traceEvents"])
        slices += e["ph"] == "X" && e["cat"] == "model" && e["name"] == "crc32";
    EXPECT_EQ(slices, kSpus);
    // Its keys are in the configuration.
    const auto dump = run_program(
        canopy, "config --dump --model " + d + "/crc_accelerator/libcrc_accelerator.so", d);
    ASSERT_EQ(dump.status, 0) << dump.err;
    for (const char* key : {"model.crc.node", "model.crc.setup_ns", "model.crc.bytes_per_ns"})
        EXPECT_NE(dump.out.find(key), std::string::npos) << key << "\n" << dump.out;

    // Under GDB: the app's symbols are in the gdbinit; a breakpoint in its CR_COUNT handler
    // stops the platform there, the request's header readable; the run then ends as before.
    ASSERT_TRUE(canopy_test::have_gdb());
    canopy_test::Background run("run --quiet --gdb 0 --out " + d + "/gdb " + together, d, canopy);
    ASSERT_GT(run.port(60), 0) << slurp(run.err);
    EXPECT_NE(slurp(d + "/gdb/gdbinit").find("count_records.elf"), std::string::npos);
    const std::string script = d + "/session.gdb";
    std::ofstream(script) << "set pagination off\n"
                             "break count_records.c:count\n"
                             "continue\n"
                             "printf \"length=%d rpc=%x\\n\", h->length, h->rpc_id\n"
                             "delete\n"
                             "continue\n";
    const canopy_test::GdbRun gdb = canopy_test::gdb_batch(d, {d + "/gdb/gdbinit", script}, 300);
    EXPECT_EQ(gdb.status, 0) << gdb.log;
    EXPECT_NE(gdb.log.find("hit Breakpoint 1, count"), std::string::npos) << gdb.log;
    // struct cr_count, to app 16 (0x10), handler CR_COUNT.
    char want[64];
    std::snprintf(want, sizeof want, "length=%zu rpc=%x", sizeof(cr_count), 16u << 8 | CR_COUNT);
    EXPECT_NE(gdb.log.find(want), std::string::npos) << gdb.log;
    EXPECT_EQ(run.wait_exit(120), 0) << slurp(run.err);
    EXPECT_EQ(slurp(d + "/gdb/stats.json"), slurp(d + "/out/stats.json"));
}

// The Debian package (make package): what `cmake --install` installs, under /usr, with the
// shared libraries' packages as dependencies; unpacked anywhere, its canopy finds its own
// firmware and runs the default scenario.
TEST(BringYourOwn, TheDebianPackageHoldsTheInstallAndRunsWhereItIsUnpacked) {
    const std::string d = scratch("sdk-deb");
    ASSERT_EQ(shell("cpack -G DEB -B " + d + " --config " + std::string(CANOPY_BINARY_DIR) +
                        "/CPackConfig.cmake",
                    d + "/cpack.log"),
              "");
    std::string deb;
    for (const auto& e : std::filesystem::directory_iterator(d))
        if (e.path().extension() == ".deb") deb = e.path().string();
    ASSERT_FALSE(deb.empty());
    ASSERT_EQ(shell("dpkg-deb -c " + deb + " > " + d + "/contents.txt", d + "/c.log"), "");
    const std::string contents = slurp(d + "/contents.txt");
    for (const char* f :
         {"./usr/bin/canopy", "./usr/share/canopy/firmware/spu_os.elf",
          "./usr/share/canopy/sdk/toolchain-rv32.cmake", "./usr/include/canopy/host_program.h",
          "./usr/include/canopy/platform/user_model.hpp", "/cmake/Canopy/CanopyConfig.cmake"})
        EXPECT_NE(contents.find(f), std::string::npos) << f;
    ASSERT_EQ(shell("dpkg-deb -f " + deb + " Depends > " + d + "/depends.txt", d + "/f.log"), "");
    EXPECT_NE(slurp(d + "/depends.txt").find("libsystemc"), std::string::npos);
    ASSERT_EQ(shell("dpkg-deb -x " + deb + " " + d + "/root", d + "/x.log"), "");
    const auto r = run_program(d + "/root/usr/bin/canopy",
                               "run --quiet --out " + d + "/out " + canopy_test::kSmall, d);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("Willow ok"), std::string::npos) << r.out;
}

// A built-in app's ELF installed as a user app: the kernel puts it in the slot it is linked for
// (Key-Value's), so the scenario's Key-Value session says it was skipped, and the rest runs.
TEST(BringYourOwn, AUserAppTakesItsSlotInPlaceOfTheBuiltInApp) {
    const std::string d = scratch("sdk-displace");
    const auto r = run_canopy(
        "run --out " + d + "/out " + kMachine + " --app mine=" + kFirmware + "/app_kv.elf", d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("SSD App mine (" + kFirmware + "/app_kv.elf): app 16 in slot 0"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Key-Value session: skipped (its app's slot 0 holds the user app mine)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("Atomic-Writes: 8 transfers committed"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("PUT"), std::string::npos) << r.out;
}

TEST(BringYourOwn, AppsTheKernelCannotInstallAreRefusedBeforeAnythingRuns) {
    const std::string run = "run " + kMachine + " ";
    expect_refused(run + "--app x=" + kFirmware + "/none.elf",
                   "x=" + kFirmware + "/none.elf: no such file");
    expect_refused(run + "--app x=" + source("CMakeLists.txt"), "CMakeLists.txt");
    expect_refused(run + "--app x=" + kFirmware + "/selftest.elf", "not an SSD App");
    expect_refused(run + "--app x=" + kFirmware + "/app_base_io.elf",
                   "Base-IO's or Direct-IO's, which the file system needs");
    expect_refused(
        run + "--app a=" + kFirmware + "/app_caching.elf --app b=" + kFirmware + "/app_caching.elf",
        "slot 5 is already a's");
    expect_refused(
        run + "--app a=" + kFirmware + "/app_kv.elf --app a=" + kFirmware + "/app_caching.elf",
        "the name 'a' is given twice");
    expect_refused(run + "--app key-value=" + kFirmware + "/app_kv.elf", "a built-in app's name");
    expect_refused(run + "--app Big=" + kFirmware + "/app_kv.elf", "a-z, 0-9");
    expect_refused(run + "--app " + kFirmware + "/app_kv.elf", "expected NAME=PATH.elf");
    expect_refused(run + "--set scenario.willow=false --app x=" + kFirmware + "/app_kv.elf",
                   "set scenario.willow=true");
    expect_refused(
        run + "--set scenario.app_region_bytes=12288 --app x=" + kFirmware + "/app_kv.elf",
        "scenario.app_region_bytes=12288");
    expect_refused("flash --script " + source("traces/flash/basic.fcs") + " --app x=" + kFirmware +
                       "/app_kv.elf",
                   "a script runs alone");
}

TEST(BringYourOwn, ModelLibrariesAndPlacesCanopyCannotUseAreRefused) {
    const std::string run = "run " + kMachine + " ";
    expect_refused(run + "--model " + kModels + "/none.so", "none.so: no such file");
    expect_refused(run + "--model " + kPlugins + "/memcheck.so", "not a Canopy model library");
    expect_refused(run + "--model " + kModels + "/wrong_version.so",
                   "built against Canopy 0.0.0-other");
    expect_refused(run + "--model " + kModels + "/twice.so", "registers a model 'twice'");
    // Places: BAR0's built-in windows, BAR0's end, a ring node that is taken, a channel.
    const std::string bar = run + "--model " + kModels + "/bar_registers.so ";
    expect_refused(bar + "--set model.scratch.bar_offset=0x1000", "overlaps [0x1000, 0x2000)");
    expect_refused(bar +
                       "--set model.scratch.bar_offset=0x7ff000 --set model.scratch.bar_bytes="
                       "0x2000",
                   "ends past BAR0");
    expect_refused(run + "--model " + kModels + "/crc_accelerator.so --set model.crc.node=1",
                   "model.crc.node=1: that node id is taken");
    expect_refused(run + "--model " + kModels + "/nand_channel.so --set model.slow_nand.channel=2",
                   "no such flash channel");
    // Its own keys are checked like the platform's.
    expect_refused(bar + "--set model.scratch.access_ns=-1", "model.scratch.access_ns");
}

// A model in a BAR0 window, reached from a host program through the core's uncached mapping:
// the ID register holds its configured value, the scratch words what was written; every access
// reached the model.
TEST(BringYourOwn, AModelInABarWindowIsReachedFromAHostProgram) {
    const std::string d = scratch("sdk-bar");
    const auto r = run_canopy("run --out " + d + "/out " + kMachine + " --model " + kModels +
                                  "/bar_registers.so --set model.scratch.id=0x0badcafe "
                                  "--set model.scratch.bar_offset=0x20000 --host-program 4=" +
                                  kPlugins + "/bar_probe.so",
                              d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("host.core4: id 0x0badcafe, 16 words, 0 wrong"), std::string::npos)
        << r.out;
    const json s = json::parse(slurp(d + "/out/stats.json"));
    EXPECT_EQ(s["modules"]["model.scratch"]["reads"], 17);  // the ID, then 16 words
    EXPECT_EQ(s["modules"]["model.scratch"]["writes"], 16);
}

// A different NAND on flash channel 1: the same command script on channels 0 and 1 reads the same
// data, and a read on channel 1 takes the model's tR where channel 0 takes the array's.
TEST(BringYourOwn, AModelOnAFlashChannelServesItsCommands) {
    const std::string d = scratch("sdk-nand");
    const std::string script = d + "/two.fcs";
    std::ofstream(script) << "erase ch0.die0.plane0.block0\n"
                             "program ch0.die0.plane0.block0.wl0 data=fill:A5 mode=slc\n"
                             "read ch0.die0.plane0.block0.wl0\n"
                             "dout ch0.die0.plane0 bytes=16\n"
                             "erase ch1.die0.plane0.block0\n"
                             "program ch1.die0.plane0.block0.wl0 data=fill:A5 mode=slc\n"
                             "read ch1.die0.plane0.block0.wl0\n"
                             "dout ch1.die0.plane0 bytes=16\n";
    const auto r = run_canopy("flash --script " + script + " --out " + d + "/out --model " +
                                  kModels + "/nand_channel.so --set model.slow_nand.channel=1 " +
                                  "--set model.slow_nand.t_read_slc_us=45",
                              d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const std::regex read("read ch([01])\\.die0\\.plane0\\.block0\\.wl0: latency ([0-9.]+) us");
    std::map<int, double> latency;
    for (std::sregex_iterator i(r.out.begin(), r.out.end(), read), end; i != end; ++i)
        latency[std::stoi((*i)[1])] = std::stod((*i)[2]);
    ASSERT_EQ(latency.size(), 2u) << r.out;
    // The same command and bus cycles around a tR of 22.5 us (the array's, Table 1) and 45 us.
    EXPECT_NEAR(latency[1] - latency[0], 45.0 - 22.5, 0.002) << r.out;
    const std::regex sha("sha256 ([0-9a-f]{64})");
    std::vector<std::string> shas;
    for (std::sregex_iterator i(r.out.begin(), r.out.end(), sha), end; i != end; ++i)
        shas.push_back((*i)[1]);
    ASSERT_EQ(shas.size(), 2u) << r.out;
    EXPECT_EQ(shas[0], shas[1]);
    const json s = json::parse(slurp(d + "/out/stats.json"));
    EXPECT_TRUE(s["modules"].contains("model.slow_nand.ch.die0")) << s["modules"].dump();
}

// `canopy exp --model`: the experiment's machines (built in child processes) get the model and
// its keys; the effective configuration it writes records them; a key of a model not loaded,
// and a place the model cannot take, are refused before anything runs.
TEST(BringYourOwn, AnExperimentsMachinesTakeModelsFromOutside) {
    const std::string d = scratch("sdk-exp-model");
    const std::string exp = "exp rpc-latency --quick --no-figures ";
    const std::string model = "--model " + kModels + "/nand_channel.so ";
    const auto r = run_canopy(exp + model +
                                  "--set model.slow_nand.channel=0 --set "
                                  "model.slow_nand.t_read_slc_us=45 --quiet --out " + d + "/out",
                              d);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const json c = json::parse(slurp(d + "/out/rpc-latency.config.json"));
    EXPECT_EQ(c["model"]["slow_nand"]["channel"], 0) << c.dump();
    EXPECT_EQ(c["model"]["slow_nand"]["t_read_slc_us"], 45) << c.dump();
    expect_refused(exp + "--set model.slow_nand.channel=0", "model.slow_nand.channel");
    expect_refused(exp + model + "--set model.slow_nand.channel=9", "no such flash channel");
}

// A machine that fails at run time with what the user brought (here a flash channel whose geometry
// is not the array's, on which SPU-OS cannot mount the store) is a simulation error: exit 1, the
// failure named; not an internal error, which is a bug of Canopy's.
TEST(BringYourOwn, AMachineThatFailsWithAModelIsASimulationError) {
    const std::string d = scratch("sdk-exp-model-fails");
    const auto r = run_canopy("exp willow-io --quick --no-figures --model " + kModels +
                                  "/nand_channel.so --quiet --out " + d + "/out",
                              d);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("canopy: simulation error: willow-io: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("mount of the flash store"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
}

// The SSD calls of the host program ABI: a version 1 program still runs; misuse is a fault of
// the program alone, named.
TEST(BringYourOwn, HostProgramsSsdCallsFaultOnMisuseAndOldProgramsRun) {
    const std::string d = scratch("sdk-ssd-calls");
    const auto v1 = run_canopy("run --quiet --out " + d + "/v1 " + kMachine +
                                   " --host-program 4=" + kPlugins + "/abi_v1.so",
                               d);
    EXPECT_EQ(v1.status, 0) << v1.out << v1.err;
    EXPECT_NE(v1.out.find("host.core4: a version 1 program"), std::string::npos) << v1.out;
    for (const auto& [arg, says] :
         {std::pair<std::string, std::string>{"spu", "ssd_send: no SPU 99 (the SSD has 2)"},
          {"tag", "ssd_wait: no request with tag 12345"}}) {
        const auto r =
            run_canopy("run --out " + d + "/" + arg + " " + kMachine +
                           " --host-program 4=" + kPlugins + "/ssd_misuse.so --host-arg " + arg,
                       d);
        EXPECT_EQ(r.status, 1) << r.out << r.err;
        EXPECT_NE(r.out.find("FAULT: " + says), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("not reached"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("Willow ok"), std::string::npos) << r.out;
    }
}

}  // namespace

#endif
