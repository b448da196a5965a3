// The catalogue of `canopy exp`: every experiment by its command name, and the runner that
// checks the options, runs one and writes NAME.csv, NAME.json (rows with id, quantity,
// simulated, published, unit, error_pct, paper_machine, and published_range where the paper
// gives a range or a bound, null at an open end; published and error_pct are null where the
// paper gives nothing), NAME.svg and NAME.config.json. A new experiment is one file,
// experiments/NAME.cpp, defining its entry, and one line in registry.cpp.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "experiments/experiment.hpp"

namespace canopy::experiments {

const std::vector<Experiment>& experiments();

// Runs one experiment and writes its outputs under `out_dir`: NAME.csv, NAME.json (the rows
// with the experiment, Canopy's version, the seed, a SHA-256 of the whole configuration and the
// keys --config/--set changed from the paper's machine, whose rows are then not scored),
// NAME.svg, NAME.config.json (the configuration it ran) and NAME.console/N/ (the SPU consoles of
// configuration N). A line per configuration goes to `progress` (null: none). Throws InputError
// for an unknown name (with the closest one), for a --workload the experiment does not have
// (naming the values it accepts, or saying that it has none), and for a bad configuration,
// before anything runs.
void run_experiment(const std::string& name, const ExpOptions& options, const std::string& out_dir,
                    std::ostream& os, std::ostream* progress = nullptr);

}  // namespace canopy::experiments
