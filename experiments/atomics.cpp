// `canopy exp atomics` (CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 5; CALIBRATION.md
// E5): an AtomicCompare issued by a host core and by the device (a CCIX far atomic at the home),
// on the whole platform (platform/ccix_machine) in a child process.
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

json atomics_run(const PlatformConfig& base, unsigned n) {
    Machine m(base);
    const uint64_t lock = m.shared(2 << 20);
    double host_sum = 0, dev_sum = 0;
    m.host(0, [&](host::HostCore& cpu) {
        cpu.load<uint64_t>(lock + 4096);   // TLB warm
        cpu.compare_and_swap(lock, 0, 0);  // the line in the SLC
        for (unsigned i = 0; i < n; ++i) {
            const sc_time t0 = cpu.now();
            cpu.compare_and_swap(lock, i, i + 1);
            host_sum += ns_of(cpu.now() - t0);
        }
    });
    m.device([&] {
        sc_core::wait(sc_time(100, sc_core::SC_US));  // after the host's phase
        dev_load(m.ra(), lock + 4096);                // ATC warm (a 2 MiB page)
        for (unsigned i = 0; i < n; ++i) dev_sum += dev_cas(m.ra(), lock, n + i, n + i + 1);
    });
    sc_core::sc_start();
    m.check_host();
    return {{"host", host_sum / n}, {"device", dev_sum / n}};
}

std::vector<ExpRow> ccix_atomics(const ExpOptions& o) {
    const json r = run_isolated([&] { return atomics_run(o.platform(), o.quick ? 20 : 200); },
                                "AtomicCompare from host and device");
    return {
        {"E5.1", "AtomicCompare from a host core (line in the SLC)", r["host"], 50.0, "ns"},
        {"E5.2", "AtomicCompare from the device, u280", r["device"], 770.0, "ns", 740.0, 800.0},
    };
}

}  // namespace

Experiment atomics_experiment() {
    return {"atomics",
            "CCIX-vs-PCIe paper Sec. IV Exp. 5: AtomicCompare issued by a host core and by the "
            "device (CCIX far atomic at the home)",
            ccix_atomics};
}

}  // namespace canopy::experiments
