// An SPU's control block (Willow Section 3.1 "SPU architecture" and "Code and Data Protection"):
// the SPU's identity on the ring, the segment registers that confine the running SSD App (the
// core enforces them in user mode, cpu::Rv32Core::set_segments), the interrupt controller that
// folds the SPU's device interrupts (network interface, DMA) into the core's external interrupt,
// and performance counters firmware and the host can read.
//
// The map (register_map(); block "spu_ctl", at SPU_CTL_BASE) is also the source of the firmware's
// C header and of docs/registers.md:
//   id (RO: node, spu_count, bridge_node), code_base, code_size, data_base, data_size (RW; a
//   write takes effect from the core's next instruction), irq_pending (RO, one bit per source,
//   levels), irq_enable (RW), and read-only performance counters filled by the sources the
//   platform attaches (counter_source()).
// Choice: interrupt sources are levels (a non-empty receive queue, a finished DMA whose done bit
// is not yet cleared); MEIP is high while any enabled source is, so the core cannot lose one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "cpu/rv32_core.hpp"

namespace canopy::ssd {

// Interrupt sources, bit numbers of irq_pending and irq_enable.
enum class SpuIrq : unsigned { NiRequest = 0, NiResponse = 1, DmaDone = 2, FlashDone = 3 };

struct SpuControlConfig {
    core::RegisterBankConfig bank;
    void describe(core::Params& p);  // relative to the caller's scope
};

// The SPU's local store: its bank of the SSD's memory (ssd/ssd_dram), as the store_* registers
// tell SPU-OS, which keeps NVM transfers inside it.
struct LocalStore {
    uint64_t base = 0, bytes = 0;
};

class SpuControl : public sc_core::sc_module {
  public:
    tlm::tlm_target_socket<> socket;  // on the SPU's bus at SPU_CTL_BASE

    // `flash`: a flash controller sits in the SPU's flash window (the id register says so).
    SpuControl(sc_core::sc_module_name name, cpu::Rv32Core& core, unsigned node, unsigned spu_count,
               bool flash, LocalStore store, core::Services& services,
               const SpuControlConfig& cfg = SpuControlConfig());

    static core::RegisterMap register_map();

    // A source's level changes at simulated time `at` (not before now).
    void set_irq(SpuIrq source, bool level, const sc_core::sc_time& at);
    bool irq_level(SpuIrq source) const;
    // Where the read-only counter `reg` (a perf_* register) takes its value from.
    void counter_source(const std::string& reg, std::function<uint64_t()> source);

    core::RegisterBank& bank() { return bank_; }

  private:
    void update_meip(const sc_core::sc_time& at);
    void segments_written();

    cpu::Rv32Core& core_;
    core::RegisterBank bank_;
    uint32_t pending_ = 0;
};

}  // namespace canopy::ssd
