// What an experiment of `canopy exp` is: a row of its result (simulated beside published, with
// the relative error), the options it runs with, and its entry in the catalogue
// (experiments/registry.hpp). Each experiment lives in experiments/NAME.cpp, NAME being its
// command name.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "platform/platform_config.hpp"

namespace canopy::experiments {

using platform::PlatformConfig;

struct ExpRow {
    std::string id, quantity;
    double simulated = 0;
    // What the paper gives; none where it gives nothing to compare with (blank in the table and
    // CSV, null in the JSON). A published 0 (no bit errors, say) is a value like any other.
    std::optional<double> published;
    std::string unit;
    // A published range (the paper's "750-800 ns"), or a bound where the paper gives only a trend
    // ("fewer with huge pages": lo 1, hi infinity): `published` is then what the plot shows (the
    // middle, or the bound), and the error is the distance to the nearer end (0 inside). Both 0:
    // a single value.
    double published_lo = 0, published_hi = 0;
    // False when the row's machine is not the paper's (`--config`/`--set` changed it): the row
    // is shown beside the published value but not scored against it.
    bool paper_machine = true;
    bool has_range() const { return published_hi > published_lo; }
    // The relative error against the published value or range; none when nothing is published
    // or the machine is not the paper's.
    std::optional<double> error_pct() const;
};

// What `canopy exp` passes to an experiment: --quick, and --workload for the experiments that
// have workloads (empty: the experiment's default).
struct ExpOptions {
    bool quick = false;
    std::string workload;
    // Draw the papers' figures (figures.hpp) after the run; --no-figures: not.
    bool figures = true;
    // --config FILE and --set key=value: what the experiment's machines start from, as
    // `canopy run` does.
    std::string config_file;
    std::vector<std::string> overrides;
    // Where the experiment may write outputs of its own, NAME.<what> (set by run_experiment;
    // empty: write none).
    std::string out_dir;
    // The machine the experiment starts from (Experiment::machine; empty: the defaults).
    std::function<PlatformConfig()> machine;
    // --gdb: every machine the experiment builds serves GDB on its SPU cores, in turn (the
    // gdbinit goes to OUT/NAME.gdbinit; set by run_experiment).
    platform::DebugConfig debug;
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
    // Its machines boot SPU firmware (SPU-OS and its apps): `--gdb` can debug them.
    bool runs_firmware = false;
};

}  // namespace canopy::experiments
