#include "platform/host_complex.hpp"

#include <string>

namespace canopy::platform {

void HostConfig::describe(core::Params& p) {
    core::Params h = p.scope("host");
    h("cores", cores, "", "host cores (N1-SDP: 4 Neoverse N1)", 1, 16);
    core::Params m = h.scope("memory");
    memory.describe(m);
    core::Params hn = h.scope("home");
    home.describe(hn);
    core::Params c = h.scope("core");
    core.describe(c);
    core::Params i = h.scope("iommu");
    iommu.describe(i);
    core::Params ms = h.scope("msi");
    msi.describe(ms);
}

HostComplex::HostComplex(sc_core::sc_module_name name, const HostConfig& cfg,
                         const link::CcixConfig& ccix, core::Services& services)
    : sc_module(name),
      memory("memory", cfg.memory, services),
      home("home", cfg.home, services),
      iommu("iommu", cfg.iommu, services),
      kernel(memory, home, &iommu),
      msi(cfg.msi),
      root_port("root_port", iommu, 1, services),
      ha("ha", ccix, home, services),
      vc("vc", services),
      downstream("downstream") {
    vc.vc0.bind(root_port.link_target);
    vc.vc1.bind(ha.link_target);
    ha.snoop_initiator.bind(downstream.in);
    home.memory_initiator.bind(memory.socket);
    iommu.walk_socket.bind(root_port.walk_target);
    root_port.memory_initiator.bind(home.io_target);
    for (uint32_t i = 0; i < cfg.cores; ++i) {
        cores.push_back(std::make_unique<host::HostCore>(("core" + std::to_string(i)).c_str(),
                                                         cfg.core, home, kernel, services));
        cores.back()->mmio.bind(downstream.in);
    }
}

bool HostComplex::programs_done() const {
    for (const auto& c : cores)
        if (c->running()) return false;
    return true;
}

std::string HostComplex::first_fault() const {
    for (const auto& c : cores)
        if (!c->fault().empty()) return c->fault();
    return "";
}

}  // namespace canopy::platform
