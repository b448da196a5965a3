#include "platform/device.hpp"

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

Device::Device(sc_core::sc_module_name name, const DeviceConfig& cfg, const link::CcixConfig& ccix,
               core::Services& services)
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
      bar0("bar0", cfg.bar0_address, kBar0Bytes,
           {{kDmaRegsOffset, kRegsWindowBytes}, {kCtgRegsOffset, kRegsWindowBytes}}) {
    atc.ats_initiator.bind(fabric.in);
    dma.host_initiator.bind(fabric.in);
    ra.link_initiator.bind(fabric.in);
    ctg.direct_initiator.bind(ra.accel_target);
    vc.vc0.bind(bar0.in);
    vc.vc1.bind(ra.snoop_target);
    dma.device_initiator.bind(memory.socket);
    bar0.out.bind(dma_regs.socket);  // window 0
    bar0.out.bind(ctg_regs.socket);  // window 1
}

}  // namespace canopy::platform
