// The Willow SSD (Willow Sections 3.1-3.2): `spus` storage processing units on a token ring,
// sharing the SSD's memory through their DMA controllers. SPU i is ring node i; node `spus` is
// the PCIe bridge's, when the SSD is built with one (the device binds its host port and BAR
// windows); without, the node is free for a test's stand-in. Built for a NAND array, it has a
// flash controller per channel (flash<c>, up to one per SPU): SPU c drives channel c through
// its flash window, the controller reaches the SSD's memory beside the DMA controllers, and
// whoever builds the array binds flash<c>.nand to channel c.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "nand/config.hpp"
#include "platform/fabric.hpp"
#include "platform/spu.hpp"
#include "ssd/flash_controller.hpp"
#include "ssd/network_interface.hpp"
#include "ssd/pcie_bridge.hpp"
#include "ssd/ring.hpp"
#include "ssd/ssd_dram.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::platform {

// The SSD's settings ("ssd.").
struct WillowConfig {
    uint32_t spus = 8;  // [Willow 3.2: the prototype has 8 SPUs]
    // The ELF every SPU boots (SPU-OS); "": none, the SPUs stay halted.
    std::string firmware;
    SpuConfig spu;
    ssd::NiConfig ni;
    ssd::RingConfig ring;
    ssd::SsdDramConfig dram;
    ssd::BridgeConfig bridge;
    ssd::FlashControllerConfig flash;
    sw::StoreConfig store;  // where SPU-OS stores: the flash (FTL) or SSD memory ("ssd.store.")
    // The bridge's network interface: as many response slots as requests in flight from all
    // HREs (assumed: 256), and room for the SPUs' requests to the host.
    ssd::NiConfig bridge_ni = default_bridge_ni();
    static ssd::NiConfig default_bridge_ni();
    void describe(core::Params& root);  // under "ssd."
};

class Willow : public sc_core::sc_module {
  public:
    Willow(sc_core::sc_module_name name, const WillowConfig& cfg, core::Services& services,
           std::ostream& console_transcript = core::no_stream(), bool with_bridge = false,
           const nand::NandConfig* nand = nullptr);

    // Loads one firmware image onto every SPU (InputError names the file and the segment) and
    // lets the cores run.
    void load_all(const std::string& elf_path);
    bool all_exited() const;

    ssd::Ring ring;
    ssd::SsdDram dram;
    FanIn dram_port;  // the SPUs' DMA controllers onto the SSD's memory
    std::vector<std::unique_ptr<Spu>> spus;
    std::vector<std::unique_ptr<ssd::FlashController>> flash;  // flash[c] drives channel c
    std::unique_ptr<ssd::NetworkInterface> bridge_ni;          // with_bridge only
    std::unique_ptr<ssd::PcieBridge> bridge;
};

}  // namespace canopy::platform
