#include "experiments/figures.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/process.hpp"

namespace canopy::experiments {

extern const char* const kFiguresScript;  // figures_script.cpp, generated from figures.py

namespace {

// Runs the script with `args`; each line it prints is a file it wrote.
Figures run_script(const std::vector<std::string>& args) {
    Figures f;
    char script[] = "/tmp/canopy-figures-XXXXXX";
    const int fd = mkstemp(script);
    if (fd < 0) return f.error = "cannot write the figures' script to /tmp", f;
    {
        std::ofstream s(script);
        s << kFiguresScript;
    }
    close(fd);
    std::string quoted = core::shell_quote(script);
    for (const std::string& a : args) quoted += " " + core::shell_quote(a);
    // The first python3 that has matplotlib: $CANOPY_PYTHON, the one on PATH (a pyenv or venv
    // may come first there), then Debian's own, where python3-matplotlib installs.
    const std::string cmd =
        "for p in ${CANOPY_PYTHON:-} python3 /usr/bin/python3; do "
        "if \"$p\" -c 'import matplotlib' 2>/dev/null; then exec \"$p\" " +
        quoted +
        " 2>&1; fi; done; echo 'no python3 with matplotlib (tried $CANOPY_PYTHON, python3 on "
        "PATH, /usr/bin/python3)'; exit 3";
    const core::CommandResult r = core::run_command(cmd);
    std::istringstream lines(r.output);
    for (std::string l; std::getline(lines, l);)
        if (!l.empty()) f.files.push_back(l);
    if (r.status != 0) {
        // The last line says why (ModuleNotFoundError: No module named 'matplotlib', ...).
        f.files.clear();
        const std::string why = core::last_line(r.output);
        f.error = why.empty() ? "python3 failed" : why;
    }
    std::remove(script);
    return f;
}

}  // namespace

Figures draw_figures(const std::string& json_path, const std::string& out_dir) {
    return run_script({json_path, out_dir});
}

Figures draw_sweep_plots(const std::string& sweep_json, const std::string& out_dir,
                         const std::vector<std::string>& quantities) {
    std::vector<std::string> args = {"--sweep", sweep_json, out_dir};
    args.insert(args.end(), quantities.begin(), quantities.end());
    return run_script(args);
}

}  // namespace canopy::experiments
