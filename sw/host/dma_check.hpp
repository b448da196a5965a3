// Host program "dma-check": the host side of a PCIe-DMA round trip through the whole platform.
// It fills a buffer in pinned host memory with a pattern (through its caches: the lines stay
// dirty there), has the device's DMA engine copy it into device memory and back into a second
// buffer (programmed through BAR0 by DmaDriver, status polled over the link), and compares the
// bytes it reads back. With translation the engine gets virtual addresses and translates them by
// ATS; without, the driver hands it physical ones (the buffers are huge pages, so contiguous).
#pragma once

#include <cstdint>
#include <string>

#include "host/host_core.hpp"
#include "sw/host/dma_driver.hpp"

namespace canopy::sw {

struct DmaCheckParams {
    uint64_t bar0_address = 0;
    uint32_t bytes = 64 * 1024;
    bool translate = false;
};

struct DmaCheckResult {
    bool ran = false;
    uint64_t mismatched_bytes = 0;
    DmaDriver::Result to_device, to_host;
};

host::HostProgram dma_check(const DmaCheckParams& params, DmaCheckResult& result);

}  // namespace canopy::sw
