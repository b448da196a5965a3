// Occupancy timing for a shared resource (a link direction, a flash channel, a die, a ring):
// a request arriving at `at` for `duration` takes the earliest idle slot of that length that
// starts at or after `at`, so contention and queueing delay appear under temporal decoupling
// without a wait() per request. The resource remembers its busy intervals, so a request made
// later in host order but for an earlier time (another initiator that has not run ahead as far)
// still fills an idle gap before later grants, as an arbiter seeing the requests in time would.
// Intervals that end before the kernel's current time are forgotten: no request can reach them.
#pragma once

#include <map>
#include <systemc>

#include "core/stats.hpp"
#include "core/waves.hpp"

namespace canopy::core {

class SharedResource {
  public:
    struct Grant {
        sc_core::sc_time start, end;
    };

    // `stat`, `busy` and `queue` may be null.
    explicit SharedResource(Occupancy* stat = nullptr, BusyProbe* busy = nullptr,
                            QueueProbe* queue = nullptr)
        : stat_(stat), busy_(busy), queue_(queue) {}

    Grant reserve(const sc_core::sc_time& at, const sc_core::sc_time& duration) {
        forget_before(sc_core::sc_time_stamp());
        sc_core::sc_time start = at;
        auto it = busy_until_.upper_bound(start);  // first interval starting after `start`
        if (it != busy_until_.begin() && std::prev(it)->second > start)
            start = std::prev(it)->second;
        while (it != busy_until_.end() && it->first < start + duration) {
            if (it->second > start) start = it->second;
            ++it;
        }
        const Grant g{start, start + duration};
        if (duration > sc_core::SC_ZERO_TIME) insert(g);
        if (stat_) stat_->occupy(to_ns(g.start - at), to_ns(duration));
        if (busy_) busy_->busy(g.start, g.end);
        if (queue_) queue_->add(at, g.start);
        return g;
    }

    // The end of the last grant.
    const sc_core::sc_time& free_at() const { return last_end_; }
    // Whether time `t` lies inside a grant (so a zero-length request at `t` would wait).
    bool busy_at(const sc_core::sc_time& t) const {
        auto it = busy_until_.upper_bound(t);
        return it != busy_until_.begin() && std::prev(it)->second > t;
    }
    size_t intervals() const { return busy_until_.size(); }

  private:
    // Adds [g.start, g.end), merged with the intervals it touches.
    void insert(const Grant& g) {
        sc_core::sc_time s = g.start, e = g.end;
        auto next = busy_until_.find(e);
        if (next != busy_until_.end()) e = next->second, busy_until_.erase(next);
        auto it = busy_until_.lower_bound(s);
        if (it != busy_until_.begin() && std::prev(it)->second == s) s = (--it)->first;
        busy_until_[s] = e;
        if (e > last_end_) last_end_ = e;
    }
    void forget_before(const sc_core::sc_time& now) {
        while (!busy_until_.empty() && busy_until_.begin()->second < now)
            busy_until_.erase(busy_until_.begin());
    }
    // A ratio of two integer time values: whole nanoseconds stay exact when summed.
    static double to_ns(const sc_core::sc_time& t) {
        return t / sc_core::sc_time(1, sc_core::SC_NS);
    }

    Occupancy* stat_;
    BusyProbe* busy_;
    QueueProbe* queue_;
    std::map<sc_core::sc_time, sc_core::sc_time> busy_until_;  // start -> end, disjoint
    sc_core::sc_time last_end_ = sc_core::SC_ZERO_TIME;
};

}  // namespace canopy::core
