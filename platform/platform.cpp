#include "platform/platform.hpp"

#include <iostream>

#include "core/error.hpp"

namespace canopy::platform {

Platform::Platform(const PlatformConfig& cfg, core::Services& services)
    : cfg(cfg),
      host("host", cfg.host, cfg.ccix, services),
      link("link", link::esm_link_config(cfg.ccix, cfg.pcie, nullptr), services),
      device("device", cfg.device, cfg.ccix, cfg.ssd, services, &cfg.nand),
      nand("nand", cfg.nand, services),
      player("player", cfg.nand.geometry.channels, cfg.nand.geometry.dies_per_channel, services,
             sc_core::sc_time(cfg.sim.quantum_ns, sc_core::SC_NS)) {
    host.downstream.out.bind(link.host_target);
    link.host_initiator.bind(host.vc.target);
    device.fabric.out.bind(link.device_target);
    link.device_initiator.bind(device.vc.target);
    // The host's unmaps reach the device's ATC (one device, one PASID space: it sends none).
    // The bridge's completion interrupts reach the host's MSI controller, vector = queue pair.
    if (device.ssd.bridge)
        device.ssd.bridge->on_interrupt(
            [this](unsigned qp, const sc_core::sc_time& at) { host.msi.raise(qp, at); });
    host.iommu.on_invalidate(
        [this](uint32_t, uint64_t va, uint64_t bytes) { device.atc.invalidate(va, bytes); });
    const auto& flash = device.ssd.flash;
    for (uint32_t c = 0; c < cfg.nand.geometry.channels; ++c) {
        nand_port.push_back(std::make_unique<FanIn>(("nand_port" + std::to_string(c)).c_str()));
        FanIn& port = *nand_port.back();
        player.channel[c].bind(port.in);
        if (c < flash.size()) flash[c]->nand.bind(port.in);
        port.out.bind(nand.channel(c).target);
    }
    if (cfg.debug.gdb_port) {
        if (cfg.ssd.firmware.empty())
            throw InputError("--gdb", std::to_string(*cfg.debug.gdb_port),
                             "this machine boots no SPU firmware (ssd.firmware is empty): there "
                             "is nothing to debug");
        std::vector<cpu::Rv32Core*> cores;
        std::vector<std::string> names;
        for (const auto& spu : device.ssd.spus) {
            cores.push_back(&spu->core);
            names.push_back(spu->basename());
        }
        debugger = std::make_unique<Debugger>(cfg.debug, cores, names, cfg.ssd.firmware, std::cerr);
    }
}

void Platform::simulate(const sc_core::sc_time& duration) {
    const bool bounded = duration != sc_core::SC_ZERO_TIME;
    if (!debugger) return bounded ? sc_core::sc_start(duration) : sc_core::sc_start();
    const sc_core::sc_time end = sc_core::sc_time_stamp() + duration,
                           slice(kSliceUs, sc_core::SC_US);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    while (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_pending_activity()) {
        debugger->poll();
        if (sc_core::sc_get_status() == sc_core::SC_STOPPED) break;  // killed
        if (!bounded) {
            sc_core::sc_start(slice, sc_core::SC_EXIT_ON_STARVATION);
            continue;
        }
        if (sc_core::sc_time_stamp() >= end) break;
        const sc_core::sc_time left = end - sc_core::sc_time_stamp();
        sc_core::sc_start(left < slice ? left : slice);
    }
    if (debugger->killed())
        killed_handler()("killed by the debugger at " +
                         std::to_string(core::ns_of(sc_core::sc_time_stamp()) / 1e6) +
                         " ms simulated; the run did not finish");
    // sc_start(duration) ends at the duration's end even when nothing is left to do.
    if (bounded && sc_core::sc_get_status() != sc_core::SC_STOPPED &&
        sc_core::sc_time_stamp() < end)
        sc_core::sc_start(end - sc_core::sc_time_stamp());
}

sw::WillowDevice Platform::willow_device(bool interrupts) {
    sw::WillowDevice d = device.willow_device();
    if (interrupts) d.msi = &host.msi;
    return d;
}

}  // namespace canopy::platform
