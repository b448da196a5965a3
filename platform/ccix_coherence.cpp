// E4 of the CCIX-vs-PCIe paper (seeds/003 Sec. IV, Exp. 4): coherence effort on a shared buffer.
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "core/rng.hpp"
#include "core/stats.hpp"
#include "platform/ccix_experiments.hpp"
#include "platform/ccix_machine.hpp"
#include "platform/isolated.hpp"

namespace canopy::platform {

namespace {

using nlohmann::json;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

// ---- E4 ------------------------------------------------------------------------------------

// `host_cores` cores and the device read and write random 8-byte words of a shared buffer of
// `bytes` (half reads, half writes), each side back to back; mean latency and spread per side.
json coherence_run(uint64_t bytes, unsigned host_cores, unsigned ops) {
    Machine m;
    const uint64_t buf = m.shared(2 << 20);
    core::Distribution host_lat("host", "ns", ""), dev_lat("device", "ns", "");
    unsigned running = host_cores;
    for (unsigned c = 0; c < host_cores; ++c) {
        m.host(c, [&, c](host::HostCore& cpu) {
            core::Rng rng(core::derive_seed(7, "host" + std::to_string(c)));
            cpu.load<uint64_t>(buf);  // TLB warm
            for (unsigned i = 0; i < ops; ++i) {
                const uint64_t va = buf + (rng() % (bytes / 8)) * 8;
                const sc_time t0 = cpu.now();
                if (rng() & 1)
                    cpu.store<uint64_t>(va, i);
                else
                    cpu.load<uint64_t>(va);
                cpu.sync();  // each access completes before the next: latency, not throughput
                host_lat.sample(ns_of(cpu.now() - t0));
            }
            --running;
        });
    }
    m.device([&] {
        core::Rng rng(core::derive_seed(7, "device"));
        dev_load(m.ra(), buf);  // ATC warm
        while (running > 0) {
            const uint64_t va = buf + (rng() % (bytes / 8)) * 8;
            dev_lat.sample((rng() & 1) ? dev_store(m.ra(), va, 1) : dev_load(m.ra(), va));
        }
    });
    sc_core::sc_start();
    m.check_host();
    auto side = [](const core::Distribution& d) {
        return json{{"mean", d.mean()}, {"spread", d.percentile(90) - d.percentile(10)}};
    };
    return {{"host", side(host_lat)}, {"device", side(dev_lat)}};
}

}  // namespace

std::vector<ExpRow> ccix_coherence(bool quick) {
    const unsigned ops = quick ? 2000 : 20000;
    std::vector<ExpRow> rows;
    int k = 1;
    auto id = [&] { return "E4." + std::to_string(k++); };
    json last;
    for (uint64_t kib : {2048, 512, 128, 32}) {
        last = run_isolated([&] { return coherence_run(kib * 1024, 1, ops); });
        const std::string where = std::to_string(kib) + " KiB shared, 1 host core";
        rows.push_back({id(), "host mean, " + where, last["host"]["mean"], 0.0, "ns"});
        rows.push_back({id(), "device mean, " + where, last["device"]["mean"], 0.0, "ns"});
    }
    rows.back().published = 674.0;
    rows[rows.size() - 2].published = 333.0;
    const json three = run_isolated([&] { return coherence_run(32 * 1024, 3, ops); });
    rows.push_back(
        {id(), "host mean, 32 KiB shared, 3 host cores", three["host"]["mean"], 235.0, "ns"});
    rows.push_back(
        {id(), "device mean, 32 KiB shared, 3 host cores", three["device"]["mean"], 741.0, "ns"});
    rows.push_back(
        {id(), "host p90-p10 spread, 32 KiB, 1 core", last["host"]["spread"], 0.0, "ns"});
    rows.push_back(
        {id(), "device p90-p10 spread, 32 KiB, 1 core", last["device"]["spread"], 0.0, "ns"});
    return rows;
}

}  // namespace canopy::platform
