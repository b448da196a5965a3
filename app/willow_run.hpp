// What `canopy replay` and `canopy fio` share: host programs driving the Willow stack on the
// whole platform. load() reads the config with the run's overrides (no host program of the
// scenario's, no Willow session) and checks that the stack's firmware is there, so a caller
// can refuse bad options before anything is built; build() makes the session's outputs, the
// platform and the stack, its kernel on host core 0; simulate() runs it (false: a debugger
// killed it); finish() writes stats.json and returns the exit status.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/session.hpp"
#include "core/config.hpp"
#include "core/services.hpp"
#include "platform/platform.hpp"
#include "platform/platform_config.hpp"
#include "platform/willow_stack.hpp"

namespace canopy::app {

class WillowRun {
  public:
    static constexpr unsigned kKernelCore = 0;

    WillowRun(const RunOptions& run, std::string command);
    void load();
    void build();
    bool simulate();
    int finish(const std::string& scenario, bool ok);

    platform::PlatformConfig cfg;
    std::vector<core::ParamInfo> params;
    core::Services services;
    std::unique_ptr<SessionOutputs> outputs;
    std::unique_ptr<platform::Platform> platform;
    std::unique_ptr<platform::WillowStack> stack;

  private:
    std::optional<platform::Precondition> precondition_;
    const RunOptions& run_;
    const std::string command_;
};

}  // namespace canopy::app
