// The PCIe/CCIX device of the CCIX-vs-PCIe paper's set-up (seeds/003 Section III: an Alveo U280
// with Xilinx XDMA and the ATS Switch): the ATC in front of every translated access, the
// TaPaSCo-style DMA engine with its BAR registers, the CCIX request agent with its system cache,
// the traffic generator (CTG), and device memory. Elaborated as "device": device.atc, device.dma,
// device.dma_regs, device.ra, device.ctg, device.ctg_regs (the CTG's startTrans registers),
// device.memory, device.fabric (the endpoint's interconnect onto the link), device.vc (VC0/VC1
// demultiplexer) and device.bar0 (BAR decoder: the DMA block at offset kDmaRegsOffset, the CTG's
// at kCtgRegsOffset, the SSD bridge's control block at kBridgeCtlOffset and its HRE doorbell
// pages from kDoorbellsOffset), and device.ssd, the Willow SSD controller (platform/willow), whose
// bridge reaches host memory through the fabric.
//
//   device.atc.ats / device.dma.host / device.ra.link
//   / device.ssd.bridge.host                            --> device.fabric --> [link.device_target]
//   device.ctg.direct --> device.ra (the CTG's CCIX path)
//   [link.device_initiator] --> device.vc --VC0--> device.bar0 --> device.dma_regs
//                                                               --> device.ctg_regs --> device.ra
//                                                               --> device.ssd.bridge (ctl,
//                                                               doorbells)
//                                         --VC1--> device.ra.snoop (snoops from the host)
//   device.dma.device --> device.memory
#pragma once

#include <systemc>

#include "core/config.hpp"
#include "core/services.hpp"
#include "host/host_memory.hpp"
#include "link/atc.hpp"
#include "link/ctg_registers.hpp"
#include "link/dma_engine.hpp"
#include "link/dma_registers.hpp"
#include "link/request_agent.hpp"
#include "link/traffic_generator.hpp"
#include "link/vc_router.hpp"
#include "nand/config.hpp"
#include "platform/fabric.hpp"
#include "platform/willow.hpp"
#include "sw/host/willow_driver.hpp"

namespace canopy::platform {

struct DeviceConfig {
    // Assumed: where the host's root complex places BAR0 (a 64-bit window above host DRAM).
    uint64_t bar0_address = 0x40'0000'0000ull;
    host::HostMemoryConfig memory = default_memory();
    // The paper's ATC overhead less the ATS round trip the platform's link models itself.
    link::AtcConfig atc = link::atc_for_modelled_link(link::PcieConfig());
    link::DmaConfig dma;
    link::DmaRegistersConfig dma_regs;
    link::CtgRegistersConfig ctg_regs;
    link::CtgConfig ctg;
    void describe(core::Params& p);  // "device." and the link's device-side keys
    static host::HostMemoryConfig default_memory();
};

class Device : public sc_core::sc_module {
  public:
    // BAR0: 8 MiB (a power of two) holding the register blocks and the SSD's doorbell pages.
    static constexpr uint64_t kBar0Bytes = 8ull << 20;
    // The register blocks' windows in BAR0 (each block's map fits in its 256 B).
    static constexpr uint64_t kDmaRegsOffset = 0x000, kCtgRegsOffset = 0x100,
                              kRegsWindowBytes = 0x100;
    // The SSD bridge's control block (its own 4 KiB page: only the kernel maps it) and the HRE
    // doorbell pages (4 MiB: up to 1,024 queue pairs, one page each).
    static constexpr uint64_t kBridgeCtlOffset = 0x1000, kBridgeCtlBytes = 0x1000,
                              kDoorbellsOffset = 0x400000, kDoorbellsBytes = 0x400000;
    // The host process the device works for (the first one the kernel creates): the ATC sends no
    // PASID, the root port applies this one.
    static constexpr uint32_t kPasid = 1;

    // Throws InputError when the SSD's queue pairs do not fit the doorbell window, or for a bad
    // firmware ELF.
    // With `nand`, the SSD has its flash controllers (their nand sockets are the caller's to bind).
    // `model_windows`: more windows of BAR0 after the built-in ones (models from outside), whose
    // targets the caller binds to bar0.out in that order.
    Device(sc_core::sc_module_name name, const DeviceConfig& cfg, const link::CcixConfig& ccix,
           const WillowConfig& ssd_cfg, core::Services& services,
           const nand::NandConfig* nand = nullptr,
           const std::vector<BarDecoder::Window>& model_windows = {});
    // The register blocks' windows, in bar0.out's order.
    static std::vector<BarDecoder::Window> builtin_windows();

    // Where the host finds the SSD: for the Willow driver.
    sw::WillowDevice willow_device() const;

    host::HostMemory memory;
    link::Atc atc;
    link::DmaEngine dma;
    link::DmaRegisters dma_regs;
    link::RequestAgent ra;
    link::TrafficGenerator ctg;
    link::CtgRegisters ctg_regs;
    FanIn fabric;
    link::VcRouter vc;
    Willow ssd;
    BarDecoder bar0;

  private:
    uint64_t bar0_address_;
};

}  // namespace canopy::platform
