// Waveforms: Probe<T> holds values scheduled ahead of the kernel and drives its signal when
// simulated time reaches them; the VCD must show each change at its own time (1 ns units).
// Each test runs in its own process, so each may elaborate and call sc_start once.
#include <gtest/gtest.h>

#include "../temp_dir.hpp"

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <systemc>

#include "core/error.hpp"
#include "core/resource.hpp"
#include "core/waves.hpp"

namespace fs = std::filesystem;
using canopy::core::Probe;
using canopy::core::Waves;
using sc_core::SC_NS;
using sc_core::sc_time;

using canopy_test::read_text;
using canopy_test::TempDir;

namespace {

// A parsed VCD: the declared variables (by full dotted scope name) and their value changes.
struct Vcd {
    std::string timescale;
    bool enddefinitions = false;
    struct Var {
        std::string type, name;
        int width = 0;
    };
    std::map<std::string, Var> vars;  // by identifier code
    // full name -> (time in timescale units -> value); the last change at a time wins.
    std::map<std::string, std::map<uint64_t, uint64_t>> changes;

    std::string id_of(const std::string& name) const {
        for (const auto& [id, v] : vars)
            if (v.name == name) return id;
        return "";
    }
    // Times and values of `name`, in order.
    std::vector<std::pair<uint64_t, uint64_t>> trace(const std::string& name) const {
        auto it = changes.find(name);
        if (it == changes.end()) return {};
        return {it->second.begin(), it->second.end()};
    }
};

Vcd parse_vcd(const std::string& path) {
    std::ifstream f(path);
    EXPECT_TRUE(f.good()) << "cannot read " << path;
    std::vector<std::string> tokens;
    for (std::string tok; f >> tok;) tokens.push_back(tok);
    Vcd vcd;
    std::vector<std::string> scope;
    uint64_t now = 0;
    auto record = [&](const std::string& id, uint64_t value) {
        auto it = vcd.vars.find(id);
        ASSERT_NE(it, vcd.vars.end()) << "value for undeclared id " << id;
        vcd.changes[it->second.name][now] = value;
    };
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        if (t == "$timescale") {
            std::string ts;
            for (++i; i < tokens.size() && tokens[i] != "$end"; ++i) ts += tokens[i];
            vcd.timescale = ts;
        } else if (t == "$scope") {
            scope.push_back(tokens[i + 2]);  // $scope module NAME $end
            i += 3;
        } else if (t == "$upscope") {
            scope.pop_back();
            ++i;
        } else if (t == "$var") {
            // $var TYPE WIDTH ID NAME [RANGE] $end
            Vcd::Var v;
            v.type = tokens[i + 1];
            v.width = std::stoi(tokens[i + 2]);
            std::string id = tokens[i + 3];
            std::string name;
            for (const auto& s : scope)
                if (s != "SystemC") name += s + ".";
            v.name = name + tokens[i + 4];
            vcd.vars[id] = v;
            for (i += 5; i < tokens.size() && tokens[i] != "$end"; ++i) {
            }
        } else if (t == "$enddefinitions") {
            vcd.enddefinitions = true;
            ++i;
        } else if (t == "$date" || t == "$version" || t == "$comment") {
            for (++i; i < tokens.size() && tokens[i] != "$end"; ++i) {
            }
        } else if (t == "$dumpvars" || t == "$end") {
            continue;
        } else if (t[0] == '#') {
            now = std::stoull(t.substr(1));
        } else if (t[0] == 'b' || t[0] == 'B') {
            record(tokens[i + 1], std::stoull(t.substr(1), nullptr, 2));
            ++i;
        } else if (t[0] == '0' || t[0] == '1') {
            record(t.substr(1), uint64_t(t[0] - '0'));
        } else {
            ADD_FAILURE() << "unexpected VCD token '" << t << "'";
        }
    }
    return vcd;
}

// Drives probes from inside the simulation, like a model running ahead of the kernel. Every
// change posted for the future leaves the kernel with nothing to do: waves observe, they never
// schedule (a core deciding whether to synchronise asks the kernel about pending activity).
SC_MODULE(Driver) {
    Probe<bool>& busy;
    Probe<uint32_t>& depth;
    SC_HAS_PROCESS(Driver);
    Driver(sc_core::sc_module_name n, Probe<bool> & b, Probe<uint32_t> & d)
        : sc_module(n), busy(b), depth(d) {
        SC_THREAD(run);
    }
    void run() {
        wait(500, SC_NS);
        depth.set(9, sc_time(200, SC_NS));    // in the past: applies now, at 500 ns
        busy.set(true, sc_time(700, SC_NS));  // ahead of the kernel
        depth.set(11, sc_time(600, SC_NS));
        depth.set(12, sc_time(600, SC_NS));  // the later call at the same time wins
        quiet = quiet && !sc_core::sc_pending_activity();
        wait(100, SC_NS);
        // At 600 ns, values for now and the future in reverse order.
        depth.set(20, sc_time(900, SC_NS));
        depth.set(13, sc_time(600, SC_NS));
        busy.set(false, sc_time(650, SC_NS));
        quiet = quiet && !sc_core::sc_pending_activity();
    }
    bool quiet = true;
};

using Trace = std::vector<std::pair<uint64_t, uint64_t>>;

}  // namespace

TEST(CoreWaves, ProbeChangesAppearAtScheduledTimes) {
    TempDir dir;
    const std::string path = dir.file("waves.vcd");
    Waves waves;
    EXPECT_FALSE(waves.enabled());
    waves.open(path);
    ASSERT_TRUE(waves.enabled());

    Probe<bool> busy("busy", waves, "nand.die0.busy");
    Probe<uint32_t> depth("depth", waves, "link.queue_depth", 0);
    Probe<uint32_t> fixed("fixed", waves, "fixed", 42);
    EXPECT_TRUE(busy.enabled());
    Driver driver("driver", busy, depth);

    // Scheduled during elaboration, out of order.
    busy.set(true, sc_time(100, SC_NS));
    busy.set(false, sc_time(250, SC_NS));
    depth.set(5, sc_time(300, SC_NS));
    depth.set(3, sc_time(120, SC_NS));
    depth.set(7, sc_time(1000, SC_NS));
    depth.set(0xfffffffe, sc_time(1500, SC_NS));

    sc_core::sc_start(2, sc_core::SC_US);
    EXPECT_TRUE(driver.quiet) << "a probe scheduled a kernel event";
    waves.close();
    EXPECT_FALSE(waves.enabled());

    Vcd vcd = parse_vcd(path);
    EXPECT_EQ(vcd.timescale, "1ns");
    EXPECT_TRUE(vcd.enddefinitions);
    ASSERT_EQ(vcd.vars.size(), 3u);
    const std::string busy_id = vcd.id_of("nand.die0.busy");
    const std::string depth_id = vcd.id_of("link.queue_depth");
    ASSERT_FALSE(busy_id.empty());
    ASSERT_FALSE(depth_id.empty());
    EXPECT_EQ(vcd.vars[busy_id].width, 1);
    EXPECT_EQ(vcd.vars[depth_id].width, 32);
    EXPECT_EQ(vcd.vars[vcd.id_of("fixed")].width, 32);

    // busy: 0 initially, 1 at 100, 0 at 250, then at 700 the value scheduled at 500 ns.
    // false@650 (scheduled at 600 ns) comes before true@700 and changes nothing.
    EXPECT_EQ(vcd.trace("nand.die0.busy"), (Trace{{0, 0}, {100, 1}, {250, 0}, {700, 1}}));
    // depth: out-of-order elaboration values sorted by time; 9 at 500 (was in the past);
    // 13 replaces 12 at 600; 20 at 900; 7 at 1000; the full 32-bit range at 1500.
    EXPECT_EQ(vcd.trace("link.queue_depth"), (Trace{{0, 0},
                                                    {120, 3},
                                                    {300, 5},
                                                    {500, 9},
                                                    {600, 13},
                                                    {900, 20},
                                                    {1000, 7},
                                                    {1500, 0xfffffffe}}));
    EXPECT_EQ(vcd.trace("fixed"), (Trace{{0, 42}}));
}

TEST(CoreWaves, HeaderDeclaresEveryProbe) {
    TempDir dir;
    const std::string path = dir.file("hdr.vcd");
    Waves waves;
    waves.open(path);
    Probe<bool> a("a", waves, "ssd.spu0.busy");
    Probe<uint32_t> b("b", waves, "ssd.spu0.pc");
    Probe<bool> c("c", waves, "top_flag", true);
    sc_core::sc_start(10, SC_NS);
    waves.close();

    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    const std::string text = s.str();
    EXPECT_NE(text.find("$timescale"), std::string::npos);
    EXPECT_NE(text.find("$scope module"), std::string::npos);
    EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
    EXPECT_LT(text.find("$timescale"), text.find("$enddefinitions"));
    Vcd vcd = parse_vcd(path);
    EXPECT_EQ(vcd.vars.size(), 3u);
    EXPECT_FALSE(vcd.id_of("ssd.spu0.busy").empty());
    EXPECT_FALSE(vcd.id_of("ssd.spu0.pc").empty());
    EXPECT_FALSE(vcd.id_of("top_flag").empty());
    EXPECT_EQ(vcd.trace("top_flag"), (Trace{{0, 1}}));
    EXPECT_EQ(vcd.trace("ssd.spu0.pc"), (Trace{{0, 0}}));
}

TEST(CoreWaves, PathWithoutVcdSuffixGetsOne) {
    TempDir dir;
    Waves waves;
    waves.open(dir.file("plain"));
    Probe<bool> a("a", waves, "x");
    sc_core::sc_start(1, SC_NS);
    waves.close();
    EXPECT_TRUE(fs::exists(dir.file("plain.vcd")));
}

TEST(CoreWaves, DisabledProbeDoesNothing) {
    TempDir dir;
    Waves waves;  // never opened
    EXPECT_FALSE(waves.enabled());
    Probe<bool> p("p", waves, "x");
    Probe<uint32_t> q("q", waves, "y", 3);
    EXPECT_FALSE(p.enabled());
    EXPECT_FALSE(q.enabled());
    p.set(true, sc_time(10, SC_NS));
    q.set(7, sc_time(0, SC_NS));
    sc_core::sc_start(100, SC_NS);
    waves.close();  // no-op
    EXPECT_TRUE(fs::is_empty(dir.path()));
    // Nothing was scheduled: the simulation had no events to run.
    EXPECT_FALSE(sc_core::sc_pending_activity());
}

TEST(CoreWaves, OpenUnwritablePathThrowsInputError) {
    Waves waves;
    const std::string path = "/nonexistent_canopy_dir/waves.vcd";
    try {
        waves.open(path);
        FAIL() << "no error";
    } catch (const canopy::InputError& e) {
        EXPECT_EQ(e.input(), path);
    }
    EXPECT_FALSE(waves.enabled());
}

TEST(CoreWaves, SharedResourceDrivesBusyProbe) {
    TempDir dir;
    const std::string path = dir.file("busy.vcd");
    Waves waves;
    waves.open(path);
    canopy::core::BusyProbe busy("busy", waves, "link.up.busy");
    canopy::core::SharedResource r(nullptr, &busy);
    // [0,100) and [100,150) back to back: busy stays high across the boundary.
    r.reserve(sc_time(0, SC_NS), sc_time(100, SC_NS));
    r.reserve(sc_time(30, SC_NS), sc_time(50, SC_NS));
    // Zero-length grants leave no pulse.
    r.reserve(sc_time(200, SC_NS), sc_core::SC_ZERO_TIME);
    // An idle gap, then [300, 320).
    r.reserve(sc_time(300, SC_NS), sc_time(20, SC_NS));
    sc_core::sc_start(1, sc_core::SC_US);
    waves.close();
    Vcd vcd = parse_vcd(path);
    EXPECT_EQ(vcd.trace("link.up.busy"), (Trace{{0, 1}, {150, 0}, {300, 1}, {320, 0}}));
}

TEST(CoreWaves, BusyProbeHoldsAcrossTouchingIntervalsReportedOutOfOrder) {
    TempDir dir;
    const std::string path = dir.file("order.vcd");
    Waves waves;
    waves.open(path);
    canopy::core::BusyProbe busy("busy", waves, "bus.busy");
    // [50,80) reported before [20,50) and the overlapping [70,90): one pulse from 20 to 90.
    busy.busy(sc_time(50, SC_NS), sc_time(80, SC_NS));
    busy.busy(sc_time(20, SC_NS), sc_time(50, SC_NS));
    busy.busy(sc_time(70, SC_NS), sc_time(90, SC_NS));
    busy.busy(sc_time(200, SC_NS), sc_time(200, SC_NS));  // empty: no pulse
    sc_core::sc_start(1, sc_core::SC_US);
    waves.close();
    EXPECT_EQ(parse_vcd(path).trace("bus.busy"), (Trace{{0, 0}, {20, 1}, {90, 0}}));
}

TEST(CoreWaves, SharedResourceDrivesQueueDepthProbe) {
    TempDir dir;
    const std::string path = dir.file("queue.vcd");
    Waves waves;
    waves.open(path);
    canopy::core::QueueProbe queue("queue", waves, "bus.queue");
    canopy::core::SharedResource r(nullptr, nullptr, &queue);
    // Grants [0,100), [100,150), [150,160): the second waits from 10 to 100, the third from 20
    // to 150, so two wait from 20 to 100 and one until 150.
    r.reserve(sc_time(0, SC_NS), sc_time(100, SC_NS));
    r.reserve(sc_time(10, SC_NS), sc_time(50, SC_NS));
    r.reserve(sc_time(20, SC_NS), sc_time(10, SC_NS));
    sc_core::sc_start(1, sc_core::SC_US);
    waves.close();
    EXPECT_EQ(parse_vcd(path).trace("bus.queue"),
              (Trace{{0, 0}, {10, 1}, {20, 2}, {100, 1}, {150, 0}}));
}
