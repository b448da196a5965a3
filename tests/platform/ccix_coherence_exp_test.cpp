// `canopy exp coherence` (E4, platform/ccix_coherence.cpp): published values and trends.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "canopy_process.hpp"

namespace {

using canopy_test::expect_within;
using Row = canopy_test::ExpRow;

std::map<std::string, Row> run_exp(const std::string& name) {
    return canopy_test::run_experiment(name, canopy_test::scratch("ccix-exp-" + name));
}

}  // namespace

namespace {

// E4 is not calibrated yet (see the issue); what holds already: the device's latency stays
// nearly flat from 2 MiB down to 32 KiB, and each row is a real latency.
TEST(PlatformCcixExp, CoherenceDeviceLatencyNearlyFlatOverBufferSizes) {
    auto rows = run_exp("coherence");
    double lo = 1e9, hi = 0;
    for (const char* id : {"E4.2", "E4.4", "E4.6", "E4.8"}) {
        ASSERT_TRUE(rows.count(id)) << id;
        lo = std::min(lo, rows[id].simulated);
        hi = std::max(hi, rows[id].simulated);
    }
    EXPECT_GT(lo, 400.0);  // every device access that misses crosses the link both ways
    EXPECT_LT(hi / lo, 1.25);
}

}  // namespace
