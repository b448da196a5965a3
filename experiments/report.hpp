// The forms of an experiment's result: the terminal table, CSV and JSON (its figures are
// figures.hpp's), and writing an output file.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/experiment.hpp"

namespace canopy::experiments {

// The table fits `columns` characters: quantities wrap, a long id takes a line of its own (the
// full text is in the CSV and JSON). The error column is blank where nothing is published and
// says "unscored" where the machine is not the paper's.
void print_table(const std::vector<ExpRow>& rows, std::ostream& os, size_t columns = 100);
std::string to_csv(const std::vector<ExpRow>& rows);

// What NAME.json says about the run beside its rows.
struct ExpMeta {
    std::string experiment, version;
    uint64_t seed = 0;
    std::string config_sha256;         // of NAME.config.json, the whole configuration it ran
    std::vector<std::string> changed;  // keys --config/--set moved from the paper's machine
};
// {"experiment", "canopy", "seed", "config_sha256", "paper_machine", "changed", "rows": [...]}.
std::string to_json(const std::vector<ExpRow>& rows, const ExpMeta& meta);
// Writes an output file; throws InputError naming the path when it cannot.
void write_output(const std::string& path, const std::string& text);

}  // namespace canopy::experiments
