// The Willow stack's runs from the command line (`canopy replay`, `canopy fio`); see
// willow_run.hpp.
#include "app/willow_run.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/version.hpp"
#include "scenarios/willow_session.hpp"

namespace canopy::app {

WillowRun::WillowRun(const RunOptions& run, std::string command)
    : run_(run), command_(std::move(command)) {}

void WillowRun::load() {
    std::vector<std::string> overrides = run_.overrides;
    if (run_.seed) overrides.push_back("sim.seed=" + std::to_string(*run_.seed));
    params = platform::load_config(cfg, run_.config_file, overrides);
    cfg.scenario.host_program = "none";
    std::string why;
    if (!scenarios::WillowScenario::find_firmware(cfg, why))
        throw InputError(command_, "", "the Willow stack cannot run: " + why);
    cfg.scenario.willow = false;  // the command's programs stand in for the scenario's
    if (!run_.precondition.empty()) {
        precondition_ = platform::Precondition::parse(run_.precondition, command_);
        platform::WillowStack::check_precondition(cfg);
    }
}

void WillowRun::build() {
    services.seed = cfg.sim.seed;
    outputs = std::make_unique<SessionOutputs>(run_, services);
    cfg.debug = outputs->debug_config();
    platform = std::make_unique<platform::Platform>(cfg, services);
    platform::WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    stack = std::make_unique<platform::WillowStack>(*platform, sc);
    if (precondition_) {
        stack->precondition(*precondition_, cfg.sim.seed);
        if (!run_.quiet) {  // host time, so not in the reports (same seed, same bytes)
            char line[160];
            std::snprintf(line, sizeof line, "%s: preconditioned (%s) in %.2f s of host time\n",
                          command_.c_str(), stack->preconditioned->fill.c_str(),
                          stack->preconditioned->wall_s);
            std::cerr << line;
        }
    }
    stack->start_kernel(kKernelCore);
}

bool WillowRun::simulate() {
    outputs->watch(platform->debugger.get());
    outputs->simulate();
    return !outputs->killed(command_);
}

int WillowRun::finish(const std::string& scenario, bool ok) {
    core::Json header = {{"canopy", core::kVersion},
                         {"scenario", scenario},
                         {"seed", cfg.sim.seed},
                         {"sim_time_ns", 0.0},
                         {"functional", cfg.nand.functional}};
    outputs->finish(header, params);
    return outputs->exit_status(platform->host.first_fault().empty() && ok ? 0 : 1);
}

}  // namespace canopy::app
