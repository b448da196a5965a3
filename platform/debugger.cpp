#include "platform/debugger.hpp"

#include <cstdlib>
#include <iostream>

#include <filesystem>
#include <fstream>

namespace canopy::platform {

std::function<void(const std::string&)>& killed_handler() {
    static std::function<void(const std::string&)> handler = [](const std::string& why) {
        std::cout.flush();
        std::cerr << "canopy: " << why << std::endl;
        std::_Exit(1);
    };
    return handler;
}

Debugger::Debugger(const DebugConfig& cfg, const std::vector<cpu::Rv32Core*>& cores,
                   const std::vector<std::string>& names, const std::string& firmware,
                   std::ostream& log)
    : cfg_(cfg), stub_(cores, cfg.gdb_port.value_or(0), log, names), log_(log) {
    elves_.push_back(firmware);
    stub_.before_waiting([this] { write_gdbinit(); });
}

void Debugger::add_symbols(const std::string& elf) { elves_.push_back(elf); }

// Once, with every app's ELF known, before GDB is told where to connect.
void Debugger::write_gdbinit() const {
    if (cfg_.gdbinit.empty()) return;
    std::ofstream f(cfg_.gdbinit);
    if (!f) {  // the output directory was writable when the run began: say so and go on
        log_ << "canopy: cannot write " << cfg_.gdbinit << "; load the symbols by hand"
             << std::endl;
        return;
    }
    auto absolute = [](const std::string& p) { return std::filesystem::absolute(p).string(); };
    f << "# Written by canopy for this run: gdb-multiarch -x " << cfg_.gdbinit << "\n"
      << "# SPU-OS, then each SSD App at the slot it is linked for; threads are the SPU cores.\n"
      << "set architecture riscv:rv32\n"
      << "set confirm off\n"  // add-symbol-file would ask for each app
      << "file " << absolute(elves_.front()) << "\n";
    // The apps are linked at their slots' addresses, so their sections load where they sit.
    for (size_t i = 1; i < elves_.size(); ++i)
        f << "add-symbol-file " << absolute(elves_[i]) << "\n";
    f << "set confirm on\n"
      << "target remote localhost:" << port() << "\n";
}

}  // namespace canopy::platform
