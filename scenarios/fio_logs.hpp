// fio's log files (fio(1), "LOG FILE FORMATS"; write_lat_log, write_bw_log, write_iops_log,
// log_avg_msec, log_offset), made from a job instance's I/Os after the run, so that logging
// cannot change the simulation. As fio 3.x writes them: PREFIX_lat.N.log, PREFIX_clat.N.log,
// PREFIX_slat.N.log, PREFIX_bw.N.log and PREFIX_iops.N.log, N the instance's number from 1 in
// file order (numjobs counted, as fio's thread number); a line is "time, value, ddir, bs, prio"
// (", offset" before prio with log_offset): time in ms since the job's measured start (ramp_time
// over), latencies in ns, ddir 0 read, 1 write, 2 trim, prio 0 (no I/O priorities).
//
// Per I/O (log_avg_msec=0): lat, clat and bw lines come at completion, slat lines at issue; bw is
// the I/O's bytes over its clat (bytes per ms, as fio computes it), iops 1. With log_avg_msec=M,
// a latency log writes the mean of a direction's window (rounded to the ns) at the first I/O that
// ends M ms or more after the window's start (M-aligned), with bs and offset 0, and the windows
// left at the job's end; the bw (KiB/s) and iops logs write each direction's rate over every M ms
// from the start (bs: the job's block size when it has one, else 0), and over the partial last
// interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sw/host/block_io.hpp"
#include "sw/host/fio_job.hpp"

namespace canopy::scenarios {

// One I/O as fio accounts it, times from the instance's measured start (after ramp_time).
struct FioSample {
    sw::BlockOp op;
    double start_ns, slat_ns, clat_ns;  // issued at start + slat, completed at that + clat
    uint64_t bytes, offset;
};

// Writes the logs `job` asks for of instance `number` (from 1) into `dir`; `end_ns`: the job's
// end, from the same start. Throws std::runtime_error naming a file it cannot write.
void write_fio_logs(const std::string& dir, const sw::FioJob& job, unsigned number,
                    const std::vector<FioSample>& samples, double end_ns);

}  // namespace canopy::scenarios
