#include "platform/pcie_rig.hpp"

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

}  // namespace canopy::platform
