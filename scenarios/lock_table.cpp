#include "scenarios/lock_table.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace canopy::scenarios {

using namespace platform;

bool LockScenario::prepare(const PlatformConfig& cfg, std::string& why) {
    if (cfg.scenario.lock_table_locks == 0) {
        why = "scenario.lock_table_locks=0";
        return false;
    }
    if (cfg.host.cores <= kCore)
        throw InputError("config", "host.cores=" + std::to_string(cfg.host.cores),
                         "the lock-table run's requests come from host.core" +
                             std::to_string(kCore) + ": give at least " +
                             std::to_string(kCore + 1) +
                             " cores, or set scenario.lock_table_locks=0");
    return true;
}

LockScenario::LockScenario(const PlatformConfig& cfg, Platform& platform)
    : cfg_(cfg), platform_(platform) {
    LockTableRunConfig c;
    c.host_core = kCore;
    c.locks = cfg.scenario.lock_table_locks;
    c.workers = cfg.scenario.lock_table_workers;
    c.seed = core::derive_seed(cfg.sim.seed, "lock_table");
    // The device's request agent works in the address space of PASID Device::kPasid: the
    // table lives there (a thread of that process, whichever created it first: dma-check's in
    // the default run).
    host::HostKernel& k = platform.host.kernel;
    host::HostKernel::Process* p = k.find_process(Device::kPasid);
    if (!p) p = &k.create_process("neodbms");  // none yet: this one is pid 1
    run_ = std::make_unique<LockTableRun>(platform, *p, c);
}

bool LockScenario::report(std::ostream& out, core::StatsRegistry& stats) const {
    const LockTableRun::Result& r = run_->result();
    const std::string m = "scenario.lock_table";
    const std::string fault = platform_.host.cores[kCore]->fault();
    out << "Lock table over CCIX (" << cfg_.ccix.profile << "): host.core" << kCore << " and "
        << cfg_.scenario.lock_table_workers << " lock-module requests in flight\n";
    if (!r.finished || !fault.empty()) {
        out << "  FAULT: " << (fault.empty() ? "the host program did not finish" : fault) << "\n";
        stats.counter(m, "faults", "lock-table run faults", true).add(1);
        return false;
    }
    char line[200];
    std::snprintf(line, sizeof line,
                  "  host %llu locks, %.1f ns per request; device %llu locks, %.1f ns per request; "
                  "%s\n",
                  (unsigned long long)r.host_locks, r.host_ns, (unsigned long long)r.device_locks,
                  r.device_ns,
                  r.double_grants ? "A LOCK WAS HELD TWICE" : "no lock ever held twice");
    out << line;
    stats.sum(m, "host_lock", "ns", "mean host lock request", true).add(r.host_ns);
    stats.sum(m, "device_lock", "ns", "mean device lock request", true).add(r.device_ns);
    stats.counter(m, "double_grants", "locks held by two at once", true).add(r.double_grants);
    return r.double_grants == 0;
}

}  // namespace canopy::scenarios
