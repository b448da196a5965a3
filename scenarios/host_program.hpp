// The host side of `canopy run`: a host program started on host.core0 beside the flash
// scenario (scenario.host_program). Today "dma-check" (sw/host/dma_check.hpp): a PCIe-DMA round
// trip programmed through BAR0, data checked; "none" runs no host program.
#pragma once

#include <memory>
#include <ostream>

#include "core/stats.hpp"
#include "platform/platform.hpp"
#include "platform/platform_config.hpp"
#include "sw/host/dma_check.hpp"

namespace canopy::scenarios {

class HostScenario {
  public:
    static constexpr unsigned kCore = 0;  // the core its program runs on
    // Starts the configured program (before sc_start).
    HostScenario(const platform::PlatformConfig& cfg, platform::Platform& platform);
    // Prints the outcome, records it under "scenario.host" and returns whether it succeeded.
    bool report(std::ostream& out, core::StatsRegistry& stats) const;

  private:
    const platform::PlatformConfig& cfg_;
    platform::Platform& platform_;
    sw::DmaCheckResult dma_;
};

}  // namespace canopy::scenarios
