// The elaborated platform: every model built from the config and wired together. This is the
// only place modules are bound to each other. Today: the NAND flash array and the flash command
// player that drives it (standing in for the flash controller until that model exists).
#pragma once

#include "core/services.hpp"
#include "nand/channel.hpp"
#include "platform/flash_player.hpp"
#include "platform/platform_config.hpp"

namespace canopy::platform {

class Platform {
public:
    Platform(const PlatformConfig& cfg, core::Services& services);

    nand::FlashArray nand;
    FlashPlayer player;
};

}  // namespace canopy::platform
