#include "scenarios/host_program.hpp"

#include <cstdio>

namespace canopy::scenarios {

using namespace platform;

HostScenario::HostScenario(const PlatformConfig& cfg, Platform& platform)
    : cfg_(cfg), platform_(platform) {
    if (cfg.scenario.host_program != "dma-check") return;
    sw::DmaCheckParams p;
    p.bar0_address = cfg.device.bar0_address;
    p.bytes = cfg.scenario.dma_bytes;
    p.translate = cfg.device.dma.translate;
    auto& proc = platform.host.kernel.create_process("dma-check");
    platform.host.cores[kCore]->run(proc, sw::dma_check(p, dma_));
}

bool HostScenario::report(std::ostream& out, core::StatsRegistry& stats) const {
    if (cfg_.scenario.host_program == "none") return true;
    const auto& core0 = *platform_.host.cores[kCore];
    const std::string m = "scenario.host";
    out << "Host program dma-check on host.core0: " << cfg_.scenario.dma_bytes
        << " B host -> device -> host by PCIe DMA ("
        << (cfg_.device.dma.translate ? "virtual addresses, ATS" : "physical addresses")
        << "), programmed through BAR0\n";
    if (!core0.fault().empty()) {
        out << "  FAULT: " << core0.fault() << "\n";
        stats.counter(m, "faults", "host program faults", true).add(1);
        return false;
    }
    char line[200];
    auto row = [&](const char* what, const sw::DmaDriver::Result& r) {
        std::snprintf(line, sizeof line,
                      "  %-16s engine %8llu ns, seen by the program %9.1f ns, %u status polls%s\n",
                      what, (unsigned long long)r.latency_ns, r.elapsed_ns, r.polls,
                      r.ok ? "" : " (ERROR)");
        out << line;
    };
    row("host -> device", dma_.to_device);
    row("device -> host", dma_.to_host);
    const bool ok = dma_.ran && dma_.to_device.ok && dma_.to_host.ok && !dma_.mismatched_bytes;
    out << "  data: " << (ok ? "correct" : "WRONG") << " (" << dma_.mismatched_bytes
        << " bytes differ)\n";
    stats.sum(m, "dma_to_device", "ns", "DMA host -> device, engine latency", true)
        .add(double(dma_.to_device.latency_ns));
    stats.sum(m, "dma_to_host", "ns", "DMA device -> host, engine latency", true)
        .add(double(dma_.to_host.latency_ns));
    stats.counter(m, "wrong_bytes", "bytes read back that differ from those written", true)
        .add(dma_.mismatched_bytes);
    return ok;
}

}  // namespace canopy::scenarios
