#include "sw/host/willow_driver.hpp"

#include <string>

#include "ssd/hre_queue.h"
#include "ssd/pcie_bridge.hpp"
#include "ssd/ring_message.hpp"

namespace canopy::sw {

namespace {
const core::RegisterMap& bridge_map() {
    static const core::RegisterMap map = ssd::PcieBridge::register_map();
    return map;
}
constexpr uint64_t kEnable = 1, kIrqEnable = 2, kCoherent = 4, kEnabledStatus = 1;
}  // namespace

WillowDriver::WillowDriver(WillowDevice device, HreLayout layout, WillowDriverConfig cfg)
    : device_(device), layout_(layout), cfg_(cfg), used_(device.queue_pairs, false) {}

uint64_t WillowDriver::ctl(host::HostCore& cpu) {
    auto [it, fresh] = ctl_va_.try_emplace(cpu.process().pid, 0);
    if (fresh) it->second = cpu.map_device(device_.ctl_pa, bridge_map().size_bytes());
    return it->second;
}

void WillowDriver::reg(host::HostCore& cpu, const char* name, uint64_t value) {
    const core::Register& r = bridge_map().registers()[bridge_map().index(name)];
    if (r.width_bits == 64)
        cpu.store<uint64_t>(ctl(cpu) + r.offset, value);
    else
        cpu.store<uint32_t>(ctl(cpu) + r.offset, uint32_t(value));
}

uint64_t WillowDriver::reg(host::HostCore& cpu, const char* name) {
    const core::Register& r = bridge_map().registers()[bridge_map().index(name)];
    return r.width_bits == 64 ? cpu.load<uint64_t>(ctl(cpu) + r.offset)
                              : cpu.load<uint32_t>(ctl(cpu) + r.offset);
}

WillowDriver::Held WillowDriver::lock(host::HostCore& cpu) {
    // The driver's mutex: programs on several cores may open HREs at once, and the bridge's
    // qp_select makes set-up a sequence no two may interleave.
    while (locked_) {
        cpu.compute_ns(100);
        cpu.sync();
    }
    locked_ = true;
    return Held{locked_};
}

HreEndpoint WillowDriver::open(host::HostCore& cpu, bool kernel) {
    cpu.compute_ns(cfg_.syscall_ns);
    const Held held = lock(cpu);
    uint32_t qp = 0;
    while (qp < used_.size() && used_[qp]) ++qp;
    if (qp == used_.size())
        throw host::HostFault("Willow driver: all " + std::to_string(used_.size()) +
                              " HRE queue pairs are taken");
    used_[qp] = true;
    HreEndpoint e;
    e.qp = qp;
    e.hre = ((kernel ? 0u : cpu.process().pid) << ssd::kHreIndexBits) | qp;
    e.layout = layout_;
    e.device = device_;
    e.window_va = cpu.mmap(host::kPage2M, host::kPage2M);
    cpu.pin(e.window_va, host::kPage2M);
    e.window_pa = cpu.physical(e.window_va);
    reg(cpu, "qp_select", qp);
    reg(cpu, "qp_control", 0);
    reg(cpu, "qp_hre", e.hre);
    reg(cpu, "qp_window_base", e.window_pa);
    reg(cpu, "qp_window_bytes", host::kPage2M);
    reg(cpu, "qp_sq_base", e.window_pa + layout_.sq_offset());
    reg(cpu, "qp_cq_base", e.window_pa + layout_.cq_offset());
    reg(cpu, "qp_rx_base", e.window_pa + layout_.rx_offset());
    reg(cpu, "qp_sq_entries", layout_.sq_entries);
    reg(cpu, "qp_cq_entries", layout_.cq_entries);
    reg(cpu, "qp_rx_bytes", layout_.rx_bytes);
    e.interrupts = cfg_.interrupts && device_.msi;
    e.coherent = cfg_.coherent_queues;
    if (e.coherent) {
        // Entries are new by their phase flag: no stale one of an earlier user may pass for new.
        const uint8_t zero[HRE_SQ_ENTRY_BYTES] = {};
        for (uint32_t i = 0; i < layout_.sq_entries; ++i)
            cpu.store(e.window_va + layout_.sq_offset() + uint64_t(i) * HRE_SQ_ENTRY_BYTES, zero,
                      HRE_SQ_ENTRY_BYTES);
        cpu.store(e.window_va + layout_.shadow_offset(), zero, HRE_SHADOW_BYTES);
        reg(cpu, "qp_shadow_base", e.window_pa + layout_.shadow_offset());
    }
    reg(cpu, "qp_control",
        kEnable | (e.interrupts ? kIrqEnable : 0) | (e.coherent ? kCoherent : 0));
    if (!(reg(cpu, "qp_status") & kEnabledStatus))
        throw host::HostFault("Willow driver: the bridge refused queue pair " + std::to_string(qp) +
                              "'s set-up" +
                              (e.coherent ? " as a coherent queue (no CCIX request agent?)" : ""));
    used_[qp] = true;
    e.doorbell_va = cpu.map_device(device_.doorbells_pa + uint64_t(qp) * HRE_DOORBELL_PAGE_BYTES,
                                   HRE_DOORBELL_PAGE_BYTES);
    return e;
}

void WillowDriver::close(host::HostCore& cpu, const HreEndpoint& hre) {
    cpu.compute_ns(cfg_.syscall_ns);
    const Held held = lock(cpu);
    reg(cpu, "qp_select", hre.qp);
    reg(cpu, "qp_control", 0);
    used_[hre.qp] = false;
}

}  // namespace canopy::sw
