// SystemC elaborates once per process, but an experiment compares several configurations of the
// whole platform (device profiles, contention levels). Each configuration runs in a child process
// of its own with a fresh kernel; its result comes back as JSON.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

namespace canopy::experiments {

// Runs `f` in a forked child and returns what it returned. An InputError in the child is
// rethrown here as itself; any other exception (or the child's death) as std::runtime_error
// with the child's message.
nlohmann::json run_isolated(const std::function<nlohmann::json()>& f);

}  // namespace canopy::experiments
