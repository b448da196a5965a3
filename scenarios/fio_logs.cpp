// fio's log files; see fio_logs.hpp.
#include "scenarios/fio_logs.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>

namespace canopy::scenarios {

namespace {

unsigned ddir_of(sw::BlockOp op) {
    return op == sw::BlockOp::Write ? 1 : op == sw::BlockOp::Trim ? 2 : 0;
}

uint64_t ms_of(double ns) { return ns > 0 ? uint64_t(ns / 1e6) : 0; }

// One log file: its lines as fio prints them.
class LogFile {
  public:
    LogFile(const std::string& path, bool offsets) : path_(path), out_(path), offsets_(offsets) {
        if (!out_) throw std::runtime_error("cannot write the fio log " + path_);
    }
    void line(uint64_t ms, uint64_t value, unsigned ddir, uint64_t bs, uint64_t offset) {
        char b[128];
        int n = std::snprintf(b, sizeof b, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64, ms, value,
                              ddir, bs);
        if (offsets_) n += std::snprintf(b + n, sizeof b - size_t(n), ", %" PRIu64, offset);
        std::snprintf(b + n, sizeof b - size_t(n), ", 0\n");
        out_ << b;
    }
    void close() {
        out_.close();
        if (!out_) throw std::runtime_error("cannot write the fio log " + path_);
    }

  private:
    std::string path_;
    std::ofstream out_;
    bool offsets_;
};

// A latency log: a line per value, or per direction's window of avg_ms.
class LatencyLog {
  public:
    LatencyLog(const std::string& path, bool offsets, uint64_t avg_ms)
        : file_(path, offsets), avg_ms_(avg_ms) {}
    void add(uint64_t ms, double value_ns, unsigned ddir, uint64_t bs, uint64_t offset) {
        const auto value = uint64_t(std::llround(value_ns));
        if (!avg_ms_) return file_.line(ms, value, ddir, bs, offset);
        Window& w = windows_[ddir];
        w.sum += double(value), ++w.n;
        if (ms - w.start_ms >= avg_ms_) {
            flush(ms, ddir);
            w.start_ms = ms - ms % avg_ms_;
        }
    }
    void finish(uint64_t end_ms) {
        for (unsigned d = 0; d < windows_.size(); ++d)
            if (windows_[d].n) flush(end_ms, d);
        file_.close();
    }

  private:
    struct Window {
        double sum = 0;
        uint64_t n = 0, start_ms = 0;
    };
    void flush(uint64_t ms, unsigned ddir) {
        Window& w = windows_[ddir];
        file_.line(ms, uint64_t(w.sum / double(w.n) + 0.5), ddir, 0, 0);  // fio's rounding
        w.sum = 0, w.n = 0;
    }
    LogFile file_;
    uint64_t avg_ms_;
    std::array<Window, 3> windows_;
};

// The bw or iops log over windows of avg_ms: each direction's rate in every window it moved in.
void rate_log(const std::string& path, const sw::FioJob& job, const std::vector<FioSample>& s,
              uint64_t avg_ms, uint64_t end_ms, bool bw) {
    LogFile f(path, job.log_offset);
    const uint64_t bs = job.bssplit.size() == 1 ? job.bssplit[0].first : 0;
    const uint64_t windows = end_ms / avg_ms + (end_ms % avg_ms ? 1 : 0);
    std::vector<std::array<uint64_t, 3>> bytes(windows), ios(windows);  // per direction
    for (const FioSample& x : s) {
        if (!windows) break;  // a job of less than a ms: nothing to rate
        const uint64_t k =
            std::min(ms_of(x.start_ns + x.slat_ns + x.clat_ns) / avg_ms, windows - 1);
        bytes[k][ddir_of(x.op)] += x.bytes, ++ios[k][ddir_of(x.op)];
    }
    for (uint64_t k = 0; k < windows; ++k) {
        const uint64_t t = std::min(end_ms, (k + 1) * avg_ms), spent = t - k * avg_ms;
        for (unsigned d = 0; d < 3; ++d)
            if (bytes[k][d] && spent)
                f.line(t, bw ? bytes[k][d] * 1000 / spent / 1024 : ios[k][d] * 1000 / spent, d, bs,
                       0);
    }
    f.close();
}

}  // namespace

void write_fio_logs(const std::string& dir, const sw::FioJob& job, unsigned number,
                    const std::vector<FioSample>& samples, double end_ns) {
    auto path = [&](const sw::FioJob::Log& l, const char* type) {
        return dir + "/" + (l.prefix.empty() ? job.name : l.prefix) + "_" + type + "." +
               std::to_string(number) + ".log";
    };
    const uint64_t avg = job.log_avg_msec, end_ms = ms_of(end_ns);
    auto done_ms = [](const FioSample& x) { return ms_of(x.start_ns + x.slat_ns + x.clat_ns); };
    if (job.lat_log.on) {
        LatencyLog lat(path(job.lat_log, "lat"), job.log_offset, avg);
        LatencyLog clat(path(job.lat_log, "clat"), job.log_offset, avg);
        for (const FioSample& x : samples) {  // in the order they completed
            clat.add(done_ms(x), x.clat_ns, ddir_of(x.op), x.bytes, x.offset);
            lat.add(done_ms(x), x.slat_ns + x.clat_ns, ddir_of(x.op), x.bytes, x.offset);
        }
        lat.finish(end_ms), clat.finish(end_ms);
        // slat at issue: in the order they were issued.
        std::vector<const FioSample*> issued;
        for (const FioSample& x : samples) issued.push_back(&x);
        std::stable_sort(issued.begin(), issued.end(), [](const FioSample* a, const FioSample* b) {
            return a->start_ns + a->slat_ns < b->start_ns + b->slat_ns;
        });
        LatencyLog slat(path(job.lat_log, "slat"), job.log_offset, avg);
        for (const FioSample* x : issued)
            slat.add(ms_of(x->start_ns + x->slat_ns), x->slat_ns, ddir_of(x->op), x->bytes,
                     x->offset);
        slat.finish(end_ms);
    }
    for (const bool bw : {true, false}) {
        const sw::FioJob::Log& l = bw ? job.bw_log : job.iops_log;
        if (!l.on) continue;
        if (avg) {
            rate_log(path(l, bw ? "bw" : "iops"), job, samples, avg, end_ms, bw);
            continue;
        }
        LogFile f(path(l, bw ? "bw" : "iops"), job.log_offset);
        for (const FioSample& x : samples) {
            const auto clat = uint64_t(std::llround(x.clat_ns));
            f.line(done_ms(x), bw ? (clat ? x.bytes * 1000000 / clat : 0) : 1, ddir_of(x.op),
                   x.bytes, x.offset);
        }
        f.close();
    }
}

}  // namespace canopy::scenarios
