#include "platform/lock_table_run.hpp"

#include <sysc/kernel/sc_spawn.h>

#include <string>

#include "core/rng.hpp"
#include "platform/ccix_machine.hpp"

namespace canopy::platform {

namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

constexpr uint64_t kRecords = 8;

// The device side of the lock table: the paper's Bluespec lock module issuing CCIX atomics.
class DeviceLockPort : public sw::LockPort {
  public:
    explicit DeviceLockPort(link::RequestAgent& ra) : ra_(ra) {}
    uint64_t fetch_add(uint64_t va, uint64_t value) override {
        sc_time d = SC_ZERO_TIME;
        auto r = ra_.fetch_add(Device::kPasid, va, value, 8, d);
        check(r);
        sc_core::wait(d);
        return r.value;
    }
    uint64_t swap(uint64_t va, uint64_t value) override {
        core::AtomicRequest a;
        a.kind = core::AtomicKind::Swap;
        a.operand = value;
        sc_time d = SC_ZERO_TIME;
        auto r = ra_.atomic(Device::kPasid, va, a, d);
        check(r);
        sc_core::wait(d);
        return r.value;
    }
    uint64_t load64(uint64_t va) override {
        uint64_t v = 0;
        dev_load(ra_, va, &v);
        return v;
    }
    void compute_ns(double ns) override {
        if (ns > 0) sc_core::wait(sc_time(ns, SC_NS));
    }
    double now_ns() override { return platform::now_ns(); }

  private:
    link::RequestAgent& ra_;
};

}  // namespace

// Counts a second holder of a bucket's lock while `work` runs (the record's update).
template <class Work>
void LockTableRun::critical(uint64_t record, Work&& work) {
    const unsigned b = table_.bucket_of(record);
    if (++holders_[b] > 1) ++result_.double_grants;
    work();
    --holders_[b];
}

LockTableRun::LockTableRun(Platform& platform, host::HostKernel::Process& proc,
                           LockTableRunConfig cfg) {
    table_.buckets = 16;
    host::HostKernel& kernel = platform.host.kernel;
    platform.host.cores.at(cfg.host_core)->run(proc, [this, cfg, &kernel](host::HostCore& cpu) {
        // Over, however it ends (a fault too): the device's lock module stops then.
        struct Over {
            bool& over;
            ~Over() { over = true; }
        } over{host_over_};
        // The table first (a failure is this program's fault); the device waits for it.
        table_.base = kernel.mmap(cpu.process(), 2 << 20, host::kPage2M);
        kernel.pin(cpu.process(), table_.base, 2 << 20);
        sw::HostLockPort port(cpu);
        sw::LockClient client(port, table_, 1);
        cpu.load<uint64_t>(table_.base);         // TLB warm
        for (uint64_t r = 0; r < kRecords; ++r)  // buckets in the SLC: steady state from here
            client.unlock(client.lock(r));
        core::Rng rng(core::derive_seed(cfg.seed, "host"));
        for (unsigned i = 0; i < cfg.locks; ++i) {
            const uint64_t record = rng() % kRecords;
            auto l = client.lock(record);
            host_sum_ += l.request_ns;
            result_.host_ns = host_sum_ / double(++result_.host_locks);
            critical(record, [&] { cpu.compute_ns(50); });  // update the record version
            client.unlock(l);
            cpu.compute_ns(100);
        }
        result_.finished = true;
    });
    link::RequestAgent& ra = platform.device.ra;
    for (unsigned w = 0; w < cfg.workers; ++w)
        sc_core::sc_spawn(
            [this, &ra, w, cfg] {
                while (!table_.base && !host_over_) sc_core::wait(sc_time(100, SC_NS));
                if (!table_.base) return;
                DeviceLockPort port(ra);
                sw::LockClientConfig dc;
                dc.software_ns = 0;  // the lock module's time is in the request agent's issue
                sw::LockClient client(port, table_, 2 + w, dc);
                dev_load(ra, table_.base);  // ATC warm
                core::Rng rng(core::derive_seed(cfg.seed, "lock_module" + std::to_string(w)));
                while (!host_over_) {
                    const uint64_t record = rng() % kRecords;
                    auto l = client.lock(record);
                    device_sum_ += l.request_ns;
                    result_.device_ns = device_sum_ / double(++result_.device_locks);
                    critical(record, [&] { sc_core::wait(sc_time(50, SC_NS)); });
                    client.unlock(l);
                    if (cfg.device_gap_ns > 0) sc_core::wait(sc_time(cfg.device_gap_ns, SC_NS));
                }
            },
            ("lock_module" + std::to_string(w)).c_str());
}

}  // namespace canopy::platform
