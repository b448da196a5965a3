// The PCIe/CCIX device of the CCIX-vs-PCIe paper's set-up (seeds/003 Section III: an Alveo U280
// with Xilinx XDMA and the ATS Switch): the ATC in front of every translated access, the
// TaPaSCo-style DMA engine with its BAR registers, the traffic generator (CTG), and device memory.
// Elaborated as "device": device.atc, device.dma, device.dma_regs, device.ctg, device.memory,
// device.fabric (the endpoint's interconnect onto the link) and device.bar0 (the BAR decoder).
//
//   device.atc.ats / device.dma.host / device.ctg.direct --> device.fabric --> [link.device_target]
//   [link.device_initiator] --> device.bar0 --> device.dma_regs
//   device.dma.device --> device.memory
#pragma once

#include <systemc>

#include "core/config.hpp"
#include "core/services.hpp"
#include "host/host_memory.hpp"
#include "link/atc.hpp"
#include "link/dma_engine.hpp"
#include "link/dma_registers.hpp"
#include "link/traffic_generator.hpp"
#include "platform/fabric.hpp"

namespace canopy::platform {

struct DeviceConfig {
    // Assumed: where the host's root complex places BAR0 (a 64-bit window above host DRAM).
    uint64_t bar0_address = 0x40'0000'0000ull;
    host::HostMemoryConfig memory = default_memory();
    link::AtcConfig atc;
    link::DmaConfig dma;
    link::DmaRegistersConfig dma_regs;
    link::CtgConfig ctg;
    void describe(core::Params& p);  // "device." and the link's device-side keys
    static host::HostMemoryConfig default_memory();
};

class Device : public sc_core::sc_module {
  public:
    static constexpr uint64_t kBar0Bytes = 4096;  // the smallest memory BAR; holds the DMA block

    Device(sc_core::sc_module_name name, const DeviceConfig& cfg, core::Services& services);

    host::HostMemory memory;
    link::Atc atc;
    link::DmaEngine dma;
    link::DmaRegisters dma_regs;
    link::TrafficGenerator ctg;
    FanIn fabric;
    BarDecoder bar0;
};

}  // namespace canopy::platform
