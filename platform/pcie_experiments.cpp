#include "platform/pcie_experiments.hpp"

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <systemc>

#include "core/services.hpp"
#include "core/sim_time.hpp"
#include "host/host_memory.hpp"
#include "host/iommu.hpp"
#include "host/page_table.hpp"
#include "link/atc.hpp"
#include "link/dma_engine.hpp"
#include "link/pcie_link.hpp"
#include "link/tlp.hpp"
#include "platform/ccix_experiments.hpp"
#include "platform/root_port.hpp"

namespace canopy::platform {

namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

constexpr uint64_t kDeviceBase = 0;  // device memory at 0 on the DMA engine's device socket

struct Idle : sc_core::sc_module {  // binds the link's host_target (no MMIO in these experiments)
    tlm_utils::simple_initiator_socket<Idle> socket;
    explicit Idle(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
};

// The endpoint's internal interconnect in front of the link (the ATS Switch of the paper's
// Xilinx design): the ATC's translation requests and the DMA engine's memory requests both
// leave through it; the link's device_target takes one initiator.
struct DeviceMux : sc_core::sc_module {
    tlm_utils::simple_target_socket<DeviceMux> ats_target, dma_target;
    tlm_utils::simple_initiator_socket<DeviceMux> link_initiator;
    explicit DeviceMux(sc_core::sc_module_name n)
        : sc_module(n),
          ats_target("ats_target"),
          dma_target("dma_target"),
          link_initiator("link_initiator") {
        ats_target.register_b_transport(this, &DeviceMux::forward);
        dma_target.register_b_transport(this, &DeviceMux::forward);
    }
    void forward(tlm::tlm_generic_payload& gp, sc_time& delay) {
        link_initiator->b_transport(gp, delay);
    }
};

host::HostMemoryConfig device_memory() {
    host::HostMemoryConfig c;
    c.size_bytes = 1 << 20;
    c.latency_ns = 0;  // assumed: the device's on-chip buffer, its time is in the DMA engine's
    return c;
}

link::DmaConfig dma_config(const PlatformConfig& base, bool translate) {
    link::DmaConfig c = base.device.dma;
    c.translate = translate;
    return c;
}

std::string named(const std::string& prefix, const char* name) { return prefix + name; }

}  // namespace

struct PcieRig::Parts {
    Parts(bool translate, const PlatformConfig& base, const std::string& n)
        : pcie_(base.pcie),
          hmem_(named(n, "host_memory").c_str(), base.host.memory, services_),
          frames_(hmem_.size()),
          space_(hmem_, frames_),
          iommu_(named(n, "iommu").c_str(), base.host.iommu, services_),
          root_(named(n, "root_port").c_str(), iommu_, kPasid, services_),
          link_(named(n, "link").c_str(), base.pcie, services_),
          atc_(named(n, "atc").c_str(), base.device.atc, services_),
          dma_(named(n, "dma").c_str(), dma_config(base, translate), services_, &atc_),
          ctg_(named(n, "ctg").c_str(), base.device.ctg, services_, &dma_),
          devmem_(named(n, "device_memory").c_str(), device_memory(), services_),
          mmio_(named(n, "device_mmio").c_str(), device_memory(), services_),
          cpu_(named(n, "host_cpu").c_str()),
          mux_(named(n, "device_mux").c_str()),
          ctg_sink_(named(n, "ctg_sink").c_str(), device_memory(), services_) {
        iommu_.attach(kPasid, space_);
        iommu_.walk_socket.bind(root_.walk_target);
        root_.memory_initiator.bind(hmem_.socket);
        link_.host_initiator.bind(root_.link_target);
        cpu_.socket.bind(link_.host_target);
        link_.device_initiator.bind(mmio_.socket);
        atc_.ats_initiator.bind(mux_.ats_target);
        dma_.host_initiator.bind(mux_.dma_target);
        mux_.link_initiator.bind(link_.device_target);
        dma_.device_initiator.bind(devmem_.socket);
        ctg_.direct_initiator.bind(ctg_sink_.socket);  // the CTG's direct path is unused here
    }
    link::PcieConfig pcie_;
    core::Services services_;
    host::HostMemory hmem_;
    host::FrameAllocator frames_;
    host::AddressSpace space_;
    host::Iommu iommu_;
    RootPort root_;
    link::PcieLink link_;
    link::Atc atc_;
    link::DmaEngine dma_;
    link::TrafficGenerator ctg_;
    host::HostMemory devmem_, mmio_;
    Idle cpu_;
    DeviceMux mux_;
    host::HostMemory ctg_sink_;
};

PcieRig::PcieRig(bool translate, const PlatformConfig& base, const std::string& prefix)
    : p_(std::make_unique<Parts>(translate, base, prefix)) {}
PcieRig::~PcieRig() = default;

void PcieRig::elaborate() {
    if (sc_core::sc_get_status() == sc_core::SC_ELABORATION)
        sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

double PcieRig::ats_link_round_trip_ns() const { return link::ats_link_round_trip_ns(p_->pcie_); }

uint64_t PcieRig::mmap(uint64_t bytes, uint64_t page) { return p_->space_.mmap(bytes, page); }
uint64_t PcieRig::physical(uint64_t bytes) { return p_->frames_.allocate(bytes, host::kPage4K); }

link::DmaResult PcieRig::read(uint64_t va, uint64_t len) {
    return transfer(link::DmaDirection::HostToDevice, va, len);
}

link::DmaResult PcieRig::transfer(link::DmaDirection dir, uint64_t host, uint64_t len) {
    sc_time d = now_;
    link::DmaResult r = p_->dma_.execute(link::DmaDescriptor{dir, host, kDeviceBase, len}, d);
    if (!r.ok) throw std::logic_error("pcie experiment: DMA transfer failed: " + r.error);
    now_ = d + sc_time(10, sc_core::SC_US);
    return r;
}

uint32_t PcieRig::ctg_run(const link::CtgRequest& req) {
    sc_time d = now_ - sc_core::sc_time_stamp();
    const uint32_t ok = p_->ctg_.run(req, d);
    now_ = sc_core::sc_time_stamp() + d;
    return ok;
}

void PcieRig::sync() {
    if (now_ > sc_core::sc_time_stamp()) sc_core::sc_start(now_ - sc_core::sc_time_stamp());
    p_->ctg_.clear();
    p_->dma_.clear_results();
}

double PcieRig::iommu_answer_ns(uint64_t va) {
    sc_time d = sc_core::SC_ZERO_TIME;
    const host::AtsResult r = p_->iommu_.translate(kPasid, va, d);
    if (!r.ok) throw std::logic_error("ats-cost: IOMMU translation failed");
    return core::ns_of(d);
}

uint64_t PcieRig::ats_requests() const { return p_->root_.ats_requests(); }

void PcieRig::flush_translations() {
    p_->atc_.invalidate_all();
    p_->iommu_.invalidate_all();
}

core::Services& PcieRig::services() { return p_->services_; }
link::TrafficGenerator& PcieRig::ctg() { return p_->ctg_; }
link::DmaEngine& PcieRig::dma() { return p_->dma_; }
link::Atc& PcieRig::atc() { return p_->atc_; }

namespace {

struct Sweep {
    uint64_t translations = 0;  // ATS requests that reached the host
    double ns = 0;
};

// Reads [va, va + bytes) sequentially in `chunk`-byte descriptors.
Sweep sweep(PcieRig& b, uint64_t va, uint64_t bytes, uint64_t chunk) {
    Sweep s;
    const uint64_t before = b.ats_requests();
    for (uint64_t off = 0; off < bytes; off += chunk) {
        const link::DmaResult r = b.read(va + off, chunk);
        s.ns += r.latency_ns;
    }
    s.translations = b.ats_requests() - before;
    return s;
}

}  // namespace

std::vector<ExpRow> ats_cost(const ExpOptions& o) {
    const bool quick = o.quick;
    const PlatformConfig base = o.platform();
    // The CCIX side elaborates the whole platform in a child process: before this process's rigs.
    const std::vector<ExpRow> ccix = ccix_ats_cost(base);
    std::vector<ExpRow> rows;
    // A second rig with a blocking ATC (one translation at a time, each page translated only
    // after the previous one moved) shows what overlapping the translations buys.
    PlatformConfig blocking_base = base;
    blocking_base.device.atc.max_outstanding = 1;
    PcieRig b(true, base), blocking(true, blocking_base, "blocking_");
    PcieRig::elaborate();
    const uint64_t K = 1024, M = K * K;
    const uint64_t sweep_bytes = quick ? 2 * M : 8 * M;
    const uint64_t small = b.mmap(1 * M, host::kPage4K);
    const uint64_t seq4k = b.mmap(sweep_bytes, host::kPage4K);
    const uint64_t seq2m = b.mmap(sweep_bytes, host::kPage2M);

    // 64 B: a cold read (ATC miss, IOTLB miss: a 4-level walk), then the same read again (ATC hit).
    const double miss64 = b.read(small, 64).latency_ns;
    const double hit64 = b.read(small, 64).latency_ns;
    // The paper's 2453 and 700 ns are CCIX figures (its Fig. 3, the CTG's reads through the
    // request agent: rows E2.20, E2.21); the DMA engine's reads are longer (E1), so these rows
    // carry no published value.
    rows.push_back({"E2.1",
                    "DMA 64 B read, ATC miss (ATS request, IOMMU walk; no published DMA value)",
                    miss64, 0, "ns"});
    rows.push_back({"E2.2", "DMA 64 B read, ATC hit (no published DMA value)", hit64, 0, "ns"});
    rows.push_back(
        {"E2.3", "64 B read miss/hit ratio (paper: miss ~3x hit)", miss64 / hit64, 3.0, "x"});

    // 32 KiB: cold (every page misses the ATC; the IOMMU prefetch turns walks after the first
    // into IOTLB hits) against warm (every page hits the ATC). The engine requests the pages'
    // translations ahead (link.atc.max_outstanding in flight), so only the first page's miss
    // is exposed; the rest overlap the transfer.
    const uint64_t big = small + 64 * K;
    const double miss32k = b.read(big, 32 * K).latency_ns;
    const double hit32k = b.read(big, 32 * K).latency_ns;
    rows.push_back(
        {"E2.4", "32 KiB read, cold ATC and IOTLB (no published value)", miss32k, 0, "ns"});
    rows.push_back(
        {"E2.5", "32 KiB read, ATC hit on every page (no published value)", hit32k, 0, "ns"});
    // The paper's "transfer dominates from 32 KiB" is a CCIX measurement (E2.25).
    rows.push_back({"E2.6",
                    "32 KiB read miss/hit ratio, DMA path (no published value: the paper's is "
                    "the CCIX side, E2.25)",
                    miss32k / hit32k, 0, "x"});

    // First access vs later sequential 64 B reads, each on the next 4 KiB page (ATC miss each).
    const uint64_t seq = small + 256 * K;
    const int steps = quick ? 8 : 32;
    const double first = b.read(seq, 64).latency_ns;
    double later = 0, later_max = 0;
    for (int i = 1; i < steps; ++i) {
        const double l = b.read(seq + uint64_t(i) * host::kPage4K, 64).latency_ns;
        later += l;
        later_max = std::max(later_max, l);
    }
    later /= steps - 1;
    rows.push_back({"E2.7",
                    "first DMA 64 B read of a buffer (cold, longest; no published DMA value)",
                    first, 0, "ns"});
    rows.push_back({"E2.8",
                    "later DMA 64 B reads crossing 4 KiB pages, mean (paper: cheaper than the "
                    "first; no published DMA value)",
                    later, 0, "ns"});
    rows.push_back({"E2.9",
                    "later DMA 64 B reads crossing 4 KiB pages, max (no published DMA value)",
                    later_max, 0, "ns"});

    // The IOMMU's answer to one request on a cold 4 KiB page.
    rows.push_back({"E2.10", "IOMMU answer to one ATS request (IOTLB miss, 4 KiB page)",
                    b.iommu_answer_ns(small + 512 * K), 617, "ns"});

    // 4 KiB vs 2 MiB pages: a sequential sweep in 32 KiB descriptors from cold.
    b.flush_translations();
    const Sweep s4 = sweep(b, seq4k, sweep_bytes, 32 * K);
    b.flush_translations();
    const Sweep s2 = sweep(b, seq2m, sweep_bytes, 32 * K);
    const std::string mib = std::to_string(sweep_bytes / M) + " MiB";
    rows.push_back({"E2.11",
                    "ATS requests for a " + mib + " sweep, 4 KiB pages (no published value)",
                    double(s4.translations), 0, "count"});
    rows.push_back({"E2.12",
                    "ATS requests for a " + mib + " sweep, 2 MiB pages (no published value)",
                    double(s2.translations), 0, "count"});
    rows.push_back({"E2.13", "ATS requests 4 KiB / 2 MiB pages (paper: fewer with huge pages)",
                    double(s4.translations) / double(s2.translations), 1.0, "x", 1.0,
                    std::numeric_limits<double>::infinity()});
    rows.push_back({"E2.14", "sweep throughput, 4 KiB pages (no published value)",
                    double(sweep_bytes) / s4.ns, 0, "GB/s"});
    rows.push_back({"E2.15", "sweep throughput, 2 MiB pages (no published value)",
                    double(sweep_bytes) / s2.ns, 0, "GB/s"});
    rows.push_back({"E2.16",
                    "link round trip of one ATS request (modelled, part of the paper's 1136 ns ATC "
                    "residual; no published value)",
                    b.ats_link_round_trip_ns(), 0, "ns"});
    rows.push_back({"E2.17",
                    "ATS share of a cold 32 KiB read, (cold - warm) / cold (paper: transfer "
                    "dominates)",
                    (miss32k - hit32k) / miss32k, 0.5, "x", 0.0, 0.5});

    // The same 32 KiB reads with a blocking ATC: each page pays its own ATS round trip.
    const uint64_t bsmall = blocking.mmap(1 * M, host::kPage4K);
    const double bmiss32k = blocking.read(bsmall, 32 * K).latency_ns;
    const double bhit32k = blocking.read(bsmall, 32 * K).latency_ns;
    rows.push_back({"E2.18",
                    "32 KiB read, cold, blocking ATC (link.atc.max_outstanding = 1; no published "
                    "value)",
                    bmiss32k, 0, "ns"});
    rows.push_back({"E2.19", "32 KiB read miss/hit ratio, blocking ATC (no published value)",
                    bmiss32k / bhit32k, 0, "x"});
    rows.insert(rows.end(), ccix.begin(), ccix.end());
    return rows;
}

std::vector<ExpRow> pcie_latency(const ExpOptions& o) {
    const bool quick = o.quick;
    std::vector<ExpRow> rows;
    PcieRig b(false, o.platform());
    PcieRig::elaborate();
    const uint64_t K = 1024;
    const uint64_t host = b.physical(32 * K);
    const int repeats = quick ? 1 : 4;  // the model is deterministic; repeats check it stays so
    auto mean_latency = [&](link::DmaDirection dir, uint64_t bytes) {
        double sum = 0;
        for (int i = 0; i < repeats; ++i) sum += b.transfer(dir, host, bytes).latency_ns;
        return sum / repeats;
    };
    int n = 0;
    for (uint64_t bytes = 32; bytes <= 32 * K; bytes *= 2) {
        const std::string size =
            bytes < K ? std::to_string(bytes) + " B" : std::to_string(bytes / K) + " KiB";
        const double rd = mean_latency(link::DmaDirection::HostToDevice, bytes);
        const double wr = mean_latency(link::DmaDirection::DeviceToHost, bytes);
        ++n;
        if (bytes <= 16 * K) {
            rows.push_back({"E1.r" + std::to_string(n),
                            "PCIe-DMA read device<-host " + size + " latency (no published value)",
                            rd, 0, "ns"});
            rows.push_back({"E1.w" + std::to_string(n),
                            "PCIe-DMA write device->host " + size + " latency (no published value)",
                            wr, 0, "ns"});
        }
        rows.push_back(
            {"E1.tr" + std::to_string(n),
             "PCIe-DMA read " + size + " throughput, one descriptor at a time (no published value)",
             double(bytes) / rd, 0, "GB/s"});
        rows.push_back({"E1.tw" + std::to_string(n),
                        "PCIe-DMA write " + size +
                            " throughput, one descriptor at a time (no published value)",
                        double(bytes) / wr, 0, "GB/s"});
    }
    return rows;
}

}  // namespace canopy::platform
