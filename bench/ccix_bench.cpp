// CCIX coherence speed: simulated coherent device accesses per second of wall time on the E4
// workload (`canopy exp coherence`, experiments/coherence.hpp): one host core and the device's
// request agent read and write random words of a shared buffer in pinned 2 MiB pages, each side
// one access at a time, through the whole platform (host caches, home node, CCIX home agent, the
// PCIe link's VC1, the request agent's system cache). Target (the CCIX issue): >= 1 M device
// accesses per second on a 32 KiB and a 2 MiB buffer. items_per_second counts device accesses;
// the counter host_accesses/s the host core's. Each round lasts until both sides have made
// kHostOps accesses, so the faster side (the host, hitting its caches) makes many more.
//
// SystemC elaborates once per process: one machine serves every benchmark, each iteration one
// round of kHostOps host accesses (the device runs until the host is done), continuing in time.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "experiments/coherence.hpp"

using namespace canopy;

namespace {

const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
constexpr unsigned kHostOps = 20000;  // as `canopy exp coherence` (the paper's 20,000 accesses)

struct Rig {
    platform::Machine machine;
    uint64_t buffer = machine.shared(2 << 20);
    uint64_t initialised_bytes = 0;  // the range core 0 has written once already
};

Rig& rig() {
    static Rig* r = new Rig;  // elaborated once per process
    return *r;
}

void run(benchmark::State& state, uint64_t bytes, unsigned host_cores = 1) {
    Rig& r = rig();
    experiments::CoherenceRound round;
    round.buffer = r.buffer;
    round.bytes = bytes;
    round.host_cores = host_cores;
    round.ops = kHostOps;
    uint64_t device = 0, host = 0, seed = 1;
    for (auto _ : state) {
        round.seed = seed++;
        round.initialise = host_cores > 0 && bytes > r.initialised_bytes;
        if (round.initialise) r.initialised_bytes = bytes;
        const experiments::CoherenceCounts n = experiments::run_coherence_round(r.machine, round);
        device += n.device_accesses;
        host += n.host_accesses;
    }
    state.SetItemsProcessed(int64_t(device));
    state.counters["host_accesses/s"] =
        benchmark::Counter(double(host), benchmark::Counter::kIsRate);
    state.counters["device_per_round"] =
        benchmark::Counter(double(device) / double(state.iterations()));
}

void BM_Coherence32K(benchmark::State& state) { run(state, 32 << 10); }
void BM_Coherence2M(benchmark::State& state) { run(state, 2 << 20); }
// For information: the device alone (host idle) on 2 MiB, mostly system-cache misses over the
// link: what a device access costs the simulator by itself.
void BM_DeviceAlone2M(benchmark::State& state) { run(state, 2 << 20, 0); }

}  // namespace

BENCHMARK(BM_Coherence32K)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Coherence2M)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeviceAlone2M)->Unit(benchmark::kMillisecond);

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    rig();  // elaborate before the first sc_start
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
