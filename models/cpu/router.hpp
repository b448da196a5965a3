// The local interconnect of an SPU: an address decoder from one initiator (the core) to the
// memories and devices of models/cpu/spu_map.h. Each target sees addresses relative to its own
// base. Forwards b_transport, debug transport and DMI requests, translating the granted DMI
// ranges back into the initiator's addresses and clipping them to the target's window, and
// passes targets' DMI invalidations back to the initiator. Takes no time itself. An address no
// target covers gets TLM_ADDRESS_ERROR_RESPONSE (the core turns it into an access fault).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

namespace canopy::cpu {

class Router : public sc_core::sc_module {
  public:
    struct Mapping {
        std::string name;  // for messages
        uint64_t base, size;
    };

    tlm_utils::simple_target_socket<Router> target;
    // One port per mapping, in the order given; bind port[i] to the target of map[i].
    sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<Router>> port;

    // Throws std::invalid_argument for an empty or overlapping mapping.
    Router(sc_core::sc_module_name name, std::vector<Mapping> map);

    const std::vector<Mapping>& map() const { return map_; }
    // The index of the mapping holding `addr`, or -1.
    int decode(uint64_t addr) const;

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    void invalidate(int id, sc_dt::uint64 start, sc_dt::uint64 end);

    std::vector<Mapping> map_;
    std::vector<size_t> by_base_;  // mapping indices sorted by base
};

}  // namespace canopy::cpu
