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
        if (stat_) stat_->occupy(to_ns(g.start - at), to_ns(duration));
        if (busy_ && busy_->enabled() && duration > sc_core::SC_ZERO_TIME) {
            busy_->set(true, g.start);
            busy_->set(false, g.end);
        }
        return g;
    }

    const sc_core::sc_time& free_at() const { return free_at_; }
    // Whether a request made now for time `t` would have to wait (the resource is granted up
    // to free_at(); idle gaps between earlier grants are not remembered).
    bool busy_at(const sc_core::sc_time& t) const { return t < free_at_; }

private:
    // A ratio of two integer time values: whole nanoseconds stay exact when summed.
    static double to_ns(const sc_core::sc_time& t) {
        return t / sc_core::sc_time(1, sc_core::SC_NS);
    }

    Occupancy* stat_;
    Probe<bool>* busy_;
    sc_core::sc_time free_at_ = sc_core::SC_ZERO_TIME;
};

}  // namespace canopy::core
