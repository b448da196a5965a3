#include "experiments/figures.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace canopy::experiments {

extern const char* const kFiguresScript;  // figures_script.cpp, generated from figures.py

namespace {

// Quotes `s` for /bin/sh.
std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

}  // namespace

Figures draw_figures(const std::string& json_path, const std::string& out_dir) {
    Figures f;
    char script[] = "/tmp/canopy-figures-XXXXXX";
    const int fd = mkstemp(script);
    if (fd < 0) return f.error = "cannot write the figures' script to /tmp", f;
    {
        std::ofstream s(script);
        s << kFiguresScript;
    }
    close(fd);
    // The first python3 that has matplotlib: $CANOPY_PYTHON, the one on PATH (a pyenv or venv
    // may come first there), then Debian's own, where python3-matplotlib installs.
    const std::string cmd =
        "for p in ${CANOPY_PYTHON:-} python3 /usr/bin/python3; do "
        "if \"$p\" -c 'import matplotlib' 2>/dev/null; then exec \"$p\" " +
        shell_quote(script) + " " + shell_quote(json_path) + " " + shell_quote(out_dir) +
        " 2>&1; fi; done; echo 'no python3 with matplotlib (tried $CANOPY_PYTHON, python3 on "
        "PATH, /usr/bin/python3)'; exit 3";
    std::string output;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
        const int status = pclose(p);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            // The last line says why (ModuleNotFoundError: No module named 'matplotlib', ...).
            std::string last;
            std::istringstream lines(output);
            for (std::string l; std::getline(lines, l);)
                if (!l.empty()) last = l;
            f.error = last.empty() ? "python3 failed" : last;
        } else {
            std::istringstream lines(output);
            for (std::string l; std::getline(lines, l);)
                if (!l.empty()) f.files.push_back(l);
        }
    } else {
        f.error = "cannot start python3";
    }
    std::remove(script);
    return f;
}

}  // namespace canopy::experiments
