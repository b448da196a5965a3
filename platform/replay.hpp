// `canopy replay`: a block I/O trace (MSR Cambridge CSV, sw/host/block_trace) replayed from host
// programs through the Willow stack (platform/willow_stack) on the whole platform: SPU-OS on
// every SPU, the host kernel on host.core0, `threads` replay programs on the next cores taking
// the trace's requests in order, each one at a time. Through Base-IO a request is a transfer of
// the kernel's block device; through Direct-IO it is a pread/pwrite of one file with
// libDirectIO. Offsets beyond the replayed region fold into it (modulo its size), which the
// report says. Reports IOPS, bandwidth and latency percentiles per direction (and the original
// system's recorded response times beside them), in replay.json and on the terminal, with the
// run's stats.json.
#pragma once

#include <optional>
#include <string>

#include "platform/session.hpp"

namespace canopy::platform {

struct ReplayOptions {
    RunOptions run;
    std::string trace;
    std::string path = "base-io";  // or "direct-io"
    std::optional<uint32_t> disk;
    std::optional<size_t> max_requests;
    unsigned threads = 2;
    bool timed = false;  // issue each request no earlier than its timestamp (open loop)
};

// Returns the exit status: 0, or 1 when a replay program faulted. Input errors (the trace, the
// options) throw InputError before anything is built.
int run_replay(const ReplayOptions& opt);

}  // namespace canopy::platform
