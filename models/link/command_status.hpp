// The start/status protocol the device's host-programmed command blocks share (the DMA engine's
// registers, link/dma_registers.hpp, and the CCIX Traffic Generator's, link/ctg_registers.hpp;
// CCIX-vs-PCIe paper, seeds/003 Sections III-IV): the host writes a command's operands, sets a
// start trigger bit, and polls a status register (busy read-only; done, error and overrun
// write-1-to-clear) or waits for the completion interrupt; a `completed` counter and the last
// command's latency are readable. One command at a time: a start while busy is ignored and sets
// overrun.
#pragma once

#include <cstdint>
#include <string>

#include "core/register_bank.hpp"
#include "core/stats.hpp"

namespace canopy::link::command_status {

constexpr uint64_t kBusy = 1u << 0, kDone = 1u << 1, kError = 1u << 2, kOverrun = 1u << 3;

// The status register (busy, done, error, overrun) at `offset`, for a block's map; `what` names
// the block's command in the field descriptions ("descriptor", "transfer").
core::Register status_register(uint64_t offset, const std::string& what);

// On a start trigger: when busy, sets overrun, counts it and returns false; otherwise sets busy,
// clears done and error and returns true (the caller latches the operands and starts).
bool begin(core::RegisterBank& bank, core::Counter& overruns);

// At completion: `completed` (32-bit, wraps) counts it, `last_latency_ns` holds the latency
// rounded to ns, busy clears and done (with error when `failed`) sets.
void finish(core::RegisterBank& bank, bool failed, double latency_ns);

}  // namespace canopy::link::command_status
