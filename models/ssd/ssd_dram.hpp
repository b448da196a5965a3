// The SSD's memory behind the SPUs (Willow Section 3.2: the prototype's non-volatile storage is
// DRAM behind a controller that emulates PCM, 48 ns reads and 150 ns writes, two SPUs sharing a
// DDR2 DIMM). It holds the firmware's large data structures and, until the flash controller and
// FTL stand in front of the NAND array, the blocks Base-IO and Direct-IO store.
//
// Byte-addressed, sparse (pages are host memory only once touched), reached by the SPUs' DMA
// controllers through b_transport (no DMI: every access is timed). The address space is cut into
// `banks` equal banks, bank i being SPU i's local store; each bank serves one access at a time
// at bank_gbps after the read or write latency, so SPUs sharing a bank queue (core::
// SharedResource) and SPUs on different banks do not.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/resource.hpp"
#include "core/services.hpp"

namespace canopy::ssd {

struct SsdDramConfig {
    uint64_t size_mib = 1024;         // assumed; sparse, so size costs nothing until written
    uint32_t banks = 8;               // one local store per SPU [Willow 3.1 SPU architecture]
    double read_latency_ns = 48.0;    // [Willow 3.2: PCM emulation, 48 ns reads]
    double write_latency_ns = 150.0;  // [Willow 3.2: 150 ns writes]
    // Streaming rate of one bank: DDR2-800 x64 (6.4 GB/s) shared by two SPUs [Willow 3.2].
    double bank_gbps = 3.2;
    void describe(core::Params& p);  // relative to the caller's scope
};

class SsdDram : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<SsdDram> socket;

    // Throws InputError for a config that cannot be built (no banks, size not divisible).
    SsdDram(sc_core::sc_module_name name, const SsdDramConfig& cfg, core::Services& services);

    uint64_t size() const { return size_; }
    uint64_t bank_bytes() const { return bank_bytes_; }
    // Untimed access for loaders and tests (throws std::out_of_range outside).
    void write(uint64_t addr, const uint8_t* bytes, uint64_t len);
    void read(uint64_t addr, uint8_t* bytes, uint64_t len) const;

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);

    bool in_range(uint64_t addr, uint64_t len) const {
        return addr <= size_ && len <= size_ - addr;
    }

    struct Free {
        void operator()(uint8_t* p) const;
    };
    SsdDramConfig cfg_;
    uint64_t size_, bank_bytes_;
    std::unique_ptr<uint8_t, Free> mem_;  // calloc: the OS hands out pages when touched
    std::vector<core::SharedResource> banks_;
    core::Counter &reads_, &writes_, &errors_;
    core::Sum &read_bytes_, &write_bytes_;
};

}  // namespace canopy::ssd
