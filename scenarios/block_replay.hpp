// Block-trace replay on the whole platform (`canopy replay`): a block I/O trace (MSR Cambridge
// CSV, sw/host/block_trace) replayed from host programs through the Willow stack
// (platform/willow_stack): SPU-OS on every SPU, the host kernel on host.core0, `threads` replay
// programs on the next cores taking the trace's requests in order, each keeping up to iodepth
// in flight (one at a time by default). Through
// Base-IO a request is a transfer of the kernel's block device; through Direct-IO it is a
// pread/pwrite of one file with libDirectIO. Offsets beyond the replayed region fold into it
// (modulo its size), which the report says. The report: IOPS, bandwidth and latency percentiles
// per direction (and the original system's recorded response times beside them), and the flash
// store's write amplification and GC when the store is on the flash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "platform/willow_stack.hpp"
#include "sw/host/block_trace.hpp"

namespace canopy::scenarios {

struct BlockReplayConfig {
    std::string path = "base-io";  // or "direct-io"
    unsigned threads = 2;
    bool timed = false;  // issue each request no earlier than its timestamp (open loop)
    // Requests each thread keeps in flight: 1, one at a time through the kernel's (or the
    // process's) HRE; more, through an asynchronous engine (sw/host/io_engine) of its own.
    uint32_t iodepth = 1;
};

class BlockReplay {
  public:
    static constexpr unsigned kKernelCore = 0;  // the stack's kernel; replay threads follow it

    // Starts the replay programs on host cores kKernelCore + 1 .. + threads (before sc_start);
    // the stack's kernel must have been started on kKernelCore. `trace` outlives the replay.
    BlockReplay(platform::Platform& platform, platform::WillowStack& stack,
                const sw::BlockTrace& trace, BlockReplayConfig cfg);

    // Every thread got to the end of the trace.
    bool finished() const { return finished_ == cfg_.threads; }
    // The result (after the run), as replay.json holds it.
    nlohmann::json report() const;
    // The terminal report of `r` (report()), with the first host fault if any.
    void print(std::ostream& out, const nlohmann::json& r) const;

    struct Done {  // one request, as it went
        double start_ns, end_ns;
        bool write;
        uint64_t bytes, recorded_ns;
    };

  private:
    // The requests taken from the trace until it ends, `iodepth` at once on an I/O engine.
    void run_async(host::HostCore& cpu, sw::DirectIo* dio, int fd);
    // Where request `r` goes: its offset folded into the region, on the device (`dio` null) or
    // in the replay's file.
    uint64_t place(const sw::BlockRequest& r) const;
    // Waits for the request's timestamp (--timed).
    void wait_until_due(host::HostCore& cpu, const sw::BlockRequest& r) const;
    platform::Platform& platform_;
    platform::WillowStack& stack_;
    const sw::BlockTrace& trace_;
    const BlockReplayConfig cfg_;
    host::HostKernel::Process& proc_;
    uint64_t region_ = 0, base_ = 0, folded_ = 0;
    std::vector<Done> done_;
    size_t next_ = 0;
    unsigned running_ = 0, finished_ = 0;
    bool file_ready_ = false, started_ = false;
    sw::StoreStats before_, after_;  // the flash store's counters around the replay
    double t0_ = -1;
};

}  // namespace canopy::scenarios
