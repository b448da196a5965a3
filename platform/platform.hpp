// The elaborated platform: every model built from the config and wired together. This is the
// only place modules are bound to each other. Today: the host (cores, caches, home node, DRAM,
// IOMMU, kernel, root port), the PCIe link, the device endpoint (ATC, DMA engine and its BAR,
// traffic generator, device memory, the Willow SSD), and the NAND flash array. Each channel is
// driven by the SSD's flash controller for it and by the flash command player (`canopy flash`
// scripts), through a fan-in in front of the channel.
//
//   host.downstream --> link.host_target   link.device_initiator --> device.vc
//   device.fabric --> link.device_target   link.host_initiator --> host.vc
//   device.ssd.flash<c>.nand, player.channel[c] --> nand_port<c> --> nand.ch<c>
#pragma once

#include <memory>
#include <vector>

#include "core/services.hpp"
#include "link/pcie_link.hpp"
#include "nand/channel.hpp"
#include "platform/debugger.hpp"
#include "platform/device.hpp"
#include "platform/flash_player.hpp"
#include "platform/host_complex.hpp"
#include "platform/platform_config.hpp"
#include "platform/user_model.hpp"

namespace canopy::platform {

class Platform {
  public:
    Platform(const PlatformConfig& cfg, core::Services& services);
    Platform(const Platform&) = delete;
    Platform& operator=(const Platform&) = delete;

    // Willow's device as its host driver sees it; with `interrupts`, the bridge's completion
    // MSIs reach HREs through host.msi.
    sw::WillowDevice willow_device(bool interrupts);

    // sc_start() (or, with a duration, sc_start(duration)) for a machine that may be under GDB:
    // with a debugger the kernel runs in slices of kSlice simulated, and the debugger is served
    // between them, outside every SystemC process, so that GDB's interrupt (Ctrl-C) stops the
    // platform; starved slices end at the last activity, so the run ends when and where
    // sc_start() would have. Without a debugger, sc_start() itself.
    void simulate(const sc_core::sc_time& duration = sc_core::SC_ZERO_TIME);
    static constexpr double kSliceUs = 100;

    const PlatformConfig cfg;  // what it was built from
    HostComplex host;
    link::PcieLink link;
    Device device;
    nand::FlashArray nand;
    FlashPlayer player;
    std::vector<std::unique_ptr<FanIn>> nand_port;  // one per channel
    // Models from outside (cfg.models, platform/user_model.hpp): "model.NAME", bound where each
    // attaches (a BAR0 window, a ring node, a flash channel); null without any.
    std::unique_ptr<ModelBay> models;
    std::vector<std::unique_ptr<IdleInitiator>> idle;  // on the array's channels models took
    // GDB on the SPU cores, when cfg.debug asks for it (after every model: it halts the cores).
    std::unique_ptr<Debugger> debugger;

  private:
    // Builds the models from outside and binds them; a flash channel's model goes into
    // channel_target (the NAND array's channel otherwise). InputError for a bad place.
    void attach_models(std::vector<tlm::tlm_target_socket<>*>& channel_target,
                       core::Services& services);
};

}  // namespace canopy::platform
