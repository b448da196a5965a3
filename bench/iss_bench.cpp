// ISS speed: simulated instructions per second of wall time on a tight firmware loop (a
// countdown with a load, a store and ALU ops, 8 instructions per iteration) on one core, for DMI
// on and off and for quanta of 1 us and 100 us. Target: >= 150 MIPS with DMI at a 1 us quantum.
//
// SystemC elaborates once per process, so every variant's machine (core, bus, IMEM, DMEM) is
// built before the first sc_start, each core halted. A benchmark iteration resumes one core with
// an instruction limit K instructions ahead and runs the kernel until the core stops again
// (sc_start() returns when nothing is left to do): the wall time measured covers exactly the
// simulation of those K instructions, synchronisation with the kernel included. Alone, the core
// rarely needs to wait() (nothing else is pending; it still yields every 100 us); the "busy"
// variant adds a process active every microsecond, so that it waits at every 1 us quantum.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "cpu/memory.hpp"
#include "cpu/router.hpp"
#include "cpu/rv32_core.hpp"
#include "cpu/spu_map.h"

using namespace canopy;

namespace {

const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

// The loop, hand-assembled (x8 = s0 = DMEM base, x5 = t0 = count):
//   lui s0, 0x10          ; s0 = 0x10000 (DMEM)
//   lui t0, 0x80000 ; addi t0, t0, -1   ; t0 = 0x7fffffff
// loop:
//   lw   a1, 0(s0)
//   addi a0, a0, 3
//   xor  a1, a1, a0
//   slli a2, a1, 1
//   add  a3, a2, a0
//   sw   a3, 4(s0)
//   addi t0, t0, -1
//   bne  t0, zero, loop
constexpr uint32_t kLoopInstructions = 8;
const std::vector<uint32_t> kProgram = {
    0x00010437,  // lui s0, 0x10
    0x800002b7,  // lui t0, 0x80000
    0xfff28293,  // addi t0, t0, -1
    0x00042583,  // lw a1, 0(s0)
    0x00350513,  // addi a0, a0, 3
    0x00a5c5b3,  // xor a1, a1, a0
    0x00159613,  // slli a2, a1, 1
    0x00a606b3,  // add a3, a2, a0
    0x00d42223,  // sw a3, 4(s0)
    0xfff28293,  // addi t0, t0, -1
    0xfe0292e3,  // bne t0, zero, loop (-28)
};

struct Machine : sc_core::sc_module {
    cpu::Rv32Core core;
    cpu::Router bus;
    cpu::Memory imem, dmem;

    Machine(sc_core::sc_module_name name, const cpu::CoreConfig& cfg, core::Services& s)
        : sc_module(name),
          core("core", cfg, s),
          bus("bus",
              {{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE}, {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE}}),
          imem("imem", SPU_IMEM_SIZE, s),
          dmem("dmem", SPU_DMEM_SIZE, s) {
        core.bus.bind(bus.target);
        bus.port[0].bind(imem.socket);
        bus.port[1].bind(dmem.socket);
        imem.write(0, reinterpret_cast<const uint8_t*>(kProgram.data()), 4 * kProgram.size());
        core.halt();  // parked until a benchmark resumes it
    }
};

// Another process with something to do every microsecond (while switched on): the core then
// really waits at every 1 us quantum, which shows the cost of synchronising.
struct Ticker : sc_core::sc_module {
    bool on = false;
    sc_core::sc_event enable;
    SC_HAS_PROCESS(Ticker);
    explicit Ticker(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
    void run() {
        for (;;) {
            while (!on) wait(enable);
            wait(1, sc_core::SC_US);
        }
    }
};

struct Variant {
    const char* name;
    bool dmi;
    double quantum_ns;
    uint64_t batch;  // instructions per benchmark iteration
    bool busy;       // another process active every 1 us
};
const Variant kVariants[] = {
    {"dmi_q1us", true, 1000, 20'000'000, false},
    {"dmi_q100us", true, 100'000, 20'000'000, false},
    {"nodmi_q1us", false, 1000, 1'000'000, false},
    {"nodmi_q100us", false, 100'000, 1'000'000, false},
    {"dmi_q1us_busy", true, 1000, 20'000'000, true},
};
Ticker* ticker = nullptr;

core::Services* services = nullptr;
std::vector<std::unique_ptr<Machine>>* machines = nullptr;

void BM_IssLoop(benchmark::State& state) {
    const Variant& v = kVariants[state.range(0)];
    cpu::Rv32Core& core = (*machines)[size_t(state.range(0))]->core;
    state.SetLabel(v.name);
    uint64_t instructions = 0;
    for (auto _ : state) {
        const uint64_t before = core.instret();
        core.set_instruction_limit(before + v.batch);
        if (v.busy) ticker->on = true, ticker->enable.notify(sc_core::SC_ZERO_TIME);
        core.resume();
        sc_core::sc_start();  // until the core stops at its limit
        instructions += core.instret() - before;
    }
    if (core.stop_reason() != cpu::StopReason::InstructionLimit)
        state.SkipWithError("the core did not stop at its instruction limit");
    state.counters["instructions"] =
        benchmark::Counter(double(instructions), benchmark::Counter::kIsRate);
    state.counters["loop_instructions"] = kLoopInstructions;
}

}  // namespace

BENCHMARK(BM_IssLoop)->DenseRange(0, 4)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    core::Services s;
    std::vector<std::unique_ptr<Machine>> ms;
    for (const Variant& v : kVariants) {
        cpu::CoreConfig cfg;
        cfg.dmi = v.dmi;
        cfg.quantum_ns = v.quantum_ns;
        ms.push_back(std::make_unique<Machine>(v.name, cfg, s));
    }
    Ticker tick("ticker");
    ticker = &tick;
    // The ticker stops with the core, so that sc_start() returns.
    ms.back()->core.on_stop([&tick](cpu::Rv32Core&, cpu::StopReason) { tick.on = false; });
    services = &s, machines = &ms;
    sc_core::sc_start(
        sc_core::SC_ZERO_TIME);  // elaborate; every core parks at its first instruction
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    for (size_t k = 0; k < ms.size(); ++k)
        std::printf(
            "%-13s %12llu instructions, %.3f ms simulated, %llu loads through DMI, %llu through "
            "b_transport\n",
            kVariants[k].name, static_cast<unsigned long long>(ms[k]->core.instret()),
            ms[k]->core.cycles() * 8e-6,
            static_cast<unsigned long long>(
                static_cast<const core::Counter*>(s.stats.find(ms[k]->core.name(), "loads.dmi"))
                    ->value()),
            static_cast<unsigned long long>(
                static_cast<const core::Counter*>(s.stats.find(ms[k]->core.name(), "loads.bus"))
                    ->value()));
    return 0;
}
