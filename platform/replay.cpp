#include "platform/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "platform/platform.hpp"
#include "platform/platform_config.hpp"
#include "platform/version.hpp"
#include "platform/willow_scenario.hpp"
#include "platform/willow_stack.hpp"
#include "sw/host/block_trace.hpp"

namespace canopy::platform {

using nlohmann::json;

namespace {

constexpr unsigned kKernelCore = 0;
constexpr uint64_t kMiB = 1024 * 1024;

struct Done {
    double start_ns, end_ns;
    bool write;
    uint64_t bytes, recorded_ns;
};

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

json direction(const std::vector<Done>& done, bool write, double span_ns) {
    std::vector<double> lat, rec;
    uint64_t bytes = 0;
    for (const Done& d : done)
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

void print(std::ostream& out, const json& r) {
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

int run_replay(const ReplayOptions& opt) {
    if (opt.path != "base-io" && opt.path != "direct-io")
        throw InputError("canopy replay", "--path " + opt.path,
                         "unknown path; it is base-io or direct-io");
    // The trace first: a bad line costs nothing.
    sw::MsrOptions mo;
    mo.disk = opt.disk;
    mo.max_requests = opt.max_requests;
    const sw::BlockTrace trace = sw::read_msr_trace(opt.trace, mo);

    PlatformConfig cfg;
    std::vector<std::string> overrides = opt.run.overrides;
    if (opt.run.seed) overrides.push_back("sim.seed=" + std::to_string(*opt.run.seed));
    auto params = load_config(cfg, opt.run.config_file, overrides);
    cfg.scenario.host_program = "none";
    if (opt.threads == 0 || opt.threads + 1 > cfg.host.cores)
        throw InputError("canopy replay", "--threads " + std::to_string(opt.threads),
                         "needs 1 to " + std::to_string(cfg.host.cores - 1) +
                             " threads: host.core" + std::to_string(kKernelCore) +
                             " runs the kernel, host.cores is " + std::to_string(cfg.host.cores));
    std::string why;
    if (!WillowScenario::prepare(cfg, why))
        throw InputError("canopy replay", "", "the Willow stack cannot run: " + why);
    cfg.scenario.willow = false;  // the replay programs stand in for the scenario's

    core::Services services;
    services.seed = cfg.sim.seed;
    SessionOutputs outputs(opt.run, services);
    Platform platform(cfg, services);
    WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    WillowStack stack(platform, sc);
    stack.start_kernel(kKernelCore);

    // The replayed region: the trace's span, up to half the device (the file system's metadata
    // and files sit in the lower half; Base-IO replays into the upper half).
    const uint64_t device = stack.kernel.geometry().device_bytes();
    const uint64_t span = (trace.span_bytes() + kMiB - 1) / kMiB * kMiB;
    const uint64_t region = std::min(span, device / 2);
    const uint64_t base = opt.path == "base-io" ? device / 2 : 0;
    uint64_t folded = 0;
    for (const auto& r : trace.requests) folded += r.offset_bytes + r.size_bytes > region;

    auto& proc = platform.host.kernel.create_process("replay");
    std::vector<Done> done;
    done.reserve(trace.requests.size());
    size_t next = 0;
    unsigned running = 0, finished = 0;
    bool file_ready = false, started = false;
    sw::StoreStats before, after;  // the flash store's counters around the replay
    double t0 = -1;
    for (unsigned t = 0; t < opt.threads; ++t) {
        platform.host.cores[kKernelCore + 1 + t]->run(proc, [&, t](host::HostCore& cpu) {
            const WillowStack::User user(stack, running);
            stack.wait_ready(cpu);
            std::unique_ptr<sw::DirectIo> dio;
            int fd = -1;
            if (opt.path == "direct-io") {
                if (t == 0)
                    stack.fs.create(cpu, "/replay", region, proc.pid, 0600), file_ready = true;
                while (!file_ready) cpu.compute_ns(1000);
                dio = stack.direct_io(cpu);
                fd = dio->open("/replay", O_RDWR);
            }
            // Thread 0 reads the store's counters once the file system is done; all start then.
            if (t == 0) before = stack.store_stats(cpu), started = true;
            while (!started) cpu.compute_ns(1000);
            sw::BlockIo& io = *stack.kernel.on(cpu).base_io;
            std::vector<uint8_t> buf;
            const double start = cpu.now_ns();
            if (t0 < 0) t0 = start;
            while (next < trace.requests.size()) {
                const sw::BlockRequest& r = trace.requests[next++];
                if (opt.timed) {
                    const double at = t0 + double(r.time_ns);
                    const double now = cpu.now_ns();
                    if (at > now) cpu.compute_ns(at - now);
                }
                // Offsets past the region fold into it; a request never straddles its end.
                uint64_t off = r.offset_bytes % region;
                if (off + r.size_bytes > region) off = region - std::min(region, r.size_bytes);
                buf.resize(r.size_bytes);
                if (r.write)
                    for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(r.line + i);
                const double s = cpu.now_ns();
                if (dio)
                    r.write ? dio->pwrite(fd, buf.data(), r.size_bytes, off)
                            : dio->pread(fd, buf.data(), r.size_bytes, off);
                else if (r.write)
                    io.write(base + off, buf.data(), r.size_bytes);
                else
                    io.read(base + off, buf.data(), r.size_bytes);
                done.push_back({s, cpu.now_ns(), r.write, r.size_bytes, r.response_ns});
            }
            if (dio) dio->close(fd);
            if (++finished == opt.threads) after = stack.store_stats(cpu);
        });
    }
    outputs.simulate();

    double first = 1e300, last = 0;
    for (const Done& d : done) first = std::min(first, d.start_ns), last = std::max(last, d.end_ns);
    const double span_ns = done.empty() ? 0 : last - first;
    json r = {{"trace", trace.source},
              {"path", opt.path},
              {"threads", opt.threads},
              {"timed", opt.timed},
              {"requests", done.size()},
              {"region_bytes", region},
              {"folded_requests", folded},
              {"span_ns", span_ns},
              {"read", direction(done, false, span_ns)},
              {"write", direction(done, true, span_ns)},
              {"write_amplification", nullptr},
              {"gc", nullptr}};
    if (stack.on_flash && finished == opt.threads) {
        const uint64_t pages = after.host_writes - before.host_writes,
                       programs = after.programs - before.programs;
        const double bytes = r["write"]["bytes"].get<double>();
        r["write_amplification"] = {
            {"host_page_writes", pages},
            {"flash_programs", programs},
            {"per_page", pages ? double(programs) / double(pages) : 0.0},
            {"per_byte",
             bytes > 0 ? double(programs) * cfg.nand.geometry.page_bytes / bytes : 0.0}};
        r["gc"] = {{"victims", after.gc_victims - before.gc_victims},
                   {"copies", after.gc_copies - before.gc_copies},
                   {"erases", after.erases - before.erases}};
    }
    {
        std::ofstream f(opt.run.out_dir + "/replay.json");
        f << r.dump(2) << "\n";
    }
    const std::string fault = platform.host.first_fault();
    std::ostream& out = std::cout;
    out << "replay " << trace.source << " through " << opt.path << ": " << done.size() << " of "
        << trace.requests.size() << " requests, " << opt.threads << " thread(s), "
        << (opt.timed ? "at their timestamps" : "as fast as they complete") << "\n";
    if (folded)
        out << "  " << folded << " requests lie past the " << region / kMiB
            << " MiB replayed region and were folded into it\n";
    print(out, r);
    if (r["write_amplification"].is_null()) {
        out << "  write amplification and GC: not measured ("
            << (stack.on_flash ? "the replay did not finish" : "the store is SSD memory") << ")\n";
    } else {
        const json& wa = r["write_amplification"];
        const json& gc = r["gc"];
        char line[256];
        std::snprintf(line, sizeof line,
                      "  flash: %llu pages programmed for %llu page writes (%.2f per page, %.2f "
                      "bytes per byte written); GC %llu victims, %llu copies, %llu erases\n",
                      (unsigned long long)wa["flash_programs"].get<uint64_t>(),
                      (unsigned long long)wa["host_page_writes"].get<uint64_t>(),
                      wa["per_page"].get<double>(), wa["per_byte"].get<double>(),
                      (unsigned long long)gc["victims"].get<uint64_t>(),
                      (unsigned long long)gc["copies"].get<uint64_t>(),
                      (unsigned long long)gc["erases"].get<uint64_t>());
        out << line;
    }
    if (!fault.empty()) out << "  FAULT: " << fault << "\n";
    out << "wrote " << opt.run.out_dir << "/replay.json\n";

    core::Json header = {{"canopy", kVersion},
                         {"scenario", "replay " + trace.source},
                         {"seed", cfg.sim.seed},
                         {"sim_time_ns", 0.0},
                         {"functional", cfg.nand.functional}};
    outputs.finish(header, params);
    return fault.empty() && finished == opt.threads ? 0 : 1;
}

}  // namespace canopy::platform
