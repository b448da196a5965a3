#include "app/session.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/sim_time.hpp"
#include "core/user_files.hpp"
#include "core/version.hpp"
#include "platform/platform.hpp"
#include "scenarios/flash_cosmos_demo.hpp"
#include "scenarios/flash_script.hpp"
#include "scenarios/host_plugin.hpp"
#include "scenarios/host_program.hpp"
#include "scenarios/lock_table.hpp"
#include "scenarios/willow_session.hpp"

namespace canopy::app {

using namespace platform;
using namespace scenarios;

SessionOutputs::SessionOutputs(const RunOptions& opt, core::Services& services)
    : opt_(opt), services_(services) {
    core::prepare_output_dir(opt.out_dir);  // before anything is simulated
    services.log.configure(opt.log_rules,
                           opt.quiet ? core::LogLevel::Warning : core::LogLevel::Info);
    services.log.set_console_dir(opt.out_dir + "/console");
    if (opt.waves()) services.waves.open(opt.out_dir + "/waves.vcd", opt.vcd_filters);
    if (opt.traces()) services.trace.open(opt.out_dir + "/trace.json", opt.trace_filters);
}

sc_core::sc_time SessionOutputs::simulate(const std::function<bool()>& done,
                                          sc_core::sc_starvation_policy policy) {
    // The models are built: every signal is declared. A filter that kept none is a typo.
    for (const std::string& f : services_.waves.unmatched_filters())
        throw InputError("--vcd-filter", f,
                         "matches no signal (the names are those of waves.vcd, "
                         "dotted: 'nand.ch0.*', '*.busy')");
    for (const std::string& r : services_.log.unmatched_rules())
        throw InputError("--log", r,
                         "matches no module that logs (the names are the modules', dotted: "
                         "'device.ssd.spu*', 'device.ssd.flash0')");
    core::Progress progress(!opt_.quiet);
    const sc_core::sc_time slice(platform::Platform::kSliceUs, sc_core::SC_US);
    auto finished = [&] {
        if (sc_core::sc_get_status() == sc_core::SC_STOPPED || (done && done())) return true;
        if (sc_core::sc_pending_activity()) return false;
        // Quiet before the program ended (a core asleep that nothing wakes): an attached
        // debugger may still stop it and look.
        return !(done && debugger_ && debugger_->wait_for_interrupt());
    };
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    while (!finished()) {
        if (debugger_) debugger_->poll();
        sc_core::sc_start(slice, policy);
        progress.update(sc_core::sc_time_stamp());
    }
    progress.finish();
    wall_seconds_ = progress.wall_seconds();
    end_ = sc_core::sc_time_stamp();
    return end_;
}

platform::DebugConfig SessionOutputs::debug_config() const {
    platform::DebugConfig d;
    d.gdb_port = opt_.gdb_port;
    if (opt_.gdb_port) d.gdbinit = opt_.out_dir + "/gdbinit";
    return d;
}

bool SessionOutputs::killed(const std::string& what, const std::string& where) const {
    if (!debugger_ || !debugger_->killed()) return false;
    std::cerr << what << ": killed by the debugger ";
    if (where.empty()) std::cerr << "at " << core::ns_of(end_) / 1e6 << " ms simulated";
    std::cerr << where << "; the run did not finish\n";
    return true;
}

int SessionOutputs::exit_status(int status) const {
    if (debugger_) debugger_->end(status);
    return status;
}

void SessionOutputs::finish(core::Json header, const std::vector<core::ParamInfo>& params,
                            const std::string& note) {
    const double elapsed_ns = core::ns_of(end_);
    header["sim_time_ns"] = elapsed_ns;
    core::Json config = core::Json::object();
    for (const auto& p : params) config[p.key] = p.value_text;
    header["config"] = config;
    services_.stats.write_json(opt_.out_dir + "/stats.json", header, elapsed_ns);
    services_.trace.close();
    services_.waves.close();

    if (opt_.quiet) return;
    char line[160];
    std::snprintf(line, sizeof line, "\nsimulated %.3f ms in %.2f s wall%s\n",
                  end_.to_seconds() * 1e3, wall_seconds_, note.c_str());
    std::cout << line;
    services_.stats.print_summary(std::cout, elapsed_ns);
    std::cout << "wrote " << opt_.out_dir << "/stats.json" << (opt_.waves() ? ", waves.vcd" : "")
              << (opt_.traces() ? ", trace.json" : "") << "\n";
}

int run_session(const RunOptions& opt) {
    PlatformConfig cfg;
    std::vector<std::string> overrides = opt.overrides;
    if (opt.seed) overrides.push_back("sim.seed=" + std::to_string(*opt.seed));
    auto params = load_config(cfg, opt.config_file, overrides);
    if (!opt.apps.empty()) {  // --app adds to scenario.apps (of the config file, or of --set)
        std::string apps = cfg.scenario.apps;
        for (const std::string& a : opt.apps) {
            if (a.find(',') != std::string::npos)
                throw InputError("--app", a, "one NAME=PATH.elf per --app (no ',')");
            apps += (apps.empty() ? "" : ",") + a;
        }
        overrides.push_back("scenario.apps=" + apps);
        cfg = PlatformConfig();
        params = load_config(cfg, opt.config_file, overrides);
    }

    // Parse the whole script before building anything: a bad line costs nothing.
    std::vector<FlashOp> ops =
        opt.script.empty() ? build_fc_demo(cfg) : parse_flash_script(opt.script, cfg.nand.geometry);

    if (!opt.script.empty()) {  // a script runs alone
        if (!cfg.scenario.apps.empty())
            throw InputError("canopy flash", "scenario.apps=" + cfg.scenario.apps,
                             "a script runs alone, without the Willow SSD to install apps on");
        cfg.scenario.host_program = "none";
        cfg.scenario.willow = false;
    }
    std::string willow_skipped, locks_skipped = "a script runs alone";
    if ((cfg.scenario.willow || !cfg.scenario.apps.empty()) &&
        !WillowScenario::prepare(cfg, willow_skipped))
        cfg.scenario.willow = false;
    const bool run_locks = opt.script.empty() && LockScenario::prepare(cfg, locks_skipped);

    // A host program from outside: checked and loaded before anything is built, on a core the
    // scenario's parts leave free.
    std::unique_ptr<HostPlugin> plugin;
    if (!opt.host_program.empty()) {
        std::map<unsigned, std::string> busy;
        if (cfg.scenario.host_program != "none")
            busy[HostScenario::kCore] = "scenario.host_program " + cfg.scenario.host_program;
        if (cfg.scenario.willow) {
            busy[WillowScenario::kKernelCore] = "the Willow scenario's host kernel";
            busy[WillowScenario::kUserCore] = "the Willow scenario's user program";
        }
        if (run_locks) busy[LockScenario::kCore] = "the lock-table run";
        HostPluginSpec spec = HostPluginSpec::parse(opt.host_program);
        spec.args = opt.host_args;
        plugin = std::make_unique<HostPlugin>(spec, params, cfg.host.cores, busy);
    } else if (!opt.host_args.empty()) {
        throw InputError("canopy run", "--host-arg " + opt.host_args.front(),
                         "an argument for --host-program, which is not given");
    }

    core::Services services;
    services.seed = cfg.sim.seed;
    SessionOutputs outputs(opt, services);
    cfg.debug = outputs.debug_config();

    Platform platform(cfg, services);
    platform.player.load(std::move(ops), opt.script);
    HostScenario host(cfg, platform);
    std::unique_ptr<WillowScenario> willow;
    if (cfg.scenario.willow) willow = std::make_unique<WillowScenario>(cfg, platform);
    if (plugin) plugin->start(platform, services.log.console_dir(), willow.get());
    std::unique_ptr<LockScenario> locks;
    if (run_locks) locks = std::make_unique<LockScenario>(cfg, platform);
    outputs.watch(platform.debugger.get());
    outputs.simulate();
    if (outputs.killed("canopy run")) return 1;

    FcDemoVerdict flash{platform.player.failures().empty(), ""};
    if (opt.script.empty())
        flash = report_fc_demo(cfg, platform.player, services.stats, std::cout);
    else
        platform.player.print_report(std::cout);
    // Each part's report, then one line that sums them up.
    std::vector<std::pair<std::string, std::string>> parts = {
        {"flash", flash.ok ? (flash.summary.empty() ? "ok" : flash.summary) : "FAILED"}};
    auto part = [&](const std::string& name, bool ok) {
        parts.push_back({name, ok ? "ok" : "FAILED"});
    };
    bool host_ok = host.report(std::cout, services.stats);
    if (cfg.scenario.host_program != "none") part("host program", host_ok);
    if (willow) {
        const bool ok = willow->report(std::cout, services.stats);
        part("Willow", ok);
        host_ok = ok && host_ok;
    } else if (!willow_skipped.empty()) {
        std::cout << "Willow: skipped: " << willow_skipped << "\n";
        parts.push_back({"Willow", "skipped"});
    }
    if (locks) {
        const bool ok = locks->report(std::cout, services.stats);
        part("lock table", ok);
        host_ok = ok && host_ok;
    } else if (opt.script.empty()) {
        std::cout << "Lock table: skipped: " << locks_skipped << "\n";
    }
    if (plugin) {
        const bool ok = plugin->report(std::cout, services.stats);
        part("host program " + opt.host_program, ok);
        host_ok = ok && host_ok;
    }
    if (opt.script.empty()) {
        std::cout << "Summary:";
        for (size_t i = 0; i < parts.size(); ++i)
            std::cout << (i ? ", " : " ") << parts[i].first << " " << parts[i].second;
        std::cout << "\n";
    }
    for (const auto& f : platform.player.failures()) std::cerr << "canopy: " << f << "\n";

    core::Json header = {{"canopy", core::kVersion},
                         {"scenario", opt.script.empty() ? "fc-demo" : opt.script},
                         {"seed", cfg.sim.seed},
                         {"sim_time_ns", 0.0},
                         {"functional", cfg.nand.functional}};
    outputs.finish(header, params, cfg.nand.functional ? "" : " (timing-only: no data kept)");
    return outputs.exit_status(flash.ok && host_ok ? 0 : 1);
}

}  // namespace canopy::app
