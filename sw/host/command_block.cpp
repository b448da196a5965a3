#include "sw/host/command_block.hpp"
#include "core/sim_time.hpp"

namespace canopy::sw {

namespace {
constexpr uint64_t kPage = 4096;
}  // namespace

CommandBlock::CommandBlock(host::HostCore& cpu, uint64_t address, const core::RegisterMap& map)
    : cpu_(cpu),
      map_(map),
      base_(cpu.map_device(address / kPage * kPage, address % kPage + map.size_bytes()) +
            address % kPage) {}

uint64_t CommandBlock::reg(const char* name) const {
    return base_ + map_.registers()[map_.index(name)].offset;
}

uint64_t CommandBlock::bit(const char* reg, const char* field) const {
    return map_.registers()[map_.index(reg)].field(field)->mask();
}

CommandBlock::Result CommandBlock::start_and_wait(uint32_t control) {
    const sc_core::sc_time t0 = cpu_.now();
    cpu_.store<uint32_t>(reg("control"), control);
    Result r;
    const uint32_t busy = uint32_t(bit("status", "busy")), done = uint32_t(bit("status", "done"));
    uint32_t status;
    do {
        status = cpu_.load<uint32_t>(reg("status"));
        ++r.polls;
    } while ((status & busy) || !(status & done));
    r.elapsed_ns = core::ns_of(cpu_.now() - t0);
    r.error_code = cpu_.load<uint32_t>(reg("error_code"));
    r.latency_ns = cpu_.load<uint64_t>(reg("last_latency_ns"));
    const uint32_t error = uint32_t(bit("status", "error"));
    r.ok = !(status & error);
    cpu_.store<uint32_t>(reg("status"), done | error);  // W1C
    return r;
}

}  // namespace canopy::sw
