// The host of the CCIX-vs-PCIe paper's set-up (seeds/003 Section III): an Arm N1-SDP with four
// Neoverse N1 cores, their caches, the CMN-600 home node with its SLC, DRAM, the SMMU (IOMMU)
// answering ATS, the host kernel, and the PCIe root port. Elaborated as "host": host.core0..N,
// host.home, host.memory, host.iommu, host.root_port, host.mmio (the cores' uncached path
// towards the link).
//
//   host.coreN --(coherent requests)--> host.home --> host.memory
//   host.coreN.mmio --> host.mmio --> [link.host_target]        (BAR accesses, downstream)
//   [link.host_initiator] --> host.root_port --+-- ATS --> host.iommu --walks--+
//                                              +-- DMA ------------------------+-->
//                                              host.home.io_target
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"
#include "host/iommu.hpp"
#include "host/msi_controller.hpp"
#include "link/ccix_config.hpp"
#include "link/home_agent.hpp"
#include "link/vc_router.hpp"
#include "platform/fabric.hpp"
#include "platform/root_port.hpp"

namespace canopy::platform {

struct HostConfig {
    uint32_t cores = 4;  // N1-SDP: 4 Neoverse N1 cores (seeds/003 Section III)
    host::HostMemoryConfig memory;
    host::HomeNodeConfig home;
    host::HostCoreConfig core;
    host::IommuConfig iommu;
    host::MsiConfig msi;
    void describe(core::Params& p);  // under "host."
};

class HostComplex : public sc_core::sc_module {
  public:
    HostComplex(sc_core::sc_module_name name, const HostConfig& cfg, const link::CcixConfig& ccix,
                core::Services& services);

    host::HostMemory memory;
    host::HomeNode home;
    host::Iommu iommu;
    host::HostKernel kernel;
    host::MsiController msi;  // devices' interrupts (Willow's bridge: one vector per queue pair)
    RootPort root_port;
    link::HomeAgent ha;
    link::VcRouter vc;
    FanIn downstream;
    std::vector<std::unique_ptr<host::HostCore>> cores;

    // Every program started has finished (or faulted).
    bool programs_done() const;
    // "" or the first core's fault.
    std::string first_fault() const;
};

}  // namespace canopy::platform
