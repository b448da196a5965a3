// `canopy iss`: an RV32 program on the ISS machine (platform/iss_machine) with the session's
// outputs and, with --gdb, a debugger; the exit status says how the program ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/session.hpp"

namespace canopy::app {

struct IssOptions {
    RunOptions run;  // --config, --set, --out, --vcd, --trace, --quiet, --gdb
    std::string elf;
    std::optional<uint64_t> max_instructions;
};

// Exit status of `canopy iss` when the instruction limit ended the run, when the core went idle
// (a wfi nothing wakes, a stop nobody resumes) and when it was caught in a trap loop (an
// exception with no handler) before the program ended.
constexpr int kIssLimitStatus = 3;
constexpr int kIssIdleStatus = 1;
constexpr int kIssTrapLoopStatus = 4;

// Runs the program; returns the process exit status: the program's exit code (255 for a code
// that does not fit 8 bits), kIssLimitStatus, kIssIdleStatus or kIssTrapLoopStatus. Bad input
// (config, ELF, --gdb without a stub) throws InputError.
int run_iss(const IssOptions& opt);

}  // namespace canopy::app
