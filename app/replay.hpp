// `canopy replay`: a block I/O trace (MSR Cambridge CSV) replayed on the whole platform
// (scenarios/block_replay), with the session's outputs: replay.json and the terminal report
// beside the run's stats.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "app/session.hpp"

namespace canopy::app {

struct ReplayOptions {
    RunOptions run;
    std::string trace;
    std::string path = "base-io";  // or "direct-io"
    std::optional<uint32_t> disk;
    std::optional<size_t> max_requests;
    unsigned threads = 2;
    bool timed = false;    // issue each request no earlier than its timestamp (open loop)
    uint32_t iodepth = 1;  // requests in flight per thread
};

// Returns the exit status: 0, or 1 when a replay program faulted. Input errors (the trace, the
// options) throw InputError before anything is built.
int run_replay(const ReplayOptions& opt);

}  // namespace canopy::app
