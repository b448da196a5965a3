#include "scenarios/block_replay.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "core/error.hpp"
#include "scenarios/io_report.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/io_engine.hpp"

namespace canopy::scenarios {

using nlohmann::json;
using platform::WillowStack;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

json direction(const std::vector<BlockReplay::Done>& done, bool write, double span_ns) {
    std::vector<double> lat, rec;
    uint64_t bytes = 0;
    for (const BlockReplay::Done& d : done)
        if (d.write == write) {
            lat.push_back(d.end_ns - d.start_ns);
            rec.push_back(double(d.recorded_ns));
            bytes += d.bytes;
        }
    std::sort(lat.begin(), lat.end());
    std::sort(rec.begin(), rec.end());
    json j = {{"requests", lat.size()},
              {"bytes", bytes},
              {"iops", span_ns > 0 ? double(lat.size()) / span_ns * 1e9 : 0.0},
              {"mb_per_s", span_ns > 0 ? double(bytes) / span_ns * 1e3 : 0.0}};
    for (double p : {50.0, 95.0, 99.0, 100.0}) {
        const std::string k = p == 100.0 ? "max" : "p" + std::to_string(int(p));
        j["latency_us"][k] = percentile(lat, p) / 1000.0;
        j["recorded_us"][k] = percentile(rec, p) / 1000.0;
    }
    double sum = 0;
    for (double v : lat) sum += v;
    j["latency_us"]["mean"] = lat.empty() ? 0.0 : sum / double(lat.size()) / 1000.0;
    return j;
}

void print_table(std::ostream& out, const json& r) {
    char line[220];
    std::snprintf(line, sizeof line, "%-6s %8s %10s %10s %9s %9s %9s %9s %9s\n", "", "requests",
                  "IOPS", "MB/s", "mean us", "p50 us", "p95 us", "p99 us", "max us");
    out << line;
    for (const char* d : {"read", "write"}) {
        const json& j = r[d];
        std::snprintf(line, sizeof line, "%-6s %8llu %10.0f %10.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                      d, (unsigned long long)j["requests"].get<uint64_t>(), j["iops"].get<double>(),
                      j["mb_per_s"].get<double>(), j["latency_us"]["mean"].get<double>(),
                      j["latency_us"]["p50"].get<double>(), j["latency_us"]["p95"].get<double>(),
                      j["latency_us"]["p99"].get<double>(), j["latency_us"]["max"].get<double>());
        out << line;
    }
}

}  // namespace

BlockReplay::BlockReplay(platform::Platform& platform, platform::WillowStack& stack,
                         const sw::BlockTrace& trace, BlockReplayConfig cfg)
    : platform_(platform),
      stack_(stack),
      trace_(trace),
      cfg_(std::move(cfg)),
      proc_(platform.host.kernel.create_process("replay")) {
    // The replayed region: the trace's span, up to half the device (the file system's metadata
    // and files sit in the lower half; Base-IO replays into the upper half).
    const uint64_t device = stack_.kernel.geometry().device_bytes();
    const uint64_t span = (trace_.span_bytes() + kMiB - 1) / kMiB * kMiB;
    region_ = std::min(span, device / 2);
    base_ = cfg_.path == "base-io" ? device / 2 : 0;
    for (const auto& r : trace_.requests) {
        if (r.size_bytes > region_)
            throw InputError(trace_.source, "line " + std::to_string(r.line),
                             "a request of " + std::to_string(r.size_bytes) +
                                 " B is larger than the replayed region of " +
                                 std::to_string(region_) +
                                 " B (the trace's span, at most half "
                                 "of the device's " +
                                 std::to_string(device) + " B)");
        folded_ += r.offset_bytes + r.size_bytes > region_;
    }

    done_.reserve(trace_.requests.size());
    for (unsigned t = 0; t < cfg_.threads; ++t) {
        platform_.host.cores[kKernelCore + 1 + t]->run(proc_, [this, t](host::HostCore& cpu) {
            const WillowStack::User user(stack_, running_);
            stack_.wait_ready(cpu);
            std::unique_ptr<sw::DirectIo> dio;
            int fd = -1;
            if (cfg_.path == "direct-io") {
                if (t == 0)
                    stack_.fs.create(cpu, "/replay", region_, proc_.pid, 0600), file_ready_ = true;
                while (!file_ready_) cpu.compute_ns(1000);
                dio = stack_.direct_io(cpu);
                fd = dio->open("/replay", O_RDWR);
            }
            // Thread 0 reads the store's counters once the file system is done; all start then.
            if (t == 0) before_ = stack_.store_stats(cpu), started_ = true;
            while (!started_) cpu.compute_ns(1000);
            if (cfg_.iodepth > 1) {
                if (t0_ < 0) t0_ = cpu.now_ns();
                run_async(cpu, dio.get(), fd);
            } else {
                sw::BlockIo& io = *stack_.kernel.on(cpu).base_io;
                if (t0_ < 0) t0_ = cpu.now_ns();
                std::vector<uint8_t> buf;
                while (next_ < trace_.requests.size()) {
                    const sw::BlockRequest& r = trace_.requests[next_++];
                    wait_until_due(cpu, r);
                    const uint64_t off = place(r);
                    buf.resize(r.size_bytes);
                    if (r.write)
                        for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(r.line + i);
                    const double s = cpu.now_ns();
                    if (dio)
                        r.write ? dio->pwrite(fd, buf.data(), r.size_bytes, off)
                                : dio->pread(fd, buf.data(), r.size_bytes, off);
                    else if (r.write)
                        io.write(base_ + off, buf.data(), r.size_bytes);
                    else
                        io.read(base_ + off, buf.data(), r.size_bytes);
                    done_.push_back({s, cpu.now_ns(), r.write, r.size_bytes, r.response_ns});
                }
            }
            if (dio) dio->close(fd);
            if (++finished_ == cfg_.threads) after_ = stack_.store_stats(cpu);
        });
    }
}

uint64_t BlockReplay::place(const sw::BlockRequest& r) const {
    // Offsets past the region fold into it; a request never straddles its end.
    uint64_t off = r.offset_bytes % region_;
    if (off + r.size_bytes > region_) off = region_ - std::min(region_, r.size_bytes);
    return off;
}

void BlockReplay::wait_until_due(host::HostCore& cpu, const sw::BlockRequest& r) const {
    if (!cfg_.timed) return;
    const double at = t0_ + double(r.time_ns), now = cpu.now_ns();
    if (at > now) cpu.compute_ns(at - now);
}

void BlockReplay::run_async(host::HostCore& cpu, sw::DirectIo* dio, int fd) {
    const sw::IoEngineConfig ec =
        dio ? sw::IoEngineConfig::direct_io(cfg_.iodepth)
            : sw::IoEngineConfig::base_io(cfg_.iodepth, stack_.driver.config());
    sw::IoEngine engine(cpu, stack_.driver, !dio,
                        dio ? stack_.cfg.direct_io_app : stack_.cfg.base_io_app,
                        stack_.kernel.geometry(), ec);
    struct Flying {
        const sw::BlockRequest* r;
        double start_ns;
        std::vector<uint8_t> buf;
    };
    std::map<uint64_t, Flying> flying;
    auto reap = [&](size_t min) {
        for (const sw::IoEngine::Done& d : engine.reap(min)) {
            const Flying& f = flying.at(d.id);
            if (!d.error.empty()) throw host::HostFault(d.error);
            done_.push_back(
                {f.start_ns, d.complete_ns, f.r->write, f.r->size_bytes, f.r->response_ns});
            flying.erase(d.id);
        }
    };
    while (next_ < trace_.requests.size()) {
        if (engine.in_flight() == cfg_.iodepth) {
            reap(1);
            continue;
        }
        const sw::BlockRequest& r = trace_.requests[next_++];
        // --timed: completions are taken while the request is not yet due.
        while (cfg_.timed && engine.in_flight() && cpu.now_ns() < t0_ + double(r.time_ns)) {
            const size_t before = done_.size();
            reap(0);
            if (done_.size() == before)
                cpu.compute_ns(
                    std::min(t0_ + double(r.time_ns) - cpu.now_ns(), sw::HreConfig().poll_gap_ns));
        }
        wait_until_due(cpu, r);
        const uint64_t off = place(r);
        Flying f{&r, cpu.now_ns(), std::vector<uint8_t>(r.size_bytes)};
        if (r.write)
            for (size_t i = 0; i < f.buf.size(); ++i) f.buf[i] = uint8_t(r.line + i);
        const std::vector<sw::DeviceRange> ranges =
            dio ? dio->ranges(fd, off, r.size_bytes, r.write ? SPU_OS_PERM_WRITE : SPU_OS_PERM_READ)
                : std::vector<sw::DeviceRange>{{base_ + off, 0, r.size_bytes}};
        const uint64_t id =
            engine.submit(r.write ? sw::BlockOp::Write : sw::BlockOp::Read, ranges, f.buf.data());
        flying.emplace(id, std::move(f));
    }
    while (engine.in_flight()) reap(1);
    engine.close();
}

json BlockReplay::report() const {
    double first = 1e300, last = 0;
    for (const Done& d : done_)
        first = std::min(first, d.start_ns), last = std::max(last, d.end_ns);
    const double span_ns = done_.empty() ? 0 : last - first;
    json r = {{"trace", trace_.source},
              {"path", cfg_.path},
              {"threads", cfg_.threads},
              {"iodepth", cfg_.iodepth},
              {"timed", cfg_.timed},
              {"requests", done_.size()},
              {"region_bytes", region_},
              {"folded_requests", folded_},
              {"span_ns", span_ns},
              {"read", direction(done_, false, span_ns)},
              {"write", direction(done_, true, span_ns)},
              {"write_amplification", nullptr},
              {"gc", nullptr}};
    if (stack_.on_flash && finished_ == cfg_.threads)
        add_flash_report(r, before_, after_, platform_.cfg.nand.geometry.page_bytes,
                         r["write"]["bytes"].get<double>());
    add_precondition_report(r, stack_);
    return r;
}

void BlockReplay::print(std::ostream& out, const json& r) const {
    const std::string fault = platform_.host.first_fault();
    out << "replay " << trace_.source << " through " << cfg_.path << ": " << done_.size() << " of "
        << trace_.requests.size() << " requests, " << cfg_.threads << " thread(s) at iodepth "
        << cfg_.iodepth << ", " << (cfg_.timed ? "at their timestamps" : "as fast as they complete")
        << "\n";
    if (folded_)
        out << "  " << folded_ << " requests lie past the " << region_ / kMiB
            << " MiB replayed region and were folded into it\n";
    print_table(out, r);
    print_precondition_report(out, r, "  ");
    print_flash_report(out, r, "  ",
                       stack_.on_flash ? "the replay did not finish" : "the store is SSD memory");
    if (!fault.empty()) out << "  FAULT: " << fault << "\n";
}

}  // namespace canopy::scenarios
