// The PCIe rig: the part of the platform the PCIe experiments of the CCIX-vs-PCIe paper
// (seeds/003 Section IV; CALIBRATION.md E1/E2: ats-cost, pcie-latency) and bench/link_bench.cpp
// run on, without the rest of the machine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "link/atc.hpp"
#include "link/dma_engine.hpp"
#include "link/traffic_generator.hpp"
#include "platform/platform_config.hpp"

namespace canopy::platform {

// The host (DRAM, one process's page tables, the IOMMU, the root port), the PCIe link and the
// device (CTG, DMA engine, ATC, its memory), configured as the platform's (`base`: host.memory,
// host.iommu, link.pcie, the device's ATC, DMA engine and CTG):
//
//   CTG -> DMA engine --+-- device mux -> link -> root port --+-- host memory
//          ATC ---------+                                     +-- IOMMU (walks via the root port)
//
// The DMA engine translates (virtual host addresses, ATS) or not (physical, as the paper's
// PCIe-DMA measurements). Construct every rig of a process, then call elaborate() once; then
// run descriptors directly, each starting at now() (the models are loosely timed), spaced so
// their wire occupancy never overlaps. Module names start with `prefix`.
class PcieRig {
  public:
    static constexpr uint32_t kPasid = 1;

    // The ATC's miss_overhead_ns is the paper's residual 2453 - 617 - 700 ns less the ATS
    // request's crossing of the link both ways, which the rig models on the link itself
    // (DeviceConfig::atc).
    PcieRig(bool translate, const PlatformConfig& base = PlatformConfig(),
            const std::string& prefix = "");
    ~PcieRig();
    // Ends elaboration (sc_start(SC_ZERO_TIME)) unless done already.
    static void elaborate();
    // The link's share of one ATS round trip (no other traffic).
    double ats_link_round_trip_ns() const;

    uint64_t mmap(uint64_t bytes, uint64_t page);  // virtual, in the process's address space
    uint64_t physical(uint64_t bytes);             // host frames (4 KiB aligned)

    // Reads `len` bytes at host address `va` into the device at now(); returns the result and
    // moves now() 10 us past its end. Throws std::logic_error when the transfer fails.
    link::DmaResult read(uint64_t va, uint64_t len);
    link::DmaResult transfer(link::DmaDirection dir, uint64_t host, uint64_t len);
    // Runs `req` on the CTG at now() and moves now() to its end; returns how many succeeded.
    uint32_t ctg_run(const link::CtgRequest& req);
    // Advances the kernel to now() (resources forget grants before it) and forgets results.
    void sync();

    // The IOMMU's own answer to one request (no link, no ATC).
    double iommu_answer_ns(uint64_t va);
    uint64_t ats_requests() const;  // answered by the root port so far
    void flush_translations();      // ATC and IOTLB

    core::Services& services();
    link::TrafficGenerator& ctg();
    link::DmaEngine& dma();
    link::Atc& atc();
    sc_core::sc_time& now() { return now_; }

  private:
    struct Parts;
    std::unique_ptr<Parts> p_;
    sc_core::sc_time now_ = sc_core::SC_ZERO_TIME;
};

}  // namespace canopy::platform
