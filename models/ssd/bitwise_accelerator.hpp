// The ISP baseline's bitwise accelerator (Flash-Cosmos Section 7.1 "ISP": in-storage processing
// with a per-channel bitwise unit in the SSD controller; Table 1: a 256 KiB SRAM buffer, 93 pJ per
// 64 B operation). It sits between its channel's flash interface and the SSD's memory: an operand
// page read from the flash streams through it and is combined (copy, AND, OR, XOR; optionally
// complemented on the way in, and the buffer complemented after) into the SRAM; the result
// leaves the SRAM to the SSD's memory. It works at `bytes_per_ns` and is busy one operation at a
// time; every 64 B combined costs `pj_per_64b`.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::ssd {

struct BitwiseAcceleratorConfig {
    uint32_t sram_bytes = 256 * 1024;  // Flash-Cosmos Table 1: ISP's 256 KiB SRAM buffer
    double pj_per_64b = 93.0;          // Flash-Cosmos Table 1: 93 pJ per 64 B operation
    double bytes_per_ns = 8.0;         // assumed: 32 B per cycle at 250 MHz, above the channel
    void describe(core::Params& p);    // relative to the caller's scope
};

enum class AccOp : uint8_t { Copy = 0, And = 1, Or = 2, Xor = 3 };

struct AccCommand {
    AccOp op = AccOp::Copy;
    bool invert = false;      // complement the incoming bytes first
    bool complement = false;  // complement the buffer's bytes after combining
    uint32_t offset = 0;      // in the SRAM
};

class BitwiseAccelerator {
  public:
    // Statistics under `name` (the owning controller's name + ".isp").
    BitwiseAccelerator(const std::string& name, const BitwiseAcceleratorConfig& cfg,
                       core::Services& services);

    // Why [offset, offset + length) is no range of the SRAM, or "".
    std::string check(uint32_t offset, uint32_t length) const;
    // Combines `n` bytes into the SRAM, starting no earlier than `at`; returns when it is done.
    sc_core::sc_time combine(const AccCommand& a, const uint8_t* data, uint32_t n,
                             const sc_core::sc_time& at);
    // `n` bytes leave the SRAM from `offset` into `out`, starting no earlier than `at`; returns
    // when.
    sc_core::sc_time drain(uint32_t offset, uint8_t* out, uint32_t n, const sc_core::sc_time& at);

  private:
    sc_core::sc_time occupy(uint32_t n, const sc_core::sc_time& at);

    BitwiseAcceleratorConfig cfg_;
    std::vector<uint8_t> sram_;
    sc_core::sc_time busy_until_;
    core::Counter &ops_, &bytes_out_;
    core::Sum& energy_pj_;
};

}  // namespace canopy::ssd
