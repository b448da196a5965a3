#include "platform/platform.hpp"

namespace canopy::platform {

Platform::Platform(const PlatformConfig& cfg, core::Services& services)
    : nand("nand", cfg.nand, services),
      player("player", cfg.nand.geometry.channels, cfg.nand.geometry.dies_per_channel, services,
             sc_core::sc_time(cfg.sim.quantum_ns, sc_core::SC_NS)) {
    for (uint32_t c = 0; c < cfg.nand.geometry.channels; ++c) player.channel[c].bind(nand.channel(c).target);
}

}  // namespace canopy::platform
