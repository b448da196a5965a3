// `canopy exp rpc-latency` (platform/rpc_latency_experiment.cpp): Willow's RPCs through PCIe
// doorbells and through coherent queues over CCIX. Asserted: what follows from how each way
// signals the device, not the latencies' values (the experiment itself checks every read's data).
#include <gtest/gtest.h>

#include <string>

#include "canopy_process.hpp"

namespace {

#ifdef CANOPY_FIRMWARE_DIR
TEST(PlatformRpcLatencyExp, CoherentQueuesRingNoDoorbellAndEveryAccessCompletes) {
    auto rows = canopy_test::run_experiment("rpc-latency", canopy_test::scratch("rpc-latency-exp"));
    auto sim = [&](int i) {
        const std::string id = "R." + std::to_string(i);
        EXPECT_TRUE(rows.count(id)) << id;
        return rows[id].simulated;
    };
    // Per RPC with doorbells: the SQ tail and the CQ head; over CCIX none, and the host's write of
    // the entry takes the watched line from the request agent.
    EXPECT_EQ(sim(19), 2.0);
    EXPECT_EQ(sim(20), 0.0);
    EXPECT_GE(sim(21), 1.0);
    // 16 reads in flight overlap: well above one read at a time (1 / its latency), both ways.
    EXPECT_GT(sim(16), 2 * 1e3 / sim(4));
    EXPECT_GT(sim(17), 2 * 1e3 / sim(5));
    EXPECT_DOUBLE_EQ(sim(18), sim(17) / sim(16));
    for (int k = 0; k < 5; ++k) {
        const double doorbells = sim(3 * k + 1), ccix = sim(3 * k + 2);
        // A round trip crosses the link at least four times (request there: signal and fetch;
        // completion back), 0.2 us each at least.
        EXPECT_GT(doorbells, 0.8) << k;
        EXPECT_GT(ccix, 0.8) << k;
        EXPECT_DOUBLE_EQ(sim(3 * k + 3), ccix / doorbells);
        // 4 KiB of data costs more than an empty RPC, both ways.
        if (k > 0) {
            EXPECT_GT(doorbells, sim(1)) << k;
            EXPECT_GT(ccix, sim(2)) << k;
        }
    }
}
#endif

}  // namespace
