// On-chip RAM or ROM of an SPU (Willow Section 3: 32 KiB instruction memory, 32 KiB data
// memory), or any other plain memory region. A TLM target whose addresses are relative to its
// base (the router subtracts it): b_transport with a fixed access latency, debug transport, and
// DMI for the whole region with the same latency, read-only for a ROM. Zero-initialised.
//
// Large sparse address spaces: instantiate one Memory per sized region rather than one huge
// one. The backing store comes from calloc, so pages never touched cost no RAM either way.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>

#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::cpu {

struct MemoryConfig {
    uint64_t size_bytes = 32 * 1024;  // Willow Sec. 3: 32 KiB IMEM and 32 KiB DMEM per SPU
    double latency_ns = 0.0;          // assumed: single-cycle SRAM, covered by the core's CPI
    bool read_only = false;           // a ROM: writes fail (debug writes still load it)
    void describe(core::Params& p);   // keys relative to the caller's scope
};

class Memory : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<Memory> socket;

    Memory(sc_core::sc_module_name name, const MemoryConfig& cfg, core::Services& services);
    // A RAM of `size_bytes` with the default latency.
    Memory(sc_core::sc_module_name name, uint64_t size_bytes, core::Services& services);
    ~Memory() override;

    // Copies in or out at base-relative `offset`, for loaders (a ROM too) and tests; throws
    // std::out_of_range beyond the end. Cores that decoded the old bytes need invalidate().
    void write(uint64_t offset, const uint8_t* bytes, uint64_t len);
    void read(uint64_t offset, uint8_t* bytes, uint64_t len) const;

    // The contents, for loaders and tests (base-relative).
    uint8_t* data() { return mem_.get(); }
    const uint8_t* data() const { return mem_.get(); }
    uint64_t size() const { return cfg_.size_bytes; }
    const MemoryConfig& config() const { return cfg_; }
    // Withdraws every DMI pointer granted (initiators fall back to b_transport until they ask
    // again), e.g. before the memory is remapped.
    void revoke_dmi();

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

    struct Free {
        void operator()(uint8_t* p) const;
    };
    MemoryConfig cfg_;
    std::unique_ptr<uint8_t, Free> mem_;
    sc_core::sc_time latency_;
    core::Counter &reads_, &writes_, &errors_;
};

}  // namespace canopy::cpu
