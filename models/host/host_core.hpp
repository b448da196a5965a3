// One core of the N1-SDP host (Arm Neoverse N1 at 2.6 GHz; seeds/003 Section III) running a
// host program: C++ compiled into the simulator (sw/host/) and run as a simulated thread. The
// program sees the core through this class: loads, stores and atomics of virtual addresses, compute
// time, and the host kernel's services. Every memory operation is translated by the core's MMU
// (a TLB, and on a miss a walk of the process's page tables in host memory, one timed read per
// level) and performed by its private caches (core/coherent_cache.hpp), which ask the home node on
// a miss; so latency is simulated, not assumed, and several cores contend for lines for real.
// Device memory (a BAR mapped with HostKernel::map_device) is uncached: the access leaves through
// `mmio` towards the root complex and the PCIe link; reads wait for the completion, writes are
// posted. In the trace, an operation that leaves the core is a slice on the core's track ("host"
// category), linked to its hops at the home node, on the link and in the device.
//
// Time: the core runs ahead of the SystemC kernel by a local offset (temporal decoupling) while
// it hits its caches and computes, and synchronises (wait()) before every request that leaves
// the core and whenever the offset exceeds quantum_ns. Requests from several cores therefore reach
// the home in simulated-time order, and atomics are ordered exactly.
//
// A program that touches an unmapped address, uses an illegal size or alignment, or gets a bus
// error from a device faults: HostFault is thrown inside it, the core records the message
// (fault(), stat `faults`) and stops that program; the simulation goes on.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <type_traits>

#include "core/coherence.hpp"
#include "core/coherent_cache.hpp"
#include "core/config.hpp"
#include "core/services.hpp"
#include "core/sim_time.hpp"
#include "core/translation_cache.hpp"
#include "host/home_node.hpp"
#include "host/host_kernel.hpp"

namespace canopy::host {

struct HostCoreConfig {
    double clock_ghz = 2.6;  // N1-SDP Neoverse N1 cores
    core::CoherentCacheConfig cache;
    uint32_t tlb_entries = 1280;  // N1's unified L2 TLB: 1280 entries, 5-way (N1 TRM)
    uint32_t tlb_ways = 5;
    // Assumed: a core may run 1 us ahead of the kernel while it only hits its caches.
    double quantum_ns = 1000.0;
    // CMN-600 executes ARMv8.1 LSE atomics at the home node (far); false: in the core's L2.
    bool far_atomics = true;
    double syscall_ns = 1000.0;      // assumed: one host-kernel service (mmap, pin, ...)
    double mmio_issue_ns = 5.0;      // assumed: the core's cost of issuing a posted device write
    void describe(core::Params& p);  // relative to the caller's scope ("host.core.")
    void validate(const std::string& scope) const;
};

// A fault of a host program: thrown inside it, caught by its core.
class HostFault : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class HostCore;
using HostProgram = std::function<void(HostCore&)>;

class HostCore : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<HostCore> mmio;  // device memory, to the root complex

    HostCore(sc_core::sc_module_name name, const HostCoreConfig& cfg, HomeNode& home,
             HostKernel& kernel, core::Services& services);

    // Runs `program` in `process` from the start of simulation (or now, if it is running).
    void run(HostKernel::Process& process, HostProgram program);

    // ---- the program's view ------------------------------------------------------------
    // Loads and stores of 1..64 bytes; they may cross lines and pages.
    void load(uint64_t va, void* bytes, unsigned length);
    void store(uint64_t va, const void* bytes, unsigned length);
    template <class T>
    T load(uint64_t va) {
        static_assert(std::is_trivially_copyable_v<T>);
        T v;
        load(va, &v, sizeof v);
        return v;
    }
    template <class T>
    void store(uint64_t va, const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        store(va, &v, sizeof v);
    }
    // Atomics on 1, 2, 4 or 8 naturally aligned bytes of normal memory; return the old value.
    uint64_t atomic(uint64_t va, const core::AtomicRequest& a);
    uint64_t compare_and_swap(uint64_t va, uint64_t expected, uint64_t desired, uint8_t size = 8);
    uint64_t swap(uint64_t va, uint64_t value, uint8_t size = 8);
    uint64_t fetch_add(uint64_t va, uint64_t value, uint8_t size = 8);

    void compute_ns(double ns);
    void compute_cycles(uint64_t cycles);
    sc_core::sc_time now() const { return sc_core::sc_time_stamp() + offset_; }
    double now_ns() const { return core::ns_of(now()); }
    void sync();  // bring the core's local time into the kernel's
    // Sleeps until `e` is notified (the core's local time caught up first), as a thread blocked
    // in the kernel does.
    void wait_for(const sc_core::sc_event& e);
    // Arm's WFE with the exclusive monitor armed on the line holding `va` (LDAXR; x86's MONITOR
    // and MWAIT): sleeps until another requester writes that line (a snoop takes it from this
    // core's caches) or a program sends an event (send_event(), Arm's SEV). Returns at once when
    // the core does not hold the line (load it first: the poll that found nothing did) or an
    // event came since the last wait. It costs no simulated time of its own: a polling loop
    // put to sleep charges what its polls would have cost (sw::Hre::wait_change). It sleeps at
    // most `max_ns`.
    void wait_line(uint64_t va, double max_ns = std::numeric_limits<double>::infinity());
    void send_event();

    uint64_t mmap(uint64_t bytes, uint64_t page_bytes = kPage4K);
    void munmap(uint64_t va, uint64_t bytes);
    void pin(uint64_t va, uint64_t bytes);
    uint64_t map_device(uint64_t pa, uint64_t bytes);
    // The physical address of a mapped VA (what a driver hands a DMA engine; pin first).
    uint64_t physical(uint64_t va);
    HostKernel::Process& process() { return *process_; }
    HostKernel& kernel() { return kernel_; }

    // ---- for the platform and tests ----------------------------------------------------
    bool running() const { return running_; }
    bool finished() const { return finished_; }
    const std::string& fault() const { return fault_; }  // "" when none
    const sc_core::sc_event& done() const { return done_; }
    const sc_core::sc_time& finish_time() const { return finish_time_; }
    core::CoherentCache& cache() { return *cache_; }
    const HostCoreConfig& config() const { return cfg_; }

  private:
    struct Mapping {
        uint64_t pa;
        bool device;
        uint64_t page_end;  // first VA past the page
    };
    void thread(HostProgram program);
    Mapping translate(uint64_t va, const char* what);
    void check_length(uint64_t va, unsigned length, const char* what) const;
    void mmio_access(bool write, uint64_t pa, uint8_t* bytes, unsigned length);
    [[noreturn]] void raise(const std::string& message);
    class TracedRequest;

    HostCoreConfig cfg_;
    core::Services& services_;
    int track_;
    HomeNode& home_;
    HostKernel& kernel_;
    std::unique_ptr<core::CoherentCache> cache_;
    core::TranslationCache tlb_;
    const core::TranslationCache::Entry* last_translation_ = nullptr;  // see translate()
    HostKernel::Process* process_ = nullptr;
    sc_core::sc_time offset_, quantum_, cycle_;
    bool running_ = false, finished_ = false;
    std::string fault_;
    sc_core::sc_event done_;
    sc_core::sc_event sev_;    // send_event()
    bool event_sent_ = false;  // since the last wait_line()
    sc_core::sc_time finish_time_;
    core::Counter &loads_, &stores_, &atomics_, &tlb_hits_, &tlb_misses_, &walk_reads_,
        &mmio_reads_, &mmio_writes_, &faults_, &syscalls_;
    core::Distribution &load_latency_, &store_latency_, &atomic_latency_;
};

}  // namespace canopy::host
