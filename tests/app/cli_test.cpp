// The canopy command as a user meets it: subcommands, help, and one clear line with exit
// status 2 for every kind of bad input.
#include <gtest/gtest.h>

#include "../canopy_process.hpp"

using namespace canopy_test;

namespace {

// Exit status 2, one line on stderr that contains every `parts`.
void expect_input_error(const Run& r, std::initializer_list<const char*> parts) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    for (const char* p : parts)
        EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in: " << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos);
}

}  // namespace

TEST(PlatformCli, VersionAndHelp) {
    auto d = scratch("cli-version");
    auto v = run_canopy("--version", d);
    EXPECT_EQ(v.status, 0);
    EXPECT_EQ(v.out, "canopy 0.1.0\n");
    EXPECT_EQ(v.err, "");  // no SystemC banner
    for (const char* c : {"run", "flash", "exp", "config"}) {
        auto h = run_canopy(std::string(c) + " --help", d);
        EXPECT_EQ(h.status, 0) << c;
        EXPECT_NE(h.out.find("--"), std::string::npos) << c;
    }
    auto none = run_canopy("", d);
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.err.find("usage"), std::string::npos);
}

TEST(PlatformCli, UnknownCommandSuggestsClosest) {
    expect_input_error(run_canopy("rnu", scratch("cli-cmd")), {"rnu", "did you mean 'run'"});
}

TEST(PlatformCli, UnknownOptionSuggestsClosest) {
    expect_input_error(run_canopy("run --vdc", scratch("cli-opt")),
                       {"--vdc", "did you mean '--vcd'"});
}

TEST(PlatformCli, UnknownConfigKeySuggestsClosest) {
    expect_input_error(
        run_canopy("run --set nand.timing.t_raed_slc_us=3", scratch("cli-key")),
        {"--set", "nand.timing.t_raed_slc_us", "did you mean 'nand.timing.t_read_slc_us'"});
}

// Willow's store on the flash needs a channel per SPU and data kept in the array.
TEST(PlatformCli, AFlashStoreTheArrayCannotHoldIsRefused) {
    auto d = scratch("cli-store");
    const std::string run = std::string("run ") + kSmall;
    expect_input_error(run_canopy(run + " --set ssd.spus=4", d),
                       {"ssd.store.flash", "a NAND channel per SPU", "channels = 2"});
    expect_input_error(run_canopy(run + " --set ssd.store.blocks_per_plane=2", d),
                       {"ssd.store", "the FTL offers no store"});
    expect_input_error(run_canopy(run + " --set ssd.store.blocks_per_plane=65", d),
                       {"ssd.store.blocks_per_plane", "the planes have 64"});
    // Mapping units: a divisor of the page, at most 8 to a page, with room for their tags in
    // the spare metadata (24 B: a sequence word and four tags).
    expect_input_error(run_canopy(run + " --set ssd.store.unit_bytes=3000", d),
                       {"ssd.store.unit_bytes", "does not divide a 16384 B page"});
    expect_input_error(run_canopy(run + " --set ssd.store.unit_bytes=32768", d),
                       {"ssd.store.unit_bytes", "does not divide"});
    expect_input_error(
        run_canopy(run + " --set ssd.store.unit_bytes=2048", d),
        {"ssd.store.unit_bytes", "need 36 B of spare metadata", "ssd.flash.meta_bytes is 24"});
    expect_input_error(
        run_canopy(run + " --set ssd.store.unit_bytes=0 --set ssd.flash.meta_bytes=4", d),
        {"ssd.store.unit_bytes", "need 8 B of spare metadata"});
    // A timing-only array holds a store too (the FTL works from the metadata the controller
    // keeps); what the scenario reads back is then not checked, and nothing fails for it.
    const canopy_test::Run timing =
        run_canopy(run + " --set nand.functional=false --out " + d + "/timing", d);
    EXPECT_EQ(timing.status, 0) << timing.err;
    EXPECT_NE(timing.out.find("data: not checked (timing-only array"), std::string::npos)
        << timing.out;
    EXPECT_EQ(run_canopy(run +
                             " --set ssd.store.unit_bytes=2048 --set ssd.flash.meta_bytes=40 "
                             "--out " +
                             d + "/u2k",
                         d)
                  .status,
              0);
}

TEST(PlatformCli, WrongTypeAndOutOfRange) {
    auto d = scratch("cli-type");
    expect_input_error(run_canopy("run --set nand.timing.t_read_slc_us=fast", d),
                       {"nand.timing.t_read_slc_us", "number", "fast"});
    expect_input_error(run_canopy("run --set nand.geometry.channels=0", d),
                       {"nand.geometry.channels", "out of range"});
    expect_input_error(run_canopy("run --set nand.functional=maybe", d),
                       {"nand.functional", "true or false"});
    expect_input_error(run_canopy("run --set scenario.mode=mlc", d), {"scenario.mode", "esp"});
    expect_input_error(run_canopy("run --set nand.timing", d), {"--set", "key=value"});
    expect_input_error(run_canopy("run --seed minus", d), {"seed"});
}

TEST(PlatformCli, UnreadableAndMalformedConfig) {
    auto d = scratch("cli-file");
    expect_input_error(run_canopy("run --config " + d + "/missing.json", d), {"missing.json"});
    std::ofstream(d + "/bad.json")
        << "{\n  \"nand\": {\n    \"timing\": { \"t_read_slc_us\": 22.5,, }\n  }\n}\n";
    expect_input_error(run_canopy("run --config " + d + "/bad.json", d), {"bad.json", "line 3"});
    std::ofstream(d + "/array.json") << "{\"nand\": {\"geometry\": {\"channels\": [1, 2]}}}\n";
    expect_input_error(run_canopy("run --config " + d + "/array.json", d),
                       {"array.json", "nand.geometry.channels"});
    std::ofstream(d + "/typo.json") << "{\"nand\": {\"geometry\": {\"chanels\": 2}}}\n";
    expect_input_error(run_canopy("run --config " + d + "/typo.json", d),
                       {"typo.json", "nand.geometry.chanels", "nand.geometry.channels"});
}

TEST(PlatformCli, ConfigDumpListsEveryKeyWithUnitsAndSources) {
    auto d = scratch("cli-dump");
    auto r = run_canopy("config --dump --set nand.timing.t_read_slc_us=30", d);
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* key :
         {"sim.seed", "nand.geometry.channels", "nand.timing.t_read_slc_us",
          "nand.power.mws_max_blocks", "nand.reliability.rber_slc_ref", "scenario.operands"})
        EXPECT_NE(r.out.find(key), std::string::npos) << key;
    EXPECT_NE(r.out.find("[default 22.5, from --set]"), std::string::npos);
    EXPECT_NE(r.out.find("FC Table 1"), std::string::npos);  // defaults name their source
}

TEST(PlatformCli, ConfigJsonRoundTrips) {
    auto d = scratch("cli-json");
    auto j = run_canopy("config --json --set nand.timing.t_read_slc_us=30 --set sim.seed=9", d);
    ASSERT_EQ(j.status, 0) << j.err;
    std::ofstream(d + "/cfg.json") << j.out;
    auto again = run_canopy("config --json --config " + d + "/cfg.json", d);
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(again.out, j.out);
    EXPECT_NE(again.out.find("\"t_read_slc_us\": 30"), std::string::npos);
}

TEST(PlatformCli, ExperimentCatalogue) {
    auto d = scratch("cli-exp");
    auto l = run_canopy("exp --list", d);
    EXPECT_EQ(l.status, 0);
    EXPECT_NE(l.out.find("nand-characterisation"), std::string::npos);
    expect_input_error(run_canopy("exp nand-charcterisation", d),
                       {"nand-charcterisation", "did you mean 'nand-characterisation'"});
    expect_input_error(run_canopy("exp", d), {"--list"});
}

TEST(PlatformCli, FlashNeedsAScript) {
    auto d = scratch("cli-flash");
    expect_input_error(run_canopy("flash", d), {"script"});
    expect_input_error(run_canopy("flash " + d + "/none.fcs", d),
                       {"none.fcs", "cannot open for reading"});
}
