#include "platform/root_port.hpp"

#include "core/payload.hpp"
#include "link/atc.hpp"

namespace canopy::platform {

RootPort::RootPort(sc_core::sc_module_name name, host::Iommu& iommu, uint32_t default_pasid,
                   core::Services& services)
    : sc_module(name),
      link_target("link_target"),
      walk_target("walk_target"),
      memory_initiator("memory_initiator"),
      iommu_(iommu),
      default_pasid_(default_pasid),
      ats_(services.stats.counter(this->name(), "ats", "ATS translation requests answered")),
      ats_failures_(
          services.stats.counter(this->name(), "ats_failures", "ATS answers with R = W = 0")),
      memory_(services.stats.counter(this->name(), "memory",
                                     "memory requests forwarded to host memory")),
      trace_(services.trace) {
    link_target.register_b_transport(this, &RootPort::b_transport);
    link_target.register_transport_dbg(this, &RootPort::transport_dbg);
    walk_target.register_b_transport(this, &RootPort::walk_b_transport);
}

void RootPort::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const auto* tlp = gp.get_extension<core::TlpExt>();
    const bool ats = tlp && tlp->type == core::TlpExt::Type::AtsTranslate;
    if (!ats) {
        memory_.add();
        return memory_initiator->b_transport(gp, delay);
    }
    if (tlp->at != core::TlpExt::AddressType::TranslationRequest || gp.is_write() ||
        gp.get_data_length() != link::kAtsEntryBytes || !gp.get_data_ptr())
        return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    ats_.add();
    ++ats_requests_;
    const uint32_t pasid = tlp->pasid ? tlp->pasid : default_pasid_;
    const core::TransactionTrace::FlowScope flow(trace_, core::flow_of(gp));
    const host::AtsResult r = iommu_.translate(pasid, gp.get_address(), delay);
    link::AtsEntry e;  // R = W = 0 unless the IOMMU translated it
    if (r.ok) {
        e.physical_page = r.pa_base;
        e.page_bytes = r.page_bytes;
        e.read = e.write = true;
    } else {
        ats_failures_.add();
    }
    const uint64_t raw = e.encode();
    for (uint32_t i = 0; i < link::kAtsEntryBytes; ++i)
        gp.get_data_ptr()[i] = uint8_t(raw >> (8 * i));
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void RootPort::walk_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    memory_initiator->b_transport(gp, delay);
}

unsigned RootPort::transport_dbg(tlm::tlm_generic_payload& gp) {
    const auto* tlp = gp.get_extension<core::TlpExt>();
    if (tlp && tlp->type == core::TlpExt::Type::AtsTranslate) return 0;
    return memory_initiator->transport_dbg(gp);
}

}  // namespace canopy::platform
