// Statistics registry keyed by hierarchical module name ("nand.ch0.die1"): counters, sums with
// a unit (energy), distributions (count, mean, min, percentiles, max, log-scale histogram) and
// occupancy of shared resources (utilisation, queueing). Written to stats.json in a fixed order
// so that the same config and seed give the same bytes.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

// Only declared here: the full JSON and histogram headers cost every includer seconds of compile.
#include <nlohmann/json_fwd.hpp>

namespace canopy::core {

using Json = nlohmann::ordered_json;

class Stat {
  public:
    Stat(std::string name, std::string unit, std::string desc)
        : name_(std::move(name)), unit_(std::move(unit)), desc_(std::move(desc)) {}
    virtual ~Stat() = default;
    virtual Json to_json(double elapsed_ns) const = 0;
    // One short value for the terminal summary.
    virtual std::string summary(double elapsed_ns) const = 0;
    // The same for a group of like statistics of like modules (nand.ch*.die*), all of this type.
    virtual std::string group_summary(const std::vector<const Stat*>& group,
                                      double elapsed_ns) const = 0;
    const std::string& name() const { return name_; }
    const std::string& unit() const { return unit_; }
    const std::string& description() const { return desc_; }

  private:
    std::string name_, unit_, desc_;
};

class Counter : public Stat {
  public:
    using Stat::Stat;
    void add(uint64_t n = 1) { value_ += n; }
    uint64_t value() const { return value_; }
    Json to_json(double) const override;
    std::string summary(double) const override;
    std::string group_summary(const std::vector<const Stat*>& g, double) const override;

  private:
    uint64_t value_ = 0;
};

// A running total with a unit, e.g. energy in uJ.
class Sum : public Stat {
  public:
    using Stat::Stat;
    void add(double v) { value_ += v; }
    double value() const { return value_; }
    Json to_json(double) const override;
    std::string summary(double) const override;
    std::string group_summary(const std::vector<const Stat*>& g, double) const override;

  private:
    double value_ = 0;
};

// Samples of a latency or size. Percentiles come from a log-scale histogram with
// `kBinsPerDecade` bins per decade, so they are exact to within half a bin (about 1.2%);
// count, mean, min and max are exact. Memory does not grow with the number of samples.
class Distribution : public Stat {
  public:
    static constexpr int kBinsPerDecade = 100;
    static constexpr double kLow = 1e-3, kHigh = 1e13;

    Distribution(std::string name, std::string unit, std::string desc);
    ~Distribution() override;
    void sample(double v);
    uint64_t count() const { return count_; }
    double mean() const { return count_ ? sum_ / double(count_) : 0.0; }
    double min() const { return count_ ? min_ : 0.0; }
    double max() const { return count_ ? max_ : 0.0; }
    double percentile(double p) const;  // p in [0, 100]
    Json to_json(double) const override;
    std::string summary(double) const override;
    std::string group_summary(const std::vector<const Stat*>& g, double) const override;

  private:
    struct Histogram;             // boost::histogram on a log axis over [kLow, kHigh) (stats.cpp)
    static int bin_of(double v);  // the axis's index(v) without a logarithm
    std::unique_ptr<Histogram> hist_;
    uint64_t count_ = 0;
    double sum_ = 0, min_ = 0, max_ = 0;
    // The last sample's bin: a cache hit's latency repeats exactly, sample after sample.
    double last_value_ = std::numeric_limits<double>::quiet_NaN();
    int last_bin_ = 0;
};

// A shared resource (link direction, bus, die) that requests occupy one after another. The
// owner calls `occupy(wait, busy)` per grant; utilisation = busy / elapsed and, by Little's law,
// mean queue depth = total wait / elapsed.
class Occupancy : public Stat {
  public:
    using Stat::Stat;
    void occupy(double wait_ns, double busy_ns);
    uint64_t grants() const { return grants_; }
    double busy_ns() const { return busy_ns_; }
    double wait_ns() const { return wait_ns_; }
    Json to_json(double elapsed_ns) const override;
    std::string summary(double elapsed_ns) const override;
    std::string group_summary(const std::vector<const Stat*>& g, double elapsed_ns) const override;

  private:
    uint64_t grants_ = 0;
    double busy_ns_ = 0, wait_ns_ = 0, max_wait_ns_ = 0;
};

class StatsRegistry {
  public:
    // Registration returns a reference that stays valid for the registry's lifetime.
    // `key` stats are shown in the end-of-run summary.
    Counter& counter(const std::string& module, const std::string& name, const std::string& desc,
                     bool key = false);
    Sum& sum(const std::string& module, const std::string& name, const std::string& unit,
             const std::string& desc, bool key = false);
    Distribution& distribution(const std::string& module, const std::string& name,
                               const std::string& unit, const std::string& desc, bool key = false);
    Occupancy& occupancy(const std::string& module, const std::string& name,
                         const std::string& desc, bool key = false);

    const Stat* find(const std::string& module, const std::string& name) const;

    // `header` holds run-level facts (version, seed, sim time) written first.
    Json to_json(const Json& header, double elapsed_ns) const;
    void write_json(const std::string& path, const Json& header, double elapsed_ns) const;
    // The key statistics as an aligned table; like statistics of modules whose names differ only
    // in numbers (nand.ch0.die3, nand.ch1.die0) share one row: "nand.ch*.die*.energy".
    void print_summary(std::ostream& os, double elapsed_ns) const;

  private:
    struct Entry {
        std::unique_ptr<Stat> stat;
        bool key;
    };
    template <class T, class... A>
    T& add(const std::string& module, bool key, A&&... args);

    std::map<std::string, std::vector<Entry>> modules_;
};

}  // namespace canopy::core
