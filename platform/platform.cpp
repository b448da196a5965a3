#include "platform/platform.hpp"

#include <iostream>

#include "core/error.hpp"

namespace canopy::platform {

namespace {
std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }

// The BAR0 windows of the models attached there, each inside the BAR and clear of the built-in
// blocks and of the other models' windows: InputError naming its keys otherwise.
std::vector<BarDecoder::Window> model_windows(const std::vector<ModelSetup>& models) {
    std::vector<BarDecoder::Window> taken = Device::builtin_windows(), out;
    for (const ModelSetup& m : models) {
        if (m.entry->attach != Attach::bar) continue;
        const std::string key = "model." + m.entry->name + ".bar_offset";
        const BarDecoder::Window w{m.bar_offset, m.bar_bytes};
        auto refuse = [&](const std::string& why) {
            throw InputError("config", key + "=" + hex(w.offset), why);
        };
        if (w.offset % 4 || w.bytes % 4) refuse("a window starts and ends on a 4-byte boundary");
        if (w.bytes > Device::kBar0Bytes - w.offset)
            refuse("its " + std::to_string(w.bytes) + " B window ends past BAR0's " +
                   std::to_string(Device::kBar0Bytes) + " B");
        for (const BarDecoder::Window& t : taken)
            if (w.offset < t.offset + t.bytes && t.offset < w.offset + w.bytes)
                refuse("its window [" + hex(w.offset) + ", " + hex(w.offset + w.bytes) +
                       ") overlaps [" + hex(t.offset) + ", " + hex(t.offset + t.bytes) +
                       ") of BAR0 (free: 0x2000 to 0x3fffff)");
        taken.push_back(w);
        out.push_back(w);
    }
    return out;
}
}  // namespace

Platform::Platform(const PlatformConfig& cfg, core::Services& services)
    : cfg(cfg),
      host("host", cfg.host, cfg.ccix, services),
      link("link", link::esm_link_config(cfg.ccix, cfg.pcie, nullptr), services),
      device("device", cfg.device, cfg.ccix, cfg.ssd, services, &cfg.nand,
             model_windows(cfg.models)),
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
    std::vector<tlm::tlm_target_socket<>*> channel_target(cfg.nand.geometry.channels, nullptr);
    if (!cfg.models.empty()) attach_models(channel_target, services);
    const auto& flash = device.ssd.flash;
    for (uint32_t c = 0; c < cfg.nand.geometry.channels; ++c) {
        nand_port.push_back(std::make_unique<FanIn>(("nand_port" + std::to_string(c)).c_str()));
        FanIn& port = *nand_port.back();
        player.channel[c].bind(port.in);
        if (c < flash.size()) flash[c]->nand.bind(port.in);
        if (channel_target[c]) {
            port.out.bind(*channel_target[c]);
            idle.push_back(std::make_unique<IdleInitiator>(("idle" + std::to_string(c)).c_str()));
            idle.back()->out.bind(nand.channel(c).target);
        } else {
            port.out.bind(nand.channel(c).target);
        }
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

void Platform::attach_models(std::vector<tlm::tlm_target_socket<>*>& channel_target,
                             core::Services& services) {
    models = std::make_unique<ModelBay>("model", cfg.models, services);
    uint32_t next_node = uint32_t(device.ssd.spus.size()) + (device.ssd.bridge_ni ? 1 : 0);
    for (size_t i = 0; i < cfg.models.size(); ++i) {
        const ModelSetup& s = cfg.models[i];
        UserModel& m = *models->models[i];
        const std::string key = "model." + s.entry->name + ".";
        switch (s.entry->attach) {
            case Attach::bar:  // its window follows the built-in ones, in the models' order
                device.bar0.out.bind(*m.bar_target());
                break;
            case Attach::ring: {
                const uint32_t node = s.node ? s.node : next_node++;
                if (node > 255 || device.ssd.ring.has_node(ssd::NodeId(node)))
                    throw InputError("config", key + "node=" + std::to_string(node),
                                     "that node id is taken (SPUs 0.." +
                                         std::to_string(device.ssd.spus.size() - 1) +
                                         ", the bridge, other models) or beyond 255");
                device.ssd.ring.attach(ssd::NodeId(node), *m.ring_interface());
                break;
            }
            case Attach::flash_channel:
                if (s.channel >= channel_target.size() || channel_target[s.channel])
                    throw InputError("config", key + "channel=" + std::to_string(s.channel),
                                     "no such flash channel (nand.geometry.channels = " +
                                         std::to_string(channel_target.size()) +
                                         ") or another model has it");
                channel_target[s.channel] = m.flash_target();
                break;
        }
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
