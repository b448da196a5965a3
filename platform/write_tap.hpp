// A pass-through between an initiator and the bus that lets a harness see writes to chosen
// address ranges: transport, debug transport, DMI and DMI invalidations go through unchanged,
// except that DMI never covers a watched range (granted ranges are clipped around it, and a
// request inside it is refused for the whole range), so every write there passes the tap. After
// each successful write that touches a watched range, its watcher is called with the bytes
// written. `canopy iss` uses it for the `tohost` word of the RISC-V tests.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

namespace canopy::platform {

class WriteTap : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<WriteTap> target;        // from the initiator
    tlm_utils::simple_initiator_socket<WriteTap> initiator;  // to the bus

    explicit WriteTap(sc_core::sc_module_name name);

    using Watcher = std::function<void(uint64_t addr, const uint8_t* data, unsigned len)>;
    // Watches [addr, addr + len); withdraws any DMI pointer that covers it.
    void watch_writes(uint64_t addr, uint64_t len, Watcher watcher);

  private:
    struct Watch {
        uint64_t lo, hi;  // inclusive
        Watcher watcher;
    };
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
    void invalidate(sc_dt::uint64 start, sc_dt::uint64 end);

    std::vector<Watch> watches_;
};

}  // namespace canopy::platform
