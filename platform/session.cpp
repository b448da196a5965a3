#include "platform/session.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/services.hpp"
#include "platform/fc_demo.hpp"
#include "platform/flash_script.hpp"
#include "platform/platform.hpp"
#include "platform/version.hpp"

namespace canopy::platform {

int run_session(const RunOptions& opt) {
    PlatformConfig cfg;
    std::vector<std::string> overrides = opt.overrides;
    if (opt.seed) overrides.push_back("sim.seed=" + std::to_string(*opt.seed));
    auto params = load_config(cfg, opt.config_file, overrides);

    // Parse the whole script before building anything: a bad line costs nothing.
    std::vector<FlashOp> ops = opt.script.empty() ? build_fc_demo(cfg)
                                                  : parse_flash_script(opt.script, cfg.nand.geometry);

    std::error_code ec;
    std::filesystem::create_directories(opt.out_dir, ec);
    if (ec) throw InputError("--out", opt.out_dir, "cannot create the directory: " + ec.message());
    core::Services services;
    services.seed = cfg.sim.seed;
    if (opt.vcd) services.waves.open(opt.out_dir + "/waves.vcd");
    if (opt.trace) services.trace.open(opt.out_dir + "/trace.json");

    Platform platform(cfg, services);
    platform.player.load(std::move(ops), opt.script);

    core::Progress progress(!opt.quiet);
    const sc_core::sc_time slice(100, sc_core::SC_US);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    while (sc_core::sc_pending_activity()) {
        sc_core::sc_start(slice);
        progress.update(sc_core::sc_time_stamp());
    }
    progress.finish();
    const sc_core::sc_time end = sc_core::sc_time_stamp();
    const double elapsed_ns = end.to_seconds() * 1e9;

    if (opt.script.empty()) report_fc_demo(cfg, platform.player, services.stats, std::cout);
    else platform.player.print_report(std::cout);
    for (const auto& f : platform.player.failures()) std::cerr << "canopy: " << f << "\n";

    core::Json header = {{"canopy", kVersion},
                         {"scenario", opt.script.empty() ? "fc-demo" : opt.script},
                         {"seed", cfg.sim.seed},
                         {"sim_time_ns", elapsed_ns},
                         {"functional", cfg.nand.functional}};
    core::Json config = core::Json::object();
    for (const auto& p : params) config[p.key] = p.value_text;
    header["config"] = config;
    services.stats.write_json(opt.out_dir + "/stats.json", header, elapsed_ns);
    services.trace.close();
    services.waves.close();

    if (!opt.quiet) {
        char line[160];
        std::snprintf(line, sizeof line, "\nsimulated %.3f ms in %.2f s wall%s\n", end.to_seconds() * 1e3,
                      progress.wall_seconds(), cfg.nand.functional ? "" : " (timing-only: no data kept)");
        std::cout << line;
        services.stats.print_summary(std::cout, elapsed_ns);
        std::cout << "wrote " << opt.out_dir << "/stats.json" << (opt.vcd ? ", waves.vcd" : "")
                  << (opt.trace ? ", trace.json" : "") << "\n";
    }
    return platform.player.failures().empty() ? 0 : 1;
}

}  // namespace canopy::platform
