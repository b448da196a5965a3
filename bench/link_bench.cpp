// Link speed: device reads of host memory per second of wall time through the whole PCIe path
// of `canopy exp ats-cost` (platform/pcie_rig.hpp, PcieRig): the CTG issues a read, the
// DMA engine translates the virtual host address in the ATC and reads through the device mux,
// the PCIe link (TLPs, credits, wire occupancy) and the root port from host memory, then writes
// the device memory. Target: >= 2 M transactions/s for 64-B reads hitting the ATC; 64-B reads
// missing the ATC (an ATS request over the link to the IOMMU each) and 4-KiB reads for
// information. One benchmark iteration is one transaction; items_per_second is the rate.
//
// SystemC elaborates once per process, so every variant's rig is built before the first
// sc_start. The models are loosely timed: the rig keeps its own time and the kernel is
// advanced to it every kSyncEvery transactions, as a quantum keeper would, so the link's
// wires forget past grants.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <systemc>

#include "core/stats.hpp"
#include "host/page_table.hpp"
#include "platform/pcie_rig.hpp"

using namespace canopy;

namespace {

const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
constexpr uint64_t kSyncEvery = 1024;
constexpr uint64_t kMissPages = 4096;  // 16 MiB of 4 KiB pages: far more than the ATC holds

struct Variant {
    std::unique_ptr<platform::PcieRig> rig;
    uint64_t base = 0;
};
Variant hit, miss, big;

link::CtgRequest read_of(uint64_t address, uint64_t bytes) {
    link::CtgRequest r;
    r.access = link::CtgAccess::Dma;
    r.write = false;
    r.address = address;
    r.bytes = bytes;
    return r;
}

// `stride` 0: the same address every time (ATC hits after the first); else the next page.
void run(benchmark::State& state, Variant& v, uint64_t bytes, uint64_t stride, uint64_t pages) {
    platform::PcieRig& rig = *v.rig;
    link::CtgRequest req = read_of(v.base, bytes);
    rig.ctg_run(req);  // warm: the first read's miss stays out of the loop
    uint64_t n = 0, failed = 0, page = 0;
    for (auto _ : state) {
        if (stride) {
            page = page + 1 == pages ? 0 : page + 1;
            req.address = v.base + page * stride;
        }
        failed += rig.ctg_run(req) != 1;
        if (++n % kSyncEvery == 0) rig.sync();
    }
    rig.sync();
    state.SetItemsProcessed(int64_t(state.iterations()));
    if (failed) state.SkipWithError("a transaction failed");
}

void BM_Read64AtcHit(benchmark::State& state) { run(state, hit, 64, 0, 1); }
void BM_Read64AtcMiss(benchmark::State& state) { run(state, miss, 64, host::kPage4K, kMissPages); }
void BM_Read4KAtcHit(benchmark::State& state) { run(state, big, 4096, 0, 1); }

}  // namespace

BENCHMARK(BM_Read64AtcHit);
BENCHMARK(BM_Read64AtcMiss);
BENCHMARK(BM_Read4KAtcHit);

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    hit.rig = std::make_unique<platform::PcieRig>(true, platform::PlatformConfig(), "hit_");
    miss.rig = std::make_unique<platform::PcieRig>(true, platform::PlatformConfig(), "miss_");
    big.rig = std::make_unique<platform::PcieRig>(true, platform::PlatformConfig(), "big_");
    platform::PcieRig::elaborate();
    hit.base = hit.rig->mmap(1 << 20, host::kPage4K);
    miss.base = miss.rig->mmap(kMissPages * host::kPage4K, host::kPage4K);
    big.base = big.rig->mmap(1 << 20, host::kPage4K);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    // What was simulated: the mean latency per read (a check that the path is the experiment's:
    // 64-B ATC-hit reads ~700 ns, CALIBRATION E2).
    for (auto* v : {&hit, &miss, &big}) {
        const auto& dma = v->rig->dma();
        const auto* lat = static_cast<const core::Distribution*>(
            v->rig->services().stats.find(dma.name(), "latency.host_to_device"));
        const auto* atc_hits = static_cast<const core::Counter*>(
            v->rig->services().stats.find(v->rig->atc().name(), "hits"));
        std::printf("%-24s %10llu reads, mean latency %.1f ns, %llu ATC hits\n", dma.name(),
                    static_cast<unsigned long long>(lat->count()), lat->mean(),
                    static_cast<unsigned long long>(atc_hits->value()));
    }
    return 0;
}
