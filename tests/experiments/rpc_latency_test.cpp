// `canopy exp rpc-latency` (experiments/rpc-latency.cpp): Willow's RPCs through PCIe
// doorbells and through coherent queues over CCIX. Asserted: what follows from how each way
// signals the device, not the latencies' values (the experiment itself checks every read's data).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "../canopy_process.hpp"

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

// The experiment's machine is Willow's prototype on the CCIX paper's link, and --set changes it:
// on PCIe 1.1 (2.5 GT/s, 8b/10b: 2 GB/s against 4.0's 15.75 GB/s) every RPC's TLPs take longer
// on the wire, both ways of signalling. NAME.config.json records the machine the rows came from.
TEST(PlatformRpcLatencyExp, SetChangesThePrototypeMachine) {
    using canopy_test::slurp;
    const std::string plain_dir = canopy_test::scratch("rpc-latency-plain");
    const auto plain = canopy_test::run_experiment("rpc-latency", plain_dir);
    auto cfg = nlohmann::json::parse(slurp(plain_dir + "/rpc-latency.config.json"));
    EXPECT_EQ(cfg["link"]["pcie"]["generation"].get<int>(), 4);
    EXPECT_EQ(cfg["ssd"]["spus"].get<int>(), 8);  // the prototype's
    EXPECT_FALSE(cfg["ssd"]["store"]["flash"].get<bool>());

    const std::string dir = canopy_test::scratch("rpc-latency-gen1");
    const auto slow =
        canopy_test::run_experiment("rpc-latency", dir, "--set link.pcie.generation=1");
    for (const char* id : {"R.1", "R.2", "R.4", "R.5"})
        EXPECT_GT(slow.at(id).simulated, plain.at(id).simulated) << id;
    cfg = nlohmann::json::parse(slurp(dir + "/rpc-latency.config.json"));
    EXPECT_EQ(cfg["link"]["pcie"]["generation"].get<int>(), 1);
    EXPECT_NE(slurp(dir + "/stdout.txt").find("--set link.pcie.generation=1"), std::string::npos);
}

// Each configuration the experiment runs says so on stderr as it starts (what, its number, the
// time so far); the SPUs' consoles go to OUT/NAME.console/N/, not the terminal; --quiet drops the
// progress lines and --no-figures the figures (Fig.-less here: the rpc figure).
TEST(PlatformRpcLatencyExp, ProgressOnStderrAndTheConsolesInFilesPerConfiguration) {
    using canopy_test::slurp;
    const std::string d = canopy_test::scratch("rpc-latency-progress");
    auto r = canopy_test::run_canopy("exp rpc-latency --quick --out " + d, d);
    ASSERT_EQ(r.status, 0) << r.err;
    const size_t first = r.err.find("rpc-latency: [1] PCIe doorbells ("),
                 second = r.err.find("rpc-latency: [2] CCIX coherent queues (");
    EXPECT_NE(first, std::string::npos) << r.err;
    EXPECT_NE(second, std::string::npos) << r.err;
    EXPECT_LT(first, second) << r.err;
    EXPECT_NE(r.err.find("rpc-latency: 2 configurations in "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("spu-os"), std::string::npos) << r.out;  // not on the terminal
    for (const char* n : {"1", "2"})
        for (int spu = 0; spu < 8; ++spu) {
            const std::string log =
                d + "/rpc-latency.console/" + n + "/spu" + std::to_string(spu) + ".log";
            EXPECT_NE(slurp(log).find(": node " + std::to_string(spu) + " of 8"),
                      std::string::npos)
                << log;  // SPU-OS's boot line
        }
    EXPECT_TRUE(std::filesystem::exists(d + "/rpc-latency.rpc.svg"));

    const std::string q = canopy_test::scratch("rpc-latency-quiet");
    r = canopy_test::run_canopy("exp rpc-latency --quick --quiet --no-figures --out " + q, q);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("[1]"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(q + "/rpc-latency.console/1/spu0.log"));
    EXPECT_FALSE(std::filesystem::exists(q + "/rpc-latency.rpc.svg"));
    EXPECT_FALSE(std::filesystem::exists(q + "/rpc-latency.rpc.png"));
}

// A machine the configuration cannot build is the user's error (status 2, naming the key),
// though it shows only when a child process builds the machine; nothing is written.
TEST(PlatformRpcLatencyExp, AMachineThatCannotBeBuiltIsTheUsersError) {
    const std::string dir = canopy_test::scratch("rpc-latency-bad");
    const auto r = canopy_test::run_canopy(
        "exp rpc-latency --quick --set ssd.store.flash=true --out " + dir, dir);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("ssd.store.flash"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/rpc-latency.csv"));
}
#endif

}  // namespace
