#include "platform/ccix_machine.hpp"

#include <stdexcept>

namespace canopy::platform {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

double now_ns() { return ns_of(sc_core::sc_time_stamp()); }

Machine::Machine(const PlatformConfig& base) : cfg(base) {
    cfg.nand.geometry.channels = 1;
    cfg.nand.geometry.dies_per_channel = 1;
    cfg.nand.geometry.blocks_per_plane = 16;
    platform = std::make_unique<Platform>(cfg, services);
    proc = &platform->host.kernel.create_process("app");
}

uint64_t Machine::shared(uint64_t bytes) {
    const uint64_t va = platform->host.kernel.mmap(*proc, bytes, host::kPage2M);
    platform->host.kernel.pin(*proc, va, bytes);
    return va;
}

void Machine::device(std::function<void()> body) {
    sc_core::sc_spawn(std::move(body), ("accelerator" + std::to_string(threads++)).c_str());
}

void Machine::host(unsigned core, host::HostProgram program) {
    platform->host.cores[core]->run(*proc, std::move(program));
}

void Machine::check_host() const {
    const std::string f = platform->host.first_fault();
    if (!f.empty()) throw std::runtime_error(f);
}

void check(const link::RaResult& r) {
    if (!r.ok) throw std::runtime_error("device access failed: " + r.error);
}
double dev_load(link::RequestAgent& ra, uint64_t va, uint64_t* value) {
    const double t0 = now_ns();
    sc_time d = SC_ZERO_TIME;
    uint64_t v = 0;
    check(ra.load(Device::kPasid, va, &v, 8, d));
    sc_core::wait(d);
    if (value) *value = v;
    return now_ns() - t0;
}
double dev_store(link::RequestAgent& ra, uint64_t va, uint64_t v) {
    const double t0 = now_ns();
    sc_time d = SC_ZERO_TIME;
    check(ra.store(Device::kPasid, va, &v, 8, d));
    sc_core::wait(d);
    return now_ns() - t0;
}
double dev_cas(link::RequestAgent& ra, uint64_t va, uint64_t expected, uint64_t desired) {
    const double t0 = now_ns();
    sc_time d = SC_ZERO_TIME;
    check(ra.compare_and_swap(Device::kPasid, va, expected, desired, 8, d));
    sc_core::wait(d);
    return now_ns() - t0;
}

}  // namespace canopy::platform
