// bench_storage (#26): 4 KiB random reads and writes at queue depth 32, 100,000 I/Os each, with
// the firmware in the loop: `canopy fio` on the shipped job files (traces/fio/), each run as its
// own process (SystemC elaborates once per process), on a preconditioned store (reads after
// `--precondition seq`, every unit written; writes after `--precondition rand`, GC's steady
// state) and on a fresh one. Prints requests per wall second of the whole command (boot and
// preconditioning included) and the process's peak RSS, as
//   randread: N req/s
//   randwrite: N req/s
// (the preconditioned runs) with the targets beside them (>= 10,000 and >= 5,000 req/s, RSS
// < 1 GiB), and under them the fresh store's figures and the preconditioned run's with timing-only
// data (`--set nand.functional=false`: no page bytes kept or encoded, as MQSim keeps none).
// docs/storage.md compares them with MQSim on the same workload.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

struct Result {
    double wall_s = 0;
    long rss_kib = 0;
    int status = -1;
    uint64_t ios = 0;
};

Result run(const std::string& job, const std::string& out, const std::vector<std::string>& args) {
    const std::string canopy = std::string(CANOPY_BINARY_DIR) + "/canopy";
    const std::string job_file = std::string(CANOPY_SOURCE_DIR) + "/traces/fio/" + job + ".fio";
    std::filesystem::remove_all(out);
    Result r;
    const auto t0 = std::chrono::steady_clock::now();
    std::fflush(stdout);  // else the child would print what is buffered again
    const pid_t pid = fork();
    if (pid == 0) {
        const std::string log = out + ".log";
        std::freopen(log.c_str(), "w", stdout);
        std::vector<const char*> argv = {"canopy",  "fio",   job_file.c_str(),
                                         "--quiet", "--out", out.c_str()};
        for (const std::string& a : args) argv.push_back(a.c_str());
        argv.push_back(nullptr);
        execv(canopy.c_str(), const_cast<char* const*>(argv.data()));
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.rss_kib = ru.ru_maxrss;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream f(out + "/fio.json");
    if (f) {
        const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
        if (j.is_object())
            for (const auto& job_json : j["jobs"])
                for (const char* d : {"read", "write"})
                    r.ios += job_json[d]["total_ios"].get<uint64_t>();
    }
    return r;
}

}  // namespace

int main() {
    struct Case {
        const char* job;
        const char* label;
        const char* precondition;
        double target_rps;
    };
    const std::vector<Case> cases = {{"randread-qd32", "randread", "seq", 10000},
                                     {"randwrite-qd32", "randwrite", "rand", 5000}};
    const std::string scratch = std::string(CANOPY_BINARY_DIR) + "/bench-storage";
    std::filesystem::create_directories(scratch);
    bool ok = true;
    for (const Case& c : cases) {
        enum Variant { Preconditioned, Fresh, TimingOnly };
        for (const Variant v : {Preconditioned, Fresh, TimingOnly}) {
            static const char* const kSuffix[] = {"", "-fresh", "-timing-only"};
            const std::string name = std::string(c.label) + kSuffix[v];
            std::vector<std::string> args;
            if (v != Fresh) args = {"--precondition", c.precondition};
            if (v == TimingOnly) args.insert(args.end(), {"--set", "nand.functional=false"});
            const Result r = run(c.job, scratch + "/" + name, args);
            if (r.status != 0 || r.ios == 0) {
                std::printf("%s: FAILED (canopy fio exit %d; %s/%s.log)\n", name.c_str(), r.status,
                            scratch.c_str(), name.c_str());
                ok = false;
                continue;
            }
            const double rps = double(r.ios) / r.wall_s;
            const double rss_mib = double(r.rss_kib) / 1024.0;
            if (v != Preconditioned) {
                std::printf("  %s: %.0f req/s, %.2f s wall, peak RSS %.0f MiB\n",
                            v == Fresh ? "fresh store"
                                       : "timing-only data (nand.functional=false), preconditioned",
                            rps, r.wall_s, rss_mib);
                continue;
            }
            std::printf("%s: %.0f req/s\n", c.label, rps);
            std::printf(
                "  after --precondition %s: %llu I/Os in %.2f s wall (boot and preconditioning "
                "included), peak RSS %.0f MiB; targets: >= %.0f req/s %s, RSS < 1024 MiB %s\n",
                c.precondition, (unsigned long long)r.ios, r.wall_s, rss_mib, c.target_rps,
                rps >= c.target_rps ? "met" : "NOT MET", rss_mib < 1024 ? "met" : "NOT MET");
        }
    }
    return ok ? 0 : 1;
}
