// Costs of the host software layers above the drivers that the model does not run instruction by
// instruction (CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 1: PCIe-DMA transfers through
// the TaPaSCo runtime, CCIX transfers through the paper's software API and its CTG). Each is
// charged as compute time on the host core per transfer; the register accesses themselves are
// modelled MMIO over the link. Keys under "sw.".
#pragma once

#include "core/config.hpp"

namespace canopy::sw {

struct HostRuntimeConfig {
    // TaPaSCo runtime per DMA transfer: the ioctl into its kernel driver (tlkm), job bookkeeping
    // and the interrupt completion path waking the caller. Calibrated to E1 [CCIX paper IV Exp. 1]:
    // back-to-back PCIe-DMA reads then cost ~7.4 us per transfer beside the transfer's size-
    // dependent part (this, the ~1.05 us DMA read and ~1.4 us of modelled MMIO: descriptor
    // writes, the start, status polls over the link, two register reads), against ~2.2 us for a
    // CCIX 1 KiB read, which gives the read throughput ratios 3.3x, 1.29x, 0.87x at 1, 16, 32 KiB.
    double tapasco_job_ns = 4800.0;
    // The paper's software API per startTrans beyond its register accesses (a user-space call
    // into a mapped BAR). Calibrated to E1 with tapasco_job_ns (the same throughput ratios): 0,
    // the modelled register accesses (~1.4 us per call) are the API's whole cost.
    double ctg_api_ns = 0.0;
    // Willow's HREs wait for completions by interrupt (the bridge's MSI per queue pair, host.msi)
    // instead of polling their completion queues [Willow 3.2: "interrupts or polling"].
    bool willow_interrupts = false;
    // Willow's HRE queues are served over CCIX (the bridge watches them through the device's
    // request agent) instead of by doorbells.
    bool willow_coherent_queues = false;
    void describe(core::Params& p);  // under "sw."
};

}  // namespace canopy::sw
