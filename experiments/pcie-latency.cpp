// `canopy exp pcie-latency` (CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 1, PCIe-DMA
// side): device<-host read and device->host write latency (32 B .. 16 KiB) and throughput
// (.. 32 KiB) through the DMA engine with physical host addresses, on the PCIe rig
// (platform/pcie_rig). The paper gives only CCIX/PCIe ratios (ccix-latency sets the CCIX side
// beside it), so every row is absolute, with no published value.
#include <string>
#include <vector>

#include "experiments/experiment.hpp"
#include "platform/pcie_rig.hpp"

namespace canopy::experiments {

using namespace platform;

namespace {

std::vector<ExpRow> pcie_latency(const ExpOptions& o) {
    const bool quick = o.quick;
    std::vector<ExpRow> rows;
    PcieRig b(false, o.platform());
    PcieRig::elaborate();
    const uint64_t K = 1024;
    const uint64_t host = b.physical(32 * K);
    const int repeats = quick ? 1 : 4;  // the model is deterministic; repeats check it stays so
    auto mean_latency = [&](link::DmaDirection dir, uint64_t bytes) {
        double sum = 0;
        for (int i = 0; i < repeats; ++i) sum += b.transfer(dir, host, bytes).latency_ns;
        return sum / repeats;
    };
    int n = 0;
    for (uint64_t bytes = 32; bytes <= 32 * K; bytes *= 2) {
        const std::string size =
            bytes < K ? std::to_string(bytes) + " B" : std::to_string(bytes / K) + " KiB";
        const double rd = mean_latency(link::DmaDirection::HostToDevice, bytes);
        const double wr = mean_latency(link::DmaDirection::DeviceToHost, bytes);
        ++n;
        if (bytes <= 16 * K) {
            rows.push_back({"E1.r" + std::to_string(n),
                            "PCIe-DMA read device<-host " + size + " latency", rd, std::nullopt,
                            "ns"});
            rows.push_back({"E1.w" + std::to_string(n),
                            "PCIe-DMA write device->host " + size + " latency", wr, std::nullopt,
                            "ns"});
        }
        rows.push_back({"E1.tr" + std::to_string(n),
                        "PCIe-DMA read " + size + " throughput, one descriptor at a time",
                        double(bytes) / rd, std::nullopt, "GB/s"});
        rows.push_back({"E1.tw" + std::to_string(n),
                        "PCIe-DMA write " + size + " throughput, one descriptor at a time",
                        double(bytes) / wr, std::nullopt, "GB/s"});
    }
    return rows;
}

}  // namespace

Experiment pcie_latency_experiment() {
    return {"pcie-latency",
            "CCIX-vs-PCIe paper Sec. IV Exp. 1, PCIe-DMA side: device<-host read and device->host "
            "write "
            "latency 32 B .. 16 KiB and throughput to 32 KiB through the DMA engine (physical "
            "addresses); "
            "the paper publishes CCIX/PCIe ratios only, so no published values",
            pcie_latency};
}

}  // namespace canopy::experiments
