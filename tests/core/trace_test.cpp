// Transaction trace: Chrome/Perfetto trace-event JSON with one track per module, X events per
// hop and s/f flow pairs linking the hops of one request.
#include <gtest/gtest.h>

#include "../temp_dir.hpp"

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <systemc>

#include "core/error.hpp"
#include "core/trace.hpp"

namespace fs = std::filesystem;
using canopy::core::TransactionTrace;
using nlohmann::json;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;
using sc_core::SC_US;

using canopy_test::read_text;
using canopy_test::TempDir;

namespace {

// Parses the trace and checks the fields every event must have.
json load_trace(const std::string& path) {
    json doc = json::parse(read_text(path));  // throws (fails the test) when invalid
    EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
    EXPECT_TRUE(doc.at("traceEvents").is_array());
    for (const auto& e : doc["traceEvents"]) {
        EXPECT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
        EXPECT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
        EXPECT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
        EXPECT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e.dump();
    }
    return doc;
}

std::vector<json> events(const json& doc, const std::string& ph) {
    std::vector<json> out;
    for (const auto& e : doc["traceEvents"])
        if (e["ph"] == ph) out.push_back(e);
    return out;
}

// tid -> module name from the thread_name metadata; fails on duplicates.
std::map<int, std::string> thread_names(const json& doc) {
    std::map<int, std::string> names;
    for (const auto& e : events(doc, "M"))
        if (e["name"] == "thread_name") {
            int tid = e["tid"].get<int>();
            EXPECT_EQ(names.count(tid), 0u) << "thread_name twice for tid " << tid;
            names[tid] = e["args"]["name"].get<std::string>();
        }
    return names;
}

}  // namespace

TEST(CoreTrace, CompleteEventsInMicroseconds) {
    TempDir dir;
    auto path = dir.file("trace.json");
    {
        TransactionTrace t;
        EXPECT_FALSE(t.enabled());
        t.open(path);
        EXPECT_TRUE(t.enabled());
        int die = t.track("nand.ch0.die0");
        t.complete(die, "read", "nand", sc_time(1500, SC_NS), sc_time(250, SC_NS), 0,
                   {{"addr", TransactionTrace::hex(0x1000)}, {"plane", "1"}});
        t.complete(die, "erase", "nand", sc_time(3, SC_US), sc_time(1, SC_PS), 0);
        t.close();
        EXPECT_FALSE(t.enabled());
    }
    json doc = load_trace(path);
    auto xs = events(doc, "X");
    ASSERT_EQ(xs.size(), 2u);
    EXPECT_EQ(xs[0]["name"], "read");
    EXPECT_EQ(xs[0]["cat"], "nand");
    EXPECT_DOUBLE_EQ(xs[0]["ts"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(xs[0]["dur"].get<double>(), 0.25);
    EXPECT_EQ(xs[0]["args"]["addr"], "0x1000");
    EXPECT_EQ(xs[0]["args"]["plane"], "1");
    EXPECT_FALSE(xs[0]["args"].contains("flow"));
    EXPECT_DOUBLE_EQ(xs[1]["ts"].get<double>(), 3.0);
    EXPECT_NEAR(xs[1]["dur"].get<double>(), 1e-6, 1e-12);  // 1 ps survives
    EXPECT_FALSE(xs[1].contains("args"));
    // All events share one process, named by metadata.
    int pid = xs[0]["pid"].get<int>();
    bool named = false;
    for (const auto& e : doc["traceEvents"]) {
        EXPECT_EQ(e["pid"].get<int>(), pid);
        if (e["ph"] == "M" && e["name"] == "process_name") named = e["args"]["name"] == "canopy";
    }
    EXPECT_TRUE(named);
    EXPECT_EQ(xs[0]["tid"].get<int>(), thread_names(doc).begin()->first);
}

TEST(CoreTrace, LargeTimestampsKeepPicoseconds) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    int tr = t.track("m");
    // 10 s + 1 ps, written in microseconds.
    t.complete(tr, "x", "c", sc_time(10, sc_core::SC_SEC) + sc_time(1, SC_PS), sc_time(7, SC_PS),
               0);
    t.close();
    std::string text = read_text(path);
    EXPECT_NE(text.find("\"ts\":10000000.000001"), std::string::npos) << text;
    EXPECT_NE(text.find("\"dur\":0.000007"), std::string::npos) << text;
    load_trace(path);
}

TEST(CoreTrace, OneTrackPerModuleWithThreadName) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    int a = t.track("nand.ch0.die0");
    int b = t.track("link.up");
    int a2 = t.track("nand.ch0.die0");
    int c = t.track("ssd.spu0");
    EXPECT_EQ(a, a2);
    EXPECT_NE(a, b);
    EXPECT_NE(b, c);
    EXPECT_NE(a, c);
    EXPECT_GT(a, 0);
    t.complete(a, "r", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), 0);
    t.complete(b, "r", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), 0);
    t.complete(a2, "r", "c", sc_time(2, SC_NS), sc_time(1, SC_NS), 0);
    t.close();
    json doc = load_trace(path);
    auto names = thread_names(doc);
    ASSERT_EQ(names.size(), 3u);
    EXPECT_EQ(names[a], "nand.ch0.die0");
    EXPECT_EQ(names[b], "link.up");
    EXPECT_EQ(names[c], "ssd.spu0");
    // Every X event sits on a named track.
    for (const auto& x : events(doc, "X")) EXPECT_EQ(names.count(x["tid"].get<int>()), 1u);
}

TEST(CoreTrace, FlowLinksConsecutiveHops) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    int host = t.track("host.cpu0"), link = t.track("link.down"), die = t.track("nand.ch0.die0");
    uint64_t flow = t.new_flow();
    EXPECT_NE(flow, 0u);
    EXPECT_NE(t.new_flow(), flow);
    // Three hops: host [0, 100) ns, link [100, 300) ns, die [300, 350) ns.
    t.complete(host, "submit", "host", sc_time(0, SC_NS), sc_time(100, SC_NS), flow);
    t.complete(link, "tlp", "link", sc_time(100, SC_NS), sc_time(200, SC_NS), flow);
    t.complete(die, "read", "nand", sc_time(300, SC_NS), sc_time(50, SC_NS), flow, {{"page", "7"}});
    // An unrelated transaction with no flow adds no flow events.
    t.complete(die, "idle", "nand", sc_time(400, SC_NS), sc_time(1, SC_NS), 0);
    t.close();

    json doc = load_trace(path);
    auto xs = events(doc, "X");
    ASSERT_EQ(xs.size(), 4u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(xs[i]["args"]["flow"].get<uint64_t>(), flow);
    EXPECT_EQ(xs[2]["args"]["page"], "7");
    auto ss = events(doc, "s"), fs_ = events(doc, "f");
    ASSERT_EQ(ss.size(), 2u);
    ASSERT_EQ(fs_.size(), 2u);
    struct Hop {
        int tid;
        double ts, dur;
    };
    const Hop hops[3] = {{host, 0, 0.1}, {link, 0.1, 0.2}, {die, 0.3, 0.05}};
    for (int i = 0; i < 2; ++i) {
        const json& s = ss[i];
        const json& f = fs_[i];
        EXPECT_EQ(s["id"], f["id"]) << "pair " << i;
        EXPECT_EQ(s["name"], f["name"]);
        EXPECT_EQ(s["cat"], f["cat"]);
        // The start binds to the previous hop: on its track, inside its slice.
        EXPECT_EQ(s["tid"].get<int>(), hops[i].tid);
        EXPECT_GE(s["ts"].get<double>(), hops[i].ts - 1e-9);
        EXPECT_LE(s["ts"].get<double>(), hops[i].ts + hops[i].dur + 1e-9);
        // The finish binds to the enclosing slice of the next hop, at its start.
        EXPECT_EQ(f["tid"].get<int>(), hops[i + 1].tid);
        EXPECT_NEAR(f["ts"].get<double>(), hops[i + 1].ts, 1e-9);
        EXPECT_EQ(f["bp"], "e");
    }
    EXPECT_NE(ss[0]["id"], ss[1]["id"]);
}

TEST(CoreTrace, InterleavedFlowsStayApart) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    int a = t.track("a"), b = t.track("b"), c = t.track("c");
    uint64_t f1 = t.new_flow(), f2 = t.new_flow();
    t.complete(a, "h", "x", sc_time(0, SC_NS), sc_time(10, SC_NS), f1);
    t.complete(c, "h", "x", sc_time(5, SC_NS), sc_time(10, SC_NS), f2);
    t.complete(b, "h", "x", sc_time(10, SC_NS), sc_time(10, SC_NS), f1);
    t.complete(a, "h", "x", sc_time(15, SC_NS), sc_time(10, SC_NS), f2);
    t.close();
    json doc = load_trace(path);
    auto ss = events(doc, "s"), fs_ = events(doc, "f");
    ASSERT_EQ(ss.size(), 2u);
    ASSERT_EQ(fs_.size(), 2u);
    std::map<uint64_t, std::pair<int, int>> edge;  // id -> (s tid, f tid)
    for (const auto& s : ss) edge[s["id"].get<uint64_t>()].first = s["tid"].get<int>();
    for (const auto& f : fs_) edge[f["id"].get<uint64_t>()].second = f["tid"].get<int>();
    ASSERT_EQ(edge.size(), 2u);
    std::set<std::pair<int, int>> got;
    for (const auto& [id, e] : edge) got.insert(e);
    EXPECT_EQ(got, (std::set<std::pair<int, int>>{{a, b}, {c, a}}));
}

TEST(CoreTrace, StringsAreEscaped) {
    TempDir dir;
    auto path = dir.file("trace.json");
    const std::string nasty = "say \"hi\" \\ path\\to\nnew\tline\r\x01\x1f end \xc3\xa9";
    const std::string module = "weird \"module\" \\ name";
    TransactionTrace t;
    t.open(path);
    int tr = t.track(module);
    t.complete(tr, "op \"quoted\"", "cat\\x", sc_time(1, SC_NS), sc_time(1, SC_NS), 0,
               {{"value", nasty}, {"key \"q\"", "v"}});
    t.close();
    json doc = load_trace(path);
    auto xs = events(doc, "X");
    ASSERT_EQ(xs.size(), 1u);
    EXPECT_EQ(xs[0]["args"]["value"], nasty);
    EXPECT_EQ(xs[0]["args"]["key \"q\""], "v");
    EXPECT_EQ(xs[0]["name"], "op \"quoted\"");
    EXPECT_EQ(xs[0]["cat"], "cat\\x");
    EXPECT_EQ(thread_names(doc)[tr], module);
}

TEST(CoreTrace, DisabledTraceWritesNothing) {
    TempDir dir;
    {
        TransactionTrace t;
        EXPECT_FALSE(t.enabled());
        int a = t.track("x");
        EXPECT_EQ(t.track("x"), a);
        EXPECT_NE(t.track("y"), a);
        uint64_t flow = t.new_flow();
        t.complete(a, "op", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), flow, {{"k", "v"}});
        t.complete(a, "op", "c", sc_time(1, SC_NS), sc_time(1, SC_NS), flow);
        t.close();  // no-op
        t.close();
        EXPECT_FALSE(t.enabled());
    }
    EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(CoreTrace, OpenUnwritablePathThrowsInputError) {
    TransactionTrace t;
    const std::string path = "/nonexistent_canopy_dir/trace.json";
    try {
        t.open(path);
        FAIL() << "no error";
    } catch (const canopy::InputError& e) {
        EXPECT_EQ(e.input(), path);
    }
    EXPECT_FALSE(t.enabled());
}

TEST(CoreTrace, DestructorClosesTheFile) {
    TempDir dir;
    auto path = dir.file("trace.json");
    {
        TransactionTrace t;
        t.open(path);
        t.complete(t.track("m"), "op", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), 0);
    }
    json doc = load_trace(path);
    EXPECT_EQ(events(doc, "X").size(), 1u);
}

TEST(CoreTrace, TracksMadeBeforeOpenAreNamed) {
    // Modules may ask for their track while being built, before the trace is opened.
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    int early = t.track("early.module");
    t.open(path);
    int late = t.track("late.module");
    t.complete(early, "op", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), 0);
    t.close();
    json doc = load_trace(path);
    auto names = thread_names(doc);
    EXPECT_EQ(names[early], "early.module");
    EXPECT_EQ(names[late], "late.module");
}

TEST(CoreTrace, ReopenWritesAValidSecondFile) {
    TempDir dir;
    auto p1 = dir.file("one.json"), p2 = dir.file("two.json");
    TransactionTrace t;
    t.open(p1);
    int m = t.track("m");
    t.complete(m, "a", "c", sc_time(0, SC_NS), sc_time(1, SC_NS), 0);
    t.close();
    t.open(p2);
    t.complete(m, "b", "c", sc_time(5, SC_NS), sc_time(1, SC_NS), 0);
    t.close();
    json d1 = load_trace(p1), d2 = load_trace(p2);
    ASSERT_EQ(events(d2, "X").size(), 1u);
    EXPECT_EQ(events(d2, "X")[0]["name"], "b");
    EXPECT_EQ(thread_names(d2)[m], "m");
}

TEST(CoreTrace, HexFormatting) {
    EXPECT_EQ(TransactionTrace::hex(0), "0x0");
    EXPECT_EQ(TransactionTrace::hex(0xdeadbeef), "0xdeadbeef");
    EXPECT_EQ(TransactionTrace::hex(UINT64_MAX), "0xffffffffffffffff");
}

// Two transfers in flight on one link overlap without nesting: the second goes to a lane of
// the link, a track of its own named after it, so no two slices on a track cross. A slice that
// fits between or inside others stays on the module's track; an instant never moves.
TEST(CoreTrace, OverlappingHopsGoToLanesOfTheirModule) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    const int link = t.track("link.down");
    t.complete(link, "a", "link", sc_time(0, SC_NS), sc_time(100, SC_NS), 0);
    t.complete(link, "b", "link", sc_time(50, SC_NS), sc_time(100, SC_NS), 0);  // crosses a
    t.complete(link, "c", "link", sc_time(100, SC_NS), sc_time(20, SC_NS), 0);  // after a
    t.complete(link, "d", "link", sc_time(60, SC_NS), sc_time(100, SC_NS), 0);  // crosses a, b
    t.complete(link, "e", "link", sc_time(70, SC_NS), sc_time(0, SC_NS), 0);    // an instant
    t.close();
    const json doc = load_trace(path);
    const auto names = thread_names(doc);
    std::map<std::string, std::string> on;  // slice -> track name
    for (const auto& x : events(doc, "X"))
        on[x["name"].get<std::string>()] = names.at(x["tid"].get<int>());
    EXPECT_EQ(on["a"], "link.down");
    EXPECT_EQ(on["b"], "link.down #2");
    EXPECT_EQ(on["c"], "link.down");
    EXPECT_EQ(on["d"], "link.down #3");
    EXPECT_EQ(on["e"], "link.down");
}

// Hops reported out of time order (a model running ahead of the kernel reports its part
// first): every arrow still runs from the hop that starts first to the later one.
TEST(CoreTrace, FlowArrowsRunForwardWhateverTheReportOrder) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    const int player = t.track("player"), die = t.track("nand.ch0.die0"), bus = t.track("bus");
    const uint64_t flow = t.new_flow();
    t.complete(die, "read", "nand", sc_time(300, SC_NS), sc_time(50, SC_NS), flow);
    t.complete(bus, "cmd", "nand", sc_time(200, SC_NS), sc_time(10, SC_NS), flow);
    t.complete(player, "READ", "flash", sc_time(100, SC_NS), sc_time(400, SC_NS), flow);
    t.close();
    const json doc = load_trace(path);
    std::map<uint64_t, double> start;
    for (const auto& s : events(doc, "s")) start[s["id"].get<uint64_t>()] = s["ts"].get<double>();
    const auto fs_ = events(doc, "f");
    ASSERT_EQ(fs_.size(), 2u);
    for (const auto& f : fs_) EXPECT_LE(start.at(f["id"].get<uint64_t>()), f["ts"].get<double>());
}

// Only the categories asked for are written; a category no model uses is refused.
TEST(CoreTrace, CategoriesFilterTheHops) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path, {"nand"});
    const int die = t.track("nand.ch0.die0"), link = t.track("link.down");
    t.complete(die, "read", "nand", sc_time(0, SC_NS), sc_time(10, SC_NS), 0);
    t.complete(link, "tlp", "link", sc_time(0, SC_NS), sc_time(10, SC_NS), 0);
    t.close();
    const auto xs = events(load_trace(path), "X");
    ASSERT_EQ(xs.size(), 1u);
    EXPECT_EQ(xs[0]["cat"], "nand");
    EXPECT_THROW(t.open(path, {"pcie"}), canopy::InputError);
}

// A scope names the request of the hops reached inside it by calls that carry no payload; an
// inner scope (a snoop inside a request) names its own and gives the outer one back.
TEST(CoreTrace, FlowScopesNestAndReachedSaysWhetherAHopWasWritten) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    const int core = t.track("host.core0"), home = t.track("host.home");
    EXPECT_EQ(t.current_flow(), 0u);
    const uint64_t a = t.new_flow(), b = t.new_flow();
    {
        const TransactionTrace::FlowScope outer(t, a);
        EXPECT_EQ(t.current_flow(), a);
        {
            const TransactionTrace::FlowScope inner(t, b);
            EXPECT_EQ(t.current_flow(), b);
        }
        EXPECT_EQ(t.current_flow(), a);
        EXPECT_FALSE(t.reached(a));  // nothing left the core yet
        t.complete(home, "ReadShared", "host", sc_time(10, SC_NS), sc_time(50, SC_NS),
                   t.current_flow());
        EXPECT_TRUE(t.reached(a));
        EXPECT_FALSE(t.reached(b));
        t.complete(core, "load", "host", sc_time(0, SC_NS), sc_time(70, SC_NS), a);
    }
    EXPECT_EQ(t.current_flow(), 0u);
    t.close();
    const json doc = load_trace(path);
    const auto ss = events(doc, "s"), fs_ = events(doc, "f");
    ASSERT_EQ(ss.size(), 1u);
    ASSERT_EQ(fs_.size(), 1u);
    EXPECT_EQ(ss[0]["tid"], core);  // the core's load, reported last, starts first
    EXPECT_EQ(fs_[0]["tid"], home);
}

// A request whose hops report inner first (the home node inside the home agent inside the link
// hop inside the device's access) still shows as one chain in start order; on equal starts the
// hop reported later (the caller, which reports once its callee returned) comes first.
TEST(CoreTrace, NestedHopsReportedInnerFirstFormOneChain) {
    TempDir dir;
    auto path = dir.file("trace.json");
    TransactionTrace t;
    t.open(path);
    const int ra = t.track("device.ra"), link = t.track("link"), ha = t.track("host.ha"),
              home = t.track("host.home");
    const uint64_t flow = t.new_flow();
    t.complete(home, "ReadShared", "host", sc_time(30, SC_NS), sc_time(40, SC_NS), flow);
    t.complete(ha, "ReadShared", "ccix", sc_time(20, SC_NS), sc_time(60, SC_NS), flow);
    t.complete(link, "write", "link", sc_time(10, SC_NS), sc_time(80, SC_NS), flow);
    t.complete(ra, "load", "ccix", sc_time(10, SC_NS), sc_time(100, SC_NS), flow);  // the caller
    t.close();
    const json doc = load_trace(path);
    std::map<uint64_t, int> from;
    for (const auto& s : events(doc, "s")) from[s["id"].get<uint64_t>()] = s["tid"].get<int>();
    std::set<std::pair<int, int>> edges;
    for (const auto& f : events(doc, "f"))
        edges.insert({from.at(f["id"].get<uint64_t>()), f["tid"].get<int>()});
    EXPECT_EQ(edges, (std::set<std::pair<int, int>>{{ra, link}, {link, ha}, {ha, home}}));
}
