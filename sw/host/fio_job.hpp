// fio job files (fio(1), "JOB FILE FORMAT"): the common subset a storage researcher's jobs use,
// read into the jobs `canopy fio` runs (scenarios/fio_run). An ini file: a [global] section whose
// options every later job starts from, then one section per job; `key=value` or a bare flag a
// line, ';' or '#' starting a comment. Numbers take fio's suffixes, base 1024 (k, m, g, t, with
// or without i/b: 4k = 4KiB = 4096); times are seconds unless suffixed (us, ms, s, m, h); sizes
// may be a percentage of the device (size=50%).
//
// Modelled: rw (read, write, trim, randread, randwrite, randtrim, rw/readwrite, randrw),
// rwmixread/rwmixwrite, bs, bssplit, iodepth (1 ... 1024), numjobs, size, offset, number_ios,
// runtime, time_based, ramp_time, random_distribution (random, zipf:theta), direct, ioengine,
// filename, name, description, group_reporting, randrepeat, norandommap, thread, write_lat_log,
// write_bw_log, write_iops_log, log_avg_msec, log_offset, rate_iops. `ioengine` picks
// the path: libaio, io_uring or base-io go through Base-IO (the kernel's block device); libdirectio
// or direct-io through Direct-IO (a file, OS bypass). Any other option fio has is refused by name:
// Canopy does not model it, and running without it would measure something else. Also refused:
// rw=trimwrite and randtrimwrite, direct=0 (no host page cache is modelled). rw=trim and
// randtrim send TRIMs of bs bytes (a discard: Base-IO's or Direct-IO's TRIM RPC).
//
// Every error is an InputError naming the file, "line N" and the option.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <utility>
#include <vector>

namespace canopy::sw {

struct FioJob {
    std::string name;  // the section's name (or name=)
    std::string description;
    bool read = true, write = false, random = false;     // rw: the mix and the pattern
    bool trim = false;                                   // rw=trim, randtrim: TRIMs only
    std::string rw = "read";                             // as written, for the report
    uint32_t rwmixread = 50;                             // percent of reads when both
    std::vector<std::pair<uint64_t, uint32_t>> bssplit;  // (block bytes, percent); one: bs
    uint32_t iodepth = 1;
    uint32_t numjobs = 1;
    uint64_t size_bytes = 0;  // 0: the whole device (Base-IO) or required (Direct-IO)
    double size_percent = 0;  // size=N%: of the device
    uint64_t offset_bytes = 0;
    uint64_t number_ios = 0;  // 0: until size bytes (or runtime)
    double runtime_ns = 0;    // simulated; 0: none
    bool time_based = false;
    double ramp_ns = 0;
    double zipf_theta = 0;   // 0: uniform random
    bool direct_io = false;  // ioengine: the Direct-IO path (else Base-IO)
    std::string ioengine = "libaio";
    std::string filename;  // Direct-IO: the file (default /fio.<name>.<n>)
    bool randrepeat = true;
    uint32_t fsync = 0;  // a flush of the SSD's write cache after every fsync writes; 0: none
    // The same for fdatasync (on a block device it syncs the same data: a flush), counted apart.
    uint32_t fdatasync = 0;
    bool end_fsync = false;  // a flush when the job's writes are done
    // sync=1 (sync, dsync): the device opened O_SYNC: every write carries FUA, durable when it
    // completes (on a block device O_SYNC and O_DSYNC ask the same).
    bool sync_writes = false;
    // fio's logs (write_lat_log, write_bw_log, write_iops_log), into the run's --out folder
    // (scenarios/fio_logs.hpp): on, and the files' prefix (empty: the job's name).
    struct Log {
        bool on = false;
        std::string prefix;
    };
    Log lat_log, bw_log, iops_log;
    // rate_iops: each direction's I/Os at most this many per second (fio's linear rate
    // process: its k-th I/O not before k / rate_iops s); 0: no cap.
    uint32_t rate_iops = 0;
    uint32_t log_avg_msec = 0;  // 0: a line per I/O; else a window's mean (lat) or rate (bw, iops)
    bool log_offset = false;    // each line also names the I/O's offset
    uint32_t line = 0;          // its section's line, for messages
    uint64_t min_bs() const;
    uint64_t max_bs() const;
};

struct FioJobFile {
    std::string source;
    std::vector<FioJob> jobs;  // in file order (numjobs not expanded)
    bool group_reporting = false;
};

// Bounds the reader keeps to (each refused beyond, naming the option).
inline constexpr uint32_t kFioMaxNumjobs = 64;
inline constexpr uint64_t kFioMaxBlockBytes = 1ull << 20;  // bs: 512 B ... 1 MiB
inline constexpr uint64_t kFioMinBlockBytes = 512;

FioJobFile read_fio_job_file(const std::string& path);
FioJobFile parse_fio_job_file(std::istream& in, const std::string& source);

// fio's number syntax ("4k", "1m", "512", "2GiB"), base 1024; InputError(source, place, ...)
// naming `option` when it is not one or is above `max`.
uint64_t parse_fio_size(const std::string& text, const std::string& source,
                        const std::string& place, const std::string& option, uint64_t max);
// fio's time syntax: seconds unless suffixed us, ms, s, m, h; in ns.
double parse_fio_time(const std::string& text, const std::string& source, const std::string& place,
                      const std::string& option);

}  // namespace canopy::sw
