// The experiment catalogue of `canopy exp`: each experiment reproduces published figures,
// prints simulated beside published values with the relative error, and writes NAME.csv,
// NAME.json (rows with id, quantity, simulated, published, unit, error_pct, and published_range
// where the paper gives a range or a bound, null at an open end) and NAME.svg.
#pragma once

#include <array>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "platform/platform_config.hpp"

namespace canopy::platform {

struct ExpRow {
    std::string id, quantity;
    double simulated = 0, published = 0;
    std::string unit;
    // A published range (the paper's "750-800 ns"), or a bound where the paper gives only a trend
    // ("fewer with huge pages": lo 1, hi infinity): `published` is then what the plot shows (the
    // middle, or the bound), and the error is the distance to the nearer end (0 inside). Both 0:
    // a single value.
    double published_lo = 0, published_hi = 0;
    bool has_range() const { return published_hi > published_lo; }
    double error_pct() const;
};

// What `canopy exp` passes to an experiment: --quick, and --workload for the experiments that
// have workloads (empty: the experiment's default).
struct ExpOptions {
    bool quick = false;
    std::string workload;
    // --config FILE and --set key=value: what the experiment's machines start from, as
    // `canopy run` does.
    std::string config_file;
    std::vector<std::string> overrides;
    // Where the experiment may write outputs of its own, NAME.<what> (set by run_experiment;
    // empty: write none).
    std::string out_dir;
    // The machine the experiment starts from (Experiment::machine; empty: the defaults).
    std::function<PlatformConfig()> machine;
    // That machine, then the file, then the overrides, then `extra` (the experiment's own
    // settings, such as a profile it compares); throws InputError for a bad key or value.
    // `params`, if given, receives the parameter table (for dumps).
    PlatformConfig platform(const std::vector<std::string>& extra = {},
                            std::vector<core::ParamInfo>* params = nullptr) const;
};

struct Experiment {
    std::string name, description;
    std::function<std::vector<ExpRow>(const ExpOptions&)> run;
    // The values --workload accepts; empty: the experiment has no workloads and refuses it.
    std::vector<std::string> workloads = {};
    // The machine it starts from when not the platform's defaults (Willow's prototype, say);
    // --config/--set change it (ExpOptions::platform).
    std::function<PlatformConfig()> machine = nullptr;
};

const std::vector<Experiment>& experiments();

// Runs one experiment and writes its outputs under `out_dir` (for one that takes a
// configuration also NAME.config.json, the configuration it ran). Throws InputError for an
// unknown name (with the closest one), for a --workload the experiment does not have (naming the
// values it accepts, or saying that it has none), for --config/--set on an experiment that does
// not take them (naming those that do), and for a bad configuration, before anything runs.
void run_experiment(const std::string& name, const ExpOptions& options, const std::string& out_dir,
                    std::ostream& os);

// The table, CSV, JSON and SVG forms of a result.
void print_table(const std::vector<ExpRow>& rows, std::ostream& os);
std::string to_csv(const std::vector<ExpRow>& rows);
std::string to_json(const std::vector<ExpRow>& rows);
std::string to_svg(const std::string& title, const std::vector<ExpRow>& rows);

// Histograms of latency for a plot: panels side by side, each overlaying its series (the
// Distribution's bins: lower edge, upper edge, samples) as shares of their samples on a log axis.
struct HistogramSeries {
    std::string label;
    std::vector<std::array<double, 3>> bins;  // lo, hi, count
};
struct HistogramPanel {
    std::string title;
    std::vector<HistogramSeries> series;
};
std::string histogram_svg(const std::string& title, const std::vector<HistogramPanel>& panels);

// Writes an output file; throws InputError naming the path when it cannot.
void write_output(const std::string& path, const std::string& text);

}  // namespace canopy::platform
