// NAND command scripts replayed by `canopy flash`: results checked against software oracles of
// the same data patterns, refused commands, and script errors that name file and line.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "../canopy_process.hpp"
#include "platform/flash_op.hpp"
#include "platform/flash_player.hpp"

using namespace canopy_test;
using canopy::platform::DataSpec;

namespace {

constexpr uint32_t kPage = 16384 + 2208;

std::vector<uint8_t> pattern(uint64_t seed, double density = 0.5) {
    DataSpec d;
    d.kind = DataSpec::Random;
    d.seed = seed;
    d.density = density;
    std::vector<uint8_t> v;
    d.generate(v, kPage);
    return v;
}

// The SHA-256 values of the data-out lines, in order.
std::vector<std::string> digests(const std::string& out) {
    std::vector<std::string> v;
    std::regex re("sha256 ([0-9a-f]{64})");
    for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
         ++it)
        v.push_back((*it)[1]);
    return v;
}

std::string sha(const std::vector<uint8_t>& v) {
    return canopy::platform::sha256_hex(v.data(), v.size());
}

}  // namespace

TEST(PlatformScript, Figure16ComputesTheExpressionInTwoMws) {
    auto d = scratch("script-fig16");
    auto r = run_canopy("flash " + source("traces/flash/fig16.fcs") + " --quiet --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    // (C1 + C3) . (D2 + D4) . (A1 + B1.B2.B3.B4), seeds as in the script.
    std::vector<uint8_t> want(kPage);
    auto A1 = pattern(11), C1 = pattern(31), C3 = pattern(33), D2 = pattern(42), D4 = pattern(44);
    auto B1 = pattern(21, 0.8), B2 = pattern(22, 0.8), B3 = pattern(23, 0.8), B4 = pattern(24, 0.8);
    for (size_t i = 0; i < kPage; ++i)
        want[i] =
            uint8_t((C1[i] | C3[i]) & (D2[i] | D4[i]) & (A1[i] | (B1[i] & B2[i] & B3[i] & B4[i])));
    auto got = digests(r.out);
    ASSERT_EQ(got.size(), 1u) << r.out;
    EXPECT_EQ(got[0], sha(want));
}

TEST(PlatformScript, Figure16OrderMatters) {
    // The inverse read re-initialises the S-latch, so running it second loses the first result.
    auto d = scratch("script-fig16-swapped");
    std::string text = slurp(source("traces/flash/fig16.fcs"));
    auto first = text.find("mws ch0.die0.plane0 inv"),
         second = text.find("mws ch0.die0.plane0 xfer");
    std::string l1 = text.substr(first, text.find('\n', first) - first);
    std::string l2 = text.substr(second, text.find('\n', second) - second);
    text.replace(second, l2.size(), l1);
    text.replace(first, l1.size(), "mws ch0.die0.plane0 sinit cinit block1:0 block2:0-3");
    // Now: S = A1 + B1B2B3B4, then the inverse read with init replaces it and nothing is moved.
    text += "mws ch0.die0.plane0 xfer block1:0\ndout ch0.die0.plane0\n";
    std::ofstream(d + "/swapped.fcs") << text;
    auto r = run_canopy("flash " + d + "/swapped.fcs --quiet --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<uint8_t> right(kPage);
    auto A1 = pattern(11), C1 = pattern(31), C3 = pattern(33), D2 = pattern(42), D4 = pattern(44);
    auto B1 = pattern(21, 0.8), B2 = pattern(22, 0.8), B3 = pattern(23, 0.8), B4 = pattern(24, 0.8);
    std::vector<uint8_t> lost(kPage);
    for (size_t i = 0; i < kPage; ++i) {
        right[i] =
            uint8_t((C1[i] | C3[i]) & (D2[i] | D4[i]) & (A1[i] | (B1[i] & B2[i] & B3[i] & B4[i])));
        lost[i] =
            uint8_t((C1[i] | C3[i]) & (D2[i] | D4[i]) & A1[i]);  // B's product was overwritten
    }
    auto got = digests(r.out);
    ASSERT_EQ(got.size(), 2u) << r.out;
    EXPECT_NE(got[0], sha(right));
    EXPECT_EQ(got[1], sha(lost));
}

TEST(PlatformScript, ParaBitAccumulatesAndMatchesOneMws) {
    auto d = scratch("script-parabit");
    auto r = run_canopy("flash " + source("traces/flash/parabit.fcs") + " --quiet --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err;
    auto p1 = pattern(1), p2 = pattern(2), p3 = pattern(3);
    std::vector<uint8_t> and64(64), or64(64);
    for (int i = 0; i < 64; ++i) and64[i] = p1[i] & p2[i] & p3[i], or64[i] = p1[i] | p2[i] | p3[i];
    auto got = digests(r.out);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], sha(and64));
    EXPECT_EQ(got[1], sha(or64));
    EXPECT_EQ(got[2], sha(and64));  // Flash-Cosmos: the same AND in one sensing
}

TEST(PlatformScript, BasicScriptRunsAndReadsBack) {
    auto d = scratch("script-basic");
    auto r = run_canopy("flash " + source("traces/flash/basic.fcs") + " --quiet --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("first DEADBEEF0123456789FFFFFFFFFFFFFF"), std::string::npos);
    auto got = digests(r.out);
    ASSERT_GE(got.size(), 3u);
    EXPECT_EQ(got[1], sha(pattern(7)));  // multi-plane program, multi-plane read
    EXPECT_EQ(got[2], sha(pattern(8)));
    EXPECT_NE(r.out.find("refused as expected"), std::string::npos);
    EXPECT_NE(r.out.find("status E1 FAIL"),
              std::string::npos);  // the last refusal shows in the status
    EXPECT_NE(r.out.find("P1-P4 14 00 00 00"), std::string::npos);  // ESP factor 2.0 x 10
}

TEST(PlatformScript, UnexpectedRefusalFailsTheRun) {
    auto d = scratch("script-refused");
    std::ofstream(d + "/s.fcs")
        << "erase ch0.die0.plane0.block0\nprogram ch0.die0.plane0.block0.wl0 mode=slc\n"
           "program ch0.die0.plane0.block0.wl0 mode=slc\n";
    auto r = run_canopy("flash " + d + "/s.fcs --quiet --out " + d, d);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("s.fcs:3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not erased"), std::string::npos) << r.err;
}

TEST(PlatformScript, ExpectFailThatSucceedsFailsTheRun) {
    auto d = scratch("script-expect");
    std::ofstream(d + "/s.fcs") << "expect-fail erase ch0.die0.plane0.block0\n";
    auto r = run_canopy("flash " + d + "/s.fcs --quiet --out " + d, d);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("expected to be refused"), std::string::npos) << r.err;
}

TEST(PlatformScript, BadLinesNameFileAndLine) {
    auto d = scratch("script-bad");
    struct Case {
        const char* line;
        const char* says;
    } cases[] = {
        {"progam ch0.die0.plane0.block0.wl0", "did you mean 'program'"},
        {"read ch0.die0.plane0.block0", "incomplete"},
        {"read ch9.die0.plane0.block0.wl0", "ch 9 out of range"},
        {"read ch0.die0.plane0.block0.wl48", "wl 48 out of range"},
        {"read ch0.dye0.plane0.block0.wl0", "expected 'die'"},
        {"program ch0.die0.plane0.block0.wl0 mode=qlc", "mode 'qlc'"},
        {"program ch0.die0.plane0.block0.wl0 data=rand:3", "data='rand:3'"},
        {"program ch0.die0.plane0.block0.wl0 data=random:1:1.5", "density"},
        {"program ch0.die0.plane0.block0.wl0 data=hex:ABC", "even number"},
        {"program ch0.die0.plane0.block0.wl0 data=file:nope.bin", "nope.bin"},
        {"mws ch0.die0.plane0 sinit", "no blockB"},
        {"mws ch0.die0.plane0 inverse block1:0", "'inverse'"},
        {"mws ch0.die0.plane0 block1:5-2", "backwards"},
        {"dout ch0.die0.plane0 col=x", "not a number"},
        {"sync now", "no arguments"},
        {"raw ch0.die0 c:00 q:1", "expected c:XX"},
        {"expect-fail", "needs a command"},
    };
    int n = 0;
    for (const auto& c : cases) {
        std::string name = "bad" + std::to_string(n++) + ".fcs";
        std::ofstream(d + "/" + name) << "# a comment\n\n" << c.line << "\n";
        auto r = run_canopy("flash " + d + "/" + name + " --quiet --out " + d, d);
        EXPECT_EQ(r.status, 2) << c.line;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(name + ": line 3"), std::string::npos) << c.line << " -> " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.line << " -> " << r.err;
        EXPECT_EQ(r.out, "") << "nothing may run before the whole script is checked";
    }
}

TEST(PlatformScript, ExperimentWritesTableCsvJsonSvg) {
    auto d = scratch("exp-nand");
    auto r = run_canopy("exp nand-characterisation --quick --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("error %"), std::string::npos);
    auto j = nlohmann::json::parse(slurp(d + "/nand-characterisation.json")).at("rows");
    ASSERT_GT(j.size(), 10u);
    std::map<std::string, double> err, sim;
    for (const auto& row : j) {
        for (const char* k : {"id", "quantity", "simulated", "published", "unit", "error_pct"})
            EXPECT_TRUE(row.contains(k)) << k;
        if (!row["error_pct"].is_null()) err[row["id"]] = row["error_pct"];
        sim[row["id"]] = row["simulated"];
    }
    // Figures the model is built to reproduce exactly (Section 5.2, Figures 12-14, Table 1).
    for (const char* id : {"F12b", "F13b", "F14a", "F14b", "F14c", "T1e", "F8b", "F8c"})
        EXPECT_LT(std::abs(err.at(id)), 2.0) << id;
    EXPECT_EQ(slurp(d + "/nand-characterisation.csv").substr(0, 45),
              "id,quantity,simulated,published,unit,error_pc");
    // The curves of Figures 12-14 start at a plain read (one wordline, one block: tR, a read's
    // power), never fall as more is sensed, and pass through the published points.
    for (const char* id : {"F12.w1", "F13.b1", "F14.b1"}) EXPECT_NEAR(sim.at(id), 1.0, 1e-9) << id;
    for (const auto& [prefix, ns] : std::vector<std::pair<std::string, std::vector<int>>>{
             {"F12.w", {1, 2, 4, 8, 16, 24, 32, 48}},
             {"F13.b", {1, 2, 4, 8, 16, 32}},
             {"F14.b", {1, 2, 4, 8, 16, 32}}})
        for (size_t i = 1; i < ns.size(); ++i)
            EXPECT_GE(sim.at(prefix + std::to_string(ns[i])),
                      sim.at(prefix + std::to_string(ns[i - 1])))
                << prefix << ns[i];
    EXPECT_DOUBLE_EQ(sim.at("F12.w48"), sim.at("F12b"));
    EXPECT_DOUBLE_EQ(sim.at("F13.b32"), sim.at("F13b"));
    EXPECT_NEAR(sim.at("F14.b4"), sim.at("F14b"), 1e-3 * sim.at("F14b"));  // own random stream
    // Drawn as the paper draws them: tMWS in multiples of tR, power in a read's.
    const std::string svg = slurp(d + "/nand-characterisation.mws.svg");
    EXPECT_NE(svg.find("tMWS (multiples of tR)"), std::string::npos);
    for (const char* fig : {"Fig. 12", "Fig. 13", "Fig. 14"})
        EXPECT_NE(svg.find(fig), std::string::npos) << fig;
    EXPECT_TRUE(std::filesystem::exists(d + "/nand-characterisation.mws.png"));
}

// --set reaches the dies: Section 5.2 gives tMWS in units of tR, so a die that senses twice as
// long (tR 45 us) takes twice Table 1's tMWS, and every tMWS/tR row stays as it was.
TEST(PlatformScript, ExperimentDiesTakeTheSetTiming) {
    auto rows = [](const std::string& d, const std::string& extra) {
        auto r = run_canopy("exp nand-characterisation --quick --out " + d + " " + extra, d);
        EXPECT_EQ(r.status, 0) << r.err;
        std::map<std::string, double> sim;
        const auto j = nlohmann::json::parse(slurp(d + "/nand-characterisation.json"));
        for (const auto& row : j.at("rows")) sim[row["id"]] = row["simulated"];
        return sim;
    };
    const auto plain = rows(scratch("exp-nand-plain"), "");
    const std::string d = scratch("exp-nand-slow");
    const auto slow = rows(d, "--set nand.timing.t_read_slc_us=45");
    EXPECT_NEAR(slow.at("T1"), 2 * plain.at("T1"), 1e-9);
    for (const char* id : {"F12a", "F12b", "F13a", "F13b", "S52"})
        EXPECT_NEAR(slow.at(id), plain.at(id), 1e-12) << id;
    const auto cfg = nlohmann::json::parse(slurp(d + "/nand-characterisation.config.json"));
    EXPECT_EQ(cfg["nand"]["timing"]["t_read_slc_us"].get<double>(), 45.0);
}
