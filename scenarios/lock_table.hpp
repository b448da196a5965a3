// The lock-table part of `canopy run` (CCIX-vs-PCIe paper Section V, neoDBMS): beside the flash
// and Willow parts, host.core3 and the device's lock module lock and unlock record versions in a
// lock table in pinned huge-page host memory, over CCIX (platform/lock_table_run). Reports the
// mean lock request time of each side and that no lock was ever held twice.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "core/stats.hpp"
#include "platform/lock_table_run.hpp"
#include "platform/platform_config.hpp"

namespace canopy::scenarios {

class LockScenario {
  public:
    static constexpr unsigned kCore = 3;
    // Whether it runs; false with the reason in `why` when no run is asked for. Too few host
    // cores for one that is asked for: InputError.
    static bool prepare(const platform::PlatformConfig& cfg, std::string& why);
    // Starts both sides (before sc_start).
    LockScenario(const platform::PlatformConfig& cfg, platform::Platform& platform);
    // Prints the outcome, records it under "scenario.lock_table", returns whether it succeeded.
    bool report(std::ostream& out, core::StatsRegistry& stats) const;

  private:
    const platform::PlatformConfig& cfg_;
    platform::Platform& platform_;
    std::unique_ptr<platform::LockTableRun> run_;
};

}  // namespace canopy::scenarios
