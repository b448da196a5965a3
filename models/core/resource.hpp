// Occupancy timing for a shared resource (a link direction, a flash channel, a die, a ring):
// a request arriving at `at` holds the resource from max(at, free_at) for its duration, so
// contention and queueing delay appear under temporal decoupling without a wait() per request.
// Requests are granted in the order they are made; a module whose initiators can run ahead of
// each other by more than a quantum sees grants in call order, not timestamp order.
#pragma once

#include <systemc>

#include "core/stats.hpp"
#include "core/waves.hpp"

namespace canopy::core {

class SharedResource {
public:
    struct Grant {
        sc_core::sc_time start, end;
    };

    // `stat` and `busy` may be null.
    explicit SharedResource(Occupancy* stat = nullptr, Probe<bool>* busy = nullptr)
        : stat_(stat), busy_(busy) {}

    Grant reserve(const sc_core::sc_time& at, const sc_core::sc_time& duration) {
        Grant g{at > free_at_ ? at : free_at_, sc_core::SC_ZERO_TIME};
        g.end = g.start + duration;
        free_at_ = g.end;
        if (stat_) stat_->occupy((g.start - at).to_seconds() * 1e9, duration.to_seconds() * 1e9);
        if (busy_ && busy_->enabled() && duration > sc_core::SC_ZERO_TIME) {
            busy_->set(true, g.start);
            busy_->set(false, g.end);
        }
        return g;
    }

    const sc_core::sc_time& free_at() const { return free_at_; }
    bool busy_at(const sc_core::sc_time& t) const { return t < free_at_; }

private:
    Occupancy* stat_;
    Probe<bool>* busy_;
    sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
};

}  // namespace canopy::core
