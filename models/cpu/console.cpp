#include "cpu/console.hpp"

#include <filesystem>

#include "cpu/spu_map.h"

namespace canopy::cpu {

Console::Console(sc_core::sc_module_name name, core::Services& services, std::string owner,
                 std::ostream& transcript)
    : sc_module(name),
      socket("socket"),
      services_(services),
      owner_(!owner.empty()        ? std::move(owner)
             : get_parent_object() ? get_parent_object()->name()
                                   : this->name()),
      transcript_(transcript),
      log_(services.log, owner_),
      bytes_(services.stats.counter(this->name(), "bytes", "bytes written to TX")),
      lines_(services.stats.counter(this->name(), "lines", "lines printed")) {
    socket.register_b_transport(this, &Console::b_transport);
}

Console::~Console() { flush(); }

void Console::write_line(const std::string& suffix, const sc_core::sc_time& at) {
    transcript_ << owner_ << ": " << line_ << suffix << "\n" << std::flush;
    if (!file_ && !services_.log.console_dir().empty()) {
        std::filesystem::create_directories(services_.log.console_dir());
        const std::string path =
            services_.log.console_dir() + "/" + owner_.substr(owner_.rfind('.') + 1) + ".log";
        file_ = std::make_unique<std::ofstream>(path);
    }
    if (file_) *file_ << line_ << suffix << "\n" << std::flush;
    log_(core::LogLevel::Info, line_ + suffix, at);
    lines_.add();
    line_.clear();
}

void Console::flush() {
    // The program stopped (ended, was killed) before it ended this line: say so.
    if (!line_.empty()) write_line(" [line cut short]", sc_core::sc_time_stamp());
}

void Console::put(char c, const sc_core::sc_time& at) {
    bytes_.add();
    if (c == '\n')
        write_line("", at);
    else if (c != '\r')
        line_ += c;
}

void Console::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t off = gp.get_address();
    const unsigned len = gp.get_data_length();
    if (off != SPU_CONSOLE_TX || len == 0 || len > 4 || gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.is_write())
        put(char(gp.get_data_ptr()[0]), sc_core::sc_time_stamp() + delay);  // the core's time
    else if (gp.is_read())
        std::fill_n(gp.get_data_ptr(), len, uint8_t(0));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace canopy::cpu
