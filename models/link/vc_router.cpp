#include "link/vc_router.hpp"

#include "core/payload.hpp"

namespace canopy::link {

VcRouter::VcRouter(sc_core::sc_module_name name, core::Services& services)
    : sc_module(name),
      target("target"),
      vc0("vc0"),
      vc1("vc1"),
      vc0_(services.stats.counter(this->name(), "vc0.transactions", "forwarded on VC0 (PCIe)")),
      vc1_(services.stats.counter(this->name(), "vc1.transactions", "forwarded on VC1 (CCIX)")),
      refused_(services.stats.counter(this->name(), "refused", "transactions naming no VC 0/1")) {
    target.register_b_transport(this, &VcRouter::b_transport);
    target.register_transport_dbg(this, &VcRouter::transport_dbg);
}

tlm_utils::simple_initiator_socket<VcRouter>* VcRouter::route(const tlm::tlm_generic_payload& gp) {
    const auto* tlp = gp.get_extension<core::TlpExt>();
    const unsigned vc = tlp ? tlp->vc : 0;
    if (vc == 0) return &vc0;
    if (vc == 1) return &vc1;
    last_error_ = std::string(name()) + ": virtual channel " + std::to_string(vc) +
                  " does not exist (VC0: PCIe, VC1: CCIX)";
    return nullptr;
}

void VcRouter::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* out = route(gp);
    if (!out) {
        refused_.add();
        return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    }
    (out == &vc0 ? vc0_ : vc1_).add();
    (*out)->b_transport(gp, delay);
}

unsigned VcRouter::transport_dbg(tlm::tlm_generic_payload& gp) {
    auto* out = route(gp);
    return out ? (*out)->transport_dbg(gp) : 0;
}

VcMerge::VcMerge(sc_core::sc_module_name name, core::Services& services)
    : sc_module(name),
      vc0("vc0"),
      vc1("vc1"),
      out("out"),
      refused_(services.stats.counter(this->name(), "refused",
                                      "transactions whose TlpExt names the other VC")) {
    vc0.register_b_transport(this, &VcMerge::b_transport0);
    vc1.register_b_transport(this, &VcMerge::b_transport1);
    vc0.register_transport_dbg(this, &VcMerge::transport_dbg0);
    vc1.register_transport_dbg(this, &VcMerge::transport_dbg1);
}

bool VcMerge::check(unsigned vc, const tlm::tlm_generic_payload& gp) {
    const auto* tlp = gp.get_extension<core::TlpExt>();
    const unsigned named = tlp ? tlp->vc : 0;
    if (named == vc) return true;
    last_error_ = std::string(name()) + ": a transaction for VC" + std::to_string(named) +
                  " arrived on the VC" + std::to_string(vc) + " input";
    return false;
}

void VcMerge::forward(unsigned vc, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!check(vc, gp)) {
        refused_.add();
        return gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    }
    out->b_transport(gp, delay);
}

unsigned VcMerge::forward_dbg(unsigned vc, tlm::tlm_generic_payload& gp) {
    return check(vc, gp) ? out->transport_dbg(gp) : 0;
}

}  // namespace canopy::link
