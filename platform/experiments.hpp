// The experiment catalogue of `canopy exp`: each experiment reproduces published figures,
// prints simulated beside published values with the relative error, and writes NAME.csv,
// NAME.json (rows with id, quantity, simulated, published, unit, error_pct) and NAME.svg.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace canopy::platform {

struct ExpRow {
    std::string id, quantity;
    double simulated = 0, published = 0;
    std::string unit;
    double error_pct() const;
};

struct Experiment {
    std::string name, description;
    std::function<std::vector<ExpRow>(bool quick)> run;
};

const std::vector<Experiment>& experiments();

// Runs one experiment and writes its outputs under `out_dir`. Throws InputError for an unknown
// name (with the closest one).
void run_experiment(const std::string& name, bool quick, const std::string& out_dir,
                    std::ostream& os);

// The table, CSV, JSON and SVG forms of a result.
void print_table(const std::vector<ExpRow>& rows, std::ostream& os);
std::string to_csv(const std::vector<ExpRow>& rows);
std::string to_json(const std::vector<ExpRow>& rows);
std::string to_svg(const std::string& title, const std::vector<ExpRow>& rows);

}  // namespace canopy::platform
