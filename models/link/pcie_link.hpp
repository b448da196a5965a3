// The PCIe link between the host's root port and the device's endpoint (CCIX-vs-PCIe paper,
// seeds/003 Sections II-III: N1-SDP root port, U280/VCK5000 endpoint, PCIe 4.0). Named "link" in
// a platform. Two directions, each a shared wire (core::SharedResource) that TLPs occupy for
// their serialisation time, plus a fixed per-layer pipeline latency added once per traversal:
//
//   host (root complex) --- downstream: host -> device --->  device (endpoint)
//                       <--- upstream:  device -> host ----
//
// Requests the host sends to the device (MMIO, doorbells) enter at `host_target`, travel
// downstream and leave at `device_initiator`; requests the device sends to host memory (DMA,
// ATS translation requests) enter at `device_target`, travel upstream and leave at
// `host_initiator`. Request TLPs occupy the requester's direction, completions the other: a DMA
// read of N bytes sends MemRd TLPs upstream and gets CplD TLPs downstream.
//
// The link is the transaction layer of both ends: it splits a transfer of any size (up to
// max_transfer_bytes) into legal TLPs (max payload, max read request, 4 KiB boundaries) and
// forwards one transaction per request TLP, at the time the TLP reaches the far side, with a
// core::TlpExt and a LinkTlpExt. Completions for a read leave when the far side's b_transport
// says the data is ready. The returned delay ends when the last completion (reads) or the far
// side's acceptance of the last write (posted writes) arrives. A transaction marked
// LinkTlpExt::single_tlp is one raw TLP: if PCIe forbids it in one TLP it is refused, not split.
//
// Refused with TLM_GENERIC_ERROR_RESPONSE and a reason in LinkTlpExt::error and last_error():
// zero length, byte enables, streaming, no data buffer, an address range that wraps, a transfer
// above max_transfer_bytes, a VC other than 0 or 1, an ill-formed ATS request, a completion
// offered as a request, and single-TLP requests that cross 4 KiB or exceed MPS / MRRS.
//
// Flow control: within a transfer, request TLP i may not start before TLP i - W has reached the
// receiver and its UpdateFC has come back (reverse pipeline latency + one DLLP), W being what the
// advertised credits allow (posted header/data for writes, non-posted header for reads; the
// completion credits are infinite by spec). Credits are taken as fully returned between
// transfers. DLLPs (Acks, UpdateFCs) occupy the reverse wire after the TLPs they answer, so they
// take bandwidth from later traffic but never delay the TLPs they acknowledge.
//
// Virtual channels: VC0 (PCIe, ATS) and VC1 (CCIX, later) share each direction's wire. The wire
// grants TLPs first come, first served in request time order (gap-filling; a transfer's TLPs are
// granted together when it arrives), which serves the VCs round robin by request order; per-VC
// TLP and byte counts are kept.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/resource.hpp"
#include "core/services.hpp"
#include "link/pcie_config.hpp"
#include "link/tlp.hpp"

namespace canopy::link {

class PcieLink : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<PcieLink> host_target;          // host -> device requests in
    tlm_utils::simple_initiator_socket<PcieLink> device_initiator;  // ... and out to the device
    tlm_utils::simple_target_socket<PcieLink> device_target;        // device -> host requests in
    tlm_utils::simple_initiator_socket<PcieLink> host_initiator;    // ... and out to the host

    // Throws InputError when the config is invalid (PcieConfig::validate).
    PcieLink(sc_core::sc_module_name name, const PcieConfig& cfg, core::Services& services);

    const PcieConfig& config() const { return cfg_; }
    // The pipeline latency of one traversal host -> device and device -> host.
    sc_core::sc_time downstream_latency() const { return down_->latency; }
    sc_core::sc_time upstream_latency() const { return up_->latency; }
    // The reason of the last refusal, prefixed with the link's name; "" when none.
    const std::string& last_error() const { return last_error_; }

  private:
    struct Direction {
        Direction(const std::string& name, const LayerLatency& l, core::Services& s);
        std::string name;
        sc_core::sc_time latency;
        core::BusyProbe probe;
        core::BusyProbe vc_busy[2];  // the wire busy with this virtual channel's TLPs
        core::SharedResource wire;
        core::Counter &tlps, &tlp_bytes, &payload_bytes, &dllps, &dllp_bytes;
        core::Counter* vc_tlps[2];
        core::Counter* vc_bytes[2];
    };

    void host_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void device_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned host_dbg(tlm::tlm_generic_payload& gp);
    unsigned device_dbg(tlm::tlm_generic_payload& gp);

    void transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay, Direction& fwd,
                   Direction& rev, tlm_utils::simple_initiator_socket<PcieLink>& out);
    // Why the link cannot carry `gp`, or "" when it can.
    std::string check(const tlm::tlm_generic_payload& gp) const;
    void refuse(tlm::tlm_generic_payload& gp, const std::string& why);
    // Occupies `d`'s wire with one TLP from `at` on; returns the grant.
    core::SharedResource::Grant send(Direction& d, const Tlp& t, uint8_t vc,
                                     const sc_core::sc_time& at);
    // Occupies `d`'s wire with the DLLPs answering `tlps` TLPs, from `at` on.
    void send_dllps(Direction& d, uint64_t tlps, const sc_core::sc_time& at);
    // TLPs one transfer may have in flight before waiting for an UpdateFC; 0 = unlimited.
    uint64_t credit_window(bool write) const;
    // serialisation(cfg_, bytes), remembered for the sizes TLPs and DLLPs usually have.
    sc_core::sc_time wire_time(uint64_t bytes);

    // Per nesting depth of transport() (a far side may call back into the link), storage reused
    // from one transfer to the next: no allocation per transaction.
    struct Scratch {
        std::vector<Tlp> requests, completions;
        std::vector<sc_core::sc_time> arrivals;
        tlm::tlm_generic_payload sub;  // the forwarded TLP
        core::TlpExt tlp;              // set on sub, with the original's attributes
        LinkTlpExt link;               // set on sub
        // The original's other extensions (index, object), lent to every forwarded TLP.
        std::vector<std::pair<unsigned, tlm::tlm_extension_base*>> others;
    };

    PcieConfig cfg_;
    core::Services& services_;
    std::unique_ptr<Direction> down_, up_;
    core::Counter &reads_, &writes_, &ats_, &refused_;
    core::Distribution &read_latency_, &write_latency_;
    int track_;
    core::Logger log_;  // warning: a transfer the link refuses
    std::string last_error_;
    std::vector<std::unique_ptr<Scratch>> scratch_;
    size_t depth_ = 0;
    std::vector<sc_core::sc_time> wire_time_;         // by bytes; zero = not computed yet
    sc_core::sc_time down_fc_return_, up_fc_return_;  // UpdateFC coming back on the other side
};

}  // namespace canopy::link
