// The host's CCIX home agent (HA) port (CCIX-vs-PCIe paper, seeds/003 Section III-A: "the HA acts
// as the owner of physical memory and provides coherent access to it"; on the N1-SDP it is the
// CMN-600's CCIX gateway in front of the home node). It makes the device's request agent one
// requester of the host's coherent home (core::CoherentHome, the HomeNode in a platform, passed
// as the interface so that link does not depend on host):
//
//   VC1 requests from the host-side VcRouter -> `link_target` -> home.request(...) -> completion
//   home snoops the RA -> proxy Snoopable::snoop -> CcixSnoop on VC1 -> `snoop_initiator`
//                         (toward the link's host_target) -> answer in the completion
//
// One RA (the paper's direct host-device topology): it is attached to the home at construction.
// Message format and transport: link/ccix_message.hpp. Device atomics are far atomics performed at
// the home (HomeNode executes them in its SLC after taking the line from every cache, the RA's
// included, by a snoop back over the link).
//
// Timing (loosely timed, CcixConfig::ha): request_ns per request, on top of the home's own time;
// snoop_ns per snoop, on top of the link both ways and the RA's handling. Never waits.
// Trace ("ccix" category): a slice per request received, in the flow of the RA's access, which
// the home node's request and its snoops join.
//
// A malformed or unknown message, a message on the wrong command (a posted request as a read, a
// non-posted one as a write), a length that does not match its opcode, an unaligned line address
// or an atomic that is misaligned or leaves the line gets TLM_GENERIC_ERROR_RESPONSE; an address
// the home cannot serve (beyond memory) TLM_ADDRESS_ERROR_RESPONSE. Each is counted (`errors`)
// with the reason in last_error(). A snoop the link or the RA refuses is a wiring error of the
// platform: it throws std::logic_error naming the cause.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>

#include "core/coherence.hpp"
#include "core/services.hpp"
#include "link/ccix_config.hpp"
#include "link/ccix_message.hpp"
#include "link/ccix_transaction.hpp"

namespace canopy::link {

class HomeAgent : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<HomeAgent> link_target;         // VC1 from the host VcRouter
    tlm_utils::simple_initiator_socket<HomeAgent> snoop_initiator;  // VC1 toward host_target

    HomeAgent(sc_core::sc_module_name name, const CcixConfig& cfg, core::CoherentHome& home,
              core::Services& services);
    ~HomeAgent() override;

    unsigned requester_id() const { return id_; }  // the RA's id at the home
    const std::string& last_error() const { return last_error_; }

  private:
    class Proxy;
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // Decodes and checks a request; "" or what is wrong.
    std::string check(const tlm::tlm_generic_payload& gp, CcixHeader& h,
                      core::AtomicRequest& a) const;
    core::SnoopResponse snoop(core::SnoopKind kind, uint64_t line, uint8_t* data,
                              sc_core::sc_time& delay);
    bool peek_dirty(uint64_t line, uint8_t* data);
    void refuse(tlm::tlm_generic_payload& gp, tlm::tlm_response_status status,
                const std::string& why);

    CcixConfig cfg_;
    core::CoherentHome& home_;
    std::unique_ptr<Proxy> proxy_;
    unsigned id_;
    sc_core::sc_time request_, snoop_time_;
    uint16_t tag_ = 0;
    CcixTransactionPool snoop_transactions_;  // the snoops' payloads, reused
    std::string last_error_;
    core::Counter* requests_[core::kCohRequests];
    core::Counter &snoops_, &snoop_data_, &errors_;
    core::Distribution &request_latency_, &snoop_latency_;
    core::Services& services_;
    int track_;
};

}  // namespace canopy::link
