#include "experiments/isolated.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "platform/debugger.hpp"

namespace canopy::experiments {

namespace {
IsolatedBatch* open_batch = nullptr;
}

IsolatedBatch::IsolatedBatch(std::string experiment, std::string console_dir,
                             std::ostream* progress)
    : experiment_(std::move(experiment)),
      console_dir_(std::move(console_dir)),
      progress_(progress) {
    open_batch = this;
}

IsolatedBatch::~IsolatedBatch() { open_batch = nullptr; }

double IsolatedBatch::seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

nlohmann::json run_isolated(const std::function<nlohmann::json()>& f, const std::string& what) {
    std::string console_dir;
    if (IsolatedBatch* b = open_batch) {
        const unsigned n = ++b->started_;
        if (b->progress_) {
            char t[32];
            std::snprintf(t, sizeof t, "%.1f s", b->seconds());
            *b->progress_ << b->experiment_ << ": [" << n << "] "
                          << (what.empty() ? "" : what + " ") << "(" << t << " so far)"
                          << std::endl;
        }
        if (!b->console_dir_.empty()) console_dir = b->console_dir_ + "/" + std::to_string(n);
    }
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("run_isolated: pipe failed");
    std::fflush(nullptr);  // nothing buffered is printed twice
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("run_isolated: fork failed");
    if (pid == 0) {
        close(fds[0]);
        // The child's machine keeps its SPU consoles here (every Log starts from the default).
        if (!console_dir.empty()) core::Log::set_default_console_dir(console_dir);
        // A kill by GDB goes back to the parent as the result, without unwinding here.
        auto send = [&](const std::string& out) {
            for (size_t done = 0; done < out.size();) {
                const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
                if (n <= 0) break;
                done += size_t(n);
            }
            std::fflush(nullptr);
            _exit(0);
        };
        platform::killed_handler() = [&](const std::string& why) {
            send(nlohmann::json{{"error", why}, {"killed", true}}.dump());
        };
        std::string out;
        try {
            out = nlohmann::json{{"result", f()}}.dump();
        } catch (const InputError& e) {  // comes back as itself: the user's input was wrong
            out = nlohmann::json{{"error", e.what()},
                                 {"input_error", {e.input(), e.place(), e.message()}}}
                      .dump();
        } catch (const SimulationError& e) {  // so does a failure of the simulated machine
            out = nlohmann::json{{"error", e.what()}, {"simulation", true}}.dump();
        } catch (const std::exception& e) {
            out = nlohmann::json{{"error", e.what()}}.dump();
        }
        send(out);
    }
    close(fds[1]);
    std::string in;
    char buf[65536];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) in.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.empty())
        throw std::runtime_error("run_isolated: the child process died (status " +
                                 std::to_string(status) + ")");
    auto j = nlohmann::json::parse(in);
    if (j.contains("input_error")) {
        const auto& e = j["input_error"];
        throw InputError(e[0].get<std::string>(), e[1].get<std::string>(), e[2].get<std::string>());
    }
    if (j.contains("killed")) platform::killed_handler()(j["error"].get<std::string>());
    if (j.contains("simulation")) throw SimulationError(j["error"].get<std::string>());
    if (j.contains("error")) throw std::runtime_error(j["error"].get<std::string>());
    return j["result"];
}

}  // namespace canopy::experiments
