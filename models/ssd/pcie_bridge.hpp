// Willow's PCIe bridge (Willow Section 3.2 "bridge", 3.1 "Tracking responsibility"): the hardware
// proxy of the host RPC endpoints (HREs) on the ring. Per HRE it keeps a downstream (submission)
// and an upstream (completion) queue in host memory, NVMe-like, up to 1,024 queue pairs; it
// fetches RPCs by DMA when the host rings a doorbell, stamps each with its queue's HRE ID (so a
// process cannot forge the originating HRE: it can only use the queues the kernel gave it),
// routes it to the SPU it names, and writes the SPUs' responses, and the requests SPUs send to
// an HRE, back into the HRE's completion queue (with their payload in its receive buffer),
// raising an interrupt (MSI) when the queue asks for one. The queue structures are in
// models/ssd/hre_queue.h, shared with the host's HRE library.
//
// Two windows in the SSD's BAR: the control block (register_map(), block "bridge": the kernel
// sets each queue pair up through qp_select and the qp_* registers, and reads counters) and the
// doorbell pages (one 4 KiB page per HRE: SQ tail, CQ head, RX head; the kernel maps a process
// its own pages).
//
// Behaviour and choices:
// - Two engines, as PCIe is full duplex: the fetch engine serves all queues, an entry at a time,
//   in doorbell order (round robin over queues with work), reading entries and payloads from
//   host memory (DMA reads through `host`: their latency is the PCIe round trip, waited out
//   before the next); the deliver engine takes the ring's responses and requests to HREs and
//   writes them, with the completions, into host memory (DMA writes). Neither pipelines its
//   own accesses.
// - Requests to an SPU reserve one of the bridge's network-interface response slots; with none
//   free the queue waits (back-pressure) until a response frees one. The bridge renames tags
//   (its own tag per outstanding request) and gives the host's tag back in the completion.
// - Everything an HRE names must lie in its DMA window (set by the kernel): queues, receive
//   buffer, payloads. An entry that is malformed or names memory outside the window completes
//   at once with status BAD_ENTRY or BAD_ADDRESS; nothing is read or written outside.
// - Coherent queues (qp_control.coherent; needs the device's CCIX request agent, attach_coherent):
//   the host rings no doorbells. The bridge keeps the line of the next submission slot in the
//   request agent's system cache and watches it (link::RequestAgent::watch): the host's write of
//   an entry takes the line away by a snoop, which wakes the fetch engine; it reads the line again
//   over CCIX and takes the entry when its phase flag (HRE_FLAG_PHASE) is the queue's pass. A
//   payload is read over CCIX without keeping its lines. The host publishes its CQ and RX heads
//   in the window's shadow line (hre_queue.h); the bridge reads it, watched, only when the
//   completion queue or the receive buffer looks full. Completions and receive-buffer payloads
//   still go as posted PCIe writes: the CCIX-vs-PCIe paper measured CCIX's small writes 32%
//   slower than DMA's (CALIBRATION E1).
// - An SPU's request to an HRE that is disabled, whose completion queue is full or whose receive
//   buffer has no room is answered with a NACK (it is dropped, as Willow's unreliable requests
//   may be). Completions of the host's own requests wait for CQ space (the host is expected to
//   keep no more requests outstanding than its CQ holds).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "link/request_agent.hpp"
#include "ssd/hre_queue.h"
#include "ssd/network_interface.hpp"

namespace canopy::ssd {

struct BridgeConfig {
    uint32_t queue_pairs = 1024;  // [Willow 3.2: 1,024 queue pairs]
    // Time the engine spends on one entry or message besides its DMA (decode, routing): assumed
    // 8 cycles of a 250 MHz bridge clock.
    double entry_ns = 32.0;
    // A posted write's time after its last byte left the bridge (the link's layers one way,
    // link.pcie.upstream: 180 ns by default), which the deliver engine does not wait out.
    double posted_flight_ns = 180.0;
    // Submission entries the fetch engine reads from one queue at once (one DMA read), as NVMe
    // controllers may. 1: one at a time (willow-io: with 8, Base-IO writes reach 0.77 of the
    // link but reads drop from 0.69 to 0.66, their completions waiting behind larger bursts).
    uint32_t fetch_burst = 1;
    core::RegisterBankConfig bank;
    void describe(core::Params& p);  // relative to the caller's scope
};

class PcieBridge : public sc_core::sc_module {
  public:
    tlm::tlm_target_socket<> ctl;                           // control block window
    tlm_utils::simple_target_socket<PcieBridge> doorbells;  // doorbell pages window
    tlm_utils::simple_initiator_socket<PcieBridge> host;    // DMA to host memory

    SC_HAS_PROCESS(PcieBridge);
    // `ni` is the bridge's node on the ring.
    PcieBridge(sc_core::sc_module_name name, NetworkInterface& ni, core::Services& services,
               const BridgeConfig& cfg = BridgeConfig());

    static core::RegisterMap register_map();
    // The doorbell window's size: one page per queue pair.
    uint64_t doorbell_bytes() const { return uint64_t(cfg_.queue_pairs) * HRE_DOORBELL_PAGE_BYTES; }

    // The completion interrupt of queue pair `qp` (an MSI: an edge at time `at`).
    void on_interrupt(std::function<void(unsigned qp, const sc_core::sc_time& at)> fn) {
        irq_ = std::move(fn);
    }
    core::RegisterBank& bank() { return bank_; }
    // The request agent coherent queues are served through (none: enabling one is refused).
    void attach_coherent(link::RequestAgent& ra) { ra_ = &ra; }

  private:
    struct QueuePair {
        bool enabled = false, irq = false, coherent = false;
        uint64_t window_base = 0, window_bytes = 0, sq_base = 0, cq_base = 0, rx_base = 0,
                 shadow_base = 0;
        uint32_t sq_entries = 0, cq_entries = 0, rx_bytes = 0, hre = 0;
        uint32_t sq_head = 0, sq_tail = 0;            // next entry to fetch; the host's doorbell
        bool sq_phase = true;                         // coherent: the flag of the current pass
        uint64_t watched_sq = 0, watched_shadow = 0;  // coherent: lines watched (0: none)
        sc_core::sc_time wake_at;                     // coherent: when the host's write arrived
        uint64_t cq_written = 0, cq_consumed = 0;     // running counts (entries)
        uint64_t rx_tail = 0, rx_head = 0;            // running counts (bytes)
        std::deque<hre_cq_entry> pending;             // completions waiting for CQ space
    };
    struct Outstanding {
        bool used = false;
        uint32_t qp = 0;
        uint16_t host_tag = 0;
    };

    void select_queue(uint32_t qp);
    void queue_written();
    void enable_written();
    bool in_window(const QueuePair& q, uint64_t addr, uint64_t bytes) const;
    void doorbell(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void fetch_engine();      // host -> SPUs
    void deliver_engine();    // SPUs -> host
    void fetch(uint32_t qp);  // a burst of the queue's entries
    // Coherent queues: reads the next slot's line (watched); true when it held a new entry.
    bool fetch_coherent(uint32_t qp);
    void wake(uint32_t qp, const sc_core::sc_time& at);  // the watched SQ line was taken
    void notify_at(const sc_core::sc_time& at);          // wakes the engines at `at` (now if past)
    // Coherent queues: reads the host's heads from the shadow line (watched while the queue
    // waits for room).
    void refresh_heads(uint32_t qp);
    void unwatch_all(QueuePair& q);
    bool set_cq_head(QueuePair& q, uint32_t slot);
    bool set_rx_head(QueuePair& q, uint32_t count);
    bool cq_full(const QueuePair& q) const {
        return q.cq_written + q.pending.size() - q.cq_consumed >= q.cq_entries;
    }
    bool read_host(const QueuePair& q, uint64_t addr, void* data, uint32_t bytes);
    void process(uint32_t qp, const hre_sq_entry& e, bool read_ok);
    void deliver_response();
    void deliver_request();
    void complete(uint32_t qp, const hre_cq_entry& e);
    void flush_completions(uint32_t qp);
    bool dma(bool write, uint64_t addr, void* data, uint32_t bytes);
    uint16_t new_tag(uint32_t qp, uint16_t host_tag);
    void release_tag(uint16_t tag);

    BridgeConfig cfg_;
    NetworkInterface& ni_;
    link::RequestAgent* ra_ = nullptr;
    core::RegisterBank bank_;
    std::vector<QueuePair> qps_;
    std::vector<Outstanding> outstanding_;
    uint32_t selected_ = 0;
    uint16_t next_tag_ = 0;
    std::deque<uint32_t> ready_;  // queue pairs with unfetched entries, in doorbell order
    std::vector<bool> queued_;
    std::set<uint32_t> with_pending_;  // queue pairs whose `pending` may hold completions
    sc_core::sc_event work_;           // doorbells, freed response slots, completions to write
    std::function<void(unsigned, const sc_core::sc_time&)> irq_;
    core::Counter &fetched_, &completions_, &requests_up_, &nacked_, &refused_, &bad_doorbells_;
    core::Distribution& in_flight_;
    uint32_t outstanding_count_ = 0;  // tags in use
};

}  // namespace canopy::ssd
