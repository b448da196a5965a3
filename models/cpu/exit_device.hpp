// The exit device of an SPU (models/cpu/spu_map.h): writing code C to EXIT ends the program
// with exit code C. The device records the code and the simulated time of the write and calls
// its callback, in which a harness typically calls Rv32Core::notify_exit (the core stops at
// once) and sc_stop(). Reads return the last code; other offsets are refused.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

#include "core/services.hpp"

namespace canopy::cpu {

class ExitDevice : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<ExitDevice> socket;

    ExitDevice(sc_core::sc_module_name name, core::Services& services);

    void on_exit(std::function<void(uint32_t code)> cb) { cb_ = std::move(cb); }
    bool exited() const { return exited_; }
    uint32_t code() const { return code_; }
    sc_core::sc_time time() const { return time_; }  // when the code was written

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    std::function<void(uint32_t)> cb_;
    bool exited_ = false;
    uint32_t code_ = 0;
    sc_core::sc_time time_ = sc_core::SC_ZERO_TIME;
    core::Counter& exits_;
};

}  // namespace canopy::cpu
