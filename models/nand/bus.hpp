// The data bus of one flash channel (Flash-Cosmos Section 2.1: dies of a package share it in
// time). Command, address and data cycles of every die on the channel occupy it in turn; array
// operations do not, so dies work in parallel while the bus is interleaved between them.
#pragma once

#include <cstdint>
#include <string>

#include "core/resource.hpp"
#include "core/services.hpp"
#include "nand/config.hpp"

namespace canopy::nand {

class ChannelBus {
  public:
    ChannelBus(const std::string& name, const Timing& t, core::Services& s);

    // Occupies the bus from max(at, free) for `cycles` command/address cycles, `bytes` data
    // bytes and a fixed `extra` delay (tCCS before data out).
    core::SharedResource::Grant transfer(const sc_core::sc_time& at, uint32_t cycles,
                                         uint64_t bytes, const sc_core::sc_time& extra,
                                         bool data_out);
    sc_core::sc_time duration(uint32_t cycles, uint64_t bytes) const;

    const std::string& name() const { return name_; }
    int track() const { return track_; }

  private:
    std::string name_;
    double ns_per_cycle_, ns_per_byte_;
    core::BusyProbe busy_probe_;
    core::QueueProbe queue_probe_;  // bus phases waiting for the bus
    core::SharedResource res_;
    core::Counter &bytes_in_, &bytes_out_;
    int track_;
};

}  // namespace canopy::nand
