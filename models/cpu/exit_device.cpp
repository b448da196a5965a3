#include "cpu/exit_device.hpp"

#include <cstring>

#include "cpu/spu_map.h"

namespace canopy::cpu {

ExitDevice::ExitDevice(sc_core::sc_module_name name, core::Services& services)
    : sc_module(name),
      socket("socket"),
      exits_(services.stats.counter(this->name(), "exits", "exit codes written")) {
    socket.register_b_transport(this, &ExitDevice::b_transport);
}

void ExitDevice::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const unsigned len = gp.get_data_length();
    if (gp.get_address() != SPU_EXIT_CODE || len == 0 || len > 4 || gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_write()) {
        uint32_t code = 0;
        std::memcpy(&code, gp.get_data_ptr(), len);
        code_ = code;
        exited_ = true;
        time_ = sc_core::sc_time_stamp() + delay;
        exits_.add();
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        if (cb_) cb_(code);
        return;
    }
    if (gp.is_read()) std::memcpy(gp.get_data_ptr(), &code_, len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace canopy::cpu
