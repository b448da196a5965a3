#include "app/replay.hpp"

#include <fstream>
#include <iostream>

#include "app/version.hpp"
#include "core/error.hpp"
#include "platform/platform.hpp"
#include "platform/platform_config.hpp"
#include "platform/willow_stack.hpp"
#include "scenarios/block_replay.hpp"
#include "scenarios/willow_session.hpp"
#include "sw/host/block_trace.hpp"

namespace canopy::app {

using scenarios::BlockReplay;

int run_replay(const ReplayOptions& opt) {
    if (opt.path != "base-io" && opt.path != "direct-io")
        throw InputError("canopy replay", "--path " + opt.path,
                         "unknown path; it is base-io or direct-io");
    // The trace first: a bad line costs nothing.
    sw::MsrOptions mo;
    mo.disk = opt.disk;
    mo.max_requests = opt.max_requests;
    const sw::BlockTrace trace = sw::read_msr_trace(opt.trace, mo);

    platform::PlatformConfig cfg;
    std::vector<std::string> overrides = opt.run.overrides;
    if (opt.run.seed) overrides.push_back("sim.seed=" + std::to_string(*opt.run.seed));
    auto params = platform::load_config(cfg, opt.run.config_file, overrides);
    cfg.scenario.host_program = "none";
    if (opt.threads == 0 || opt.threads >= cfg.host.cores)
        throw InputError("canopy replay", "--threads " + std::to_string(opt.threads),
                         "needs 1 to " + std::to_string(cfg.host.cores - 1) +
                             " threads: host.core" + std::to_string(BlockReplay::kKernelCore) +
                             " runs the kernel, host.cores is " + std::to_string(cfg.host.cores));
    std::string why;
    if (!scenarios::WillowScenario::find_firmware(cfg, why))
        throw InputError("canopy replay", "", "the Willow stack cannot run: " + why);
    cfg.scenario.willow = false;  // the replay programs stand in for the scenario's

    core::Services services;
    services.seed = cfg.sim.seed;
    SessionOutputs outputs(opt.run, services);
    cfg.debug = outputs.debug_config();
    platform::Platform platform(cfg, services);
    platform::WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    platform::WillowStack stack(platform, sc);
    stack.start_kernel(BlockReplay::kKernelCore);
    BlockReplay replay(platform, stack, trace, {opt.path, opt.threads, opt.timed});
    outputs.watch(platform.debugger.get());
    outputs.simulate();
    if (outputs.killed("canopy replay")) return 1;

    const nlohmann::json r = replay.report();
    {
        std::ofstream f(opt.run.out_dir + "/replay.json");
        f << r.dump(2) << "\n";
    }
    replay.print(std::cout, r);
    std::cout << "wrote " << opt.run.out_dir << "/replay.json\n";

    core::Json header = {{"canopy", kVersion},
                         {"scenario", "replay " + trace.source},
                         {"seed", cfg.sim.seed},
                         {"sim_time_ns", 0.0},
                         {"functional", cfg.nand.functional}};
    outputs.finish(header, params);
    return outputs.exit_status(platform.host.first_fault().empty() && replay.finished() ? 0 : 1);
}

}  // namespace canopy::app
