#include "platform/device.hpp"

#include <iostream>
#include <string>

#include "core/error.hpp"
#include "ssd/hre_queue.h"

namespace canopy::platform {

host::HostMemoryConfig DeviceConfig::default_memory() {
    host::HostMemoryConfig c;
    c.size_bytes = 1ull << 30;  // assumed: the part of the card's DRAM the experiments use
    c.latency_ns = 0;           // assumed: on-chip buffers; the DMA engine's setup holds its time
    return c;
}

void DeviceConfig::describe(core::Params& p) {
    core::Params d = p.scope("device");
    d("bar0_address", bar0_address, "B",
      "host physical address of BAR0 (the DMA and CTG registers) [assumed: above host DRAM]", 4096,
      1ull << 48);
    d("memory.size_bytes", memory.size_bytes, "B",
      "device memory (assumed 1 GiB: what the experiments use; stored sparsely)", 1 << 20,
      1ull << 40);
    d("memory.latency_ns", memory.latency_ns, "ns",
      "device memory access (assumed 0: on-chip buffers; the DMA setup holds the time)", 0.0, 1e6);
    atc.describe(p);
    dma.describe(p);
    dma_regs.describe(p);
    ctg_regs.describe(p);
    ctg.describe(p);
}

namespace {
// The request agent's requests leave for the home in simulated-time order when its caller is a
// thread (a device-side program); direct calls (experiments, the CTG) keep their annotated time.
void sync_if_thread(sc_core::sc_time& delay) {
    const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
    if (!h.valid() || h.proc_kind() != sc_core::SC_THREAD_PROC_) return;
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
}
}  // namespace

namespace {
const WillowConfig& checked(const WillowConfig& c) {
    if (uint64_t(c.bridge.queue_pairs) * HRE_DOORBELL_PAGE_BYTES > Device::kDoorbellsBytes)
        throw InputError("config", "ssd.bridge.queue_pairs",
                         std::to_string(c.bridge.queue_pairs) +
                             " queue pairs need more doorbell pages than BAR0's 4 MiB window holds "
                             "(at most 1024)");
    return c;
}
}  // namespace

std::vector<BarDecoder::Window> Device::builtin_windows() {
    return {{kDmaRegsOffset, kRegsWindowBytes},
            {kCtgRegsOffset, kRegsWindowBytes},
            {kBridgeCtlOffset, kBridgeCtlBytes},
            {kDoorbellsOffset, kDoorbellsBytes}};
}

Device::Device(sc_core::sc_module_name name, const DeviceConfig& cfg, const link::CcixConfig& ccix,
               const WillowConfig& ssd_cfg, core::Services& services, const nand::NandConfig* nand,
               const std::vector<BarDecoder::Window>& model_windows)
    : sc_module(name),
      memory("memory", cfg.memory, services),
      atc("atc", cfg.atc, services),
      dma("dma", cfg.dma, services, &atc),
      dma_regs("dma_regs", dma, services, cfg.dma_regs),
      ra("ra", ccix, &atc, kPasid, services, sync_if_thread),
      ctg("ctg", cfg.ctg, services, &dma),
      ctg_regs("ctg_regs", ra, kPasid, services, cfg.ctg_regs),
      fabric("fabric"),
      vc("vc", services),
      ssd("ssd", checked(ssd_cfg), services, core::no_stream(), true, nand),
      bar0("bar0", cfg.bar0_address, kBar0Bytes,
           [&] {
               std::vector<BarDecoder::Window> w = builtin_windows();
               w.insert(w.end(), model_windows.begin(), model_windows.end());
               return w;
           }()),
      bar0_address_(cfg.bar0_address) {
    atc.ats_initiator.bind(fabric.in);
    dma.host_initiator.bind(fabric.in);
    ra.link_initiator.bind(fabric.in);
    ctg.direct_initiator.bind(ra.accel_target);
    vc.vc0.bind(bar0.in);
    vc.vc1.bind(ra.snoop_target);
    dma.device_initiator.bind(memory.socket);
    bar0.out.bind(dma_regs.socket);        // window 0
    bar0.out.bind(ctg_regs.socket);        // window 1
    bar0.out.bind(ssd.bridge->ctl);        // window 2
    bar0.out.bind(ssd.bridge->doorbells);  // window 3
    ssd.bridge->host.bind(fabric.in);
    ssd.bridge->attach_coherent(ra);  // coherent HRE queues over CCIX
}

sw::WillowDevice Device::willow_device() const {
    sw::WillowDevice d;
    d.ctl_pa = bar0_address_ + kBridgeCtlOffset;
    d.doorbells_pa = bar0_address_ + kDoorbellsOffset;
    d.queue_pairs = uint32_t(ssd.bridge->doorbell_bytes() / HRE_DOORBELL_PAGE_BYTES);
    d.spus = uint32_t(ssd.spus.size());
    return d;
}

}  // namespace canopy::platform
