#include "platform/write_tap.hpp"

namespace canopy::platform {

WriteTap::WriteTap(sc_core::sc_module_name name)
    : sc_module(name), target("target"), initiator("initiator") {
    target.register_b_transport(this, &WriteTap::b_transport);
    target.register_transport_dbg(this, &WriteTap::transport_dbg);
    target.register_get_direct_mem_ptr(this, &WriteTap::get_direct_mem_ptr);
    initiator.register_invalidate_direct_mem_ptr(this, &WriteTap::invalidate);
}

void WriteTap::watch_writes(uint64_t addr, uint64_t len, Watcher watcher) {
    if (len == 0) return;
    watches_.push_back({addr, addr + len - 1, std::move(watcher)});
    target->invalidate_direct_mem_ptr(addr, addr + len - 1);
}

void WriteTap::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    initiator->b_transport(gp, delay);
    if (!gp.is_write() || !gp.is_response_ok() || gp.get_data_length() == 0) return;
    const uint64_t lo = gp.get_address(), hi = lo + gp.get_data_length() - 1;
    for (const auto& w : watches_)
        if (lo <= w.hi && w.lo <= hi) w.watcher(lo, gp.get_data_ptr(), gp.get_data_length());
}

unsigned WriteTap::transport_dbg(tlm::tlm_generic_payload& gp) {
    return initiator->transport_dbg(gp);
}

bool WriteTap::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const uint64_t addr = gp.get_address();
    for (const auto& w : watches_)
        if (addr >= w.lo && addr <= w.hi) {
            dmi.set_start_address(w.lo);
            dmi.set_end_address(w.hi);
            dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
            return false;
        }
    const bool ok = initiator->get_direct_mem_ptr(gp, dmi);
    uint64_t lo = dmi.get_start_address(), hi = dmi.get_end_address();
    for (const auto& w : watches_) {
        if (w.hi < lo || w.lo > hi) continue;
        if (w.lo > addr)
            hi = w.lo - 1;  // keep the part below the watch
        else
            lo = w.hi + 1;  // or the part above it
    }
    if (ok && lo != dmi.get_start_address())
        dmi.set_dmi_ptr(dmi.get_dmi_ptr() + (lo - dmi.get_start_address()));
    dmi.set_start_address(lo);
    dmi.set_end_address(hi);
    return ok;
}

void WriteTap::invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
    target->invalidate_direct_mem_ptr(start, end);
}

}  // namespace canopy::platform
