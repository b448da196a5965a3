#include "platform/platform.hpp"

namespace canopy::platform {

Platform::Platform(const PlatformConfig& cfg, core::Services& services, std::ostream* log)
    : nand("nand", cfg.nand, services),
      player("player", cfg.nand.geometry.channels, cfg.nand.geometry.page_total_bytes(), services,
             sc_core::sc_time(cfg.sim.quantum_ns, sc_core::SC_NS), log) {
    for (uint32_t c = 0; c < cfg.nand.geometry.channels; ++c) player.channel[c].bind(nand.channel(c).target);
}

}  // namespace canopy::platform
