// The core-local interruptor of an SPU (SiFive CLINT layout, models/cpu/spu_map.h): per hart a
// software-interrupt register (msip) and a timer compare register (mtimecmp), and one mtime
// counting at SPU_MTIME_HZ (1 MHz: microseconds) derived from simulated time, so nothing ticks.
// Drives each hart's MSIP and MTIP lines through a callback at the simulated time they change:
// at once for a register write (at the writer's local time), and from an sc_event scheduled for
// the moment mtime reaches mtimecmp. Registers are accessed as aligned 32- or 64-bit words;
// anything else is refused (TLM_GENERIC_ERROR_RESPONSE: an access fault on the core).
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/services.hpp"
#include "cpu/rv32_core.hpp"

namespace canopy::cpu {

class Clint : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<Clint> socket;

    // `mtime_hz`: the counting rate of mtime (SPU_MTIME_HZ by default).
    Clint(sc_core::sc_module_name name, core::Services& services, uint32_t harts = 1,
          double mtime_hz = 0);

    // Called with (hart, mip bit, level) whenever a line changes: bit 3 MSIP, bit 7 MTIP.
    void on_irq(std::function<void(uint32_t hart, unsigned bit, bool level)> cb);
    // Wires hart `hart`'s lines to `core` (set_irq) and makes the CLINT the source of its
    // `time` CSR. Either this or on_irq.
    void connect(Rv32Core& core, uint32_t hart = 0);

    // mtime at simulated time `t` (also the source of the cores' `time` CSR).
    uint64_t mtime_at(const sc_core::sc_time& t) const;
    uint64_t mtimecmp(uint32_t hart) const { return harts_.at(hart).mtimecmp; }
    bool msip(uint32_t hart) const { return harts_.at(hart).msip; }

  private:
    SC_HAS_PROCESS(Clint);
    struct Hart {
        uint64_t mtimecmp = ~uint64_t(0);  // reset: never
        bool msip = false, mtip = false;
    };
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool access(uint64_t off, bool write, uint8_t* data, unsigned len, const sc_core::sc_time& at);
    void drive(uint32_t hart, unsigned bit, bool& line, bool level);
    void update_timers(const sc_core::sc_time& at);  // levels at `at`, then the next wake-up
    void on_timer();                                 // SC_METHOD: a compare was reached

    std::vector<Hart> harts_;
    uint64_t period_;           // ticks per mtime count
    int64_t mtime_offset_ = 0;  // mtime = ticks / period + offset (mtime writes move it)
    std::function<void(uint32_t, unsigned, bool)> irq_;
    std::vector<Rv32Core*> cores_;  // by hart, from connect()
    sc_core::sc_event timer_event_;
    core::Counter &timer_irqs_, &soft_irqs_;
};

}  // namespace canopy::cpu
