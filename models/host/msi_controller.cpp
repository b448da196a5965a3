#include "host/msi_controller.hpp"

namespace canopy::host {

void MsiConfig::describe(core::Params& p) {
    p("msi_latency_ns", msi_latency_ns, "ns",
      "an MSI's posted write over the link, after the completion it signals [assumed]", 0.0,
      1e9)("wake_ns", wake_ns, "ns",
           "interrupt entry, handler and waking the waiting thread [assumed]", 0.0, 1e9);
}

MsiController::Vector& MsiController::vector(uint32_t v) {
    auto& slot = vectors_[v];
    if (!slot) slot = std::make_unique<Vector>();
    return *slot;
}

void MsiController::raise(uint32_t v, const sc_core::sc_time& at) {
    Vector& x = vector(v);
    ++x.count;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    x.event.notify((at > now ? at - now : sc_core::SC_ZERO_TIME) +
                   sc_core::sc_time(cfg_.msi_latency_ns, sc_core::SC_NS));
}

uint64_t MsiController::count(uint32_t v) const {
    const auto it = vectors_.find(v);
    return it == vectors_.end() ? 0 : it->second->count;
}

const sc_core::sc_event& MsiController::event(uint32_t v) { return vector(v).event; }

}  // namespace canopy::host
