// Experiments on the PCIe link, the device's ATC and DMA engine and the host IOMMU
// (CCIX-vs-PCIe paper, seeds/003 Section IV; CALIBRATION.md E1/E2).
#pragma once

#include <vector>

#include "platform/experiments.hpp"

namespace canopy::platform {

// E2: cost of address translation (ATS) for device reads of host memory.
std::vector<ExpRow> ats_cost(bool quick);
// E1, PCIe-DMA side: device<-host read and device->host write latency (32 B .. 16 KiB) and
// throughput (.. 32 KiB) through the DMA engine with physical host addresses. The paper gives
// only CCIX/PCIe ratios (the CCIX side is a later issue), so every row is absolute, with no
// published value.
std::vector<ExpRow> pcie_latency(bool quick);

}  // namespace canopy::platform
