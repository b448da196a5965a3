// The host interface of the CCIX Traffic Generator (CTG) of the CCIX-vs-PCIe paper (seeds/003
// Section IV-A: the CTG "accepts requests (type, virtual address, length) from the software
// API's startTrans call", issues them to the system cache over AXI4-MM, the SC acting as the CCIX
// request agent, and captures the time until the response arrives - a transaction is complete
// only when all its data has arrived - "which the software API can then read"). It is the
// register block the host programs through BAR0, beside the DMA engine's (link/dma_registers.hpp),
// in the start/status protocol of link/command_status.hpp; the transfer itself is the request
// agent's (RequestAgent::transfer: one line request per 64 B, ra.max_outstanding in flight).
//
// The map (register_map(), also the source of the C header and of docs/registers.md):
//   address (64-bit, virtual, in the process the device works for), length (32-bit), control
//   (start, type), status (busy RO; done, error, overrun W1C), error_code, completed,
//   last_latency_ns (the captured latency).
// Writing control.start latches the request, sets status.busy at once and wakes a thread at the
// write's simulated time; the thread runs the transfer on the request agent and waits its time,
// then records the latency and sets done (and error). A start while busy is ignored (overrun);
// length 0 or above kMaxBytes is refused without a transfer (error_code length); a failure of the
// request agent (ATS failure, error response) is error_code access.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "link/request_agent.hpp"

namespace canopy::link {

enum class CtgErrorCode : uint32_t { None = 0, Length = 1, Access = 2 };

struct CtgRegistersConfig {
    core::RegisterBankConfig bank;   // access_ns: one register access in the block
    void describe(core::Params& p);  // under "link.ctg_regs."
};

class CtgRegisters : public sc_core::sc_module {
  public:
    static constexpr uint32_t kMaxBytes = 1u << 20;  // assumed: the CTG's capture buffer

    tlm::tlm_target_socket<> socket;  // hierarchically bound to the register bank's

    // Transfers go to `ra` for the host process `pasid`.
    CtgRegisters(sc_core::sc_module_name name, RequestAgent& ra, uint32_t pasid,
                 core::Services& services, const CtgRegistersConfig& cfg = CtgRegistersConfig());

    // The register map: the model's, the C header's (block "ctg") and the docs'.
    static core::RegisterMap register_map();
    core::RegisterBank& bank() { return bank_; }

  private:
    SC_HAS_PROCESS(CtgRegisters);
    void on_control(const core::RegisterAccess& a);
    void run();  // SC_THREAD: one transfer per start

    RequestAgent& ra_;
    uint32_t pasid_;
    core::RegisterBank bank_;
    sc_core::sc_event start_;
    bool write_ = false;
    uint64_t address_ = 0, length_ = 0;
    std::vector<uint8_t> data_;
    core::Counter &starts_, &overruns_, &errors_;
    core::Distribution& latency_;
};

}  // namespace canopy::link
