// neoDBMS's lock table shared by host and device over CCIX (CCIX-vs-PCIe paper Section V): a
// host core and the device's lock module (threads issuing CCIX atomics through the request
// agent) lock and unlock record versions of a small table in pinned huge-page host memory of
// one process. Used by the lock-table experiment and the default scenario. Build it before
// sc_start; read result() after.
#pragma once

#include <cstdint>

#include "platform/platform.hpp"
#include "sw/host/lock_table.hpp"

namespace canopy::platform {

struct LockTableRunConfig {
    unsigned host_core = 0;
    unsigned locks = 100;      // the host's lock requests
    unsigned workers = 1;      // device requests in flight (0: the device stays idle)
    double device_gap_ns = 0;  // each worker's pause between its requests
    // Each side picks the record of every request at random (its own stream of this seed), so
    // that host and device meet as often as chance has it: fixed strides through the records
    // locked the two sides into a phase that a nanosecond anywhere on the path could change.
    uint64_t seed = 1;
};

class LockTableRun {
  public:
    struct Result {
        bool finished = false;
        double host_ns = 0, device_ns = 0;  // mean request time (to holding the ticket)
        uint64_t host_locks = 0, device_locks = 0;
        uint64_t double_grants = 0;  // a lock held by two at once: must stay 0
    };

    LockTableRun(Platform& platform, host::HostKernel::Process& proc, LockTableRunConfig cfg);
    const Result& result() const { return result_; }

  private:
    template <class Work>
    void critical(uint64_t record, Work&& work);

    sw::LockTableLayout table_;
    bool host_over_ = false;  // the host program ended (finished or faulted)
    int holders_[16] = {};
    double host_sum_ = 0, device_sum_ = 0;
    Result result_;
};

}  // namespace canopy::platform
