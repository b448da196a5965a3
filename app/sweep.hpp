// `canopy sweep`: one canopy command (exp, run, replay, fio) over a grid of configuration values,
// each point an independent canopy process in a folder of its own, run locally in parallel or
// on a Slurm cluster as one job array; then every point's result merged into one table (CSV and
// JSON: a row per point per quantity) and plots of chosen quantities against the varied keys.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace canopy::app {

struct SweepOptions {
    std::string command;            // exp | run | replay | fio
    std::vector<std::string> args;  // the command's own arguments (exp: NAME first)
    std::vector<std::pair<std::string, std::vector<std::string>>> vary;  // --vary key=v1,v2
    bool zip = false;   // pair the lists instead of their product
    unsigned jobs = 0;  // points at once, locally (0: the number of cores)
    std::string out_dir = "sweep";
    bool resume = false;             // run only points without a successful result
    std::vector<std::string> plots;  // quantities to plot against the varied keys
    bool slurm = false;              // one job array through sbatch, then gather
    std::string partition, time;     // --partition, --time for sbatch
};

// One point of the grid: its folder name under OUT/points/ and its settings.
struct SweepPoint {
    std::string name;  // "000", "001", ...
    std::vector<std::pair<std::string, std::string>> settings;
};

// The grid's points in order (the first --vary key slowest). InputError for a --vary without
// values, a key given twice, or --zip lists of different lengths.
std::vector<SweepPoint> sweep_points(const SweepOptions& o);

// Runs the sweep and writes OUT/sweep.csv, OUT/sweep.json and the plots; returns the exit
// status: 0 when every point succeeded, 1 when one failed (the others are still merged).
// InputError (before anything runs) for a bad key or value at any point, a bad option.
int run_sweep(const SweepOptions& o);

}  // namespace canopy::app
