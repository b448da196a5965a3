#include "ssd/bitwise_accelerator.hpp"

#include <algorithm>
#include <cstring>

namespace canopy::ssd {

void BitwiseAcceleratorConfig::describe(core::Params& p) {
    p("sram_bytes", sram_bytes, "B", "the accelerator's buffer (Flash-Cosmos Table 1: 256 KiB)", 64,
      1u << 30)("pj_per_64b", pj_per_64b, "pJ",
                "energy per 64 B combined (Flash-Cosmos Table 1: 93 pJ)", 0.0,
                1e6)("bytes_per_ns", bytes_per_ns, "B/ns",
                     "combining and read-out rate [assumed: 32 B per cycle at 250 MHz]", 0.01, 1e4);
}

BitwiseAccelerator::BitwiseAccelerator(const std::string& name, const BitwiseAcceleratorConfig& cfg,
                                       core::Services& services)
    : cfg_(cfg),
      sram_(cfg.sram_bytes, 0),
      ops_(services.stats.counter(name, "ops", "64 B operations (partial ones count whole)")),
      bytes_out_(services.stats.counter(name, "bytes_out", "bytes moved out of the buffer")),
      energy_pj_(services.stats.sum(name, "energy", "pJ", "energy of the operations")) {}

std::string BitwiseAccelerator::check(uint32_t offset, uint32_t length) const {
    if (length == 0 || offset > sram_.size() || length > sram_.size() - offset)
        return std::to_string(length) + " bytes at offset " + std::to_string(offset) +
               " of the accelerator's " + std::to_string(sram_.size()) + "-byte buffer";
    return {};
}

sc_core::sc_time BitwiseAccelerator::occupy(uint32_t n, const sc_core::sc_time& at) {
    const sc_core::sc_time start = std::max(at, busy_until_);
    busy_until_ = start + sc_core::sc_time(double(n) / cfg_.bytes_per_ns, sc_core::SC_NS);
    return busy_until_;
}

sc_core::sc_time BitwiseAccelerator::combine(const AccCommand& a, const uint8_t* data, uint32_t n,
                                             const sc_core::sc_time& at) {
    uint8_t* s = sram_.data() + a.offset;
    const uint8_t in_mask = a.invert ? 0xFF : 0x00, out_mask = a.complement ? 0xFF : 0x00;
    for (uint32_t i = 0; i < n; ++i) {
        const uint8_t x = data[i] ^ in_mask;
        uint8_t v = x;
        if (a.op == AccOp::And) v = s[i] & x;
        if (a.op == AccOp::Or) v = s[i] | x;
        if (a.op == AccOp::Xor) v = s[i] ^ x;
        s[i] = v ^ out_mask;
    }
    const uint64_t ops = (n + 63) / 64;
    ops_.add(ops);
    energy_pj_.add(double(ops) * cfg_.pj_per_64b);
    return occupy(n, at);
}

sc_core::sc_time BitwiseAccelerator::drain(uint32_t offset, uint8_t* out, uint32_t n,
                                           const sc_core::sc_time& at) {
    std::memcpy(out, sram_.data() + offset, n);
    bytes_out_.add(n);
    return occupy(n, at);
}

}  // namespace canopy::ssd
