// The host kernel's HREs per core and the notice HRE on queue pair 0 (Willow Section 3.1);
// see kernel_hres.hpp.
#include "sw/host/kernel_hres.hpp"

#include <string>

namespace canopy::sw {

KernelHres::KernelHres(WillowDriver& driver, uint32_t base_io_app, BlockGeometry geometry)
    : driver_(driver), base_io_app_(base_io_app), geometry_(geometry) {}

WillowApps& KernelHres::boot(host::HostCore& cpu) {
    if (boot_cpu_) throw host::HostFault("kernel HREs: the notice HRE is already open");
    const HreEndpoint ep = driver_.open(cpu, /*kernel=*/true);
    if (ep.qp != 0)
        throw host::HostFault("kernel HREs: the notice HRE got queue pair " +
                              std::to_string(ep.qp) + "; SPU-OS notifies HRE 0");
    boot_cpu_ = &cpu;
    boot_hre_ = std::make_unique<Hre>(cpu, ep);
    boot_apps_ = std::make_unique<WillowApps>(*boot_hre_, geometry_.spus);
    return *boot_apps_;
}

WillowApps& KernelHres::notices(host::HostCore& cpu) {
    if (boot_cpu_ != &cpu)
        throw host::HostFault("kernel HREs: SPU-OS's notices are taken on the core that booted");
    return *boot_apps_;
}

KernelHres::PerCore& KernelHres::on(host::HostCore& cpu) {
    auto [it, fresh] = cores_.try_emplace(&cpu);
    PerCore& c = it->second;
    if (fresh) {
        try {
            c.endpoint = driver_.open(cpu, /*kernel=*/true);
        } catch (...) {
            cores_.erase(it);  // no half-made entry: the next call tries again
            throw;
        }
        c.hre = std::make_unique<Hre>(cpu, c.endpoint);
        c.apps = std::make_unique<WillowApps>(*c.hre, geometry_.spus);
        c.base_io = std::make_unique<BlockIo>(*c.hre, base_io_app_, geometry_);
    }
    return c;
}

}  // namespace canopy::sw
