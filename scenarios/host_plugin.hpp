// A host program from outside Canopy (include/canopy/host_program.h): a shared library that
// `canopy run --host-program CORE=PATH.so[:SYMBOL]` loads with dlopen and runs on host core CORE
// as a simulated thread, beside the default scenario. Its interface is the C table of
// host_program.h over HostCore (models/host/host_core.hpp); its exit code, fault and time are
// reported and recorded as host.coreN.program statistics.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/stats.hpp"
#include "platform/platform.hpp"

namespace canopy::scenarios {

class WillowScenario;

struct HostPluginSpec {
    unsigned core = 0;
    std::string path, symbol = "canopy_host_main";
    std::vector<std::string> args;  // --host-arg, after argv[0] (the path)
    // Parses "CORE=PATH.so[:SYMBOL]" (--host-program); InputError naming it.
    static HostPluginSpec parse(const std::string& text);
};

class HostPlugin {
  public:
    // Loads the library and finds its entry and ABI version before anything is built: InputError
    // (naming --host-program and the path) for a missing or unloadable file, a missing symbol, a
    // library built against another ABI version, or a core the machine does not have or one of
    // `busy` (core -> what runs there) holds.
    HostPlugin(HostPluginSpec spec, const std::vector<core::ParamInfo>& config, unsigned cores,
               const std::map<unsigned, std::string>& busy);
    ~HostPlugin();
    HostPlugin(const HostPlugin&) = delete;
    HostPlugin& operator=(const HostPlugin&) = delete;

    // Starts the program on its core (before sc_start); its printed lines are also kept in
    // CONSOLE_DIR/host.coreN.log ("": not kept). With `willow`, its ssd_ calls reach the SSD.
    void start(platform::Platform& platform, const std::string& console_dir,
               WillowScenario* willow = nullptr);
    // Prints its outcome, records it and returns whether it ran to an exit code of 0.
    bool report(std::ostream& out, core::StatsRegistry& stats) const;

    struct Run;  // what the program's thread shares with the API table

  private:
    HostPluginSpec spec_;
    void* handle_ = nullptr;
    void* entry_ = nullptr;
    std::unique_ptr<Run> run_;
};

}  // namespace canopy::scenarios
