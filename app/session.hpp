// One simulation run from the command line: load the config, open the outputs, elaborate the
// platform, run it with a progress line, then write stats.json and print the summary. The
// pieces every simulating command shares (`run`, `flash`, `iss`) are in SessionOutputs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "platform/debugger.hpp"

namespace canopy::app {

struct RunOptions {
    std::string config_file;
    std::vector<std::string> overrides;
    std::optional<uint64_t> seed;
    std::string out_dir = "out";
    bool vcd = false, trace = false, quiet = false;
    std::vector<std::string>
        vcd_filters;  // --vcd-filter: globs of the signals kept (implies --vcd)
    bool waves() const { return vcd || !vcd_filters.empty(); }
    std::vector<std::string> trace_filters;  // --trace-filter: categories kept (implies --trace)
    bool traces() const { return trace || !trace_filters.empty(); }
    std::vector<std::string> log_rules;  // --log PATTERN=LEVEL (repeatable)
    std::string script;  // `canopy flash`: the command script to replay instead of the scenario
    std::optional<uint16_t> gdb_port;  // --gdb: serve GDB on this port (0: any free one)
    // --host-program CORE=PATH.so[:SYMBOL] and its --host-arg's (scenarios/host_plugin.hpp).
    std::string host_program;
    std::vector<std::string> host_args;
    // --model LIB.so (repeatable): model libraries, loaded before the configuration is read.
    std::vector<std::string> models;
    // --app NAME=PATH.elf (repeatable): SSD Apps from outside, added to scenario.apps.
    std::vector<std::string> apps;
    // --precondition seq|rand|PERCENT (`canopy replay`, `canopy fio`; "" none).
    std::string precondition;
};

// The outputs of one run and the loop that drives the kernel. Construct before elaborating the
// models (it opens waves.vcd and trace.json, which they register with), then simulate(), then
// finish().
class SessionOutputs {
  public:
    // Creates the output directory and opens the files asked for. Throws InputError.
    SessionOutputs(const RunOptions& opt, core::Services& services);

    // Runs the kernel in slices, drawing the progress line, until nothing is pending, the
    // simulation was stopped, or `done` (optional) says so. With a debugger watched and `done`
    // given, a simulation gone quiet before it is done waits for the debugger's Ctrl-C. Returns the
    // simulated end time: the end of the last slice, or with SC_EXIT_ON_STARVATION the time of the
    // last activity.
    sc_core::sc_time simulate(const std::function<bool()>& done = nullptr,
                              sc_core::sc_starvation_policy policy = sc_core::SC_RUN_TO_TIME);

    // --gdb: what the machine's debugger is to do (the port; OUT/gdbinit), and the debugger to
    // serve between the kernel's slices, outside every SystemC process (it listens for Ctrl-C
    // there, so that it changes nothing inside the simulation).
    platform::DebugConfig debug_config() const;
    void watch(platform::Debugger* debugger) { debugger_ = debugger; }
    // The debugger ended the run (`kill`): says so on stderr, naming `what` ran and `where` it
    // stopped (default: the simulated time).
    bool killed(const std::string& what, const std::string& where = "") const;
    // The run's exit status, which an attached debugger hears as the program's exit; returns it.
    int exit_status(int status) const;

    // Writes stats.json: `header` (run-level facts), then the effective config from `params`,
    // then every module's statistics; closes trace and waves; unless quiet, prints the time,
    // the summary of key statistics and the files written. `note` follows the time line.
    void finish(core::Json header, const std::vector<core::ParamInfo>& params,
                const std::string& note = "");

    sc_core::sc_time end() const { return end_; }
    // Corrects the end of the run when a model knows it better than the kernel: the kernel may
    // have gone on past the moment a core (running ahead of it) ended the program.
    void set_end(const sc_core::sc_time& t) { end_ = t; }

  private:
    const RunOptions& opt_;
    core::Services& services_;
    double wall_seconds_ = 0;
    sc_core::sc_time end_;
    platform::Debugger* debugger_ = nullptr;
};

// Returns the process exit status: 0, or 1 when the run itself found a problem (a refused
// command a script did not expect). Input errors throw InputError.
int run_session(const RunOptions& opt);

}  // namespace canopy::app
