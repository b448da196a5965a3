// Host DRAM of the Arm N1-SDP host in the CCIX-vs-PCIe paper (seeds/003, Section III): real
// bytes, stored sparsely in 64 KiB chunks allocated on first write (reads of untouched memory
// return zeros), so a multi-GiB host costs only what is written. A TLM target addressed from 0:
// b_transport with a fixed access latency, debug transport, and DMI per allocated chunk (an
// initiator asking for an untouched chunk is refused DMI and keeps using b_transport; the first
// b_transport write allocates the chunk). Accesses beyond size_bytes get
// TLM_ADDRESS_ERROR_RESPONSE. The untimed read/write/read64/write64 are for the host kernel's
// software (page tables, loaders) and tests.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <unordered_map>

#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::host {

struct HostMemoryConfig {
    uint64_t size_bytes = 4ull << 30;  // assumed 4 GiB: enough for 1 GiB huge pages (N1-SDP has 16)
    // Assumed 100 ns: one DRAM access past the system cache, as seen from the SMMU's walker; with
    // 4 walk reads and the IOMMU's processing latency it gives the paper's 617 ns ATS answer (E2).
    double latency_ns = 100.0;
    void describe(core::Params& p);  // keys relative to the caller's scope ("host.memory.")
};

class HostMemory : public sc_core::sc_module {
  public:
    static constexpr uint64_t kChunkBytes = 64 * 1024;

    tlm_utils::simple_target_socket<HostMemory> socket;

    HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& cfg, core::Services& services);

    // Untimed copies; throw std::out_of_range beyond size_bytes.
    void write(uint64_t addr, const uint8_t* bytes, uint64_t len);
    void read(uint64_t addr, uint8_t* bytes, uint64_t len) const;
    uint64_t read64(uint64_t addr) const;
    void write64(uint64_t addr, uint64_t value);
    // Zero-fills; untouched chunks stay unallocated.
    void zero(uint64_t addr, uint64_t len);

    uint64_t size() const { return cfg_.size_bytes; }
    const HostMemoryConfig& config() const { return cfg_; }
    uint64_t allocated_chunks() const { return chunks_.size(); }

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    // Returns false (and sets the response) when the access is not allowed.
    bool access(tlm::tlm_generic_payload& gp);
    uint8_t* chunk(uint64_t index, bool create);
    const uint8_t* chunk(uint64_t index) const;
    void check(uint64_t addr, uint64_t len) const;

    HostMemoryConfig cfg_;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> chunks_;
    core::Counter& reads_;
    core::Counter& writes_;
    core::Counter& errors_;
    core::Counter& dmi_grants_;
};

}  // namespace canopy::host
