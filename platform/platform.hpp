// The elaborated platform: every model built from the config and wired together. This is the
// only place modules are bound to each other. Today: the host (cores, caches, home node, DRAM,
// IOMMU, kernel, root port), the PCIe link, the device endpoint (ATC, DMA engine and its BAR,
// traffic generator, device memory), and the NAND flash array with the flash command player that
// drives it (standing in for the flash controller until that model exists).
//
//   host.downstream --> link.host_target   link.device_initiator --> device.vc
//   device.fabric --> link.device_target   link.host_initiator --> host.vc
#pragma once

#include "core/services.hpp"
#include "link/pcie_link.hpp"
#include "nand/channel.hpp"
#include "platform/device.hpp"
#include "platform/flash_player.hpp"
#include "platform/host_complex.hpp"
#include "platform/platform_config.hpp"

namespace canopy::platform {

class Platform {
  public:
    Platform(const PlatformConfig& cfg, core::Services& services);

    HostComplex host;
    link::PcieLink link;
    Device device;
    nand::FlashArray nand;
    FlashPlayer player;
};

}  // namespace canopy::platform
