#include "host/host_core.hpp"

#include <cmath>

#include <sstream>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/sim_time.hpp"

namespace canopy::host {

using core::ns_of;

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

constexpr uint32_t kTlbDevice = 1;  // TLB entry flag: device memory

std::string hex(uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

}  // namespace

void HostCoreConfig::describe(core::Params& p) {
    p("clock_ghz", clock_ghz, "GHz", "core clock (N1-SDP: 2.6 GHz Neoverse N1)", 0.001, 100.0);
    cache.describe(p);
    p("tlb_entries", tlb_entries, "entries", "TLB (N1 L2 TLB: 1280)", 1, 1 << 20);
    p("tlb_ways", tlb_ways, "ways", "TLB associativity (N1: 5)", 1, 1 << 20);
    p("quantum_ns", quantum_ns, "ns",
      "how far a core runs ahead of the kernel while hitting its caches (assumed)", 0.0, 1e9);
    p("far_atomics", far_atomics,
      "atomics performed at the home node (CMN-600 far atomics) rather than in the L2");
    p("syscall_ns", syscall_ns, "ns", "cost of one host-kernel service (assumed)", 0.0, 1e9);
    p("mmio_issue_ns", mmio_issue_ns, "ns", "core time to issue a posted device write (assumed)",
      0.0, 1e6);
}

void HostCoreConfig::validate(const std::string& scope) const {
    cache.validate(scope);
    if (tlb_ways == 0 || tlb_entries % tlb_ways != 0)
        throw InputError("config", scope + ".tlb_entries",
                         "must be a multiple of " + scope + ".tlb_ways (" +
                             std::to_string(tlb_entries) + " entries, " + std::to_string(tlb_ways) +
                             " ways)");
}

HostCore::HostCore(sc_core::sc_module_name name, const HostCoreConfig& cfg, HomeNode& home,
                   HostKernel& kernel, core::Services& services)
    : sc_module(name),
      mmio("mmio"),
      cfg_((cfg.validate(this->name()), cfg)),
      services_(services),
      track_(services.trace.track(this->name())),
      home_(home),
      kernel_(kernel),
      tlb_(cfg.tlb_entries, cfg.tlb_ways, page_sizes()),
      quantum_(cfg.quantum_ns, SC_NS),
      cycle_(1.0 / cfg.clock_ghz, SC_NS),
      loads_(services.stats.counter(this->name(), "loads", "loads executed")),
      stores_(services.stats.counter(this->name(), "stores", "stores executed")),
      atomics_(services.stats.counter(this->name(), "atomics", "atomics executed")),
      tlb_hits_(services.stats.counter(this->name(), "tlb.hits", "translations hitting the TLB")),
      tlb_misses_(services.stats.counter(this->name(), "tlb.misses", "TLB misses (table walks)")),
      walk_reads_(services.stats.counter(this->name(), "tlb.walk_reads", "page-table reads")),
      mmio_reads_(services.stats.counter(this->name(), "mmio.reads", "device-memory reads")),
      mmio_writes_(services.stats.counter(this->name(), "mmio.writes", "device-memory writes")),
      faults_(services.stats.counter(this->name(), "faults", "programs stopped by a fault", true)),
      syscalls_(services.stats.counter(this->name(), "syscalls", "host-kernel services used")),
      load_latency_(services.stats.distribution(this->name(), "latency.load", "ns",
                                                "issue to data, per load", true)),
      store_latency_(services.stats.distribution(this->name(), "latency.store", "ns",
                                                 "issue to completion, per store")),
      atomic_latency_(services.stats.distribution(this->name(), "latency.atomic", "ns",
                                                  "issue to old value, per atomic", true)) {
    cache_ = std::make_unique<core::CoherentCache>(std::string(this->name()), cfg_.cache, home,
                                                   services, [this](sc_time&) { sync(); });
}

void HostCore::run(HostKernel::Process& process, HostProgram program) {
    process_ = &process;
    const uint32_t pid = process.pid;
    process.space->on_unmap([this, pid](uint64_t va, uint64_t bytes) {
        tlb_.invalidate(pid, va, bytes);  // the kernel's TLB shootdown
    });
    sc_core::sc_spawn([this, program] { thread(program); },
                      (std::string(basename()) + "_program").c_str());
}

void HostCore::thread(HostProgram program) {
    running_ = true;
    try {
        program(*this);
        sync();
    } catch (const HostFault& f) {
        fault_ = f.what();
        faults_.add();
        offset_ = SC_ZERO_TIME;
    }
    running_ = false;
    finished_ = true;
    finish_time_ = sc_core::sc_time_stamp();
    done_.notify(SC_ZERO_TIME);
}

void HostCore::raise(const std::string& message) {
    throw HostFault(std::string(name()) + ": " + message);
}

void HostCore::sync() {
    if (offset_ > SC_ZERO_TIME) wait(offset_);
    offset_ = SC_ZERO_TIME;
}

void HostCore::wait_for(const sc_core::sc_event& e) {
    sync();
    wait(e);
}

void HostCore::wait_line(uint64_t va, double max_ns) {
    cache_->monitor(translate(va, "wait_line").pa);
    sync();  // a write (or an event) while the core catches up clears the watch: no sleep then
    if (!cache_->monitor_cleared() && !event_sent_ && max_ns > 0) {
        if (std::isfinite(max_ns))
            wait(sc_time(max_ns, SC_NS), cache_->monitor_event() | sev_);
        else
            wait(cache_->monitor_event() | sev_);
    }
    event_sent_ = false;
}

void HostCore::send_event() {
    event_sent_ = true;
    sev_.notify(SC_ZERO_TIME);
}

void HostCore::compute_ns(double ns) {
    offset_ += sc_time(ns, SC_NS);
    if (offset_ > quantum_) sync();
}

void HostCore::compute_cycles(uint64_t cycles) { compute_ns(double(cycles) * ns_of(cycle_)); }

HostCore::Mapping HostCore::translate(uint64_t va, const char* what) {
    if (!process_) raise(std::string(what) + " outside a program");
    // The entry of the previous translation, when it still covers `va`, is the one lookup()
    // would find, already the most recently used of the TLB: skipping the set probes (one per
    // page size) changes neither the result nor the replacement order.
    const core::TranslationCache::Entry* e = last_translation_;
    if (!(e && e->valid && e->asid == process_->pid && va - e->va_base < e->page_bytes))
        e = last_translation_ = tlb_.lookup(process_->pid, va);
    if (e) {
        tlb_hits_.add();
        return {e->translate(va), (e->flags & kTlbDevice) != 0, e->va_base + e->page_bytes};
    }
    tlb_misses_.add();
    auto read = [this](uint64_t pa, uint64_t& desc) {
        uint8_t b[8];
        cache_->read_once(pa, b, 8, offset_);  // synchronises first: the walk leaves the core
        walk_reads_.add();
        desc = 0;
        for (int i = 7; i >= 0; --i) desc = (desc << 8) | b[i];
        return true;
    };
    std::optional<Translation> leaf;
    try {
        leaf = walk_tables(process_->space->root(), va, read);
    } catch (const std::out_of_range& e) {
        raise(std::string(what) + " at VA " + hex(va) + ": page-table walk failed: " + e.what());
    }
    if (!leaf) raise(std::string(what) + " at VA " + hex(va) + ": not mapped");
    tlb_.insert(process_->pid, leaf->va_base, leaf->pa_base, leaf->page_bytes,
                leaf->device ? kTlbDevice : 0);
    return {leaf->pa, leaf->device, leaf->va_base + leaf->page_bytes};
}

// One memory operation of the program as a request of the trace: the hops it causes beyond the
// core (home node, link, device) share its flow, and when it left the core (a hop was written)
// the core's own slice is written too, from issue to completion. Costs nothing with no trace.
class HostCore::TracedRequest {
  public:
    TracedRequest(HostCore& core, const char* what, uint64_t va)
        : core_(core),
          what_(what),
          va_(va),
          flow_(core.services_.trace.enabled() ? core.services_.trace.new_flow() : 0),
          scope_(core.services_.trace, flow_),
          start_(core.now()) {}
    ~TracedRequest() {
        core::TransactionTrace& t = core_.services_.trace;
        if (flow_ && t.reached(flow_))
            t.complete(core_.track_, what_, "host", start_, core_.now() - start_, flow_,
                       {{"va", hex(va_)}});
    }
    TracedRequest(const TracedRequest&) = delete;
    TracedRequest& operator=(const TracedRequest&) = delete;

  private:
    HostCore& core_;
    const char* what_;
    uint64_t va_;
    uint64_t flow_;
    core::TransactionTrace::FlowScope scope_;
    sc_time start_;
};

void HostCore::check_length(uint64_t va, unsigned length, const char* what) const {
    if (length < 1 || length > 64)
        throw HostFault(std::string(name()) + ": " + what + " of " + std::to_string(length) +
                        " B at VA " + hex(va) + ": sizes are 1 to 64 bytes");
}

void HostCore::mmio_access(bool write, uint64_t pa, uint8_t* bytes, unsigned length) {
    sync();
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(pa);
    gp.set_data_ptr(bytes);
    gp.set_data_length(length);
    gp.set_streaming_width(length);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    core::RequestExt request;  // the trace's flow of the load or store this access serves
    request.flow = services_.trace.current_flow();
    gp.set_extension(&request);
    sc_time d = SC_ZERO_TIME;
    mmio->b_transport(gp, d);
    gp.clear_extension(&request);
    (write ? mmio_writes_ : mmio_reads_).add();
    if (!gp.is_response_ok())
        raise(std::string("device ") + (write ? "write" : "read") + " of " +
              std::to_string(length) + " B at PA " + hex(pa) + ": " + gp.get_response_string());
    if (write)
        offset_ += sc_time(cfg_.mmio_issue_ns, SC_NS);  // posted: the core goes on
    else
        wait(d);  // a read waits for its completion
}

void HostCore::load(uint64_t va, void* bytes, unsigned length) {
    check_length(va, length, "load");
    loads_.add();
    const TracedRequest traced(*this, "load", va);
    const sc_time t0 = now();
    auto* p = static_cast<uint8_t*>(bytes);
    const uint32_t lb = home_.line_bytes();
    for (uint64_t a = va, end = va + length; a < end;) {
        const unsigned n = unsigned(std::min<uint64_t>(end, (a | (lb - 1)) + 1) - a);
        const Mapping m = translate(a, "load");
        if (m.device)
            mmio_access(false, m.pa, p + (a - va), n);
        else
            cache_->read(m.pa, p + (a - va), n, offset_);
        a += n;
    }
    load_latency_.sample(ns_of(now() - t0));
    if (offset_ > quantum_) sync();
}

void HostCore::store(uint64_t va, const void* bytes, unsigned length) {
    check_length(va, length, "store");
    stores_.add();
    const TracedRequest traced(*this, "store", va);
    const sc_time t0 = now();
    const auto* p = static_cast<const uint8_t*>(bytes);
    const uint32_t lb = home_.line_bytes();
    for (uint64_t a = va, end = va + length; a < end;) {
        const unsigned n = unsigned(std::min<uint64_t>(end, (a | (lb - 1)) + 1) - a);
        const Mapping m = translate(a, "store");
        if (m.device)
            mmio_access(true, m.pa, const_cast<uint8_t*>(p + (a - va)), n);
        else
            cache_->write(m.pa, p + (a - va), n, offset_);
        a += n;
    }
    store_latency_.sample(ns_of(now() - t0));
    if (offset_ > quantum_) sync();
}

uint64_t HostCore::atomic(uint64_t va, const core::AtomicRequest& a) {
    const char* what = core::to_string(a.kind);
    if ((a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8) || va % a.size)
        raise(std::string(what) + " of " + std::to_string(a.size) + " B at VA " + hex(va) +
              ": atomics take 1, 2, 4 or 8 naturally aligned bytes");
    atomics_.add();
    const TracedRequest traced(*this, what, va);
    const sc_time t0 = now();
    const Mapping m = translate(va, what);
    if (m.device) raise(std::string(what) + " at VA " + hex(va) + ": device memory");
    const uint64_t old = cache_->atomic(m.pa, a, cfg_.far_atomics, offset_);
    atomic_latency_.sample(ns_of(now() - t0));
    return old;
}

uint64_t HostCore::compare_and_swap(uint64_t va, uint64_t expected, uint64_t desired,
                                    uint8_t size) {
    core::AtomicRequest a;
    a.kind = core::AtomicKind::Compare;
    a.size = size;
    a.compare = expected;
    a.operand = desired;
    return atomic(va, a);
}

uint64_t HostCore::swap(uint64_t va, uint64_t value, uint8_t size) {
    core::AtomicRequest a;
    a.kind = core::AtomicKind::Swap;
    a.size = size;
    a.operand = value;
    return atomic(va, a);
}

uint64_t HostCore::fetch_add(uint64_t va, uint64_t value, uint8_t size) {
    core::AtomicRequest a;
    a.kind = core::AtomicKind::Load;
    a.op = core::AtomicOp::Add;
    a.size = size;
    a.operand = value;
    return atomic(va, a);
}

namespace {
// Runs one host-kernel service for a core: its cost first, then the service at that time, its
// failure turned into the program's fault.
template <class F>
auto service(HostCore& core, const char* what, double cost_ns, core::Counter& count, F&& f) {
    count.add();
    core.compute_ns(cost_ns);
    core.sync();
    try {
        return f();
    } catch (const HostKernelError& e) {
        throw HostFault(std::string(core.name()) + ": " + what + ": " + e.what());
    }
}
}  // namespace

uint64_t HostCore::mmap(uint64_t bytes, uint64_t page_bytes) {
    return service(*this, "mmap", cfg_.syscall_ns, syscalls_,
                   [&] { return kernel_.mmap(*process_, bytes, page_bytes); });
}

void HostCore::munmap(uint64_t va, uint64_t bytes) {
    service(*this, "munmap", cfg_.syscall_ns, syscalls_,
            [&] { kernel_.munmap(*process_, va, bytes); });
}

void HostCore::pin(uint64_t va, uint64_t bytes) {
    service(*this, "pin", cfg_.syscall_ns, syscalls_, [&] { kernel_.pin(*process_, va, bytes); });
}

uint64_t HostCore::map_device(uint64_t pa, uint64_t bytes) {
    return service(*this, "map_device", cfg_.syscall_ns, syscalls_,
                   [&] { return kernel_.map_device(*process_, pa, bytes); });
}

uint64_t HostCore::physical(uint64_t va) {
    return service(*this, "physical", cfg_.syscall_ns, syscalls_, [&] {
        auto t = process_->space->translate(va);
        if (!t) throw HostKernelError("VA " + hex(va) + " is not mapped");
        return t->pa;
    });
}

}  // namespace canopy::host
