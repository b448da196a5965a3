// The console of an SPU (models/cpu/spu_map.h): each byte the firmware writes to TX is appended
// to the current line; '\n' ends it. A line is logged at info level by the owner's logger
// (the core's name, given at construction, or the SPU's: `device.ssd.spu3`), so `--quiet` or
// `--log` rules silence or keep it; it is also kept whole, whatever the level, in the run's
// console directory (`OUT/console/spu3.log`) and in `transcript` when one is given. A partial
// line is written at the end of the simulation. Writes of 1 to 4 bytes to TX send their lowest
// byte; reads return 0 (always ready); other offsets in the window are refused.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
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
            std::ostream& transcript = core::no_stream());
    ~Console() override;

    // Prints the partial line, if any.
    void flush();

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void end_of_simulation() override { flush(); }
    void put(char c, const sc_core::sc_time& at);
    void write_line(const std::string& suffix, const sc_core::sc_time& at);

    core::Services& services_;
    std::string owner_;
    std::ostream& transcript_;
    core::Logger log_;
    std::unique_ptr<std::ofstream> file_;  // OUT/console/<owner>.log, opened at the first line
    std::string line_;
    core::Counter &bytes_, &lines_;
};

}  // namespace canopy::cpu
