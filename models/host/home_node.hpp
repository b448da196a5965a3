// The home node of the N1-SDP host (the CMN-600 mesh's HN-F with its system-level cache, SLC):
// the point of coherence of host memory (seeds/003 Sections II-III: the host's home agent, which
// CCIX extends to the device). Every coherent cache of the platform is a requester of it: the
// host cores' private caches now, the device's CCIX request agent (through the link's home agent)
// later. I/O traffic from the root complex (PCIe DMA, IOMMU table walks) enters at `io_target`,
// I/O-coherent: reads see the newest data, writes invalidate cached copies.
//
// Protocol (core/coherence.hpp, CHI style). The home keeps an exact snoop filter: for every line
// some requester caches, the set of holders and whether one of them holds it unique. Requests:
//   ReadShared   owner snooped Shared (dirty data comes back to the home); granted UC when no one
//                else holds the line (the MESI "exclusive"), else SC
//   ReadUnique   every other holder snooped Unique; granted UC
//   CleanUnique  every other holder snooped Invalidate; granted UC, no data
//   ReadOnce     owner snooped Once; data returned, nothing tracked
//   WriteBack    dirty data written into the SLC; the holder leaves the filter (Evict: no data)
//   Atomic       every holder snooped Unique, the atomic performed in the SLC (a far atomic, as
//                CMN-600 executes ARMv8.1 LSE atomics at the HN-F)
// Dirty data always returns to the home on a snoop (no SD forwarding) and lands in the SLC, which
// is a victim cache of the requesters (filled by write-backs, snooped data and atomics, not by
// reads: CMN-600's SLC with N1 cores), write-back to DRAM on eviction, off every requester's
// path.
//
// Timing (loosely timed, never waits; each call adds to the caller's delay): request_ns for the
// mesh round trip and the home's pipeline, then the snoops (in parallel: the slowest counts;
// each snoop_ns plus the snooper's own time), then, unless a snoop supplied the data, the SLC
// (slc_hit_ns) and on an SLC miss DRAM through `memory_initiator`. Requests are serialised per
// call: SystemC runs one process at a time and no call waits, so every request is atomic. As an
// HN-F's address hazard check does, a request to a line another request still occupies waits
// until that one completes (stat `hazard_wait`): contention on one line costs time.
//
// Trace ("host" category): a slice per request, named by its type, and per I/O access, in the
// flow of the request that caused it (a core's load, the device's CCIX access, a DMA).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "core/cache_array.hpp"
#include "core/coherence.hpp"
#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::host {

struct HomeNodeConfig {
    // N1-SDP: 8 MiB SLC in the CMN-600 (Arm N1-SDP TRM); 16 ways assumed; 64 B lines as CCIX's.
    core::CacheGeometry slc{8ull << 20, 16, 64};
    // Assumed: with slc_hit_ns it gives the host's ~50 ns AtomicCompare on a hot line
    // (CALIBRATION E5: a far atomic at the HN-F = request_ns + slc_hit_ns).
    double request_ns = 20.0;
    double slc_hit_ns = 30.0;  // assumed, see request_ns
    // Assumed: one snoop from the HN-F to a core's L2 and back across the mesh.
    double snoop_ns = 15.0;
    void describe(core::Params& p);  // keys relative to the caller's scope ("host.home.")
    void validate() const;
};

class HomeNode : public sc_core::sc_module, public core::CoherentHome {
  public:
    static constexpr unsigned kMaxRequesters = 32;

    tlm_utils::simple_initiator_socket<HomeNode> memory_initiator;  // to HostMemory::socket
    tlm_utils::simple_target_socket<HomeNode> io_target;            // I/O-coherent, any size

    HomeNode(sc_core::sc_module_name name, const HomeNodeConfig& cfg, core::Services& services);

    // Registers a coherent cache; returns its requester id (at most kMaxRequesters).
    unsigned attach(core::Snoopable& cache, const std::string& name) override;
    Result request(unsigned requester, core::CohRequest req, uint64_t line_address, uint8_t* line,
                   sc_core::sc_time& delay, const core::AtomicRequest* atomic = nullptr,
                   unsigned offset = 0) override;

    // Untimed, coherent: the newest bytes (a dirty copy in a cache, else the SLC, else DRAM);
    // writes invalidate every cached copy first. For loaders, experiment set-up and tests.
    void read_coherent(uint64_t address, uint8_t* bytes, uint64_t length);
    void write_coherent(uint64_t address, const uint8_t* bytes, uint64_t length);

    // Drops every cached copy of [address, address + length) without writing anything back:
    // the kernel's cache maintenance when it frees frames (their contents are dead).
    void discard(uint64_t address, uint64_t length);

    // Snoop-filter view of a line, for tests and experiments.
    struct Holders {
        uint32_t sharers = 0;  // bit r: requester r holds the line
        int owner = -1;        // requester holding it unique, or -1
    };
    Holders holders(uint64_t address) const;
    uint32_t line_bytes() const override { return cfg_.slc.line_bytes; }
    const HomeNodeConfig& config() const { return cfg_; }

  private:
    struct Requester {
        core::Snoopable* cache;
        std::string name;
    };
    void io_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned io_dbg(tlm::tlm_generic_payload& gp);

    // Snoops every holder in `mask` with `kind` at offset `at` of the caller's delay; leaves dirty
    // data in `line` (and in the SLC unless kind is Once); returns the slowest snoop's time.
    // Updates the filter.
    struct LineEntry;
    sc_core::sc_time snoop(uint64_t line_address, LineEntry& e, uint32_t mask, core::SnoopKind kind,
                           uint8_t* line, bool& got_data,
                           const sc_core::sc_time& at = sc_core::SC_ZERO_TIME);
    // The line's data from the SLC or DRAM; returns the time it took.
    sc_core::sc_time fetch(uint64_t line_address, uint8_t* line);
    // Puts (dirty) data of a line in the SLC, evicting to DRAM as needed.
    void slc_write(uint64_t line_address, const uint8_t* line);
    void memory_access(bool write, uint64_t address, uint8_t* bytes, uint64_t length,
                       sc_core::sc_time& delay, bool debug = false);
    // Snoops a line's holders for an I/O access: `invalidate` takes every copy away (dirty data
    // to the SLC), else the owner is snooped Once and its dirty data, if any, is left in `line`
    // with `got` set. Returns the snoop time.
    sc_core::sc_time newest(uint64_t line_address, uint8_t* line, bool invalidate, bool& got,
                            const sc_core::sc_time& at = sc_core::SC_ZERO_TIME);

    HomeNodeConfig cfg_;
    // The config's latencies as sc_time, made once (each request adds some of them).
    sc_core::sc_time t_request_, t_snoop_, t_slc_hit_;
    core::CacheArray slc_;
    // Scratch lines and the DRAM payload (snoop(), request() and the DRAM are never re-entered:
    // requests do not wait). A payload per DRAM access cost an allocation.
    std::vector<uint8_t> snoop_buf_, atomic_buf_;
    tlm::tlm_generic_payload dram_gp_;
    std::vector<Requester> requesters_;
    // A line's snoop-filter entry and when the request occupying it completes (absolute). One
    // map, one look-up per request; entries with no holder stay until their time has passed.
    struct LineEntry {
        Holders holders;
        sc_core::sc_time busy_until;
        bool idle(const sc_core::sc_time& now) const {
            return holders.sharers == 0 && holders.owner < 0 && busy_until <= now;
        }
    };
    std::unordered_map<uint64_t, LineEntry> lines_;
    uint64_t requests_since_prune_ = 0;
    // Drops the entry of `line_address` if it is idle.
    void forget_if_idle(uint64_t line_address);
    core::Counter* requests_[core::kCohRequests];
    core::Counter &snoops_, &snoop_data_, &slc_hits_, &slc_misses_, &dram_reads_, &dram_writes_,
        &io_reads_, &io_writes_, &errors_;
    core::Distribution& latency_;
    core::Distribution& hazard_wait_;
    core::Services& services_;
    int track_;
};

}  // namespace canopy::host
