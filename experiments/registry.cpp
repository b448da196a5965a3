#include "experiments/registry.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/user_files.hpp"
#include "experiments/report.hpp"

namespace canopy::experiments {

// The catalogue, in the order `canopy exp --list` shows it: one line per experiment, each
// defined in experiments/<its command name>.cpp.
Experiment nand_characterisation_experiment();
Experiment ats_cost_experiment();
Experiment pcie_latency_experiment();
Experiment ccix_latency_experiment();
Experiment locality_experiment();
Experiment coherence_experiment();
Experiment atomics_experiment();
Experiment lock_table_experiment();
Experiment willow_io_experiment();
Experiment willow_apps_experiment();
Experiment rpc_latency_experiment();
Experiment ftl_experiment();
Experiment flashcosmos_experiment();

const std::vector<Experiment>& experiments() {
    static const std::vector<Experiment> list = {
        nand_characterisation_experiment(),
        ats_cost_experiment(),
        pcie_latency_experiment(),
        ccix_latency_experiment(),
        locality_experiment(),
        coherence_experiment(),
        atomics_experiment(),
        lock_table_experiment(),
        willow_io_experiment(),
        willow_apps_experiment(),
        rpc_latency_experiment(),
        ftl_experiment(),
        flashcosmos_experiment(),
    };
    return list;
}

void run_experiment(const std::string& name, const ExpOptions& options, const std::string& out_dir,
                    std::ostream& os) {
    const Experiment* e = nullptr;
    std::vector<std::string> names;
    for (const auto& x : experiments()) {
        names.push_back(x.name);
        if (x.name == name) e = &x;
    }
    if (!e) {
        std::string hint = closest_match(name, names);
        throw InputError("canopy exp", name,
                         "no such experiment" + (hint.empty() ? std::string("; see --list")
                                                              : "; did you mean '" + hint + "'?"));
    }
    if (!options.workload.empty()) {
        const auto& w = e->workloads;
        if (w.empty())
            throw InputError("canopy exp", "--workload " + options.workload,
                             "experiment '" + e->name + "' has no workloads");
        if (std::find(w.begin(), w.end(), options.workload) == w.end()) {
            std::string allowed;
            for (const auto& x : w) allowed += (allowed.empty() ? "" : "|") + x;
            throw InputError("canopy exp", "--workload " + options.workload,
                             "unknown workload of '" + e->name + "'; allowed: " + allowed);
        }
    }
    if (options.debug.gdb_port && !e->runs_firmware)
        throw InputError(
            "canopy exp", "--gdb " + std::to_string(*options.debug.gdb_port),
            "experiment '" + e->name +
                "' runs no SPU firmware, so there is nothing to debug; these do:" + [] {
                    std::string v;
                    for (const auto& x : experiments())
                        if (x.runs_firmware) v += " " + x.name;
                    return v;
                }());
    ExpOptions run_options = options;
    run_options.machine = e->machine;
    std::vector<core::ParamInfo> config;  // what the machines start from, for NAME.config.json
    run_options.platform({}, &config);    // checked up front
    core::prepare_output_dir(out_dir);
    run_options.out_dir = out_dir;
    if (options.debug.gdb_port) run_options.debug.gdbinit = out_dir + "/" + e->name + ".gdbinit";
    std::vector<ExpRow> rows = e->run(run_options);
    os << e->name << ": " << e->description << "\n";
    for (const auto& o : options.overrides) os << "  --set " << o << "\n";
    if (!options.config_file.empty()) os << "  --config " << options.config_file << "\n";
    print_table(rows, os);
    const std::string base = out_dir + "/" + e->name;
    write_output(base + ".csv", to_csv(rows));
    write_output(base + ".json", to_json(rows));
    write_output(base + ".svg", to_svg(e->name, rows));
    write_output(base + ".config.json", core::dump_params(config, true));
    os << "wrote " << base << ".csv, .json, .svg, .config.json\n";
}

}  // namespace canopy::experiments
