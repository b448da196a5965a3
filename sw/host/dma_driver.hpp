// A host driver for the device's DMA engine (the TaPaSCo-style engine of seeds/003 Section IV,
// models/link/dma_registers.hpp): it maps BAR0 into the program, writes a descriptor into the
// registers, starts it and polls the status register until done, as a user-space driver with
// polling would. Register offsets come from the one register map the model declares.
#pragma once

#include <cstdint>
#include <string>

#include "host/host_core.hpp"

namespace canopy::sw {

class DmaDriver {
  public:
    struct Result {
        bool ok = false;
        uint32_t error_code = 0;  // the engine's error_code register
        uint64_t latency_ns = 0;  // the engine's last_latency_ns register
        uint32_t polls = 0;       // status reads until done
        double elapsed_ns = 0;    // start write to done, as the program saw it
    };

    // Maps BAR0 (at host physical `bar0_address`) into the core's process.
    DmaDriver(host::HostCore& cpu, uint64_t bar0_address);

    // One descriptor: `host_address` is physical, or virtual when `translate` (the engine then
    // uses its ATC and the process's PASID).
    Result copy_to_device(uint64_t host_address, uint64_t device_address, uint32_t bytes,
                          bool translate = false);
    Result copy_to_host(uint64_t host_address, uint64_t device_address, uint32_t bytes,
                        bool translate = false);

  private:
    Result run(bool to_host, uint64_t host_address, uint64_t device_address, uint32_t bytes,
               bool translate);
    uint64_t reg(const char* name) const;

    host::HostCore& cpu_;
    uint64_t bar_;  // virtual address of BAR0 in the process
};

}  // namespace canopy::sw
