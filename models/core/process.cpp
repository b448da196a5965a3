#include "core/process.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>

namespace canopy::core {

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

CommandResult run_command(const std::string& command) {
    CommandResult r;
    FILE* p = popen(command.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
    const int status = pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string last_line(const std::string& text) {
    std::string last;
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);)
        if (!l.empty()) last = l;
    return last;
}

}  // namespace canopy::core
