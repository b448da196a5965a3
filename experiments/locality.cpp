// `canopy exp locality` (CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 3; CALIBRATION.md
// E3): local (system-cache hit) write and read latency of the u280 and vck5000 profiles, and
// re-reading a working set larger than the u280's system cache, each profile on the whole
// platform (platform/ccix_machine) in a child process.
#include <string>
#include <vector>

#include <systemc>

#include "experiments/experiment.hpp"
#include "experiments/isolated.hpp"
#include "platform/ccix_machine.hpp"

namespace canopy::experiments {

using namespace platform;

namespace {

using nlohmann::json;
using sc_core::sc_time;

json locality_run(const PlatformConfig& base, unsigned n, uint64_t set_bytes) {
    Machine m(base);
    const uint64_t buf = m.shared(2 << 20);
    double write = 0, read = 0, reread = 0;
    m.device([&] {
        dev_store(m.ra(), buf, 1);  // ATC warm, line in the system cache (unique, dirty)
        for (unsigned i = 0; i < n; ++i) write += dev_store(m.ra(), buf, i);
        for (unsigned i = 0; i < n; ++i) read += dev_load(m.ra(), buf);
        for (uint64_t off = 0; off < set_bytes; off += 64) dev_load(m.ra(), buf + 4096 + off);
        for (uint64_t off = 0; off < set_bytes; off += 64)
            reread += dev_load(m.ra(), buf + 4096 + off);
    });
    sc_core::sc_start();
    return {{"write", write / n}, {"read", read / n}, {"reread", reread / double(set_bytes / 64)}};
}

std::vector<ExpRow> ccix_locality(const ExpOptions& o) {
    const unsigned n = o.quick ? 20 : 200;
    const uint64_t set = 512 * 1024;       // twice the u280's system cache, half the vck5000's L2
    auto run = [&](const char* profile) {  // the options' configuration with this profile
        const PlatformConfig base = o.platform({std::string("link.ccix.profile=") + profile});
        return run_isolated([&] { return locality_run(base, n, set); }, profile);
    };
    const json u = run("u280");
    const json v = run("vck5000");
    return {
        {"E3.1", "u280 local hit, write", u["write"], 80.0, "ns"},
        {"E3.2", "u280 local hit, read", u["read"], 100.0, "ns"},
        {"E3.3", "vck5000 local hit (two levels), write", v["write"], 150.0, "ns"},
        {"E3.4", "vck5000 local hit (two levels), read", v["read"], 170.0, "ns"},
        {"E3.5", "u280 re-reading 512 KiB, per 64 B line", u["reread"], std::nullopt, "ns"},
        {"E3.6", "vck5000 re-reading 512 KiB, per 64 B line", v["reread"], std::nullopt, "ns"},
        {"E3.7", "vck5000 / u280 on the large working set (paper: vck5000 faster, < 1)",
         v["reread"].get<double>() / u["reread"].get<double>(), 1.0, "x", 0.0, 1.0},
    };
}

}  // namespace

Experiment locality_experiment() {
    return {"locality",
            "CCIX-vs-PCIe paper Sec. IV Exp. 3: local (system-cache hit) write and read latency of "
            "the u280 and vck5000 profiles, and a working set larger than the u280's system cache",
            ccix_locality};
}

}  // namespace canopy::experiments
