#include "scenarios/willow_session.hpp"

#include <fcntl.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "sw/host/fc_workloads.hpp"

namespace canopy::scenarios {

using namespace platform;

namespace {
constexpr uint64_t kFileBytes = 64 * 1024, kPage = 4096;
constexpr uint32_t kBmiDays = 30;  // m = 1 month
}  // namespace

bool WillowScenario::find_firmware(PlatformConfig& cfg, std::string& why) {
    const std::string& dir = cfg.scenario.firmware_dir;
    if (dir.empty() && ScenarioConfig::default_firmware_dir().empty()) {
        std::string where;
        for (const std::string& d : ScenarioConfig::firmware_search_paths())
            where += (where.empty() ? "" : ", ") + d;
        why = "no SPU firmware beside this binary (looked in " + where +
              "; not built without the rv32 cross compiler, or set scenario.firmware_dir)";
        return false;
    }
    const std::string os = dir + "/spu_os.elf";
    if (dir.empty() || !std::filesystem::is_regular_file(os))
        throw InputError(
            "config", "scenario.firmware_dir=" + dir,
            (dir.empty() ? std::string("is empty") : "holds no SPU-OS (" + os + " is not a file)") +
                "; point it at the directory of the built spu_os.elf and app_*.elf");
    if (cfg.ssd.firmware.empty()) cfg.ssd.firmware = os;
    return true;
}

bool WillowScenario::prepare(PlatformConfig& cfg, std::string& why) {
    const bool apps = !cfg.scenario.apps.empty();
    if (apps && !cfg.scenario.willow)
        throw InputError("config", "scenario.apps=" + cfg.scenario.apps,
                         "SSD Apps are installed by the Willow scenario's kernel: set "
                         "scenario.willow=true");
    if (!find_firmware(cfg, why)) {
        if (apps)
            throw InputError("config", "scenario.apps=" + cfg.scenario.apps,
                             "no SPU-OS to install them on: " + why);
        return false;
    }
    UserApp::parse(cfg.scenario.apps, "scenario.apps");  // refused before anything is built
    // Asked for by the configuration, so what stands in its way is the configuration's fault.
    if (cfg.host.cores <= kUserCore)
        throw InputError(
            "config", "host.cores=" + std::to_string(cfg.host.cores),
            "Willow's kernel and user program run on host.core" + std::to_string(kKernelCore) +
                " and host.core" + std::to_string(kUserCore) + ": give at least " +
                std::to_string(kUserCore + 1) + " cores, or set scenario.willow=false");
    return true;
}

WillowScenario::WillowScenario(const PlatformConfig& cfg, Platform& platform)
    : platform_(platform) {
    WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    sc.flash_free = [&platform] { return platform.player.finished(); };
    sc.user_apps = UserApp::parse(cfg.scenario.apps, "scenario.apps");
    sc.user_bytes = cfg.scenario.app_region_bytes;
    stack_ = std::make_unique<WillowStack>(platform, sc);
    stack_->start_kernel(kKernelCore);
    auto& proc = platform.host.kernel.create_process("willow-user");
    platform.host.cores[kUserCore]->run(proc, [this, pid = proc.pid](host::HostCore& cpu) {
        WillowStack& s = *stack_;
        const WillowStack::User user(s, users_);
        s.wait_ready(cpu);
        s.fs.create(cpu, "/a", kFileBytes, pid, 0600);
        s.fs.create(cpu, "/b", kFileBytes, pid, 0600);
        std::vector<uint8_t> data(kFileBytes), back(kFileBytes);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 13 + i / 251);
        auto dio = s.direct_io(cpu);
        Result& r = result_;
        auto timed = [&](double& per_page, auto&& op) {
            const double t0 = cpu.now_ns();
            for (uint64_t at = 0; at < kFileBytes; at += kPage) op(at);
            per_page = (cpu.now_ns() - t0) / double(kFileBytes / kPage);
        };
        auto compare = [&] {
            for (size_t i = 0; i < data.size(); ++i) r.wrong_bytes += data[i] != back[i];
            r.bytes += data.size();
        };
        // File system writes, Direct-IO reads.
        const int fa = s.fs.open(cpu, "/a", O_RDWR);
        timed(r.fs_write_ns, [&](uint64_t at) { s.fs.pwrite(cpu, fa, &data[at], kPage, at); });
        s.fs.close(cpu, fa);
        const int da = dio->open("/a", O_RDONLY);
        timed(r.dio_read_ns, [&](uint64_t at) { dio->pread(da, &back[at], kPage, at); });
        dio->close(da);
        compare();
        // Direct-IO writes, file system reads.
        for (auto& b : data) b = uint8_t(~b);
        const int db = dio->open("/b", O_RDWR);
        timed(r.dio_write_ns, [&](uint64_t at) { dio->pwrite(db, &data[at], kPage, at); });
        dio->close(db);
        const int fb = s.fs.open(cpu, "/b", O_RDONLY);
        timed(r.fs_read_ns, [&](uint64_t at) { s.fs.pread(cpu, fb, &back[at], kPage, at); });
        s.fs.close(cpu, fb);
        compare();
        r.ran = true;
        if (s.has_flash_cosmos()) bmi(cpu);
        if (s.has_key_value()) key_value(cpu);
        if (s.has_atomic_writes()) transfers(cpu);
    });
}

// One page of users per SPU: a month of daily vectors, stored once, queried on each system.
void WillowScenario::bmi(host::HostCore& cpu) {
    WillowStack& s = *stack_;
    const sw::FcGeometry g = s.flash_cosmos_geometry();
    Result& r = result_;
    r.bmi_users = uint64_t(g.spus) * g.page_bytes * 8;
    const sw::FcWorkload w = sw::bmi_workload(r.bmi_users, kBmiDays, platform_.cfg.sim.seed);
    sw::Hre hre(cpu, s.driver.open(cpu));
    sw::FlashCosmos fc(cpu, hre, s.cfg.flash_cosmos_app, g);
    const auto stored = sw::store_workload(fc, w);
    const auto want = w.reference();
    for (uint8_t b : want) r.bmi_active += uint64_t(__builtin_popcount(b));
    for (int i = 0; i < 4; ++i) {
        const sw::FcOutcome o = sw::run_workload(cpu, fc, w, stored, sw::kFcSystems[i]);
        r.bmi_ns[i] = o.ns;
        r.bmi_right[i] = o.result == want && o.ones == r.bmi_active;
    }
    fc.release_all();
    r.bmi_ran = true;
}

// 64 pairs of 1 KiB through the Key-Value app: put, read back, every fourth deleted and gone.
void WillowScenario::key_value(host::HostCore& cpu) {
    Result& r = result_;
    auto kv = stack_->key_value(cpu);
    constexpr unsigned kPairs = 64;
    auto value = [](unsigned i) {
        std::vector<uint8_t> v(1024);
        for (size_t k = 0; k < v.size(); ++k) v[k] = uint8_t(k * 31 + i);
        return v;
    };
    auto key = [](unsigned i) { return "session:" + std::to_string(i); };
    double t0 = cpu.now_ns();
    for (unsigned i = 0; i < kPairs; ++i) kv->put(key(i), value(i));
    r.kv_put_ns = (cpu.now_ns() - t0) / kPairs;
    t0 = cpu.now_ns();
    for (unsigned i = 0; i < kPairs; ++i) r.kv_right += kv->get(key(i)) == value(i);
    r.kv_get_ns = (cpu.now_ns() - t0) / kPairs;
    for (unsigned i = 0; i < kPairs; i += 4) r.kv_right += kv->del(key(i)) && !kv->get(key(i));
    r.kv_pairs = kPairs;
    r.kv_ran = true;
}

// Bank transfers through Atomic-Writes: 16 accounts of 8 bytes, 4 KiB apart (so over every SPU);
// each transfer debits one account and credits another on another SPU in one transaction
// (two-phase commit); one more is logged and aborted. Every balance is then read back through
// libDirectIO and compared with the ledger.
void WillowScenario::transfers(host::HostCore& cpu) {
    WillowStack& s = *stack_;
    Result& r = result_;
    constexpr unsigned kAccounts = 16, kTransfers = 8;
    constexpr uint64_t kStride = 4096;
    s.fs.create(cpu, "/accounts", kAccounts * kStride, cpu.process().pid, 0600);
    auto dio = s.direct_io(cpu);
    const int fd = dio->open("/accounts", O_RDWR);
    auto aw = s.atomic_writes(cpu, *dio);
    std::vector<int64_t> ledger(kAccounts, 1000);
    for (unsigned a = 0; a < kAccounts; ++a) dio->pwrite(fd, &ledger[a], 8, a * kStride);
    auto now_ns = [&] { return cpu.now_ns(); };
    double log_ns = 0, commit_ns = 0;
    for (unsigned t = 0; t <= kTransfers; ++t) {
        const unsigned from = t % kAccounts, to = (t * 5 + 3) % kAccounts;
        const int64_t amount = 10 + t;
        const int64_t debit = ledger[from] - amount, credit = ledger[to] + amount;
        const uint32_t tx = aw->begin();
        double t0 = now_ns();
        aw->write(tx, fd, from * kStride, &debit, 8);
        aw->write(tx, fd, to * kStride, &credit, 8);
        log_ns += now_ns() - t0;
        if (t == kTransfers) {  // the last one changes its mind
            aw->abort(tx);
            ++r.aw_aborts;
            break;
        }
        t0 = now_ns();
        aw->commit(tx);
        commit_ns += now_ns() - t0;
        ledger[from] = debit;
        ledger[to] = credit;
        ++r.aw_commits;
    }
    r.aw_right = true;
    for (unsigned a = 0; a < kAccounts; ++a) {
        int64_t balance = 0;
        dio->pread(fd, &balance, 8, a * kStride);
        r.aw_right &= balance == ledger[a];
    }
    r.aw_log_ns = log_ns / (2.0 * (kTransfers + 1));
    r.aw_commit_ns = commit_ns / kTransfers;
    r.aw_ran = true;
}

bool WillowScenario::report_apps(std::ostream& out, core::StatsRegistry& stats) const {
    const Result& r = result_;
    const std::string m = "scenario.willow";
    char line[240];
    bool ok = true;
    const WillowStack& st = *stack_;
    for (const UserApp& u : st.cfg.user_apps)
        out << "SSD App " << u.name << " (" << u.elf << "): app " << u.id << " in slot " << u.slot
            << " of every SPU\n";
    auto skipped = [&](const char* part, uint32_t slot) {
        out << part << ": skipped (its app's slot " << slot << " holds the user app "
            << st.displaced_by(slot) << ")\n";
    };
    if (!st.has_key_value()) skipped("Key-Value session", WillowStack::kKvSlot);
    if (!st.has_atomic_writes()) skipped("Atomic-Writes transfers", WillowStack::kAtomicWritesSlot);
    if (r.kv_ran) {
        const uint64_t checks = r.kv_pairs + r.kv_pairs / 4;
        std::snprintf(line, sizeof line,
                      "Key-Value session: %llu pairs of 1 KiB, PUT %.1f us, GET %.1f us on "
                      "average; %s\n",
                      (unsigned long long)r.kv_pairs, r.kv_put_ns * 1e-3, r.kv_get_ns * 1e-3,
                      verdict(r.kv_right == checks, "every GET and DELETE right", "WRONG results"));
        out << line;
        stats.sum(m, "kv_put", "ns", "mean PUT of a 1 KiB value", true).add(r.kv_put_ns);
        stats.sum(m, "kv_get", "ns", "mean GET of a 1 KiB value", true).add(r.kv_get_ns);
        stats.counter(m, "kv_wrong", "key-value results that differ from what was put", true)
            .add(checks - r.kv_right);
        ok &= r.kv_right == checks || !data_kept();
    }
    if (r.aw_ran) {
        std::snprintf(line, sizeof line,
                      "Atomic-Writes: %llu transfers committed across SPUs (two-phase commit), "
                      "%llu aborted; LOGWRITE %.1f us, COMMIT %.1f us on average; %s\n",
                      (unsigned long long)r.aw_commits, (unsigned long long)r.aw_aborts,
                      r.aw_log_ns * 1e-3, r.aw_commit_ns * 1e-3,
                      verdict(r.aw_right, "every balance right", "WRONG balances"));
        out << line;
        stats.sum(m, "aw_logwrite", "ns", "mean LOGWRITE of an 8-byte update", true)
            .add(r.aw_log_ns);
        stats.sum(m, "aw_commit", "ns", "mean COMMIT of a two-SPU transaction", true)
            .add(r.aw_commit_ns);
        stats.counter(m, "aw_wrong", "transfers whose balances came out wrong", true)
            .add(r.aw_right ? 0 : 1);
        ok &= r.aw_right || !data_kept();
    }
    return ok;
}

bool WillowScenario::report(std::ostream& out, core::StatsRegistry& stats) const {
    const std::string m = "scenario.willow";
    out << "Willow: SPU-OS on " << platform_.device.ssd.spus.size()
        << " SPUs, Base-IO and Direct-IO installed by the host kernel (host.core" << kKernelCore
        << "); file I/O on host.core" << kUserCore << "\n";
    // Its own cores' faults (a program on another core is not Willow's).
    std::string fault = platform_.host.cores[kKernelCore]->fault();
    if (fault.empty()) fault = platform_.host.cores[kUserCore]->fault();
    if (!result_.ran || !fault.empty()) {
        out << "  FAULT: " << (fault.empty() ? "the user program did not finish" : fault) << "\n";
        stats.counter(m, "faults", "Willow scenario faults", true).add(1);
        return false;
    }
    char line[200];
    auto row = [&](const char* what, double ns) {
        std::snprintf(line, sizeof line, "  %-40s %9.1f ns per 4 KiB\n", what, ns);
        out << line;
    };
    row("write through the file system (Base-IO)", result_.fs_write_ns);
    row("read through libDirectIO (Direct-IO)", result_.dio_read_ns);
    row("write through libDirectIO (Direct-IO)", result_.dio_write_ns);
    row("read through the file system (Base-IO)", result_.fs_read_ns);
    const bool ok = result_.wrong_bytes == 0 || !data_kept();
    if (data_kept())
        out << "  data: " << (ok ? "correct" : "WRONG") << " (" << result_.wrong_bytes << " of "
            << result_.bytes << " bytes differ)\n";
    else
        out << "  data: " << kNotChecked << "\n";
    stats.sum(m, "fs_write_4k", "ns", "4 KiB write through the file system", true)
        .add(result_.fs_write_ns);
    stats.sum(m, "dio_read_4k", "ns", "4 KiB read through libDirectIO", true)
        .add(result_.dio_read_ns);
    stats.sum(m, "dio_write_4k", "ns", "4 KiB write through libDirectIO", true)
        .add(result_.dio_write_ns);
    stats.sum(m, "fs_read_4k", "ns", "4 KiB read through the file system", true)
        .add(result_.fs_read_ns);
    stats.counter(m, "wrong_bytes", "bytes read back that differ from those written", true)
        .add(result_.wrong_bytes);
    if (!result_.bmi_ran) {
        const std::string user = stack_->displaced_by(WillowStack::kFlashCosmosSlot);
        out << "Flash-Cosmos BMI query: skipped ("
            << (!user.empty() ? "its slot holds the user app " + user
                              : "the Flash-Cosmos app needs the store on a functional flash "
                                "array with ssd.store.esp_blocks > 0, at most 16 planes per "
                                "channel and 64 wordlines per block")
            << ")\n";
        return ok && report_apps(out, stats);
    }
    out << "Flash-Cosmos BMI query: " << result_.bmi_users << " users, users active all of "
        << kBmiDays << " days: " << result_.bmi_active << "\n";
    bool right = true;
    for (int i = 0; i < 4; ++i) {
        const char* sys = sw::fc_system_name(sw::kFcSystems[i]);
        std::snprintf(line, sizeof line, "  %-14s %10.1f us  %6.1fx over OSP  %s\n", sys,
                      result_.bmi_ns[i] * 1e-3, result_.bmi_ns[3] / result_.bmi_ns[i],
                      result_.bmi_right[i] ? "correct" : "WRONG");
        out << line;
        right &= result_.bmi_right[i];
        std::string key = sys;
        for (auto& c : key) c = c == '-' ? '_' : char(std::tolower(c));
        stats.sum(m, "bmi_" + key + "_us", "us", std::string("BMI query on ") + sys, true)
            .add(result_.bmi_ns[i] * 1e-3);
    }
    stats.counter(m, "bmi_wrong", "BMI query results that differ from the host's", true)
        .add(right ? 0 : 1);
    return ok && right && report_apps(out, stats);
}

}  // namespace canopy::scenarios
