// fio job files run on the whole platform (`canopy fio`): each job of a job file (sw/host/fio_job)
// times numjobs is a host program on a core of its own, after the stack's kernel
// (platform/willow_stack), keeping up to iodepth I/Os in flight through an asynchronous engine
// (sw/host/io_engine) over Willow's HREs: Base-IO jobs on the kernel's block device (the whole
// device, as fio on /dev/nvme0n1: the file system on it is overwritten), Direct-IO jobs on a file
// each, created in the file system and opened with libDirectIO. The SPUs run SPU-OS and its FTL
// as firmware; every I/O crosses the link, the bridge, the ring and the flash.
//
// Choices where fio leaves room: offsets are aligned to the I/O's block size; sequential jobs
// wrap at the end of their region; a random job draws uniformly (or Zipf, hashed over the blocks
// as fio does) with replacement (norandommap); rw mixes draw each I/O's direction; a job ends at
// number_ios, else after size bytes (unless time_based), else at runtime (simulated), whichever
// comes first; ramp_time runs before the measured time and its I/Os are not counted. Latencies:
// slat is the submission (its system call, on Base-IO), clat the submission's end to the
// completion's reaping, lat both.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "platform/willow_stack.hpp"
#include "scenarios/fio_logs.hpp"
#include "sw/host/block_io.hpp"
#include "sw/host/fio_job.hpp"

namespace canopy::scenarios {

class FioRun {
  public:
    static constexpr unsigned kKernelCore = 0;  // the stack's kernel; the jobs follow it

    // Starts a program per job instance on host cores kKernelCore + 1 ... (before sc_start).
    // Throws InputError (naming the job file and the job's line) for jobs the machine cannot
    // run: more instances than host cores after the kernel's, a region past the device, Base-IO
    // and Direct-IO jobs in one file. `file` outlives the run.
    FioRun(platform::Platform& platform, platform::WillowStack& stack, const sw::FioJobFile& file,
           uint64_t seed);

    bool finished() const { return finished_ == instances_.size(); }
    // fio's JSON output (--output-format=json), field names as fio's, with Canopy's own in
    // "canopy" (the flash's write amplification and GC over the run).
    nlohmann::json report() const;
    // fio's normal output for `r`.
    void print(std::ostream& out, const nlohmann::json& r) const;

    // fio's log files the jobs ask for (write_lat_log, ...), into `dir`: made from the I/Os the
    // run recorded, after it (scenarios/fio_logs.hpp).
    void write_logs(const std::string& dir) const;

    using Sample = FioSample;

  private:
    struct Instance {
        const sw::FioJob* job = nullptr;
        unsigned index = 0;                          // among the job's numjobs
        uint64_t region_base = 0, region_bytes = 0;  // Base-IO: device; Direct-IO: file
        std::vector<Sample> samples;                 // after ramp_time
        std::vector<double> syncs_ns;                // fsync, fdatasync and end_fsync flushes, each
        double measured_from_ns = 0, end_ns = 0;
        std::string error;
        bool started = false;  // counted in started_
    };
    void run(host::HostCore& cpu, Instance& in);
    nlohmann::json job_json(const std::vector<const Instance*>& group,
                            const std::string& name) const;

    platform::Platform& platform_;
    platform::WillowStack& stack_;
    const sw::FioJobFile& file_;
    const uint64_t seed_;
    std::vector<Instance> instances_;
    unsigned running_ = 0, finished_ = 0, started_ = 0;
    sw::StoreStats before_, after_;
    bool counted_ = false;
};

}  // namespace canopy::scenarios
