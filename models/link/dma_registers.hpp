// The MMIO register block of the device's DMA engine, as the host programs it through a PCIe BAR.
// The CCIX-vs-PCIe paper's TaPaSCo DMA engine (seeds/003 Section IV) is descriptor-driven and
// host-programmed: the host writes a descriptor's host address, device address, length and
// direction into the engine's registers, starts it, and polls a status register or takes an
// interrupt. This block stands for those registers; the transfer itself is the DmaEngine's.
//
// The map (register_map(), also the source of the firmware/driver C header and of
// docs/registers.md) holds one descriptor at a time:
//   host_addr, device_addr (64-bit), length (32-bit), control (start, direction, translate,
//   irq_enable), status (busy RO; done, error, overrun W1C), error_code, completed, bytes_done,
//   last_latency_ns.
// Writing control.start latches the descriptor and sets status.busy at once (clearing done and
// error), and wakes a thread at the write's simulated time. The thread runs the descriptor on the
// engine, which is loosely timed (it adds its latency to a delay and never waits), then waits that
// latency before clearing busy and setting done (and error), so status reads show busy during the
// transfer and done after, at the simulated time the engine says the transfer ends. On
// completion, with control.irq_enable set, it raises the interrupt: the on_interrupt callbacks and
// interrupt_event() (an MSI is an edge, so there is no level to hold).
//
// Choices:
// - A start while busy is ignored and sets status.overrun (W1C); the running descriptor goes on
//   untouched. Real engines either queue or drop; this one holds one descriptor, so it drops and
//   says so.
// - length 0 is refused without running the engine (error_code zero_length), as descriptor
//   decode would.
// - control.translate is the host's statement that host_addr is virtual. The engine's mode is
//   fixed at elaboration (link.dma.translate); a descriptor whose bit disagrees fails with
//   error_code translate_mismatch rather than being run with the wrong kind of address.
// - A failure in the transfer (bus error, translation fault) is error_code transfer; bytes_done
//   tells how far it got, last_result() holds the engine's message.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "link/dma_engine.hpp"

namespace canopy::link {

// status.error_code values (also in the register map, hence in the C header).
enum class DmaErrorCode : uint32_t {
    None = 0,
    ZeroLength = 1,
    TranslateMismatch = 2,
    Transfer = 3
};

struct DmaRegistersConfig {
    core::RegisterBankConfig bank;   // access_ns: one register access in the block
    void describe(core::Params& p);  // under "link.dma_regs."
};

class DmaRegisters : public sc_core::sc_module {
  public:
    // The BAR: bind the host's (or the link's) initiator here. Hierarchically bound to the
    // register bank's socket.
    tlm::tlm_target_socket<> socket;

    DmaRegisters(sc_core::sc_module_name name, DmaEngine& engine, core::Services& services,
                 const DmaRegistersConfig& cfg = DmaRegistersConfig());

    // The register map, for the model, the C header (block "dma": DMA_HOST_ADDR_OFFSET, ...) and
    // the docs.
    static core::RegisterMap register_map();

    core::RegisterBank& bank() { return bank_; }
    const core::RegisterBank& bank() const { return bank_; }

    // The completion interrupt: called at the completion time when control.irq_enable is set.
    void on_interrupt(std::function<void(const DmaResult&)> fn);
    const sc_core::sc_event& interrupt_event() const { return interrupt_; }
    // The last descriptor's result (the engine's, or the refusal's); empty before the first.
    const DmaResult& last_result() const { return last_; }

  private:
    SC_HAS_PROCESS(DmaRegisters);
    void on_control(const core::RegisterAccess& a);  // the start bit
    void run();                                      // SC_THREAD: one descriptor per start
    void complete(const DmaResult& r, DmaErrorCode code);

    DmaEngine& engine_;
    core::RegisterBank bank_;
    sc_core::sc_event start_, interrupt_;
    DmaDescriptor pending_;
    bool pending_translate_ = false;
    DmaResult last_;
    std::vector<std::function<void(const DmaResult&)>> interrupt_callbacks_;
    core::Counter &starts_, &overruns_, &refused_, &interrupts_;
};

}  // namespace canopy::link
