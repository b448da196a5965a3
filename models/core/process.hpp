// Running other programs through /bin/sh (python3 for the figures, sbatch for a sweep): quoting
// an argument, a command's status and output, the line of that output that says why.
#pragma once

#include <string>

namespace canopy::core {

// `s` as one word for /bin/sh, whatever it holds.
std::string shell_quote(const std::string& s);

struct CommandResult {
    int status = -1;  // the exit status; -1 when it could not run or was killed
    std::string output;
};
// Runs `command` with /bin/sh -c, its stdout and stderr read together (add 2>&1 for stderr).
CommandResult run_command(const std::string& command);

// The last line of `text` that is not empty ("" when none): where a program says why it failed.
std::string last_line(const std::string& text);

}  // namespace canopy::core
