// SystemC elaborates once per process, but an experiment compares several configurations of the
// whole platform (device profiles, contention levels). Each configuration runs in a child process
// of its own with a fresh kernel; its result comes back as JSON.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace canopy::experiments {

// Runs `f` in a forked child and returns what it returned; `what` says which configuration it
// is (for the progress line). An InputError in the child is rethrown here as itself; any other
// exception (or the child's death) as std::runtime_error with the child's message.
nlohmann::json run_isolated(const std::function<nlohmann::json()>& f, const std::string& what = "");

// While one is open (run_experiment opens one per experiment), the configurations run_isolated
// starts are numbered from 1: configuration N keeps its SPU consoles in CONSOLE_DIR/N/ (not on
// the terminal), and a line on `progress` (null: none) says what starts, its number and the time
// so far.
class IsolatedBatch {
  public:
    IsolatedBatch(std::string experiment, std::string console_dir, std::ostream* progress);
    ~IsolatedBatch();
    IsolatedBatch(const IsolatedBatch&) = delete;
    IsolatedBatch& operator=(const IsolatedBatch&) = delete;
    unsigned started() const { return started_; }
    double seconds() const;

  private:
    friend nlohmann::json run_isolated(const std::function<nlohmann::json()>&, const std::string&);
    std::string experiment_, console_dir_;
    std::ostream* progress_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    unsigned started_ = 0;
};

}  // namespace canopy::experiments
