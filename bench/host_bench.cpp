// Host speed: simulated host-core memory operations per second of wall time, through the whole
// host model (TLB, private L1/L2, home node with snoop filter and SLC, DRAM): loads hitting the
// L1, loads streaming through 32 MiB (each line missing to DRAM), and far compare-and-swaps on
// one line. No target in the issues; reported for users sizing their runs. Each benchmark
// iteration runs a program of kOps operations on one core to completion (sc_start).
#include <benchmark/benchmark.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdlib>
#include <memory>
#include <systemc>

#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"

using namespace canopy;

namespace {

const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
constexpr uint64_t kOps = 100000;
constexpr uint64_t kStreamBytes = 32ull << 20;

struct Unused : sc_core::sc_module {  // the core's MMIO path and the home's I/O port
    tlm_utils::simple_target_socket<Unused> mmio;
    tlm_utils::simple_initiator_socket<Unused> io;
    explicit Unused(sc_core::sc_module_name n) : sc_module(n), mmio("mmio"), io("io") {}
};

struct Host {
    core::Services services;
    host::HostMemory memory{"memory", memory_config(), services};
    host::HomeNode home{"home", host::HomeNodeConfig(), services};
    host::HostKernel kernel{memory, home};
    host::HostCore core{"core0", host::HostCoreConfig(), home, kernel, services};
    Unused unused{"unused"};
    host::HostKernel::Process& proc = kernel.create_process("bench");
    uint64_t buffer = 0;
    Host() {
        home.memory_initiator.bind(memory.socket);
        core.mmio.bind(unused.mmio);
        unused.io.bind(home.io_target);
        buffer = proc.space->mmap(kStreamBytes, host::kPage2M);
    }
    static host::HostMemoryConfig memory_config() {
        host::HostMemoryConfig c;
        c.size_bytes = 256ull << 20;
        return c;
    }
    void run(const host::HostProgram& p) {
        core.run(proc, p);
        sc_core::sc_start();
    }
};

Host* host_model() {
    static Host* h = new Host;  // elaborated once per process
    return h;
}

void loads_hitting_l1(benchmark::State& state) {
    Host& h = *host_model();
    for (auto _ : state)
        h.run([&](host::HostCore& cpu) {
            uint64_t sum = 0;
            for (uint64_t i = 0; i < kOps; ++i) sum += cpu.load<uint64_t>(h.buffer + 8 * (i & 7));
            benchmark::DoNotOptimize(sum);
        });
    state.SetItemsProcessed(int64_t(state.iterations() * kOps));
}

void loads_streaming_to_dram(benchmark::State& state) {
    Host& h = *host_model();
    uint64_t offset = 0;
    for (auto _ : state)
        h.run([&](host::HostCore& cpu) {
            for (uint64_t i = 0; i < kOps; ++i) {
                cpu.load<uint64_t>(h.buffer + offset);
                offset = (offset + 64) % kStreamBytes;
            }
        });
    state.SetItemsProcessed(int64_t(state.iterations() * kOps));
}

void far_compare_and_swap(benchmark::State& state) {
    Host& h = *host_model();
    for (auto _ : state)
        h.run([&](host::HostCore& cpu) {
            for (uint64_t i = 0; i < kOps; ++i) cpu.compare_and_swap(h.buffer, i, i + 1);
        });
    state.SetItemsProcessed(int64_t(state.iterations() * kOps));
}

BENCHMARK(loads_hitting_l1)->Unit(benchmark::kMillisecond);
BENCHMARK(loads_streaming_to_dram)->Unit(benchmark::kMillisecond);
BENCHMARK(far_compare_and_swap)->Unit(benchmark::kMillisecond);

}  // namespace

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
