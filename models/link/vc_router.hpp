// The virtual-channel split and merge at each end of the PCIe link (CCIX-vs-PCIe paper, seeds/003
// Section III-A and Fig. 1: "the transaction layer uses VC0 for PCIe packets and VC1 for CCIX
// packets, sharing the same physical and link layers"). The link itself carries both VCs on one
// wire per direction; these modules are the transaction layer's demultiplexer and multiplexer
// in front of the agents:
//
//   host side    link.host_initiator -> VcRouter: vc0 -> root port, vc1 -> CCIX home agent
//                root complex (VC0), home agent snoops (VC1) -> VcMerge -> link.host_target
//   device side  link.device_initiator -> VcRouter: vc0 -> BAR registers, vc1 -> RA snoop port
//                ATC / DMA (VC0), request agent (VC1) -> VcMerge -> link.device_target
//
// VcRouter forwards b_transport and transport_dbg by core::TlpExt::vc (no extension: VC0, as
// plain PCIe traffic has none); a VC other than 0 or 1 is refused with
// TLM_GENERIC_ERROR_RESPONSE and counted. VcMerge takes any number of initiators on each VC
// input and refuses a transaction whose TlpExt names the other VC (a wiring error that would
// otherwise reach the wrong agent). Neither adds time: the VC arbitration is the link's.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <string>
#include <systemc>
#include <tlm>

#include "core/services.hpp"

namespace canopy::link {

class VcRouter : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<VcRouter> target;
    tlm_utils::simple_initiator_socket<VcRouter> vc0;
    tlm_utils::simple_initiator_socket<VcRouter> vc1;

    VcRouter(sc_core::sc_module_name name, core::Services& services);
    const std::string& last_error() const { return last_error_; }

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    // The output for `gp`, or null (and the reason in last_error_) when it has no VC here.
    tlm_utils::simple_initiator_socket<VcRouter>* route(const tlm::tlm_generic_payload& gp);

    core::Counter &vc0_, &vc1_, &refused_;
    std::string last_error_;
};

class VcMerge : public sc_core::sc_module {
  public:
    using Input =
        tlm_utils::multi_passthrough_target_socket<VcMerge, 32, tlm::tlm_base_protocol_types, 0,
                                                   sc_core::SC_ZERO_OR_MORE_BOUND>;
    Input vc0;
    Input vc1;
    tlm_utils::simple_initiator_socket<VcMerge> out;  // to the link's host_target / device_target

    VcMerge(sc_core::sc_module_name name, core::Services& services);
    const std::string& last_error() const { return last_error_; }

  private:
    void b_transport0(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) { forward(0, gp, d); }
    void b_transport1(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) { forward(1, gp, d); }
    unsigned transport_dbg0(int, tlm::tlm_generic_payload& gp) { return forward_dbg(0, gp); }
    unsigned transport_dbg1(int, tlm::tlm_generic_payload& gp) { return forward_dbg(1, gp); }
    void forward(unsigned vc, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned forward_dbg(unsigned vc, tlm::tlm_generic_payload& gp);
    bool check(unsigned vc, const tlm::tlm_generic_payload& gp);

    core::Counter& refused_;
    std::string last_error_;
};

}  // namespace canopy::link
