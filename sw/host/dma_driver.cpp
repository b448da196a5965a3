#include "sw/host/dma_driver.hpp"

#include "link/dma_registers.hpp"

namespace canopy::sw {

namespace {
const core::RegisterMap& dma_map() {
    static const core::RegisterMap map = link::DmaRegisters::register_map();
    return map;
}
}  // namespace

DmaDriver::DmaDriver(host::HostCore& cpu, uint64_t bar0_address, double job_ns)
    : block_(cpu, bar0_address, dma_map()), job_ns_(job_ns) {}

DmaDriver::Result DmaDriver::run(bool to_host, uint64_t host_address, uint64_t device_address,
                                 uint32_t bytes, bool translate) {
    host::HostCore& cpu = block_.cpu();
    if (job_ns_ > 0) cpu.compute_ns(job_ns_);
    cpu.store<uint64_t>(block_.reg("host_addr"), host_address);
    cpu.store<uint64_t>(block_.reg("device_addr"), device_address);
    cpu.store<uint32_t>(block_.reg("length"), bytes);
    uint32_t control = uint32_t(block_.bit("control", "start"));
    if (to_host) control |= uint32_t(block_.bit("control", "direction"));
    if (translate) control |= uint32_t(block_.bit("control", "translate"));
    return block_.start_and_wait(control);
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
