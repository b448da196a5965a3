// A descriptor-driven DMA engine on the device, modelled on TaPaSCo's high-performance PCIe DMA
// engine (the CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 1: PCIe-DMA transfers of
// 32 B .. 16 KiB using physical host addresses; Experiment 2 for the translated case).
//
// A descriptor moves `length` bytes between host memory (through `host_initiator`, towards the
// link's device_target) and device memory (through `device_initiator`). With translation on, the
// host address is virtual and each page it touches is translated by the device's ATC (one lookup
// per page, the page size the translation returns); with translation off it is physical. The
// transfer is cut at page boundaries and at max_burst_bytes; each piece is read from its source
// and then written to its destination (store and forward), pieces one after another.
//
// Translations are requested ahead, as ATS clients do: after setup the engine issues the lookups
// of the descriptor's pages one per ATC lookup time (AtcConfig::hit_latency_ns), keeping at most
// AtcConfig::max_outstanding pages translated or in translation ahead of the data (a page's slot
// frees when its last piece has moved; with 1 the engine translates page k only after page k-1
// moved, the blocking behaviour). A piece moves once its page's translation has returned and the
// previous piece is done. The address of each next lookup is the end of the previous page.
//
// Latency of a descriptor = setup + the time pieces waited for translations (translation_ns) +
// each piece's source read and destination write, as the targets return them (transfer_ns).
// execute() never calls wait(): it adds that latency to the caller's delay (loosely timed; each
// lookup is its own call starting at its issue time). A translation failure or a bus error ends
// the descriptor with an error (the bytes before it have moved); it never throws.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/payload.hpp"
#include "core/services.hpp"
#include "link/atc.hpp"

namespace canopy::link {

struct DmaConfig {
    // true: descriptor host addresses are virtual and go through the ATC (ATS); false: physical,
    // as the paper's TaPaSCo PCIe-DMA measurements use them. [CCIX paper IV Exp. 1]
    bool translate = false;
    // Largest piece moved at once. Assumed: one 4 KiB page, the size of the engine's buffers.
    uint32_t max_burst_bytes = 4096;
    // Assumed (descriptor fetch and decode, and the device logic between the engine and the link),
    // calibrated by `canopy exp ats-cost` (E2): a 64-B read with an ATC hit takes ~700 ns
    // [CCIX paper IV Exp. 2] = setup + ATC hit 20 + link read ~367 (Gen4 x8 defaults) + host
    // DRAM 100, so setup = 213 ns (was an uncalibrated 50).
    double setup_ns = 213.0;
    void describe(core::Params& p);  // under "link.dma."
};

enum class DmaDirection : uint8_t { HostToDevice, DeviceToHost };

struct DmaDescriptor {
    DmaDirection direction = DmaDirection::HostToDevice;
    uint64_t host_address = 0;    // virtual when translating, else physical
    uint64_t device_address = 0;  // on the device-memory socket
    uint64_t length = 0;          // bytes
};

struct DmaResult {
    uint64_t id = 0;  // order of execution, from 0
    bool ok = false;
    std::string error;
    uint64_t bytes_done = 0;
    uint32_t pieces = 0, translations = 0;
    double translation_ns = 0;    // time pieces waited for translations (not hidden by transfers)
    double transfer_ns = 0;       // time spent on the sockets
    double latency_ns = 0;        // setup + translation + transfer
    sc_core::sc_time completion;  // simulated time the descriptor completed (or failed)
};

class DmaEngine : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<DmaEngine> host_initiator;    // host memory, via the link
    tlm_utils::simple_initiator_socket<DmaEngine> device_initiator;  // device memory

    // `atc` may be null when cfg.translate is false.
    DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, core::Services& services,
              Atc* atc = nullptr);

    // Runs one descriptor, adding its latency to `delay`; the result is also kept in results().
    DmaResult execute(const DmaDescriptor& d, sc_core::sc_time& delay);
    const std::vector<DmaResult>& results() const { return results_; }
    void clear_results() { results_.clear(); }  // ids keep counting
    const DmaConfig& config() const { return cfg_; }

  private:
    struct Page {  // one translation of the descriptor
        uint64_t page_end, physical_base;
        sc_core::sc_time ready;  // delay at which the answer is back
        std::string error;       // "" when translated
    };
    // One read or write of `bytes` at `address` on `socket`; "" or why it failed.
    std::string access(tlm_utils::simple_initiator_socket<DmaEngine>& socket, bool write,
                       uint64_t address, uint8_t* data, uint32_t bytes, bool host, bool translated,
                       sc_core::sc_time& delay);

    DmaConfig cfg_;
    core::Services& services_;
    Atc* atc_;
    std::vector<uint8_t> buffer_;
    std::vector<DmaResult> results_;
    uint64_t next_id_ = 0;
    std::vector<Page> pages_;  // reused per descriptor
    tlm::tlm_generic_payload gp_;
    core::TlpExt tlp_;  // set on gp_ for host accesses, cleared after
    const sc_core::sc_time setup_;
    uint32_t window_;            // pages translated ahead: the ATC's max_outstanding
    sc_core::sc_time interval_;  // between lookups: the ATC's lookup time
    core::Counter &descriptors_, &bytes_, &errors_;
    core::Distribution &latency_h2d_, &latency_d2h_;
};

}  // namespace canopy::link
