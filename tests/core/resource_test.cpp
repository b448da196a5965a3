// SharedResource: occupancy timing of a resource that requests hold one after another, from
// max(arrival, free_at), and the Occupancy statistics it feeds.
#include <gtest/gtest.h>

#include <systemc>

#include <nlohmann/json.hpp>

#include "core/resource.hpp"
#include "core/stats.hpp"

using canopy::core::Occupancy;
using canopy::core::SharedResource;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
sc_time ns(double v) { return sc_time(v, SC_NS); }
}  // namespace

TEST(CoreResource, IdleResourceStartsAtRequestTime) {
    SharedResource r;
    EXPECT_EQ(r.free_at(), SC_ZERO_TIME);
    auto g = r.reserve(ns(40), ns(10));
    EXPECT_EQ(g.start, ns(40));
    EXPECT_EQ(g.end, ns(50));
    EXPECT_EQ(r.free_at(), ns(50));
}

TEST(CoreResource, BackToBackRequestsDoNotWait) {
    SharedResource r;
    auto a = r.reserve(ns(0), ns(10));
    auto b = r.reserve(ns(10), ns(10));
    auto c = r.reserve(ns(20), ns(5));
    EXPECT_EQ(a.start, ns(0));
    EXPECT_EQ(a.end, ns(10));
    EXPECT_EQ(b.start, ns(10));
    EXPECT_EQ(b.end, ns(20));
    EXPECT_EQ(c.start, ns(20));
    EXPECT_EQ(c.end, ns(25));
}

TEST(CoreResource, OverlappingRequestQueuesUntilFree) {
    SharedResource r;
    auto a = r.reserve(ns(0), ns(100));
    auto b = r.reserve(ns(30), ns(50));  // arrives while a holds the resource
    auto c = r.reserve(ns(40), ns(5));   // queues behind b
    EXPECT_EQ(a.end, ns(100));
    EXPECT_EQ(b.start, ns(100));
    EXPECT_EQ(b.end, ns(150));
    EXPECT_EQ(c.start, ns(150));
    EXPECT_EQ(c.end, ns(155));
    EXPECT_EQ(r.free_at(), ns(155));
}

TEST(CoreResource, IdleGapStartsAtRequestTime) {
    SharedResource r;
    r.reserve(ns(0), ns(10));
    auto g = r.reserve(ns(50), ns(10));
    EXPECT_EQ(g.start, ns(50));
    EXPECT_EQ(g.end, ns(60));
}

TEST(CoreResource, ZeroDuration) {
    SharedResource r;
    auto z = r.reserve(ns(5), SC_ZERO_TIME);
    EXPECT_EQ(z.start, ns(5));
    EXPECT_EQ(z.end, ns(5));
    EXPECT_EQ(r.free_at(), SC_ZERO_TIME);  // a zero-length grant holds nothing
    // While busy, a zero-length request still waits its turn, and frees nothing early.
    r.reserve(ns(10), ns(20));
    auto w = r.reserve(ns(15), SC_ZERO_TIME);
    EXPECT_EQ(w.start, ns(30));
    EXPECT_EQ(w.end, ns(30));
    EXPECT_EQ(r.free_at(), ns(30));
}

TEST(CoreResource, EarlierRequestMadeLaterFillsAnIdleGap) {
    // A request made later in call order but for an earlier time takes the idle slot before the
    // grant already made, as an arbiter seeing both in time order would.
    SharedResource r;
    r.reserve(ns(100), ns(10));
    auto g = r.reserve(ns(0), ns(10));
    EXPECT_EQ(g.start, ns(0));
    EXPECT_EQ(g.end, ns(10));
    EXPECT_EQ(r.free_at(), ns(110));
}

TEST(CoreResource, GapTooShortIsSkipped) {
    // Busy [0,10) and [30,40): a 15 ns request at 5 fits in [10,30); a 25 ns one does not and
    // goes after 40.
    SharedResource r;
    r.reserve(ns(0), ns(10));
    r.reserve(ns(30), ns(10));
    auto fits = r.reserve(ns(5), ns(15));
    EXPECT_EQ(fits.start, ns(10));
    EXPECT_EQ(fits.end, ns(25));
    auto late = r.reserve(ns(5), ns(25));
    EXPECT_EQ(late.start, ns(40));
    EXPECT_EQ(late.end, ns(65));
    // [0,25) and [30,65) remain: the touching grants merged.
    EXPECT_EQ(r.intervals(), 2u);
    EXPECT_TRUE(r.busy_at(ns(24)));
    EXPECT_FALSE(r.busy_at(ns(27)));
}

TEST(CoreResource, RequestInsideABusyIntervalWaitsForItsEnd) {
    SharedResource r;
    r.reserve(ns(100), ns(10));
    auto g = r.reserve(ns(95), ns(10));  // would overlap [100,110)
    EXPECT_EQ(g.start, ns(110));
    auto h = r.reserve(ns(105), ns(1));
    EXPECT_EQ(h.start, ns(120));
}

TEST(CoreResource, SubNanosecondTimesAreExact) {
    SharedResource r;
    auto a = r.reserve(sc_time(1, sc_core::SC_PS), sc_time(1500, sc_core::SC_PS));
    auto b = r.reserve(SC_ZERO_TIME, sc_time(2, sc_core::SC_PS));  // too long for [0, 1 ps)
    auto c = r.reserve(SC_ZERO_TIME, sc_time(1, sc_core::SC_PS));  // fits exactly
    EXPECT_EQ(a.end, sc_time(1501, sc_core::SC_PS));
    EXPECT_EQ(b.start, sc_time(1501, sc_core::SC_PS));
    EXPECT_EQ(b.end, sc_time(1503, sc_core::SC_PS));
    EXPECT_EQ(c.start, SC_ZERO_TIME);
    EXPECT_EQ(c.end, sc_time(1, sc_core::SC_PS));
}

TEST(CoreResource, BusyAt) {
    SharedResource r;
    EXPECT_FALSE(r.busy_at(ns(0)));
    r.reserve(ns(0), ns(100));
    EXPECT_TRUE(r.busy_at(ns(0)));
    EXPECT_TRUE(r.busy_at(ns(99)));
    EXPECT_FALSE(r.busy_at(ns(100)));
    EXPECT_FALSE(r.busy_at(ns(150)));
}

TEST(CoreResource, FeedsOccupancyWaitAndBusy) {
    // Requests (arrival, duration): (0,100) (30,50) (200,20) (210,10)
    // Grants: [0,100) wait 0; [100,150) wait 70; [200,220) wait 0; [220,230) wait 10.
    Occupancy occ("link.up", "", "");
    SharedResource r(&occ);
    r.reserve(ns(0), ns(100));
    r.reserve(ns(30), ns(50));
    r.reserve(ns(200), ns(20));
    r.reserve(ns(210), ns(10));
    EXPECT_EQ(occ.grants(), 4u);
    EXPECT_NEAR(occ.wait_ns(), 80.0, 1e-9);
    EXPECT_NEAR(occ.busy_ns(), 180.0, 1e-9);
    auto j = occ.to_json(300);
    EXPECT_NEAR(j["utilisation"].get<double>(), 0.6, 1e-12);
    EXPECT_NEAR(j["mean_wait_ns"].get<double>(), 20.0, 1e-9);
    EXPECT_NEAR(j["max_wait_ns"].get<double>(), 70.0, 1e-9);
    // Little's law: one request waits in [30,100) and one in [210,220): 80 ns of queue over 300.
    EXPECT_NEAR(j["mean_queue_depth"].get<double>(), 80.0 / 300.0, 1e-12);
}

TEST(CoreResource, OccupancyNanosecondsAreExactForWholeNumbers) {
    // Many grants of whole nanoseconds must add up exactly (no drift from unit conversion).
    Occupancy occ("bus", "", "");
    SharedResource r(&occ);
    for (int i = 0; i < 100000; ++i) r.reserve(SC_ZERO_TIME, ns(3));
    EXPECT_EQ(occ.busy_ns(), 300000.0);
    // Request i waits 3 i ns: total 3 * n (n - 1) / 2.
    EXPECT_EQ(occ.wait_ns(), 3.0 * 100000.0 * 99999.0 / 2.0);
}
