#include "sw/host/ctg_driver.hpp"

#include "link/ctg_registers.hpp"

namespace canopy::sw {

namespace {
const core::RegisterMap& ctg_map() {
    static const core::RegisterMap map = link::CtgRegisters::register_map();
    return map;
}
}  // namespace

CtgDriver::CtgDriver(host::HostCore& cpu, uint64_t address, double api_ns)
    : block_(cpu, address, ctg_map()), api_ns_(api_ns) {}

CtgDriver::Result CtgDriver::start_trans(bool write, uint64_t va, uint32_t bytes) {
    host::HostCore& cpu = block_.cpu();
    if (api_ns_ > 0) cpu.compute_ns(api_ns_);
    cpu.store<uint64_t>(block_.reg("address"), va);
    cpu.store<uint32_t>(block_.reg("length"), bytes);
    uint32_t control = uint32_t(block_.bit("control", "start"));
    if (write) control |= uint32_t(block_.bit("control", "type"));
    return block_.start_and_wait(control);
}

}  // namespace canopy::sw
