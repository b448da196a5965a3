// Occupancy timing for a shared resource (a link direction, a flash channel, a die, a ring):
// a request arriving at `at` for `duration` takes the earliest idle slot of that length that
// starts at or after `at`, so contention and queueing delay appear under temporal decoupling
// without a wait() per request. The resource remembers its busy intervals, so a request made
// later in host order but for an earlier time (another initiator that has not run ahead as far)
// still fills an idle gap before later grants, as an arbiter seeing the requests in time would.
// Intervals that end before the kernel's current time are forgotten: no request can reach them.
#pragma once

#include <algorithm>
#include <systemc>
#include <vector>

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
        : stat_(stat), busy_probe_(busy), queue_(queue) {}

    Grant reserve(const sc_core::sc_time& at, const sc_core::sc_time& duration) {
        forget_before(sc_core::sc_time_stamp());
        sc_core::sc_time start = at;
        size_t it = upper_bound(start);  // first interval starting after `start`
        if (it != head_ && busy_[it - 1].end > start) start = busy_[it - 1].end;
        while (it != busy_.size() && busy_[it].start < start + duration) {
            if (busy_[it].end > start) start = busy_[it].end;
            ++it;
        }
        const Grant g{start, start + duration};
        if (duration > sc_core::SC_ZERO_TIME) insert(g);
        if (stat_) stat_->occupy(to_ns(g.start - at), to_ns(duration));
        if (busy_probe_) busy_probe_->busy(g.start, g.end);
        if (queue_) queue_->add(at, g.start);
        return g;
    }

    // The end of the last grant.
    const sc_core::sc_time& free_at() const { return last_end_; }
    // Whether time `t` lies inside a grant (so a zero-length request at `t` would wait).
    bool busy_at(const sc_core::sc_time& t) const {
        const size_t it = upper_bound(t);
        return it != head_ && busy_[it - 1].end > t;
    }
    size_t intervals() const { return busy_.size() - head_; }

  private:
    // First live interval starting after `t` (index; busy_.size() when none). Requests come
    // mostly near the latest grants: look at the last few intervals before a binary search.
    size_t upper_bound(const sc_core::sc_time& t) const {
        size_t i = busy_.size();
        for (int k = 0; k < 4 && i != head_; ++k, --i)
            if (!(t < busy_[i - 1].start)) return i;
        return size_t(std::upper_bound(
                          busy_.begin() + head_, busy_.begin() + i, t,
                          [](const sc_core::sc_time& v, const Grant& g) { return v < g.start; }) -
                      busy_.begin());
    }
    // First live interval starting at or after `t`.
    size_t lower_bound(const sc_core::sc_time& t) const {
        size_t i = busy_.size();
        for (int k = 0; k < 4 && i != head_; ++k, --i)
            if (busy_[i - 1].start < t) return i;
        return size_t(std::lower_bound(
                          busy_.begin() + head_, busy_.begin() + i, t,
                          [](const Grant& g, const sc_core::sc_time& v) { return g.start < v; }) -
                      busy_.begin());
    }
    // Adds [g.start, g.end), merged with the intervals it touches.
    void insert(const Grant& g) {
        sc_core::sc_time s = g.start, e = g.end;
        size_t next = lower_bound(e);
        if (next != busy_.size() && busy_[next].start == e) {
            e = busy_[next].end;
            busy_.erase(busy_.begin() + next);
        }
        size_t it = lower_bound(s);
        if (it != head_ && busy_[it - 1].end == s) s = busy_[--it].start;
        if (it != busy_.size() && busy_[it].start == s)
            busy_[it].end = e;
        else
            busy_.insert(busy_.begin() + it, Grant{s, e});
        if (e > last_end_) last_end_ = e;
    }
    void forget_before(const sc_core::sc_time& now) {
        while (head_ != busy_.size() && busy_[head_].end < now) ++head_;
        if (head_ >= 64 && head_ * 2 >= busy_.size()) {  // drop the forgotten prefix
            busy_.erase(busy_.begin(), busy_.begin() + head_);
            head_ = 0;
        }
    }
    // A ratio of two integer time values: whole nanoseconds stay exact when summed.
    static double to_ns(const sc_core::sc_time& t) {
        static const sc_core::sc_time ns(1, sc_core::SC_NS);
        return t / ns;
    }

    Occupancy* stat_;
    BusyProbe* busy_probe_;
    QueueProbe* queue_;
    // Disjoint intervals sorted by start; those before head_ are forgotten. A sorted vector:
    // grants arrive mostly near the end, so inserting is a short move and lookups stay in cache.
    std::vector<Grant> busy_;
    size_t head_ = 0;
    sc_core::sc_time last_end_ = sc_core::SC_ZERO_TIME;
};

}  // namespace canopy::core
