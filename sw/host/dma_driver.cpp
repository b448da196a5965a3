#include "sw/host/dma_driver.hpp"

#include "link/dma_registers.hpp"

namespace canopy::sw {

namespace {
const core::RegisterMap& dma_map() {
    static const core::RegisterMap map = link::DmaRegisters::register_map();
    return map;
}
uint64_t bit(const char* reg, const char* field) {
    return dma_map().registers()[dma_map().index(reg)].field(field)->mask();
}
}  // namespace

DmaDriver::DmaDriver(host::HostCore& cpu, uint64_t bar0_address)
    : cpu_(cpu), bar_(cpu.map_device(bar0_address, dma_map().size_bytes())) {}

uint64_t DmaDriver::reg(const char* name) const {
    return bar_ + dma_map().registers()[dma_map().index(name)].offset;
}

DmaDriver::Result DmaDriver::run(bool to_host, uint64_t host_address, uint64_t device_address,
                                 uint32_t bytes, bool translate) {
    cpu_.store<uint64_t>(reg("host_addr"), host_address);
    cpu_.store<uint64_t>(reg("device_addr"), device_address);
    cpu_.store<uint32_t>(reg("length"), bytes);
    uint32_t control = uint32_t(bit("control", "start"));
    if (to_host) control |= uint32_t(bit("control", "direction"));
    if (translate) control |= uint32_t(bit("control", "translate"));
    const sc_core::sc_time t0 = cpu_.now();
    cpu_.store<uint32_t>(reg("control"), control);
    Result r;
    const uint32_t busy = uint32_t(bit("status", "busy")), done = uint32_t(bit("status", "done"));
    uint32_t status;
    do {
        status = cpu_.load<uint32_t>(reg("status"));
        ++r.polls;
    } while ((status & busy) || !(status & done));
    r.elapsed_ns = (cpu_.now() - t0).to_seconds() * 1e9;
    r.error_code = cpu_.load<uint32_t>(reg("error_code"));
    r.latency_ns = cpu_.load<uint64_t>(reg("last_latency_ns"));
    r.ok = !(status & bit("status", "error"));
    cpu_.store<uint32_t>(reg("status"), done | uint32_t(bit("status", "error")));  // W1C
    return r;
}

DmaDriver::Result DmaDriver::copy_to_device(uint64_t host_address, uint64_t device_address,
                                            uint32_t bytes, bool translate) {
    return run(false, host_address, device_address, bytes, translate);
}

DmaDriver::Result DmaDriver::copy_to_host(uint64_t host_address, uint64_t device_address,
                                          uint32_t bytes, bool translate) {
    return run(true, host_address, device_address, bytes, translate);
}

}  // namespace canopy::sw
