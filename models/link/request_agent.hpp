// The device's CCIX request agent (RA) with its coherent system cache (CCIX-vs-PCIe paper,
// seeds/003 Sections III-B..E and IV: the Xilinx System Cache on the U280, the CPM's L1/L2 on the
// VCK5000; "misses in this cache become remote memory accesses forwarded over CCIX to the HA",
// and the SC "checks the ATC for the virtual-to-physical mapping" first).
//
// The accelerator's view (the CCIX Traffic Generator, the SSD's bridge later): loads, stores and
// atomics of 1..64 bytes at a virtual address of a host process (its PASID), each translated by
// the ATC (link/atc.hpp; a miss sends an ATS request on VC0) and performed by the system cache, a
// core::CoherentCache (one level for u280, two for vck5000: CcixConfig's profile). The cache's
// home is the RA's link-side proxy: every coherent request (ReadShared, ReadUnique, CleanUnique,
// ReadOnce, ReadNoSnoop, WriteUnique, WriteNoSnoop, WriteBack, Evict, Atomic) becomes one CCIX
// message on VC1 through `link_initiator` (link/ccix_message.hpp: non-posted requests are a MemRd
// answered by a completion carrying the response; write-backs and evictions are posted MemWr).
// Snoops from the host's home agent arrive on `snoop_target` (from the device-side VcRouter's
// vc1), are applied to the system cache and answered in the completion, dirty data included.
// Device atomics are far atomics, performed at the home (CCIX AtomicStore/Load/Swap/Compare).
//
// Accesses may cross a line (and a 4 KiB page): they are done line by line, one after the other
// (assumed: the paper's small transfers are single lines; a pipelined SC would overlap them), with
// one ATC lookup per page touched.
//
// Timing (loosely timed, CcixConfig): issue_ns, then the ATC lookup, then the system cache's hit
// time (core/coherent_cache.hpp); on a miss ra.request_ns, the link both ways with the home's
// time between, and ra.response_ns; reads and atomics add read_return_ns, atomics atomic_ns.
// Before a request leaves for the home the cache calls `sync` with the caller's local offset: an
// SC_THREAD caller passes one that wait()s it away, so the host's and the device's requests reach
// the home in simulated-time order; the default does nothing (direct calls from tests and
// experiments that are not threads: each request then runs at its annotated time). Write-backs of
// evicted lines leave at the caller's current time, off its path (a write buffer).
//
// Errors never crash and never silently succeed: a size outside 1..64, a misaligned atomic or one
// of another size than 1, 2, 4, 8 B, a PASID the ATC does not translate for, an ATS failure
// (unmapped VA) and an error response from the link or the home come back in RaResult (ok false,
// with the reason) and are counted (`refused`, `ats_failures`, `errors`). A malformed message on
// `snoop_target` gets TLM_GENERIC_ERROR_RESPONSE, counted in `errors`.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>

#include "core/coherence.hpp"
#include "core/coherent_cache.hpp"
#include "core/services.hpp"
#include "link/atc.hpp"
#include "link/ccix_config.hpp"
#include "link/ccix_message.hpp"
#include "link/ccix_transaction.hpp"

namespace canopy::link {

struct RaResult {
    bool ok = true;
    std::string error;   // why, when !ok
    uint64_t value = 0;  // atomics: the value before
};

class RequestAgent : public sc_core::sc_module {
  public:
    using Sync = core::CoherentCache::Sync;

    tlm_utils::simple_initiator_socket<RequestAgent> link_initiator;  // VC1, toward device_target
    tlm_utils::simple_target_socket<RequestAgent> snoop_target;       // VC1 snoops from the link
    // The accelerator's AXI4-MM port as a TLM target (e.g. the CTG's direct path): a read or
    // write of 1..64 bytes at a virtual address is load() / store() with the PASID of its
    // core::TlpExt (the RA's own when none). Errors: TLM_ADDRESS_ERROR_RESPONSE for an ATS
    // failure, TLM_GENERIC_ERROR_RESPONSE otherwise (the reason in last_error()).
    tlm_utils::simple_target_socket_optional<RequestAgent> accel_target;  // may stay unbound

    // `atc` null: addresses are physical and the PASID is not checked. Otherwise the ATC
    // translates for `pasid` (its ATS requests name no PASID: the root port applies its default).
    RequestAgent(sc_core::sc_module_name name, const CcixConfig& cfg, Atc* atc, uint32_t pasid,
                 core::Services& services, Sync sync = nullptr);
    ~RequestAgent() override;

    RaResult load(uint32_t pasid, uint64_t va, void* bytes, unsigned length,
                  sc_core::sc_time& delay);
    RaResult store(uint32_t pasid, uint64_t va, const void* bytes, unsigned length,
                   sc_core::sc_time& delay);
    // An atomic on a.size (1, 2, 4, 8) naturally aligned bytes; RaResult::value is the old value.
    RaResult atomic(uint32_t pasid, uint64_t va, const core::AtomicRequest& a,
                    sc_core::sc_time& delay);
    RaResult compare_and_swap(uint32_t pasid, uint64_t va, uint64_t expected, uint64_t desired,
                              uint8_t size, sc_core::sc_time& delay);
    RaResult fetch_add(uint32_t pasid, uint64_t va, uint64_t value, uint8_t size,
                       sc_core::sc_time& delay);
    // A transfer of any length (the accelerator's burst, the paper's CCIX transfers of E1): one
    // access per line, issued issue_ns apart with at most ra.max_outstanding in flight, so line
    // misses overlap; `delay` ends when the last line is done. A thread caller is synchronised
    // once, before the first line; the lines then run at their annotated times.
    RaResult transfer(bool write, uint32_t pasid, uint64_t va, uint8_t* bytes, uint64_t length,
                      sc_core::sc_time& delay);
    RaResult swap(uint32_t pasid, uint64_t va, uint64_t value, uint8_t size,
                  sc_core::sc_time& delay);

    // ---- translated requests (the SSD's bridge: the host kernel gave it the physical addresses
    // of pinned queues, as a PCIe function sends translated requests; no ATC, no PASID) ---------
    // Reads `length` bytes (any length, as transfer()) at physical `pa`. `allocate` false: the
    // lines the system cache does not hold are read with ReadOnce and not kept (bulk payloads the
    // host will overwrite: kept lines would cost the host a snoop per line).
    RaResult read_physical(uint64_t pa, void* bytes, uint64_t length, sc_core::sc_time& delay,
                           bool allocate = true);
    // Calls `fn` once, with the time, when the line holding `pa` leaves the system cache: a snoop
    // takes it (another agent is about to write it) or the cache evicts it (the watcher must read
    // it again to keep watching). A watcher reads the line after watching it, so a write racing
    // the read still wakes it. A new watch of a line replaces the old one.
    using Watcher = std::function<void(const sc_core::sc_time& at)>;
    void watch(uint64_t pa, Watcher fn);
    void unwatch(uint64_t pa);

    core::CoherentCache& cache() { return *cache_; }
    core::LineState state(uint64_t physical) const { return cache_->state(physical); }
    const CcixConfig& config() const { return cfg_; }
    const std::string& last_error() const { return last_error_; }

  private:
    class LinkHome;
    struct Failure : std::runtime_error {
        using std::runtime_error::runtime_error;
    };
    enum class Op { Load, Store };
    struct Mode {
        bool physical;  // the address is translated already
        bool allocate;  // false: loads of lines not held are ReadOnce
        explicit Mode(bool p = false, bool a = true) : physical(p), allocate(a) {}
    };

    RaResult access(Op op, uint32_t pasid, uint64_t va, uint8_t* bytes, unsigned length,
                    sc_core::sc_time& delay, Mode mode = Mode());
    RaResult lines(bool write, uint32_t pasid, uint64_t va, uint8_t* bytes, uint64_t length,
                   sc_core::sc_time& delay, Mode mode);
    void fire(uint64_t line, const sc_core::sc_time& at);  // the line's watcher, if any
    // Translates `va`; fills `pa` or returns the reason.
    std::string translate(uint64_t va, uint64_t& pa, uint64_t& page_end, sc_core::sc_time& delay);
    RaResult fail(core::Counter& counter, const std::string& why);
    // One coherent request over VC1 (the proxy's CoherentHome::request). Throws Failure.
    core::CoherentHome::Result send(core::CohRequest req, uint64_t line, uint8_t* data,
                                    sc_core::sc_time& delay, const core::AtomicRequest* a,
                                    unsigned offset);
    void snoop_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    void accel_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned snoop_dbg(tlm::tlm_generic_payload& gp);
    // Decodes a snoop arriving on snoop_target; "" or what is wrong.
    std::string check_snoop(const tlm::tlm_generic_payload& gp, CcixHeader& h) const;

    CcixConfig cfg_;
    Atc* atc_;
    uint32_t pasid_;
    core::Services& services_;
    Sync sync_;
    std::unique_ptr<LinkHome> home_;
    std::unique_ptr<core::CoherentCache> cache_;
    bool overlapping_ = false;  // inside transfer(): the cache must not synchronise
    sc_core::sc_time issue_, request_, response_, read_return_, atomic_extra_, snoop_time_;
    sc_core::sc_time* current_ = nullptr;  // the caller's delay while an access runs
    uint16_t tag_ = 0;
    CcixTransactionPool transactions_;  // the requests' payloads, reused
    std::string last_error_;
    std::unordered_map<uint64_t, Watcher> watched_;  // line -> its watcher
    core::Counter* requests_[core::kCohRequests];
    core::Counter &loads_, &stores_, &atomics_, &snoops_, &snoop_data_, &refused_, &ats_failures_,
        &errors_;
    core::Distribution &read_latency_, &write_latency_, &atomic_latency_;
    int track_;
};

}  // namespace canopy::link
