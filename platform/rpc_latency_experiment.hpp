// The rpc-latency experiment (Willow Section 3.2 with the CCIX-vs-PCIe paper's coherent link,
// seeds/003): Willow's RPCs served through doorbells over PCIe against coherent queues over CCIX
// (models/ssd/pcie_bridge.hpp "Coherent queues"), on the platform's PCIe 4.0 x8 link with 8 SPUs
// booting SPU-OS and the store in SSD memory (so the RPC path, not the medium, is measured).
//  - a null RPC (SPU-OS's PING) from a user HRE;
//  - Base-IO 4 KiB reads and writes through the kernel's block device;
//  - Direct-IO 4 KiB reads and writes of a file from user space;
//  - under load: Base-IO 4 KiB reads, 16 in flight on one HRE (IOPS).
// One access at a time (but the last); mean round trip per access. No published values: the papers
// measured neither; the rows are the comparison and its per-RPC counts (doorbells, snoops).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// The prototype's machine (prototype_config) on the CCIX paper's PCIe 4.0 x8 link: what
// rpc-latency starts from, changed by --config/--set. Both runs are that machine, the second
// with sw.willow_coherent_queues.
PlatformConfig rpc_latency_machine();
std::vector<ExpRow> rpc_latency(const ExpOptions& options);

}  // namespace canopy::platform
