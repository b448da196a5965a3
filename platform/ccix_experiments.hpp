// Experiments on the CCIX coherent link (CCIX-vs-PCIe paper, seeds/003 Sections IV-V;
// CALIBRATION.md E3, E5 and the lock table), each on the whole elaborated platform: host cores
// running host programs, the home node, the link with the CCIX home and request agents, and a
// device-side thread standing for the accelerator (the paper's CTG or lock module). Every
// configuration runs in a child process (run_isolated): SystemC elaborates once per process.
// The machines start from the options' configuration (--config, --set), the random streams from
// its sim.seed.
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// E2, CCIX side: a 64 B read by the request agent with an ATC miss against one with an ATC hit,
// both missing the system cache, on `base` (runs in a child: call it before elaborating
// anything).
std::vector<ExpRow> ccix_ats_cost(const PlatformConfig& base);
// E1: CCIX vs PCIe-DMA latency and throughput, 32 B .. 32 KiB reads and writes.
std::vector<ExpRow> ccix_latency(const ExpOptions& o);
// E3: local (system-cache hit) write and read latency for the u280 and vck5000 profiles, and
// re-reading a working set larger than the u280's system cache.
std::vector<ExpRow> ccix_locality(const ExpOptions& o);
// E4: host cores and the device reading and writing random words of a shared buffer.
std::vector<ExpRow> ccix_coherence(const ExpOptions& o);
// E5: AtomicCompare from a host core and from the device.
std::vector<ExpRow> ccix_atomics(const ExpOptions& o);
// The neoDBMS lock table: host and device lock record versions under rising contention.
std::vector<ExpRow> lock_table(const ExpOptions& o);

}  // namespace canopy::platform
