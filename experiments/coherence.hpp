// The workload of E4 (CCIX-vs-PCIe paper, seeds/003 Sec. IV Exp. 4, Algorithm 2): host cores and
// the device read and write random 8-byte words of a shared buffer, each side one access at a
// time, back to back. `canopy exp coherence` (coherence.cpp) and bench/ccix_bench.cpp run it.
#pragma once

#include <cstdint>

#include "core/stats.hpp"
#include "platform/ccix_machine.hpp"

namespace canopy::experiments {

struct CoherenceRound {
    uint64_t buffer = 0;      // VA of the shared buffer (Machine::shared)
    uint64_t bytes = 0;       // the part of it both sides access (a multiple of 64)
    unsigned host_cores = 1;  // cores 0 .. host_cores - 1
    // Every side (each core, the device) goes on until all sides have made `ops` accesses, so all
    // of them meet the other sides' traffic (the paper: both sides perform their 1,024 or 20,000
    // accesses at the same time); every access is measured.
    unsigned ops = 0;
    uint64_t seed = 7;
    // Core 0 first writes every line of the range, as the kernel zeroes a fresh huge page and the
    // paper's software API initialises the buffer it allocated; the device and the other cores
    // start when it is done.
    bool initialise = true;
    core::Distribution* host_latency = nullptr;    // optional: one sample per host access, ns
    core::Distribution* device_latency = nullptr;  // optional: one sample per device access, ns
};

struct CoherenceCounts {  // every access made, measured or not
    uint64_t host_accesses = 0;
    uint64_t device_accesses = 0;
};

// Spawns the host programs and the device thread on `m` and runs the kernel until they finish
// (sc_start). May be called again on the same machine (the next round continues in time).
CoherenceCounts run_coherence_round(platform::Machine& m, const CoherenceRound& round);

}  // namespace canopy::experiments
