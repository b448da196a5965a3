// `canopy replay` (platform/replay): an MSR trace replayed through Base-IO and Direct-IO on the
// whole platform with SPU-OS. The counts and bytes of what was replayed are checked against the
// trace file read here independently; latencies against what one request can cost; bad input
// (a malformed line, an unknown path, too many threads) exits with status 2 naming it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../canopy_process.hpp"

namespace canopy::platform {
namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;
using canopy_test::source;
using nlohmann::json;

#ifdef CANOPY_FIRMWARE_DIR
// Reads and writes (count, bytes) of the first `n` requests of an MSR file, by hand.
struct Mix {
    uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
};
Mix first_requests(const std::string& path, size_t n) {
    Mix m;
    std::ifstream f(path);
    std::string line;
    size_t seen = 0;
    while (seen < n && std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> fields;
        std::stringstream ss(line);
        for (std::string x; std::getline(ss, x, ',');) fields.push_back(x);
        const uint64_t size = std::stoull(fields.at(5));
        if (fields.at(3) == "Write")
            ++m.writes, m.write_bytes += size;
        else
            ++m.reads, m.read_bytes += size;
        ++seen;
    }
    return m;
}

// Returns replay.json.
json expect_replayed(const std::string& path_arg, const std::string& file, size_t n,
                     const std::string& extra = "") {
    const std::string d = scratch("replay-" + path_arg);
    const auto r = run_canopy("replay --trace " + source(file) + " --path " + path_arg + " --max " +
                                  std::to_string(n) + " --quiet --out " + d + " " + extra,
                              d);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    if (r.status != 0) return json();
    const json j = json::parse(slurp(d + "/replay.json"));
    const Mix m = first_requests(source(file), n);
    EXPECT_EQ(j["requests"], n);
    EXPECT_EQ(j["read"]["requests"], m.reads);
    EXPECT_EQ(j["write"]["requests"], m.writes);
    EXPECT_EQ(j["read"]["bytes"], m.read_bytes);
    EXPECT_EQ(j["write"]["bytes"], m.write_bytes);
    for (const char* dir : {"read", "write"}) {
        const json& lat = j[dir]["latency_us"];
        // At least a trip over PCIe and the ring to an SPU and back (several us), ordered.
        EXPECT_GT(lat["p50"].get<double>(), 5.0) << dir;
        EXPECT_LE(lat["p50"].get<double>(), lat["p95"].get<double>()) << dir;
        EXPECT_LE(lat["p95"].get<double>(), lat["max"].get<double>()) << dir;
        EXPECT_GT(j[dir]["iops"].get<double>(), 0.0);
    }
    const double span_s = j["span_ns"].get<double>() * 1e-9;
    EXPECT_NEAR(j["read"]["iops"].get<double>() * span_s, double(m.reads), 1e-6 * m.reads + 1e-9);
    EXPECT_NE(r.out.find("through " + path_arg), std::string::npos) << r.out;
    // Willow stores on the flash through the FTL: a fresh array far from full needs no GC. Every
    // unit written is programmed, waits in the write buffer (the write cache, the default), or
    // replaced one there; every slot programmed holds a unit or padding.
    const json& wa = j["write_amplification"];
    EXPECT_TRUE(wa.is_object()) << r.out;
    if (!wa.is_object()) return j;
    const uint64_t units = wa["host_unit_writes"], programs = wa["flash_programs"];
    EXPECT_GE(units, m.writes);
    EXPECT_EQ(programs * wa["units_per_page"].get<uint64_t>() +
                  wa["buffered_units_end"].get<uint64_t>(),
              wa["buffered_units_start"].get<uint64_t>() + units -
                  wa["buffer_hits"].get<uint64_t>() + wa["padded_units"].get<uint64_t>());
    EXPECT_LE(programs, units);
    EXPECT_EQ(j["gc"]["victims"], 0);
    EXPECT_EQ(j["gc"]["erases"], 0);
    return j;
}

TEST(PlatformReplay, BaseIoReplaysTheTracesRequests) {
    const json j = expect_replayed("base-io", "traces/block/random_4k.csv", 80,
                                   "--set ssd.store.write_cache=false");
    // Aligned 4 KiB writes are one 4 KiB mapping unit each; write-through programs a 16 KiB
    // page for each (its other three slots padded): 4 bytes programmed per byte written.
    const Mix m = first_requests(source("traces/block/random_4k.csv"), 80);
    EXPECT_EQ(j["write_amplification"]["host_unit_writes"], m.writes);
    EXPECT_DOUBLE_EQ(j["write_amplification"]["per_byte"].get<double>(), 4.0);
    // With the write cache (the default) four of them fill a page: no padding, and at most a
    // byte programmed per byte.
    const json c = expect_replayed("base-io", "traces/block/random_4k.csv", 80);
    EXPECT_EQ(c["write_amplification"]["padded_units"], 0);
    EXPECT_LE(c["write_amplification"]["per_byte"].get<double>(), 1.0);
}

TEST(PlatformReplay, DirectIoReplaysTheTracesRequests) {
    expect_replayed("direct-io", "traces/block/mixed_sizes.csv", 60);
}

TEST(PlatformReplay, IdleSimulatedTimeCostsTheKernelNoWork) {
    // Two requests 1 ms or 100 s apart (--timed): the kernel's notice thread sleeps on its
    // completion queue's line (the core's WFE) instead of polling it every microsecond, so the
    // kernel core does the same work over either gap (before: 10^8 polls more for 100 s).
    auto kernel_loads = [](const std::string& name, uint64_t gap_ticks) {
        const std::string d = scratch(name);
        {
            std::ofstream f(d + "/gap.csv");
            f << "128166372003061629,usr,0,Read,4096,4096,100\n"
              << 128166372003061629ull + gap_ticks << ",usr,0,Write,8192,4096,100\n";
        }
        const auto r = run_canopy("replay --trace " + d + "/gap.csv --timed --quiet --out " + d, d);
        EXPECT_EQ(r.status, 0) << r.err;
        const json s = json::parse(slurp(d + "/stats.json"));
        const json& spans = json::parse(slurp(d + "/replay.json"));
        EXPECT_GE(spans["span_ns"].get<double>(), double(gap_ticks) * 100.0);
        return s["modules"]["host.core0"]["loads"].get<double>();
    };
    const double short_gap = kernel_loads("replay-gap-1ms", 10'000);  // 100 ns ticks
    const double long_gap = kernel_loads("replay-gap-100s", 1'000'000'000);
    EXPECT_NEAR(long_gap, short_gap, short_gap * 0.01);
}

TEST(PlatformReplay, DeepQueuesReplayEveryRequestFaster) {
    // Eight in flight per thread through each path: the same requests, in less simulated time
    // than one at a time (the SPUs serve them in parallel).
    const json one = expect_replayed("base-io", "traces/block/random_4k.csv", 120);
    const json deep = expect_replayed("base-io", "traces/block/random_4k.csv", 120, "--iodepth 8");
    EXPECT_EQ(deep["iodepth"], 8);
    EXPECT_LT(deep["span_ns"].get<double>(), one["span_ns"].get<double>() / 2);
    const json dio =
        expect_replayed("direct-io", "traces/block/mixed_sizes.csv", 60, "--iodepth 8");
    EXPECT_EQ(dio["iodepth"], 8);
}
#endif

TEST(PlatformReplay, BadInputExitsWithTwoNamingIt) {
    const std::string d = scratch("replay-bad");
    {
        std::ofstream f(d + "/bad.csv");
        f << "128166372003061629,usr,0,Read,4096,4096,100\n"
          << "128166372003061630,usr,0,Erase,4096,4096,100\n";
    }
    auto r = run_canopy("replay --trace " + d + "/bad.csv --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("bad.csv: line 2"), std::string::npos) << r.err;
    r = run_canopy(
        "replay --trace " + source("traces/block/random_4k.csv") + " --path nvme --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--path nvme"), std::string::npos) << r.err;
    r = run_canopy(
        "replay --trace " + source("traces/block/random_4k.csv") + " --threads 9 --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--threads 9"), std::string::npos) << r.err;
    for (const char* depth : {"0", "1025", "-1"}) {
        r = run_canopy("replay --trace " + source("traces/block/random_4k.csv") + " --iodepth " +
                           depth + " --out " + d,
                       d);
        EXPECT_EQ(r.status, 2) << depth;
        EXPECT_NE(r.err.find("--iodepth"), std::string::npos) << r.err;
    }
}

}  // namespace
}  // namespace canopy::platform
