// A debugger session from a test: canopy in the background with --gdb, and Debian's
// gdb-multiarch in batch mode on scripts (tests/app/gdb_test.cpp, tests/app/sdk_test.cpp).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace canopy_test {

// `canopy` (the build's, or `binary`) in the background; with --gdb its stderr names the port
// the stub listens on.
struct Background {
    pid_t pid = -1;
    std::string err;
    Background(const std::string& args, const std::string& dir,
               const std::string& binary = std::string(CANOPY_BINARY_DIR) + "/canopy")
        : err(dir + "/canopy.err") {
        pid = fork();
        if (pid == 0) {
            std::string cmd =
                binary + " " + args + " >" + dir + "/canopy.out 2>" + err + " </dev/null";
            execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    int port(int seconds) const {
        std::regex re("listening on localhost:([0-9]+)");
        for (int i = 0; i < seconds * 20; ++i) {
            std::smatch m;
            std::string text = read_text(err);
            if (std::regex_search(text, m, re)) return std::stoi(m[1]);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return -1;
    }
    // The exit status, or -1 after `seconds` (then the process is killed).
    int wait_exit(int seconds) {
        for (int i = 0; i < seconds * 20; ++i) {
            int st = 0;
            if (waitpid(pid, &st, WNOHANG) == pid)
                return pid = -1, WIFEXITED(st) ? WEXITSTATUS(st) : -2;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        pid = -1;
        return -1;
    }
    ~Background() {
        if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
    }
};

inline bool have_gdb() { return std::system("command -v gdb-multiarch >/dev/null 2>&1") == 0; }

// gdb-multiarch in batch mode on the `-x` scripts, its output kept in DIR/gdb.out.
struct GdbRun {
    int status;
    std::string log;
};
inline GdbRun gdb_batch(const std::string& dir, const std::vector<std::string>& scripts,
                        int timeout_s) {
    std::string cmd = "timeout " + std::to_string(timeout_s) + " gdb-multiarch -nx -batch";
    for (const std::string& x : scripts) cmd += " -x " + x;
    const std::string out = dir + "/gdb.out";
    const int rc = std::system((cmd + " >" + out + " 2>&1").c_str());
    return {WEXITSTATUS(rc), read_text(out)};
}

}  // namespace canopy_test
