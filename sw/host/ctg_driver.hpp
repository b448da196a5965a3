// The host side of the CCIX-vs-PCIe paper's software API for the CCIX Traffic Generator (seeds/003
// Section IV-A, Algorithm 1): startTrans(type, virtual address, length) programs the CTG's
// registers in BAR0 (models/link/ctg_registers.hpp), then the API polls for completion and reads
// the latency the CTG captured. `api_ns` is the API's own cost per call beyond its register
// accesses (sw.ctg_api_ns).
#pragma once

#include <cstdint>

#include "host/host_core.hpp"
#include "sw/host/command_block.hpp"

namespace canopy::sw {

class CtgDriver {
  public:
    using Result = CommandBlock::Result;  // latency_ns: the CTG's captured latency

    // Maps the CTG block at host physical `address` (BAR0 + its window) into the core's process.
    CtgDriver(host::HostCore& cpu, uint64_t address, double api_ns = 0);

    // One transfer of `bytes` at virtual address `va` of the process the device works for:
    // a read of host memory (device <- host) or a write (device -> host).
    Result start_trans(bool write, uint64_t va, uint32_t bytes);

  private:
    CommandBlock block_;
    double api_ns_;
};

}  // namespace canopy::sw
