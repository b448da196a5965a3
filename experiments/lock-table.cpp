// `canopy exp lock-table` (CCIX-vs-PCIe paper, seeds/003 Section V, neoDBMS; CALIBRATION.md "lock
// table"): a host core and the device's lock module lock record versions in a shared lock table
// in pinned huge-page host memory (platform/lock_table_run) under rising contention, each level
// in a child process; no lock is ever held twice.
#include <string>
#include <vector>

#include <systemc>

#include "core/rng.hpp"
#include "experiments/experiment.hpp"
#include "experiments/isolated.hpp"
#include "platform/ccix_machine.hpp"
#include "platform/lock_table_run.hpp"

namespace canopy::experiments {

using namespace platform;

namespace {

using nlohmann::json;
using sc_core::sc_time;

// Host core 0 and the device lock and unlock record versions of a small table. The device's lock
// module serves `workers` requests at once (each its own thread on the request agent), each
// pausing `device_gap_ns` between requests: together they set the contention (0 workers: idle).
json lock_run(const PlatformConfig& base, unsigned workers, double device_gap_ns, unsigned locks) {
    Machine m(base);
    LockTableRunConfig c;
    c.seed = core::derive_seed(base.sim.seed, "lock_table");  // as the lock-table scenario
    c.locks = locks;
    c.workers = workers;
    c.device_gap_ns = device_gap_ns;
    const LockTableRun run(*m.platform, *m.proc, c);
    sc_core::sc_start();
    m.check_host();
    const LockTableRun::Result& r = run.result();
    return {{"host", r.host_ns}, {"device", r.device_ns}, {"double_grants", r.double_grants}};
}

std::vector<ExpRow> lock_table(const ExpOptions& o) {
    const unsigned locks = o.quick ? 400 : 4000;
    const PlatformConfig base = o.platform();
    const json idle = run_isolated([&] { return lock_run(base, 0, 0, locks); }, "device idle");
    const json low = run_isolated([&] { return lock_run(base, 1, 4000, locks); }, "low contention");
    const json high = run_isolated([&] { return lock_run(base, 4, 0, locks); }, "high contention");
    const double grants = idle["double_grants"].get<double>() + low["double_grants"].get<double>() +
                          high["double_grants"].get<double>();
    return {
        {"DB.1", "host lock, device idle", idle["host"], 80.0, "ns"},
        {"DB.2", "host lock, low contention (1 device request every 4 us)", low["host"], 80.0,
         "ns"},
        {"DB.3", "host lock, high contention (4 device requests in flight)", high["host"], 225.0,
         "ns", 200.0, 250.0},
        {"DB.4", "device lock, low contention", low["device"], 775.0, "ns", 750.0, 800.0},
        {"DB.5", "device lock, high contention (published: unaffected)", high["device"], 775.0,
         "ns", 750.0, 800.0},
        {"DB.6", "locks granted to two holders at once", grants, 0.0, ""},
    };
}

}  // namespace

Experiment lock_table_experiment() {
    return {"lock-table",
            "CCIX-vs-PCIe paper Sec. V (neoDBMS): host and device lock record versions in a shared "
            "lock table in pinned huge-page host memory under rising contention; no double grants",
            lock_table};
}

}  // namespace canopy::experiments
