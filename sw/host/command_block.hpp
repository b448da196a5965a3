// The host's view of one of the device's command blocks in BAR0 (models/link/command_status.hpp:
// the DMA engine's registers and the CCIX Traffic Generator's, CCIX-vs-PCIe paper seeds/003
// Sections III-IV): the block mapped uncached into the program, register addresses from the one
// register map the model declares, and the start-then-poll sequence a polling driver runs.
#pragma once

#include <cstdint>

#include "core/register_bank.hpp"
#include "host/host_core.hpp"

namespace canopy::sw {

class CommandBlock {
  public:
    struct Result {
        bool ok = false;
        uint32_t error_code = 0;  // the block's error_code register
        uint64_t latency_ns = 0;  // the block's last_latency_ns register
        uint32_t polls = 0;       // status reads until done
        double elapsed_ns = 0;    // start write to done, as the program saw it
    };

    // Maps the block at host physical `address` (inside a BAR, any alignment) into the core's
    // process; `map` must outlive this object.
    CommandBlock(host::HostCore& cpu, uint64_t address, const core::RegisterMap& map);

    uint64_t reg(const char* name) const;                    // virtual address of a register
    uint64_t bit(const char* reg, const char* field) const;  // a field's mask
    // Writes `control` (with its start bit), polls status until done, reads error_code and
    // last_latency_ns and acknowledges done and error (W1C).
    Result start_and_wait(uint32_t control);
    host::HostCore& cpu() { return cpu_; }

  private:
    host::HostCore& cpu_;
    const core::RegisterMap& map_;
    uint64_t base_;  // virtual address of the block
};

}  // namespace canopy::sw
