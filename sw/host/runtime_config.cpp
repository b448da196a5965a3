#include "sw/host/runtime_config.hpp"

namespace canopy::sw {

void HostRuntimeConfig::describe(core::Params& p) {
    core::Params s = p.scope("sw");
    s("tapasco_job_ns", tapasco_job_ns, "ns",
      "TaPaSCo runtime per DMA transfer: ioctl, job bookkeeping, interrupt completion "
      "[calibrated to E1: read throughput CCIX/PCIe 3.3x, 1.29x, 0.87x at 1, 16, 32 KiB]",
      0.0, 1e9)("ctg_api_ns", ctg_api_ns, "ns",
                "CCIX software API per startTrans beyond its register accesses [calibrated to E1 "
                "with sw.tapasco_job_ns]",
                0.0, 1e9)("willow_interrupts", willow_interrupts,
                          "Willow's HREs sleep until their queue pair's MSI instead of polling")(
        "willow_coherent_queues", willow_coherent_queues,
        "Willow's HRE queues are served over CCIX: the bridge watches the submission queues "
        "through the device's request agent; the host rings no doorbells");
}

}  // namespace canopy::sw
