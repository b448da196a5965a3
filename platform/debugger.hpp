// GDB on the elaborated platform: one remote target (models/cpu/gdb_stub) whose threads are the
// SSD's SPU cores, spu0 ... spuN, all-stop over the whole machine (a stop of any core halts the
// host, the link, the NAND and every other core; simulated time stands still while GDB looks),
// and a GDB script, `gdbinit` beside the run's outputs, that loads the symbols of SPU-OS and of
// every SSD App the host installs, from the ELFs the SPUs really run, at the addresses they are
// linked for (SPU-OS's part of IMEM and DMEM, each app's slot), then connects.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/gdb_stub.hpp"
#include "cpu/rv32_core.hpp"
#include "platform/platform_config.hpp"

namespace canopy::platform {

// A machine GDB killed (`kill`): whatever ran it (an experiment building one machine after
// another) ends there and `canopy` exits 1 saying so. Platform::simulate calls this handler;
// by default it says `why` on stderr and ends the process at once: no exception unwinds
// through a process whose SystemC coroutines ran (AddressSanitizer's stack bookkeeping breaks
// on it), and nothing after a kill needs to run. run_isolated's child sets its own, which
// hands the kill to the parent, which then calls its own (the default).
std::function<void(const std::string& why)>& killed_handler();

class Debugger {
  public:
    // Throws InputError when the port cannot be opened.
    Debugger(const DebugConfig& cfg, const std::vector<cpu::Rv32Core*>& cores,
             const std::vector<std::string>& names, const std::string& firmware, std::ostream& log);
    ~Debugger() { stub_.end(0); }  // a machine an experiment built went quiet: its run is over

    // One more ELF whose symbols the script loads (an SSD App; installed before the run starts).
    void add_symbols(const std::string& elf);
    // Ctrl-C from GDB, between kernel slices (cpu::GdbStub::poll).
    void poll() { stub_.poll(); }
    bool wait_for_interrupt() { return stub_.wait_for_interrupt(); }  // cpu::GdbStub's
    void end(int status) { stub_.end(status); }  // the run is over: GDB hears an exit
    uint16_t port() const { return stub_.port(); }
    bool killed() const { return stub_.killed(); }

  private:
    void write_gdbinit() const;

    DebugConfig cfg_;
    cpu::GdbStub stub_;
    std::vector<std::string> elves_;  // SPU-OS first: `file`; the apps: `add-symbol-file`
    std::ostream& log_;
};

}  // namespace canopy::platform
