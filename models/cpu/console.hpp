// The console of an SPU (models/cpu/spu_map.h): each byte the firmware writes to TX is appended
// to the current line; '\n' ends it and the line is printed as "<owner>: <line>" (owner: the
// core's name, given at construction), so the output of many cores stays readable. A partial line
// is printed at the end of the simulation. Writes of 1 to 4 bytes to TX send their lowest byte;
// reads return 0 (always ready); other offsets in the window are refused.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <iostream>
#include <string>
#include <systemc>
#include <tlm>

#include "core/services.hpp"

namespace canopy::cpu {

class Console : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<Console> socket;

    // `owner` prefixes the lines (the core's name); empty: the name of the module holding the
    // console (the SPU).
    Console(sc_core::sc_module_name name, core::Services& services, std::string owner = "",
            std::ostream& out = std::cout);
    void set_owner(std::string owner) { owner_ = std::move(owner); }
    ~Console() override;

    // Prints the partial line, if any.
    void flush();

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void end_of_simulation() override { flush(); }
    void put(char c);

    std::string owner_;
    std::ostream& out_;
    std::string line_;
    core::Counter &bytes_, &lines_;
};

}  // namespace canopy::cpu
