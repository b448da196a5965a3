// Statistics: Counter, Sum, Distribution (exact moments, histogram percentiles), Occupancy
// (utilisation, Little's law) and the registry's JSON and summary output.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace fs = std::filesystem;
using canopy::core::Counter;
using canopy::core::Distribution;
using canopy::core::Json;
using canopy::core::Occupancy;
using canopy::core::StatsRegistry;
using canopy::core::Sum;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Relative-error check for percentiles from the log histogram.
::testing::AssertionResult near_rel(double actual, double expected, double rel) {
    if (std::fabs(actual - expected) <= rel * std::fabs(expected))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << actual << " is not within " << rel * 100 << "% of " << expected;
}

// Sums the counts of the bins in a distribution's JSON and checks the bins are well-formed.
uint64_t histogram_total(const Json& j) {
    uint64_t total = 0;
    double prev_upper = -1e300;
    for (const auto& bin : j.at("histogram").at("bins")) {
        EXPECT_EQ(bin.size(), 3u);
        EXPECT_TRUE(bin[0].is_number()) << bin.dump();
        EXPECT_TRUE(bin[1].is_number()) << bin.dump();
        double lo = bin[0].get<double>(), hi = bin[1].get<double>();
        EXPECT_LE(lo, hi);
        EXPECT_GE(lo, prev_upper * (1 - 1e-12));  // ascending, not overlapping
        prev_upper = hi;
        EXPECT_GT(bin[2].get<uint64_t>(), 0u);
        total += bin[2].get<uint64_t>();
    }
    return total;
}

}  // namespace

// ---- Counter and Sum ----

TEST(CoreStats, CounterCounts) {
    Counter c("reads", "", "page reads");
    EXPECT_EQ(c.value(), 0u);
    c.add();
    c.add();
    c.add(40);
    EXPECT_EQ(c.value(), 42u);
    EXPECT_EQ(c.to_json(0), Json(42));
    EXPECT_TRUE(c.to_json(0).is_number_unsigned());
    EXPECT_EQ(c.summary(0), "42");
    EXPECT_EQ(c.name(), "reads");
    EXPECT_EQ(c.description(), "page reads");
}

TEST(CoreStats, CounterHoldsLargeValuesExactly) {
    Counter c("bytes", "", "");
    c.add(UINT64_MAX - 1);
    c.add();
    EXPECT_EQ(c.value(), UINT64_MAX);
    EXPECT_EQ(c.to_json(0).get<uint64_t>(), UINT64_MAX);
}

TEST(CoreStats, SumAccumulatesWithUnit) {
    Sum s("energy", "uJ", "die energy");
    s.add(1.25);
    s.add(2.5);
    s.add(0.25);
    EXPECT_DOUBLE_EQ(s.value(), 4.0);
    EXPECT_DOUBLE_EQ(s.to_json(0).get<double>(), 4.0);
    EXPECT_EQ(s.unit(), "uJ");
    EXPECT_EQ(s.summary(0), "4 uJ");
}

// ---- Distribution ----

TEST(CoreStats, DistributionMomentsAreExact) {
    Distribution d("lat", "ns", "");
    for (double v : {3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0}) d.sample(v);
    EXPECT_EQ(d.count(), 8u);
    EXPECT_DOUBLE_EQ(d.mean(), 31.0 / 8.0);
    EXPECT_EQ(d.min(), 1.0);
    EXPECT_EQ(d.max(), 9.0);
    EXPECT_EQ(d.percentile(0), 1.0);
    EXPECT_EQ(d.percentile(100), 9.0);
}

TEST(CoreStats, PercentilesOfUniformIntegers) {
    Distribution d("lat", "ns", "");
    // Shuffled order must not matter: 1..10000 visited with a stride coprime to 10000.
    for (uint64_t i = 0; i < 10000; ++i) d.sample(double((i * 7919) % 10000 + 1));
    EXPECT_EQ(d.count(), 10000u);
    EXPECT_DOUBLE_EQ(d.mean(), 5000.5);
    EXPECT_EQ(d.min(), 1.0);
    EXPECT_EQ(d.max(), 10000.0);
    EXPECT_TRUE(near_rel(d.percentile(50), 5000, 0.015));
    EXPECT_TRUE(near_rel(d.percentile(90), 9000, 0.015));
    EXPECT_TRUE(near_rel(d.percentile(99), 9900, 0.015));
    EXPECT_TRUE(near_rel(d.percentile(10), 1000, 0.015));
    EXPECT_TRUE(near_rel(d.percentile(1), 100, 0.015));
    EXPECT_TRUE(near_rel(d.percentile(99.9), 9990, 0.015));
    // Percentiles are monotone in p and within [min, max].
    double prev = d.min();
    for (double p = 0.5; p < 100; p += 0.5) {
        double v = d.percentile(p);
        EXPECT_GE(v, prev) << "p" << p;
        EXPECT_LE(v, d.max());
        prev = v;
    }
}

TEST(CoreStats, PercentilesOfExponentialQuantiles) {
    // The i-th of n evenly spaced quantiles of an exponential with mean 100 ns:
    // the p-th percentile is -100 ln(1 - p/100).
    Distribution d("lat", "ns", "");
    const int n = 100000;
    for (int i = 0; i < n; ++i) d.sample(-100.0 * std::log(1.0 - (i + 0.5) / n));
    EXPECT_TRUE(near_rel(d.mean(), 100.0, 0.001));
    EXPECT_TRUE(near_rel(d.percentile(50), 100.0 * std::log(2.0), 0.015));
    EXPECT_TRUE(near_rel(d.percentile(90), 100.0 * std::log(10.0), 0.015));
    EXPECT_TRUE(near_rel(d.percentile(99), 100.0 * std::log(100.0), 0.015));
    EXPECT_TRUE(near_rel(d.percentile(5), -100.0 * std::log(0.95), 0.015));
}

TEST(CoreStats, PercentilesAcrossManyDecades) {
    // Log-uniform over 1 ns .. 1 s: the p-th percentile is 10^(9 p / 100) ns.
    Distribution d("lat", "ns", "");
    const int n = 90000;
    for (int i = 0; i < n; ++i) d.sample(std::pow(10.0, 9.0 * (i + 0.5) / n));
    for (double p : {1.0, 25.0, 50.0, 75.0, 99.0})
        EXPECT_TRUE(near_rel(d.percentile(p), std::pow(10.0, 9.0 * p / 100), 0.015)) << "p" << p;
}

TEST(CoreStats, ConstantSamplesGiveExactPercentiles) {
    Distribution d("lat", "ns", "");
    for (int i = 0; i < 1000; ++i) d.sample(250.0);
    EXPECT_EQ(d.percentile(1), 250.0);
    EXPECT_EQ(d.percentile(50), 250.0);
    EXPECT_EQ(d.percentile(99), 250.0);
    EXPECT_EQ(d.mean(), 250.0);
}

TEST(CoreStats, TwoPointDistribution) {
    // 900 samples of 10 and 100 of 1000: p50 and p90 are 10 (to within a bin), p99 is 1000.
    Distribution d("lat", "ns", "");
    for (int i = 0; i < 900; ++i) d.sample(10.0);
    for (int i = 0; i < 100; ++i) d.sample(1000.0);
    EXPECT_TRUE(near_rel(d.percentile(50), 10.0, 0.025));
    EXPECT_TRUE(near_rel(d.percentile(90), 10.0, 0.025));
    EXPECT_TRUE(near_rel(d.percentile(91), 1000.0, 0.025));
    EXPECT_TRUE(near_rel(d.percentile(99), 1000.0, 0.025));
    EXPECT_DOUBLE_EQ(d.mean(), (900 * 10.0 + 100 * 1000.0) / 1000);
}

TEST(CoreStats, SingleSample) {
    Distribution d("lat", "ns", "");
    d.sample(1234.5);
    EXPECT_EQ(d.count(), 1u);
    EXPECT_EQ(d.mean(), 1234.5);
    EXPECT_EQ(d.min(), 1234.5);
    EXPECT_EQ(d.max(), 1234.5);
    for (double p : {0.0, 1.0, 50.0, 90.0, 99.0, 100.0}) EXPECT_EQ(d.percentile(p), 1234.5) << p;
    Json j = d.to_json(0);
    EXPECT_EQ(j["p50"].get<double>(), 1234.5);
    EXPECT_EQ(j["p99"].get<double>(), 1234.5);
    EXPECT_EQ(histogram_total(j), 1u);
}

// The bin a sample is counted in, as to_json reports it: [lower, upper).
static std::pair<double, double> bin_of_one(double v) {
    Distribution d("lat", "ns", "");
    d.sample(v);
    const Json bins = d.to_json(0)["histogram"]["bins"];
    EXPECT_EQ(bins.size(), 1u) << v;
    return {bins[0][0].get<double>(), bins[0][1].get<double>()};
}

TEST(CoreStats, EverySampleLandsInTheBinThatHoldsIt) {
    // Across the whole range, on both sides of every 37th bin edge and in between.
    for (double v = 1.1e-3; v < 0.9e13; v *= 1.0371) {
        const auto [lo, hi] = bin_of_one(v);
        EXPECT_LE(lo, v);
        EXPECT_LT(v, hi);
        EXPECT_NEAR(std::log10(hi / lo), 1.0 / Distribution::kBinsPerDecade, 1e-9) << v;
        // A sample exactly on the bin's lower edge is in it; the double below it is in the
        // bin before.
        EXPECT_EQ(bin_of_one(lo).first, lo) << v;
        if (lo > Distribution::kLow) {
            EXPECT_EQ(bin_of_one(std::nextafter(lo, 0.0)).second, lo) << v;
        }
    }
    // Below the range (zero and negatives too) and above it: the open-ended bins, which end
    // at the sample.
    for (double v : {0.0, -5.0, 1e-4})
        EXPECT_LE(bin_of_one(v).second, Distribution::kLow * 1.0000001) << v;
    EXPECT_NEAR(bin_of_one(2e13).first, Distribution::kHigh, Distribution::kHigh * 1e-12);
}

TEST(CoreStats, EmptyDistribution) {
    Distribution d("lat", "ns", "");
    EXPECT_EQ(d.count(), 0u);
    EXPECT_EQ(d.mean(), 0.0);
    EXPECT_EQ(d.min(), 0.0);
    EXPECT_EQ(d.max(), 0.0);
    EXPECT_EQ(d.percentile(50), 0.0);
    Json j = d.to_json(0);
    EXPECT_EQ(j["count"].get<uint64_t>(), 0u);
    EXPECT_EQ(j["p99"].get<double>(), 0.0);
    EXPECT_TRUE(j["histogram"]["bins"].empty());
    EXPECT_EQ(d.summary(0), "no samples");
}

TEST(CoreStats, ZeroSamplesAreCounted) {
    // Zero latencies (no wait) are common; they land below the log range and count as zero.
    Distribution d("wait", "ns", "");
    for (int i = 0; i < 60; ++i) d.sample(0.0);
    for (int i = 0; i < 40; ++i) d.sample(100.0);
    EXPECT_EQ(d.min(), 0.0);
    EXPECT_EQ(d.percentile(50), 0.0);
    EXPECT_TRUE(near_rel(d.percentile(90), 100.0, 0.025));
    Json j = d.to_json(0);
    EXPECT_EQ(histogram_total(j), 100u);
    // The JSON is valid and parses back.
    EXPECT_EQ(Json::parse(j.dump()), j);
}

TEST(CoreStats, OutOfRangeSamplesKeepJsonValid) {
    // Samples above the histogram's range, and negative ones, must not produce invalid JSON
    // (infinite bin edges) or percentiles outside [min, max].
    Distribution d("x", "", "");
    d.sample(-5.0);
    d.sample(1.0);
    d.sample(2e13);
    Json j = d.to_json(0);
    EXPECT_EQ(histogram_total(j), 3u);
    std::string text = j.dump();
    EXPECT_FALSE(contains(text, "null")) << text;
    EXPECT_EQ(d.min(), -5.0);
    EXPECT_EQ(d.max(), 2e13);
    for (double p : {1.0, 50.0, 99.0}) {
        EXPECT_GE(d.percentile(p), -5.0) << p;
        EXPECT_LE(d.percentile(p), 2e13) << p;
    }
    // One third of the samples is negative: the 10th percentile is the negative one.
    EXPECT_EQ(d.percentile(10), -5.0);
    // p50 is the sample at 1 (its bin holds it, to within a bin); p99 is in the overflow bin,
    // which holds values from the top of the range up to the largest sample.
    EXPECT_TRUE(near_rel(d.percentile(50), 1.0, 0.025)) << d.percentile(50);
    EXPECT_GE(d.percentile(99), Distribution::kHigh);
    // The out-of-range bins end at the extreme samples.
    const Json& bins = j["histogram"]["bins"];
    ASSERT_EQ(bins.size(), 3u);
    EXPECT_EQ(bins[0][0].get<double>(), -5.0);
    EXPECT_EQ(bins[2][1].get<double>(), 2e13);
}

TEST(CoreStats, HistogramBinsSumToCountAndAreLogSpaced) {
    Distribution d("lat", "ns", "");
    for (int i = 1; i <= 5000; ++i) d.sample(double(i) * 0.37);
    Json j = d.to_json(0);
    EXPECT_EQ(j["count"].get<uint64_t>(), 5000u);
    EXPECT_EQ(j["unit"], "ns");
    EXPECT_EQ(j["histogram"]["bins_per_decade"].get<int>(), Distribution::kBinsPerDecade);
    EXPECT_EQ(histogram_total(j), 5000u);
    const double ratio = std::pow(10.0, 1.0 / Distribution::kBinsPerDecade);
    for (const auto& bin : j["histogram"]["bins"]) {
        EXPECT_NEAR(bin[1].get<double>() / bin[0].get<double>(), ratio, 1e-9);
        // A bin's count is the number of samples in [lower, upper).
        double lo = bin[0].get<double>(), hi = bin[1].get<double>();
        uint64_t expect = 0;
        for (int i = 1; i <= 5000; ++i) {
            double v = double(i) * 0.37;
            if (v >= lo * (1 + 1e-12) && v < hi * (1 - 1e-12)) ++expect;
        }
        // Samples sitting on an edge (within rounding) may fall on either side.
        EXPECT_LE(std::llabs(int64_t(bin[2].get<uint64_t>()) - int64_t(expect)), 1) << bin.dump();
    }
    // Field order is fixed.
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    const std::vector<std::string> expected = {"count", "mean", "min",  "p50",      "p90",
                                               "p99",   "max",  "unit", "histogram"};
    EXPECT_EQ(keys, expected);
}

TEST(CoreStats, DistributionSummary) {
    Distribution d("lat", "ns", "");
    d.sample(10);
    d.sample(30);
    std::string s = d.summary(0);
    EXPECT_TRUE(contains(s, "n 2")) << s;
    EXPECT_TRUE(contains(s, "mean 20 ns")) << s;
    EXPECT_TRUE(contains(s, "p99")) << s;
}

// ---- Occupancy ----

TEST(CoreStats, OccupancyUtilisationAndLittlesLaw) {
    // Three requests arrive at t=0, each holding the resource for 10 ns: they wait 0, 10 and
    // 20 ns. Over 30 ns the queue holds 2 requests in [0,10), 1 in [10,20) and 0 in [20,30):
    // mean queue depth (2*10 + 1*10) / 30 = 1, which Little's law gives as total wait / time.
    Occupancy o("bus", "", "");
    o.occupy(0, 10);
    o.occupy(10, 10);
    o.occupy(20, 10);
    EXPECT_EQ(o.grants(), 3u);
    EXPECT_DOUBLE_EQ(o.busy_ns(), 30);
    EXPECT_DOUBLE_EQ(o.wait_ns(), 30);
    Json j = o.to_json(30);
    EXPECT_EQ(j["grants"].get<uint64_t>(), 3u);
    EXPECT_DOUBLE_EQ(j["busy_ns"].get<double>(), 30);
    EXPECT_DOUBLE_EQ(j["utilisation"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(j["mean_wait_ns"].get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(j["max_wait_ns"].get<double>(), 20.0);
    EXPECT_DOUBLE_EQ(j["mean_queue_depth"].get<double>(), 1.0);

    // Over a 120 ns run the same work is a quarter utilisation and depth.
    Json k = o.to_json(120);
    EXPECT_DOUBLE_EQ(k["utilisation"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(k["mean_queue_depth"].get<double>(), 0.25);
    EXPECT_EQ(o.summary(120), "util 25%, 3 grants");
}

TEST(CoreStats, OccupancyWithoutGrantsOrTime) {
    Occupancy o("bus", "", "");
    Json j = o.to_json(100);
    EXPECT_EQ(j["grants"].get<uint64_t>(), 0u);
    EXPECT_EQ(j["utilisation"].get<double>(), 0.0);
    EXPECT_EQ(j["mean_wait_ns"].get<double>(), 0.0);
    EXPECT_EQ(j["mean_queue_depth"].get<double>(), 0.0);
    // No elapsed time: no division by zero, no absurd ratios.
    o.occupy(5, 50);
    Json z = o.to_json(0);
    EXPECT_TRUE(std::isfinite(z["utilisation"].get<double>()));
    EXPECT_LE(z["utilisation"].get<double>(), 1.0);
    EXPECT_TRUE(std::isfinite(z["mean_queue_depth"].get<double>()));
}

// ---- Registry ----

TEST(CoreStats, RegistryFindsStatsByModuleAndName) {
    StatsRegistry r;
    Counter& c = r.counter("nand.ch0.die0", "reads", "page reads");
    Distribution& d = r.distribution("nand.ch0.die0", "read_latency", "ns", "tR");
    c.add(3);
    d.sample(5);
    EXPECT_EQ(r.find("nand.ch0.die0", "reads"), &c);
    EXPECT_EQ(r.find("nand.ch0.die0", "read_latency"), &d);
    EXPECT_EQ(r.find("nand.ch0.die0", "nope"), nullptr);
    EXPECT_EQ(r.find("nand.ch0.die9", "reads"), nullptr);
    // References stay valid as more stats are registered.
    for (int i = 0; i < 100; ++i) r.counter("nand.ch0.die0", "c" + std::to_string(i), "");
    c.add();
    EXPECT_EQ(static_cast<const Counter*>(r.find("nand.ch0.die0", "reads"))->value(), 4u);
}

TEST(CoreStats, RegisteringTwiceThrowsLogicError) {
    StatsRegistry r;
    r.counter("link", "tlps", "");
    EXPECT_THROW(r.counter("link", "tlps", ""), std::logic_error);
    // The same name of another kind is still the same statistic.
    EXPECT_THROW(r.distribution("link", "tlps", "ns", ""), std::logic_error);
    EXPECT_THROW(r.sum("link", "tlps", "uJ", ""), std::logic_error);
    EXPECT_THROW(r.occupancy("link", "tlps", ""), std::logic_error);
    // The same name in another module is fine.
    EXPECT_NO_THROW(r.counter("link2", "tlps", ""));
    try {
        r.counter("link", "tlps", "");
    } catch (const std::logic_error& e) {
        EXPECT_TRUE(contains(e.what(), "link.tlps")) << e.what();
    }
}

TEST(CoreStats, ToJsonOrdersModulesAndIsStable) {
    auto fill = [](StatsRegistry& r, bool reverse) {
        std::vector<std::string> mods = {"ssd.spu1", "host.cpu0", "nand.ch0.die1", "link",
                                         "nand.ch0.die0"};
        if (reverse) std::reverse(mods.begin(), mods.end());
        for (const auto& m : mods) {
            r.counter(m, "zeta", "").add(m.size());
            r.sum(m, "alpha", "uJ", "").add(1.5);
        }
    };
    StatsRegistry a, b;
    fill(a, false);
    fill(b, true);
    Json header = {{"version", "0.1.0"}, {"seed", 7}};
    Json ja = a.to_json(header, 1000);
    Json jb = b.to_json(header, 1000);
    // Header first, then modules.
    std::vector<std::string> top;
    for (const auto& [k, v] : ja.items()) top.push_back(k);
    EXPECT_EQ(top, (std::vector<std::string>{"version", "seed", "modules"}));
    // Modules sorted by name regardless of registration order.
    std::vector<std::string> mods;
    for (const auto& [k, v] : ja["modules"].items()) mods.push_back(k);
    EXPECT_EQ(mods, (std::vector<std::string>{"host.cpu0", "link", "nand.ch0.die0", "nand.ch0.die1",
                                              "ssd.spu1"}));
    // Within a module, stats stay in registration order (not alphabetical).
    std::vector<std::string> stats;
    for (const auto& [k, v] : ja["modules"]["link"].items()) stats.push_back(k);
    EXPECT_EQ(stats, (std::vector<std::string>{"zeta", "alpha"}));
    EXPECT_EQ(ja["modules"]["link"]["zeta"].get<uint64_t>(), 4u);
    // Byte-for-byte identical output.
    EXPECT_EQ(ja.dump(1), jb.dump(1));
    EXPECT_EQ(ja.dump(1), a.to_json(header, 1000).dump(1));
}

TEST(CoreStats, WriteJsonRoundTrips) {
    StatsRegistry r;
    r.counter("a", "n", "").add(5);
    r.distribution("a", "lat", "ns", "").sample(12);
    r.occupancy("b", "bus", "").occupy(1, 4);
    fs::path p =
        fs::temp_directory_path() / ("canopy_core_stats_" + std::to_string(getpid()) + ".json");
    Json header = {{"seed", 1}};
    r.write_json(p.string(), header, 8);
    std::ifstream f(p);
    Json back = Json::parse(f);
    fs::remove(p);
    EXPECT_EQ(back, r.to_json(header, 8));
    EXPECT_DOUBLE_EQ(back["modules"]["b"]["bus"]["utilisation"].get<double>(), 0.5);
}

TEST(CoreStats, WriteJsonToUnwritablePathThrowsInputError) {
    StatsRegistry r;
    r.counter("a", "n", "");
    const std::string path = "/nonexistent_canopy_dir/sub/stats.json";
    try {
        r.write_json(path, Json::object(), 1);
        FAIL() << "no error";
    } catch (const canopy::InputError& e) {
        EXPECT_EQ(e.input(), path);
        EXPECT_FALSE(e.message().empty());
    }
    // A directory is not a writable file either.
    EXPECT_THROW(r.write_json(fs::temp_directory_path().string(), Json::object(), 1),
                 canopy::InputError);
}

TEST(CoreStats, PrintSummaryShowsOnlyKeyStats) {
    StatsRegistry r;
    r.counter("nand.ch0.die0", "reads", "", true).add(7);
    r.counter("nand.ch0.die0", "resets", "", false).add(31337);
    r.distribution("host", "latency", "ns", "", true).sample(100);
    r.occupancy("link.up", "busy", "", true).occupy(0, 50);
    r.sum("nand", "energy", "uJ", "", false).add(3);
    std::ostringstream os;
    r.print_summary(os, 100);
    std::string s = os.str();
    EXPECT_TRUE(contains(s, "nand.ch0.die0.reads")) << s;
    EXPECT_TRUE(contains(s, "host.latency")) << s;
    EXPECT_TRUE(contains(s, "link.up.busy")) << s;
    EXPECT_TRUE(contains(s, "util 50%")) << s;
    EXPECT_FALSE(contains(s, "resets")) << s;
    EXPECT_FALSE(contains(s, "energy")) << s;
    EXPECT_FALSE(contains(s, "31337")) << s;
    // One line per key stat, in module order, values aligned in one column.
    std::istringstream in(s);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].rfind("  host.latency", 0), 0u) << s;
    EXPECT_EQ(lines[1].rfind("  link.up.busy", 0), 0u) << s;
    EXPECT_EQ(lines[2].rfind("  nand.ch0.die0.reads", 0), 0u) << s;
    const size_t col = std::string("  nand.ch0.die0.reads  ").size();
    EXPECT_EQ(lines[0].substr(col, 4), "n 1,") << s;
    EXPECT_EQ(lines[1].substr(col), "util 50%, 1 grants") << s;
    EXPECT_EQ(lines[2].substr(col), "7") << s;
}

TEST(CoreStats, PrintSummaryGroupsLikeModules) {
    // 2 channels x 2 dies: one row per statistic, aggregated; lone modules keep their names.
    StatsRegistry r;
    for (int ch = 0; ch < 2; ++ch)
        for (int d = 0; d < 2; ++d) {
            std::string m = "nand.ch" + std::to_string(ch) + ".die" + std::to_string(d + 10);
            r.sum(m, "energy", "uJ", "", true).add(1.5 * (ch * 2 + d + 1));  // 1.5 + 3 + 4.5 + 6
            r.counter(m, "reads", "", true).add(uint64_t(ch * 2 + d));       // 0 + 1 + 2 + 3
            r.occupancy(m, "array", "", true).occupy(0, 10.0 * (ch * 2 + d + 1));  // 10..40 of 100
            r.distribution(m, "lat", "us", "", true).sample(double(ch * 2 + d + 1));
        }
    r.counter("scenario", "wrong_bits", "", true).add(0);
    std::ostringstream os;
    r.print_summary(os, 100);
    const std::string s = os.str();
    EXPECT_TRUE(contains(s, "nand.ch*.die*.energy")) << s;
    EXPECT_TRUE(contains(s, "total 15 uJ over 4")) << s;
    EXPECT_TRUE(contains(s, "total 6 over 4")) << s;
    EXPECT_TRUE(contains(s, "util mean 25%, max 40% over 4")) << s;
    EXPECT_TRUE(contains(s, "n 4, mean 2.5 us, max 4 us over 4")) << s;
    EXPECT_TRUE(contains(s, "scenario.wrong_bits")) << s;
    EXPECT_FALSE(contains(s, "nand.ch0")) << s;
    std::istringstream in(s);
    int lines = 0;
    for (std::string l; std::getline(in, l);) ++lines;
    EXPECT_EQ(lines, 5);
}

TEST(CoreStats, PrintSummaryLeavesStreamFormatting) {
    StatsRegistry r;
    r.counter("m", "c", "", true).add(1);
    std::ostringstream os;
    r.print_summary(os, 1);
    // The caller's formatting state is not changed by the summary.
    os.str("");
    os << std::setw(5) << 42;
    EXPECT_EQ(os.str(), "   42");
}
