// fio job files on the whole platform; see fio_run.hpp.
#include "scenarios/fio_run.hpp"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "scenarios/io_report.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/io_engine.hpp"
#include "sw/host/zipf.hpp"

namespace canopy::scenarios {

using nlohmann::json;
using platform::WillowStack;

namespace {

// fio's default percentile list.
constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

std::string place_of(const sw::FioJob& j) {
    return "line " + std::to_string(j.line) + ", job " + j.name;
}

json summary(std::vector<double> v, bool percentiles) {
    json j = {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", v.size()}};
    if (v.empty()) return j;
    std::sort(v.begin(), v.end());
    double sum = 0, sq = 0;
    for (double x : v) sum += x;
    const double mean = sum / double(v.size());
    for (double x : v) sq += (x - mean) * (x - mean);
    j["min"] = uint64_t(std::llround(v.front()));
    j["max"] = uint64_t(std::llround(v.back()));
    j["mean"] = mean;
    j["stddev"] = v.size() > 1 ? std::sqrt(sq / double(v.size() - 1)) : 0.0;
    if (percentiles) {
        json p = json::object();
        for (double q : kPercentiles) {
            char key[32];
            std::snprintf(key, sizeof key, "%f", q);
            p[key] = uint64_t(std::llround(percentile(v, q)));
        }
        j["percentile"] = p;
    }
    return j;
}

// fio's "sync" block: the fsync calls and their latencies.
json sync_json(const std::vector<double>& syncs_ns) {
    return {{"total_ios", syncs_ns.size()}, {"lat_ns", summary(syncs_ns, true)}};
}

json direction(const std::vector<const FioRun::Sample*>& s, double runtime_ns) {
    std::vector<double> slat, clat, lat;
    uint64_t bytes = 0;
    for (const FioRun::Sample* x : s) {
        slat.push_back(x->slat_ns);
        clat.push_back(x->clat_ns);
        lat.push_back(x->slat_ns + x->clat_ns);
        bytes += x->bytes;
    }
    const double secs = runtime_ns / 1e9;
    return {{"io_bytes", bytes},
            {"io_kbytes", bytes / 1024},
            {"bw_bytes", secs > 0 ? uint64_t(double(bytes) / secs) : 0},
            {"bw", secs > 0 ? uint64_t(double(bytes) / 1024 / secs) : 0},
            {"iops", secs > 0 ? double(s.size()) / secs : 0.0},
            {"runtime", uint64_t(std::llround(runtime_ns / 1e6))},
            {"total_ios", s.size()},
            {"short_ios", 0},
            {"drop_ios", 0},
            {"slat_ns", summary(slat, false)},
            {"clat_ns", summary(clat, true)},
            {"lat_ns", summary(lat, false)}};
}

}  // namespace

FioRun::FioRun(platform::Platform& platform, WillowStack& stack, const sw::FioJobFile& file,
               uint64_t seed)
    : platform_(platform), stack_(stack), file_(file), seed_(seed) {
    const uint64_t device = stack_.kernel.geometry().device_bytes();
    bool base_io = false, direct_io = false;
    for (const sw::FioJob& j : file_.jobs) {
        (j.direct_io ? direct_io : base_io) = true;
        if (base_io && direct_io)
            throw InputError(file_.source, place_of(j),
                             "Base-IO and Direct-IO jobs in one file: the Base-IO jobs write the "
                             "whole block device, the Direct-IO jobs' files and the file system "
                             "included; run them in separate files");
        // The region: [offset, offset + size) of the device, or of the job's file.
        uint64_t size = j.size_bytes;
        if (j.size_percent > 0) size = uint64_t(double(device) * j.size_percent / 100.0);
        if (size == 0 && j.direct_io)
            throw InputError(file_.source, place_of(j),
                             "a Direct-IO job needs size= (its file is created that large)");
        if (size == 0) size = j.offset_bytes < device ? device - j.offset_bytes : 0;
        size -= size % j.min_bs();
        const uint64_t limit = j.direct_io ? device / 2 : device;  // a file fits the fs's half
        if (size < j.max_bs() || j.offset_bytes > limit || size > limit - j.offset_bytes)
            throw InputError(file_.source, place_of(j),
                             "offset " + std::to_string(j.offset_bytes) + " + size " +
                                 std::to_string(size) + " B does not fit the " +
                                 std::string(j.direct_io ? "file system's " : "device's ") +
                                 std::to_string(limit) + " B (or holds no block of " +
                                 std::to_string(j.max_bs()) + " B)");
        for (unsigned i = 0; i < j.numjobs; ++i) {
            Instance in;
            in.job = &j;
            in.index = i;
            in.region_base = j.offset_bytes;
            in.region_bytes = size;
            instances_.push_back(in);
        }
    }
    const size_t cores = platform_.host.cores.size();
    if (instances_.size() + kKernelCore + 1 > cores)
        throw InputError(file_.source, "",
                         std::to_string(instances_.size()) +
                             " job instances (numjobs counted) need as many host cores after "
                             "the kernel's; host.cores is " +
                             std::to_string(cores) + " (--set host.cores=N, at most 15)");
    for (size_t k = 0; k < instances_.size(); ++k) {
        Instance& in = instances_[k];
        auto& proc = platform_.host.kernel.create_process("fio." + in.job->name + "." +
                                                          std::to_string(in.index));
        platform_.host.cores[kKernelCore + 1 + k]->run(proc, [this, &in](host::HostCore& cpu) {
            const WillowStack::User user(stack_, running_);
            stack_.wait_ready(cpu);
            try {
                run(cpu, in);
            } catch (const host::HostFault& f) {
                if (in.error.empty()) in.error = f.what();
                if (!in.started) ++started_, in.started = true;  // keep nobody waiting for it
            }
            if (++finished_ == instances_.size()) after_ = stack_.store_stats(cpu), counted_ = true;
        });
    }
}

void FioRun::run(host::HostCore& cpu, Instance& in) {
    const sw::FioJob& j = *in.job;
    const auto& proc = cpu.process();
    std::unique_ptr<sw::DirectIo> dio;
    int fd = -1;
    if (j.direct_io) {
        std::string path = j.filename.empty() ? "/fio." + j.name : j.filename;
        if (j.numjobs > 1 || j.filename.empty()) path += "." + std::to_string(in.index);
        stack_.fs.create(cpu, path, in.region_base + in.region_bytes, proc.pid, 0600);
        dio = stack_.direct_io(cpu);
        fd = dio->open(path, O_RDWR);
    }
    sw::IoEngineConfig ec = j.direct_io
                                ? sw::IoEngineConfig::direct_io(j.iodepth)
                                : sw::IoEngineConfig::base_io(j.iodepth, stack_.driver.config());
    ec.block.fua_writes = j.sync_writes;
    sw::IoEngine engine(cpu, stack_.driver, !j.direct_io,
                        j.direct_io ? stack_.cfg.direct_io_app : stack_.cfg.base_io_app,
                        stack_.kernel.geometry(), ec);
    // All instances start together, after the first has read the flash's counters.
    const size_t first = size_t(&in - instances_.data());
    ++started_, in.started = true;
    while (started_ < instances_.size()) cpu.compute_ns(1000);
    if (first == 0) before_ = stack_.store_stats(cpu);

    core::Rng rng(core::derive_seed(seed_, "fio." + j.name + "." + std::to_string(in.index)));
    const uint64_t max_bs = j.max_bs(), min_bs = j.min_bs();
    std::unique_ptr<sw::ZipfGenerator> zipf;
    if (j.random && j.zipf_theta > 0)
        zipf = std::make_unique<sw::ZipfGenerator>(in.region_bytes / min_bs, j.zipf_theta);
    std::vector<std::vector<uint8_t>> buffers(j.iodepth, std::vector<uint8_t>(max_bs));
    for (auto& b : buffers)  // fio's default: random contents, filled once
        for (auto& x : b) x = uint8_t(rng());
    std::vector<size_t> free_buffers;
    for (size_t i = j.iodepth; i-- > 0;) free_buffers.push_back(i);
    struct Pending {
        size_t buffer;
        double start_ns, slat_ns;
        uint64_t offset;  // in the file (Direct-IO) or the device (Base-IO), as fio logs it
    };
    std::map<uint64_t, Pending> pending;

    const double ramp_end = cpu.now_ns() + j.ramp_ns;
    const double stop =
        j.runtime_ns > 0 ? ramp_end + j.runtime_ns : std::numeric_limits<double>::infinity();
    in.measured_from_ns = ramp_end;
    uint64_t issued = 0, issued_bytes = 0, seq = 0;
    bool failed = false;
    auto more = [&] {
        if (failed || cpu.now_ns() >= stop) return false;
        if (j.number_ios) return issued < j.number_ios;
        return j.time_based || issued_bytes < in.region_bytes;
    };
    auto pick_bs = [&] {
        if (j.bssplit.size() == 1) return j.bssplit[0].first;
        uint32_t r = uint32_t(rng() % 100);
        for (const auto& [b, pct] : j.bssplit) {
            if (r < pct) return b;
            r -= pct;
        }
        return j.bssplit.back().first;
    };
    auto collect = [&](const sw::IoEngine::Done& d) {
        const Pending p = pending.at(d.id);
        pending.erase(d.id);
        free_buffers.push_back(p.buffer);
        if (!d.error.empty()) {  // fio stops a job at its first error
            if (in.error.empty()) in.error = d.error;
            failed = true;
            return;
        }
        if (p.start_ns >= ramp_end)
            in.samples.push_back({d.op, p.start_ns - ramp_end, p.slat_ns,
                                  d.complete_ns - d.submit_ns, d.bytes, p.offset});
    };
    // fio's fsync and fdatasync (on the device the same: its data): the writes issued complete,
    // then the SSD's write cache is flushed (a system call of the block layer: STORE_FLUSH on
    // every SPU).
    auto drain = [&] {
        while (engine.in_flight())
            for (const sw::IoEngine::Done& d : engine.reap(1)) collect(d);
    };
    auto sync = [&] {
        drain();
        const double t0 = cpu.now_ns();
        stack_.flush_store(cpu);
        in.syncs_ns.push_back(cpu.now_ns() - t0);
    };
    // rate_iops, as fio's linear rate process with inline submission: a direction's k-th I/O
    // since the schedule's start goes no earlier than k / rate_iops s after it. The direction
    // rwmix drew goes when due; else the other one, if due; else the job reaps every I/O in
    // flight (io_u_quiesce) and sleeps until the sooner of the two. The schedule restarts when
    // ramp_time is over, as fio's reset of its counters does.
    std::array<uint64_t, 3> rate_ios{};  // by direction: 0 read, 1 write, 2 trim
    double rate_start = cpu.now_ns();
    bool rate_restarted = false;
    auto due_ns = [&](int d) {
        const uint64_t k = rate_ios[size_t(d)], n = j.rate_iops;
        // fio's usec_for_io: bytes over bytes per second, or 1/rate per I/O with a bssplit.
        const uint64_t us =
            j.bssplit.size() == 1 ? k / n * 1000000 + k % n * 1000000 / n : k * (1000000 / n);
        return rate_start + double(us) * 1e3;
    };
    uint64_t since_fsync = 0, since_fdatasync = 0, writes = 0;
    while (true) {
        while (engine.in_flight() < j.iodepth && more()) {
            bool write = j.write && (!j.read || rng() % 100 >= j.rwmixread);
            if (j.rate_iops) {
                if (!rate_restarted && cpu.now_ns() >= ramp_end)
                    rate_ios = {}, rate_start = cpu.now_ns(), rate_restarted = true;
                const int d = j.trim ? 2 : write, o = j.trim ? 2 : !write;
                const bool other = j.read && j.write && (o ? j.rwmixread < 100 : j.rwmixread > 0);
                if (cpu.now_ns() < due_ns(d)) {
                    if (other && cpu.now_ns() >= due_ns(o)) {
                        write = o == 1;
                    } else {
                        drain();
                        double t = due_ns(d);
                        if (other && due_ns(o) < t) t = due_ns(o), write = o == 1;
                        if (t > cpu.now_ns()) cpu.compute_ns(std::min(t, stop) - cpu.now_ns());
                        if (!more()) break;  // the runtime ended meanwhile
                    }
                }
                ++rate_ios[j.trim ? 2 : write];
            }
            const sw::BlockOp op = j.trim  ? sw::BlockOp::Trim
                                   : write ? sw::BlockOp::Write
                                           : sw::BlockOp::Read;
            const uint64_t bs = pick_bs();
            uint64_t off;
            if (!j.random) {
                if (seq + bs > in.region_bytes) seq = 0;  // wrap
                off = seq;
                seq += bs;
            } else if (zipf) {
                off = (*zipf)(rng)*min_bs;
                off = std::min(off - off % bs, in.region_bytes - bs);
            } else {
                off = rng() % (in.region_bytes / bs) * bs;
            }
            const std::vector<sw::DeviceRange> ranges =
                dio ? dio->ranges(fd, in.region_base + off, bs,
                                  op == sw::BlockOp::Read ? SPU_OS_PERM_READ : SPU_OS_PERM_WRITE)
                    : std::vector<sw::DeviceRange>{{in.region_base + off, 0, bs}};
            const size_t buffer = free_buffers.back();
            free_buffers.pop_back();
            const double s = cpu.now_ns();
            const uint64_t id = engine.submit(op, ranges, buffers[buffer].data());
            pending[id] = {buffer, s, cpu.now_ns() - s, in.region_base + off};
            ++issued, issued_bytes += bs;
            if (write) ++writes;
            // fio counts fsync's and fdatasync's writes apart; a write may end both periods.
            if (write && j.fsync && ++since_fsync == j.fsync) sync(), since_fsync = 0;
            if (write && j.fdatasync && ++since_fdatasync == j.fdatasync)
                sync(), since_fdatasync = 0;
        }
        if (engine.in_flight() == 0) break;
        for (const sw::IoEngine::Done& d : engine.reap(1)) collect(d);
    }
    if (j.end_fsync && writes && !failed) sync();
    in.end_ns = cpu.now_ns();
    engine.close();
    if (dio) dio->close(fd);
}

void FioRun::write_logs(const std::string& dir) const {
    unsigned number = 0;  // fio's thread number: every instance, from 1, in file order
    for (const Instance& in : instances_)
        write_fio_logs(dir, *in.job, ++number, in.samples, in.end_ns - in.measured_from_ns);
}

json FioRun::job_json(const std::vector<const Instance*>& group, const std::string& name) const {
    std::vector<const Sample*> reads, writes, trims;
    std::vector<double> syncs;
    double from = std::numeric_limits<double>::infinity(), to = 0;
    std::string error;
    for (const Instance* in : group) {
        for (const Sample& s : in->samples)
            (s.op == sw::BlockOp::Write  ? writes
             : s.op == sw::BlockOp::Trim ? trims
                                         : reads)
                .push_back(&s);
        syncs.insert(syncs.end(), in->syncs_ns.begin(), in->syncs_ns.end());
        from = std::min(from, in->measured_from_ns);
        to = std::max(to, in->end_ns);
        if (error.empty()) error = in->error;
    }
    const double runtime = to > from ? to - from : 0;
    const sw::FioJob& j = *group.front()->job;
    json opts = {{"rw", j.rw},
                 {"iodepth", std::to_string(j.iodepth)},
                 {"ioengine", j.ioengine},
                 {"numjobs", std::to_string(j.numjobs)}};
    if (j.bssplit.size() == 1) opts["bs"] = std::to_string(j.bssplit[0].first);
    if (j.sync_writes) opts["sync"] = "1";
    return {{"jobname", name},
            {"groupid", 0},
            {"error", error.empty() ? 0 : 5},  // EIO
            {"canopy_error", error},
            {"job options", opts},
            {"read", direction(reads, runtime)},
            {"write", direction(writes, runtime)},
            {"trim", direction(trims, runtime)},
            {"sync", sync_json(syncs)},
            {"job_runtime", uint64_t(std::llround(runtime / 1e6))}};
}

json FioRun::report() const {
    json jobs = json::array();
    if (file_.group_reporting) {
        std::vector<const Instance*> all;
        for (const Instance& in : instances_) all.push_back(&in);
        if (!all.empty()) jobs.push_back(job_json(all, all.front()->job->name));
    } else {
        for (const Instance& in : instances_) jobs.push_back(job_json({&in}, in.job->name));
    }
    json r = {{"fio version", "canopy (fio job-file subset)"},
              {"global options", json::object()},
              {"jobs", jobs}};
    json c = {{"job_file", file_.source},
              {"device_bytes", stack_.kernel.geometry().device_bytes()},
              {"write_amplification", nullptr},
              {"gc", nullptr}};
    if (stack_.on_flash && counted_) {
        double bytes = 0;
        for (const Instance& in : instances_)
            for (const Sample& s : in.samples)
                bytes += s.op == sw::BlockOp::Write ? double(s.bytes) : 0.0;
        add_flash_report(c, before_, after_, platform_.cfg.nand.geometry.page_bytes, bytes);
    }
    add_precondition_report(c, stack_);
    r["canopy"] = c;
    return r;
}

void FioRun::print(std::ostream& out, const json& r) const {
    char line[512];
    for (const json& j : r["jobs"]) {
        std::snprintf(line, sizeof line, "%s: (groupid=0): err=%2d: %s\n",
                      j["jobname"].get<std::string>().c_str(), j["error"].get<int>(),
                      j["canopy_error"].get<std::string>().c_str());
        out << line;
        for (const char* d : {"read", "write", "trim"}) {
            const json& x = j[d];
            if (x["total_ios"].get<uint64_t>() == 0) continue;
            const double mib = double(x["bw_bytes"].get<uint64_t>()) / 1048576.0;
            std::snprintf(line, sizeof line,
                          "  %5s: IOPS=%.0f, BW=%.1fMiB/s (%.1fMB/s)(%.1fMiB/%llumsec)\n", d,
                          x["iops"].get<double>(), mib, double(x["bw_bytes"].get<uint64_t>()) / 1e6,
                          double(x["io_bytes"].get<uint64_t>()) / 1048576.0,
                          (unsigned long long)x["runtime"].get<uint64_t>());
            out << line;
            for (const char* l : {"slat_ns", "clat_ns", "lat_ns"}) {
                const json& s = x[l];
                std::snprintf(line, sizeof line,
                              "    %4s (usec): min=%.1f, max=%.1f, avg=%.2f, stdev=%.2f\n",
                              std::string(l, 4).substr(0, std::string(l).find('_')).c_str(),
                              s["min"].get<double>() / 1e3, s["max"].get<double>() / 1e3,
                              s["mean"].get<double>() / 1e3, s["stddev"].get<double>() / 1e3);
                out << line;
            }
            out << "     clat percentiles (usec):\n";
            int n = 0;
            std::string row = "      |";
            for (double q : kPercentiles) {
                std::snprintf(line, sizeof line, "%f", q);
                const double v = x["clat_ns"]["percentile"][line].get<double>();
                std::snprintf(line, sizeof line, " %5.2fth=[%7.1f],", q, v / 1e3);
                row += line;
                if (++n % 4 == 0) out << row << "\n", row = "      |";
            }
            if (n % 4) out << row << "\n";
        }
        const json& sy = j["sync"];
        if (sy["total_ios"].get<uint64_t>()) {
            std::snprintf(line, sizeof line,
                          "  fsync/fdatasync/sync_file_range:\n    sync (usec): min=%.1f, "
                          "max=%.1f, avg=%.2f, stdev=%.2f (%llu)\n",
                          sy["lat_ns"]["min"].get<double>() / 1e3,
                          sy["lat_ns"]["max"].get<double>() / 1e3,
                          sy["lat_ns"]["mean"].get<double>() / 1e3,
                          sy["lat_ns"]["stddev"].get<double>() / 1e3,
                          (unsigned long long)sy["total_ios"].get<uint64_t>());
            out << line;
        }
    }
    print_precondition_report(out, r["canopy"], "");
    print_flash_report(out, r["canopy"], "",
                       stack_.on_flash ? "the jobs did not finish" : "the store is SSD memory");
}

}  // namespace canopy::scenarios
