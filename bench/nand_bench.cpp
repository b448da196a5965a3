// NAND model speed: commands per second in timing-only mode (target: >= 1 M/s), functional MWS
// throughput in operand bytes per second (target: >= 5 GB/s), and the cost of the transaction
// trace when it is off and on. Commands go through the channels' TLM sockets as a controller's
// would; the model never waits, so the benchmark loop calls b_transport directly.
#include <benchmark/benchmark.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <systemc>

#include "core/services.hpp"
#include "nand/channel.hpp"
#include "nand/sequence.hpp"

using namespace canopy;

namespace {

const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

struct Initiator : sc_core::sc_module {
    sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<Initiator>> ch;
    Initiator(sc_core::sc_module_name n, uint32_t channels) : sc_module(n), ch("ch", channels) {}
};

// An array with its own services and an initiator bound to every channel.
struct Rig {
    core::Services services;
    nand::NandConfig cfg;
    std::unique_ptr<nand::FlashArray> array;
    std::unique_ptr<Initiator> init;
    tlm::tlm_generic_payload gp;
    std::vector<uint8_t> buf;

    Rig(const char* name, bool functional, bool trace) {
        cfg.functional = functional;
        cfg.reliability.inject_errors = true;
        if (trace) services.trace.open(std::string("/tmp/canopy_bench_") + name + ".json");
        array = std::make_unique<nand::FlashArray>(name, cfg, services);
        init = std::make_unique<Initiator>((std::string(name) + "_init").c_str(),
                                           cfg.geometry.channels);
        for (uint32_t c = 0; c < cfg.geometry.channels; ++c)
            init->ch[c].bind(array->channel(c).target);
        buf.resize(cfg.geometry.page_total_bytes() * 2, 0xA5);
    }
    ~Rig() { gp.clear_extension<nand::CommandExt>(); }

    // Sends one command at `at`; returns the completion time.
    // `at` is absolute; so is the completion time returned.
    sc_core::sc_time send(uint32_t ch, nand::CommandExt& c, sc_core::sc_time at) {
        gp.set_extension(&c);
        gp.set_data_ptr(buf.data());
        gp.set_data_length(c.data_bytes());
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        sc_core::sc_time delay = at > now ? at - now : sc_core::SC_ZERO_TIME;
        init->ch[ch]->b_transport(gp, delay);
        gp.clear_extension(&c);
        return now + delay;
    }
};

Rig* timing_rig = nullptr;
Rig* traced_rig = nullptr;
Rig* functional_rig = nullptr;

// A controller's steady mix over every die: read, data out, ESP program, 4-block MWS.
void run_mix(benchmark::State& state, Rig& rig) {
    const auto& g = rig.cfg.geometry;
    const nand::RowCodec& rc = rig.array->die(0, 0).codec();
    std::vector<nand::CommandExt> cmds(4);
    uint64_t n = 0;
    std::vector<sc_core::sc_time> ready(g.channels * g.dies_per_channel, sc_core::SC_ZERO_TIME);
    uint32_t wl = 0, block = 0;
    for (auto _ : state) {
        for (uint32_t d = 0; d < g.dies_per_channel; ++d)
            for (uint32_t ch = 0; ch < g.channels; ++ch) {
                auto& t = ready[ch * g.dies_per_channel + d];
                nand::seq::read(cmds[0], rc, {{ch, d, 0, block, wl}});
                t = rig.send(ch, cmds[0], t);
                nand::seq::data_out(cmds[1], rc, d, 0, 0, 4096);
                t = rig.send(ch, cmds[1], t);
                nand::seq::program(cmds[2], rc, {{ch, d, 1, block, wl}}, nand::CellMode::Esp, false,
                                   4096);
                t = rig.send(ch, cmds[2], t);
                nand::seq::mws(
                    cmds[3], rc, d, 1,
                    nand::iscm::kInitS | nand::iscm::kInitC | nand::iscm::kTransfer,
                    {{block, ~0ull >> 16}, {block + 1, 1}, {block + 2, 3}, {block + 3, 7}});
                t = rig.send(ch, cmds[3], t);
                n += 4;
            }
        if (++wl == g.wordlines_per_block) wl = 0, block += 4;
        // Let the kernel follow the controller, as it does in a run: the channels then forget
        // the grants that lie behind it.
        const auto earliest = *std::min_element(ready.begin(), ready.end());
        if (earliest > sc_core::sc_time_stamp())
            sc_core::sc_start(earliest - sc_core::sc_time_stamp());
    }
    state.counters["commands_per_s"] = benchmark::Counter(double(n), benchmark::Counter::kIsRate);
}

void BM_TimingOnlyCommands(benchmark::State& state) { run_mix(state, *timing_rig); }
void BM_TimingOnlyCommandsTraced(benchmark::State& state) { run_mix(state, *traced_rig); }

// One sensing over `blocks` blocks of 48 ESP wordlines each, data kept and combined.
void BM_FunctionalMws(benchmark::State& state) {
    Rig& rig = *functional_rig;
    const uint32_t blocks = uint32_t(state.range(0));
    const auto& g = rig.cfg.geometry;
    const nand::RowCodec& rc = rig.array->die(0, 0).codec();
    nand::CommandExt c;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    static bool programmed = false;
    if (!programmed) {
        for (uint32_t b = 0; b < 4; ++b)
            for (uint32_t wl = 0; wl < g.wordlines_per_block; ++wl) {
                for (auto& x : rig.buf) x = uint8_t(x * 73 + wl + b);
                nand::seq::program(c, rc, {{0, 0, 0, b, wl}}, nand::CellMode::Esp, false,
                                   g.page_total_bytes());
                t = rig.send(0, c, t);
            }
        programmed = true;
    }
    std::vector<nand::seq::MwsOperand> ops;
    for (uint32_t b = 0; b < blocks; ++b) ops.push_back({b, (1ull << g.wordlines_per_block) - 1});
    nand::seq::mws(c, rc, 0, 0, nand::iscm::kInitS | nand::iscm::kInitC | nand::iscm::kTransfer,
                   ops);
    for (auto _ : state) t = rig.send(0, c, t);
    state.SetBytesProcessed(int64_t(state.iterations()) * blocks * g.wordlines_per_block *
                            g.page_total_bytes());
}

}  // namespace

BENCHMARK(BM_TimingOnlyCommands);
BENCHMARK(BM_TimingOnlyCommandsTraced);
BENCHMARK(BM_FunctionalMws)->Arg(1)->Arg(4);

// Resident memory in MiB (Linux /proc).
double rss_mib() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
    {
        // Figure 7's SSD (8 channels x 4 dies x 2 planes x 2,048 blocks x 48 wordlines x 16 KiB)
        // must elaborate in well under a second and a few MB before any write.
        core::Services s;
        nand::NandConfig cfg;
        cfg.geometry.dies_per_channel = 4;
        cfg.geometry.blocks_per_plane = 2048;
        const double before = rss_mib();
        const auto t0 = std::chrono::steady_clock::now();
        nand::FlashArray fig7("fig7", cfg, s);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        std::printf(
            "elaboration of the Figure 7 array (8x4x2x2048x48 x 16 KiB): %.2f ms, %.2f MiB "
            "resident\n",
            ms, rss_mib() - before);
    }
    Rig timing("timing", false, false), traced("traced", false, true),
        functional("functional", true, false);
    timing_rig = &timing, traced_rig = &traced, functional_rig = &functional;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: sockets bound
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
