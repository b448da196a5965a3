#include "experiments/registry.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "core/error.hpp"
#include "core/user_files.hpp"
#include "core/version.hpp"
#include "experiments/figures.hpp"
#include "experiments/isolated.hpp"
#include "experiments/report.hpp"
#include "platform/flash_player.hpp"

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

namespace {

// Keys that are not the machine: the seed of its random streams, and `canopy run`'s default
// scenario (which no experiment runs) with where the firmware is read from.
bool not_the_machine(const std::string& key) {
    return key == "sim.seed" || key.rfind("scenario.", 0) == 0;
}

// The keys whose values --config/--set moved away from the experiment's own machine.
std::vector<std::string> changed_from_paper(const ExpOptions& options,
                                            const std::vector<core::ParamInfo>& config) {
    if (options.overrides.empty() && options.config_file.empty()) return {};
    ExpOptions paper = options;
    paper.overrides.clear();
    paper.config_file.clear();
    std::vector<core::ParamInfo> own;
    paper.platform({}, &own);
    std::map<std::string, std::string> value;
    for (const auto& p : own) value[p.key] = p.value_text;
    std::vector<std::string> changed;
    for (const auto& p : config)
        if (!not_the_machine(p.key) && value[p.key] != p.value_text)
            changed.push_back(p.key + "=" + p.value_text);
    return changed;
}

}  // namespace

void run_experiment(const std::string& name, const ExpOptions& options, const std::string& out_dir,
                    std::ostream& os, std::ostream* progress) {
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
    const PlatformConfig machine = run_options.platform({}, &config);  // checked up front
    ExpMeta meta;
    meta.experiment = e->name;
    meta.version = core::kVersion;
    meta.seed = machine.sim.seed;
    meta.changed = changed_from_paper(run_options, config);
    const std::string config_json = core::dump_params(config, true);
    meta.config_sha256 = platform::sha256_hex(reinterpret_cast<const uint8_t*>(config_json.data()),
                                              config_json.size());
    core::prepare_output_dir(out_dir);
    run_options.out_dir = out_dir;
    if (options.debug.gdb_port) run_options.debug.gdbinit = out_dir + "/" + e->name + ".gdbinit";
    const std::string base = out_dir + "/" + e->name;
    std::vector<ExpRow> rows;
    double seconds = 0;
    unsigned configurations = 0;
    {
        IsolatedBatch batch(e->name, base + ".console", progress);
        rows = e->run(run_options);
        seconds = batch.seconds(), configurations = batch.started();
    }
    for (ExpRow& r : rows) r.paper_machine = meta.changed.empty();
    if (progress && configurations)
        *progress << e->name << ": " << configurations << " configuration"
                  << (configurations == 1 ? "" : "s") << " in " << std::fixed
                  << std::setprecision(1) << seconds << " s" << std::defaultfloat << std::endl;
    os << e->name << ": " << e->description << "\n";
    for (const auto& o : options.overrides) os << "  --set " << o << "\n";
    if (!options.config_file.empty()) os << "  --config " << options.config_file << "\n";
    if (!meta.changed.empty()) {
        os << "  not the paper's machine (";
        for (size_t i = 0; i < meta.changed.size(); ++i) os << (i ? ", " : "") << meta.changed[i];
        os << " changed): rows are shown beside the published values, not scored\n";
    }
    print_table(rows, os);
    write_output(base + ".csv", to_csv(rows));
    write_output(base + ".json", to_json(rows, meta));
    write_output(base + ".config.json", config_json);
    os << "wrote " << base << ".csv, .json, .config.json";
    if (std::filesystem::exists(base + ".console"))
        os << "; SPU consoles in " << base << ".console/";
    os << "\n";
    if (options.figures) {
        const Figures f = draw_figures(base + ".json", out_dir);
        if (!f.error.empty())
            std::cerr
                << "canopy exp: warning: no figures for " << e->name << " (" << f.error
                << "; they need python3 with matplotlib: apt-get install python3-matplotlib)\n";
        else if (!f.files.empty())
            os << "figures:" << [&] {
                std::string v;
                for (const auto& file : f.files)
                    v += " " + std::filesystem::path(file).filename().string();
                return v;
            }() << "\n";
    }
}

}  // namespace canopy::experiments
