#include "nand/bus.hpp"

namespace canopy::nand {

using sc_core::SC_NS;
using sc_core::sc_time;

ChannelBus::ChannelBus(const std::string& name, const Timing& t, core::Services& s)
    : name_(name),
      ns_per_cycle_(t.t_cmd_cycle_ns),
      ns_per_byte_(1e3 / t.channel_rate_mbps),
      busy_probe_("bus_busy", s.waves, name + ".busy"),
      queue_probe_("bus_queue", s.waves, name + ".queue"),
      res_(&s.stats.occupancy(name, "bus", "channel bus occupancy", true), &busy_probe_,
           &queue_probe_),
      bytes_in_(s.stats.counter(name, "bytes_in", "data bytes into dies")),
      bytes_out_(s.stats.counter(name, "bytes_out", "data bytes out of dies")),
      track_(s.trace.track(name)) {}

sc_time ChannelBus::duration(uint32_t cycles, uint64_t bytes) const {
    return sc_time(double(cycles) * ns_per_cycle_ + double(bytes) * ns_per_byte_, SC_NS);
}

core::SharedResource::Grant ChannelBus::transfer(const sc_time& at, uint32_t cycles, uint64_t bytes,
                                                 const sc_time& extra, bool data_out) {
    (data_out ? bytes_out_ : bytes_in_).add(bytes);
    return res_.reserve(at, duration(cycles, bytes) + extra);
}

}  // namespace canopy::nand
