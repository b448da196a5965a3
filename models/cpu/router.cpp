#include "cpu/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace canopy::cpu {

Router::Router(sc_core::sc_module_name name, std::vector<Mapping> map)
    : sc_module(name), target("target"), port("port", map.size()), map_(std::move(map)) {
    for (size_t i = 0; i < map_.size(); ++i) {
        if (map_[i].size == 0 || map_[i].base + map_[i].size - 1 < map_[i].base)
            throw std::invalid_argument(std::string(this->name()) + ": mapping " + map_[i].name +
                                        " is empty or wraps around");
        by_base_.push_back(i);
    }
    std::sort(by_base_.begin(), by_base_.end(),
              [&](size_t a, size_t b) { return map_[a].base < map_[b].base; });
    for (size_t k = 1; k < by_base_.size(); ++k) {
        const Mapping &prev = map_[by_base_[k - 1]], &cur = map_[by_base_[k]];
        if (prev.base + prev.size > cur.base)
            throw std::invalid_argument(std::string(this->name()) + ": mappings " + prev.name +
                                        " and " + cur.name + " overlap");
    }
    target.register_b_transport(this, &Router::b_transport);
    target.register_transport_dbg(this, &Router::transport_dbg);
    target.register_get_direct_mem_ptr(this, &Router::get_direct_mem_ptr);
    for (size_t i = 0; i < port.size(); ++i)
        port[i].register_invalidate_direct_mem_ptr(this, &Router::invalidate, int(i));
}

int Router::decode(uint64_t addr) const {
    auto it = std::upper_bound(by_base_.begin(), by_base_.end(), addr,
                               [&](uint64_t a, size_t i) { return a < map_[i].base; });
    if (it == by_base_.begin()) return -1;
    const Mapping& m = map_[*std::prev(it)];
    return addr - m.base < m.size ? int(*std::prev(it)) : -1;
}

void Router::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address();
    const int i = decode(addr);
    if (i < 0 || gp.get_data_length() > map_[i].size - (addr - map_[i].base)) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    gp.set_address(addr - map_[i].base);
    port[i]->b_transport(gp, delay);
    gp.set_address(addr);
}

unsigned Router::transport_dbg(tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    const int i = decode(addr);
    if (i < 0) return 0;
    const Mapping& m = map_[i];
    const unsigned len = gp.get_data_length();
    const uint64_t room = m.size - (addr - m.base);
    if (len > room) gp.set_data_length(unsigned(room));  // the rest belongs to another target
    gp.set_address(addr - m.base);
    const unsigned n = port[i]->transport_dbg(gp);
    gp.set_address(addr);
    gp.set_data_length(len);
    return n;
}

bool Router::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    const uint64_t addr = gp.get_address();
    const int i = decode(addr);
    if (i < 0) {
        // Refuse for the whole gap between mappings, so the initiator asks once.
        uint64_t lo = 0, hi = ~uint64_t(0);
        for (const auto& m : map_) {
            if (m.base + m.size <= addr) lo = std::max(lo, m.base + m.size);
            if (m.base > addr) hi = std::min(hi, m.base - 1);
        }
        dmi.set_start_address(lo);
        dmi.set_end_address(hi);
        dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
        return false;
    }
    const Mapping& m = map_[i];
    gp.set_address(addr - m.base);
    const bool ok = port[i]->get_direct_mem_ptr(gp, dmi);
    gp.set_address(addr);
    // Back to initiator addresses, clipped to this mapping (target addresses start at 0).
    uint64_t start = dmi.get_start_address(), end = dmi.get_end_address();
    if (end > m.size - 1) end = m.size - 1;
    if (start > end) start = end;
    dmi.set_start_address(m.base + start);
    dmi.set_end_address(m.base + end);
    return ok;
}

void Router::invalidate(int id, sc_dt::uint64 start, sc_dt::uint64 end) {
    const Mapping& m = map_[size_t(id)];
    if (start >= m.size) return;
    end = std::min<sc_dt::uint64>(end, m.size - 1);
    target->invalidate_direct_mem_ptr(m.base + start, m.base + end);
}

}  // namespace canopy::cpu
