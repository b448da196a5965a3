#include "cpu/console.hpp"

#include "cpu/spu_map.h"

namespace canopy::cpu {

Console::Console(sc_core::sc_module_name name, core::Services& services, std::string owner,
                 std::ostream& out)
    : sc_module(name),
      socket("socket"),
      owner_(std::move(owner)),
      out_(out),
      bytes_(services.stats.counter(this->name(), "bytes", "bytes written to TX")),
      lines_(services.stats.counter(this->name(), "lines", "lines printed")) {
    if (owner_.empty()) {
        const sc_core::sc_object* parent = get_parent_object();
        owner_ = parent ? parent->name() : this->name();
    }
    socket.register_b_transport(this, &Console::b_transport);
}

Console::~Console() { flush(); }

void Console::flush() {
    if (line_.empty()) return;
    // The program stopped (ended, was killed) before it ended this line: say so.
    out_ << owner_ << ": " << line_ << " [line cut short]\n" << std::flush;
    lines_.add();
    line_.clear();
}

void Console::put(char c) {
    bytes_.add();
    if (c == '\n') {
        out_ << owner_ << ": " << line_ << "\n" << std::flush;
        lines_.add();
        line_.clear();
    } else if (c != '\r') {
        line_ += c;
    }
}

void Console::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    const uint64_t off = gp.get_address();
    const unsigned len = gp.get_data_length();
    if (off != SPU_CONSOLE_TX || len == 0 || len > 4 || gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_write())
        put(char(gp.get_data_ptr()[0]));
    else if (gp.is_read())
        std::fill_n(gp.get_data_ptr(), len, uint8_t(0));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace canopy::cpu
