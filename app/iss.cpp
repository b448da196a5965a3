#include "app/iss.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/version.hpp"
#include "platform/debugger.hpp"
#include "platform/iss_machine.hpp"
#include "platform/platform_config.hpp"

namespace canopy::app {

using platform::IssConfig;
using platform::IssEnd;
using platform::IssHarness;

namespace {

std::string hex(uint64_t v) {
    char s[24];
    std::snprintf(s, sizeof s, "0x%08llx", static_cast<unsigned long long>(v));
    return s;
}

}  // namespace

int run_iss(const IssOptions& opt) {
    IssConfig cfg;
    std::vector<std::string> overrides = opt.run.overrides;
    if (opt.max_instructions)
        overrides.push_back("iss.max_instructions=" + std::to_string(*opt.max_instructions));
    const auto params = platform::load_config(cfg, opt.run.config_file, overrides);
    // Check the config, then the program, before building anything: bad input costs nothing.
    IssHarness::memory_map(cfg);
    cpu::ElfImage image(opt.elf);

    core::Services services;
    // The console is the program's output, printed as it comes (`cpu: ...`), not logged: its
    // logger starts off (`--log cpu=info` adds the timed form).
    RunOptions run = opt.run;
    run.log_rules.insert(run.log_rules.begin(), "cpu=off");
    SessionOutputs outputs(run, services);  // before the models, which register waves
    IssHarness iss(cfg, services);
    iss.load(std::move(image));
    iss.cpu.set_instruction_limit(cfg.max_instructions);
    std::unique_ptr<platform::Debugger> debugger;
    if (opt.run.gdb_port)
        debugger = std::make_unique<platform::Debugger>(
            outputs.debug_config(), std::vector<cpu::Rv32Core*>{&iss.cpu},
            std::vector<std::string>{"cpu"}, opt.elf, std::cerr);
    outputs.watch(debugger.get());

    // The run ends where the program ended, at the core's own time: the kernel catches up with
    // the core (which runs ahead of it) and stops there, not at the end of a slice.
    outputs.simulate(
        [&] { return iss.finished() && sc_core::sc_time_stamp() >= iss.cpu.local_time(); },
        sc_core::SC_EXIT_ON_STARVATION);
    outputs.set_end(iss.cpu.local_time());
    iss.console.flush();

    const uint64_t n = iss.cpu.instret();
    const char* end = "idle";
    int status = kIssIdleStatus;
    if (outputs.killed("canopy iss: " + opt.elf, "at pc " + hex(iss.cpu.pc()) + " after " +
                                                     std::to_string(n) + " instructions")) {
        end = "killed";
    } else
        switch (iss.end()) {
            case IssEnd::Exit:
            case IssEnd::ToHost:
                end = iss.end() == IssEnd::Exit ? "exit" : "tohost";
                status = iss.exit_code() > 255 ? 255 : int(iss.exit_code());
                if (!opt.run.quiet)
                    std::cout << "canopy iss: " << opt.elf << ": exit code " << iss.exit_code()
                              << (iss.end() == IssEnd::ToHost ? " (tohost)" : "") << " after " << n
                              << " instructions\n";
                break;
            case IssEnd::InstructionLimit:
                end = "instruction-limit";
                status = kIssLimitStatus;
                std::cerr << "canopy iss: " << opt.elf << ": instruction limit reached: " << n
                          << " instructions retired and " << iss.cpu.trap_entries()
                          << " traps taken, pc " << hex(iss.cpu.pc());
                if (iss.cpu.trap_entries())  // a trap loop shows here
                    std::cerr << ", last trap mcause " << hex(iss.cpu.csr(0x342)) << " at mepc "
                              << hex(iss.cpu.csr(0x341));
                std::cerr << "; the program did not finish\n";
                break;
            case IssEnd::TrapLoop: {
                end = "trap-loop";
                status = kIssTrapLoopStatus;
                auto said = [](const IssHarness::Trap& t) {
                    return std::string(cpu::trap_name(t.mcause)) + " at pc " + hex(t.epc) +
                           " (mcause " + hex(t.mcause) + ", mtval " + hex(t.mtval) + ")";
                };
                const auto& traps = iss.last_traps();
                std::cerr << "canopy iss: " << opt.elf << ": stuck in a trap loop: ";
                if (traps[1] && traps[1]->epc != traps[0]->epc)
                    std::cerr << said(*traps[1]) << " entered the trap handler at mtvec "
                              << hex(iss.cpu.csr(0x305)) << ", and there " << said(*traps[0]);
                else
                    std::cerr << said(*traps[0]) << ", at mtvec " << hex(iss.cpu.csr(0x305));
                std::cerr << " traps to itself: no trap handler is installed; the program did not "
                             "finish\n";
                break;
            }
            case IssEnd::Running:
                std::cerr << "canopy iss: " << opt.elf << ": the core went idle at pc "
                          << hex(iss.cpu.pc()) << " after " << n
                          << " instructions (a wfi nothing wakes, or a stop nobody resumes); the "
                             "program did not finish\n";
                break;
        }

    core::Json header = {{"canopy", core::kVersion},
                         {"elf", opt.elf},
                         {"end", end},
                         {"exit_code", iss.exit_code()},
                         {"instructions", n}};
    outputs.finish(header, params);
    return outputs.exit_status(status);
}

}  // namespace canopy::app
