// One simulation run from the command line: load the config, open the outputs, elaborate the
// platform, run it with a progress line, then write stats.json and print the summary.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace canopy::platform {

struct RunOptions {
    std::string config_file;
    std::vector<std::string> overrides;
    std::optional<uint64_t> seed;
    std::string out_dir = "out";
    bool vcd = false, trace = false, quiet = false;
    std::string script;  // `canopy flash`: the command script to replay instead of the scenario
};

// Returns the process exit status: 0, or 1 when the run itself found a problem (a refused
// command a script did not expect). Input errors throw InputError.
int run_session(const RunOptions& opt);

}  // namespace canopy::platform
