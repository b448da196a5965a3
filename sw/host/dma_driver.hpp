// A host driver for the device's DMA engine (the TaPaSCo-style engine of seeds/003 Section IV,
// models/link/dma_registers.hpp): it maps BAR0 into the program, writes a descriptor into the
// registers, starts it and polls the status register until done, as a user-space driver with
// polling would. Register offsets come from the one register map the model declares. A runtime
// layered above it (TaPaSCo's, in E1) adds its own cost per transfer, `job_ns`.
#pragma once

#include <cstdint>
#include <string>

#include "host/host_core.hpp"
#include "sw/host/command_block.hpp"

namespace canopy::sw {

class DmaDriver {
  public:
    using Result = CommandBlock::Result;

    // Maps BAR0 (at host physical `bar0_address`) into the core's process. `job_ns`: compute
    // time the program spends per transfer before programming the engine (0: a bare user-space
    // driver; E1 passes the TaPaSCo runtime's, sw.tapasco_job_ns).
    DmaDriver(host::HostCore& cpu, uint64_t bar0_address, double job_ns = 0);

    // One descriptor: `host_address` is physical, or virtual when `translate` (the engine then
    // uses its ATC and the process's PASID).
    Result copy_to_device(uint64_t host_address, uint64_t device_address, uint32_t bytes,
                          bool translate = false);
    Result copy_to_host(uint64_t host_address, uint64_t device_address, uint32_t bytes,
                        bool translate = false);

  private:
    Result run(bool to_host, uint64_t host_address, uint64_t device_address, uint32_t bytes,
               bool translate);

    CommandBlock block_;
    double job_ns_;
};

}  // namespace canopy::sw
