// A descriptor-driven DMA engine on the device, modelled on TaPaSCo's high-performance PCIe DMA
// engine (the CCIX-vs-PCIe paper, seeds/003 Section IV Experiment 1: PCIe-DMA transfers of
// 32 B .. 16 KiB using physical host addresses; Experiment 2 for the translated case).
//
// A descriptor moves `length` bytes between host memory (through `host_initiator`, towards the
// link's device_target) and device memory (through `device_initiator`). With translation on, the
// host address is virtual and each page it touches is translated by the device's ATC (one lookup
// per page, the page size the translation returns); with translation off it is physical. The
// transfer is cut at page boundaries and at max_burst_bytes; each piece is read from its source
// and then written to its destination (store and forward through one of the engine's buffers).
// With pieces_in_flight buffers the engine reads ahead: piece k's source read is issued together
// with the earlier ones (the link serialises their TLPs on its wires) once piece k -
// pieces_in_flight has been written, so the read round trips overlap and a long transfer runs at
// the link's rate; writes to the destination are issued in piece order, each once its data is in
// and the one before it has gone out (posted writes are not held until accepted; the link and the
// targets serialise them). With 1 the pieces go one after another.
//
// Translations are requested ahead, as ATS clients do: after setup the engine issues the lookups
// of the descriptor's pages one per ATC lookup time (AtcConfig::hit_latency_ns), keeping at most
// AtcConfig::max_outstanding pages translated or in translation ahead of the data (a page's slot
// frees when its last piece has moved; with 1 the engine translates page k only after page k-1
// moved, the blocking behaviour). A piece moves once its page's translation has returned and the
// engine has a buffer for it. The address of each next lookup is the end of the previous page.
//
// Latency of a descriptor = setup (+ read_completion for host -> device) + the time the
// transfer was held up waiting for translations (translation_ns) + the rest of the time from the
// first piece's start to the last piece's write, as the targets return them (transfer_ns).
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
    // Descriptor fetch and decode, and the device logic between the engine and the link, both
    // directions. Calibrated to E1 [CCIX paper IV Exp. 1]: a 64-B CCIX write (680 ns: the request
    // agent's write-allocate) is ~32% longer than a 64-B PCIe-DMA write, so that write is ~515 ns
    // = setup + the posted write over the link into host memory (~285 ns at Gen4 x8): 228 ns. (It
    // was 213, fitted to E2's 700 ns, but that is a CCIX read, not a DMA one.)
    double setup_ns = 228.0;
    // Host -> device only, once per descriptor after its last piece: the engine's completion
    // handling of a read (the CplD stream drained into its buffer and written to device memory,
    // the write response awaited) before it signals done; writes to the host are posted and need
    // none. Calibrated to E1 [CCIX paper IV Exp. 1]: CCIX 64-B reads (700 ns, E2) are ~33%
    // shorter than PCIe-DMA reads, so a 64-B DMA read is ~1045 ns = setup + the link round trip
    // and host memory (~467 ns) + read_completion: 350 ns. DMA reads then take ~2x DMA writes.
    double read_completion_ns = 350.0;
    // Pieces (engine buffers of max_burst_bytes) in flight at once: reads ahead of the writes.
    // Calibrated to E1 [CCIX paper IV Exp. 1]: the read throughput ratios (3.3x, 1.29x, 0.87x at
    // 1, 16, 32 KiB) need a DMA read bandwidth ~3.6x the CCIX one (~12-14 GB/s); 4 buffers (16 KiB,
    // TaPaSCo's engine keeps several bursts outstanding) cover the ~750 ns round trip of a 4 KiB
    // piece and reach the Gen4 x8 link's ~14 GB/s. 1 is store and forward (~5 GB/s).
    uint32_t pieces_in_flight = 4;
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
    double transfer_ns = 0;       // time spent on the sockets (overlapped pieces counted once)
    double latency_ns = 0;        // setup (+ read completion) + translation + transfer
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
    Atc* atc_;
    std::vector<uint8_t> buffer_;
    std::vector<DmaResult> results_;
    uint64_t next_id_ = 0;
    std::vector<Page> pages_;                   // reused per descriptor
    std::vector<sc_core::sc_time> write_ends_;  // per piece: when its destination write ended
    tlm::tlm_generic_payload gp_;
    core::TlpExt tlp_;  // set on gp_ for host accesses, cleared after
    const sc_core::sc_time setup_, read_completion_;
    uint32_t window_;            // pages translated ahead: the ATC's max_outstanding
    sc_core::sc_time interval_;  // between lookups: the ATC's lookup time
    core::Counter &descriptors_, &bytes_, &errors_;
    core::Distribution &latency_h2d_, &latency_d2h_;
};

}  // namespace canopy::link
