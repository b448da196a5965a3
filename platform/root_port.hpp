// The host's PCIe root port as the device side sees it (CCIX-vs-PCIe paper, seeds/003 Sections
// III-IV: the N1-SDP root complex in front of host DRAM and the SMMU). A small adapter between
// the link's host_initiator and the host models:
//
//   link.host_initiator --> RootPort::link_target --+-- ATS translation request -->
//   Iommu::translate
//                                                   +-- memory read/write -------->
//                                                   memory_initiator
//                                                                                   (HostMemory::socket)
//
// An ATS request (core::TlpExt type AtsTranslate, address type TranslationRequest, an 8-byte
// read) is answered by calling Iommu::translate for the PASID in the TlpExt, or `default_pasid`
// when the requester sends PASID 0 (the device's ATC sends none), and encoding one AtsEntry:
// the page (or contiguous run) base and size the IOMMU returns, R = W = 1 on success, R = W = 0
// on an ATS failure. The IOMMU's latency is added to the delay; the root port adds none of its
// own (assumed: its pipeline is part of the link's layer latencies). Memory requests
// (translated or physical addresses) are forwarded unchanged to host memory.
//
// Loosely timed, never waits. Used by the PCIe experiments (platform/pcie_rig.hpp).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <systemc>
#include <tlm>

#include "core/services.hpp"
#include "host/iommu.hpp"

namespace canopy::platform {

class RootPort : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<RootPort> link_target;  // from PcieLink::host_initiator
    // The IOMMU's table walker reaches DRAM through the root complex too (bind
    // Iommu::walk_socket here): HostMemory has one target socket.
    tlm_utils::simple_target_socket<RootPort> walk_target;
    tlm_utils::simple_initiator_socket<RootPort> memory_initiator;  // to HostMemory::socket

    RootPort(sc_core::sc_module_name name, host::Iommu& iommu, uint32_t default_pasid,
             core::Services& services);

    uint64_t ats_requests() const { return ats_requests_; }  // answered so far

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    void walk_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    host::Iommu& iommu_;
    uint32_t default_pasid_;
    uint64_t ats_requests_ = 0;
    core::Counter &ats_, &ats_failures_, &memory_;
    core::TransactionTrace& trace_;
};

}  // namespace canopy::platform
