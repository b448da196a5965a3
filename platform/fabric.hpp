// Small pieces of interconnect the platform wires models with: a fan-in of several initiators
// onto one target (the device's internal interconnect in front of the link, as the ATS Switch
// of the paper's Xilinx design; the host cores' path to the root complex for MMIO), and a BAR
// decoder that turns a host physical address inside a device's BAR into an offset for the
// register block behind it (as an endpoint decodes its BARs). Both are free: their time is in
// the link's layer latencies and the targets' own.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>

namespace canopy::platform {

class FanIn : public sc_core::sc_module {
  public:
    tlm_utils::multi_passthrough_target_socket<FanIn> in;
    tlm_utils::simple_initiator_socket<FanIn> out;

    explicit FanIn(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
        in.register_b_transport(this, &FanIn::b_transport);
        in.register_transport_dbg(this, &FanIn::transport_dbg);
    }

  private:
    void b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        out->b_transport(gp, d);
    }
    unsigned transport_dbg(int, tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }
};

class BarDecoder : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<BarDecoder> in;
    tlm_utils::simple_initiator_socket<BarDecoder> out;

    BarDecoder(sc_core::sc_module_name name, uint64_t base, uint64_t bytes)
        : sc_module(name), in("in"), out("out"), base_(base), bytes_(bytes) {
        in.register_b_transport(this, &BarDecoder::b_transport);
        in.register_transport_dbg(this, &BarDecoder::transport_dbg);
    }
    uint64_t base() const { return base_; }
    uint64_t bytes() const { return bytes_; }

  private:
    bool inside(const tlm::tlm_generic_payload& gp) const {
        const uint64_t a = gp.get_address(), n = gp.get_data_length();
        return a >= base_ && n <= bytes_ && a - base_ <= bytes_ - n;
    }
    // Forwards with the offset and restores the address, as the initiator expects it back.
    template <class F>
    auto forward(tlm::tlm_generic_payload& gp, F&& f) {
        const uint64_t a = gp.get_address();
        gp.set_address(a - base_);
        auto r = f();
        gp.set_address(a);
        return r;
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        if (!inside(gp)) return gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        forward(gp, [&] {
            out->b_transport(gp, d);
            return 0;
        });
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) {
        if (!inside(gp)) return 0;
        return forward(gp, [&] { return out->transport_dbg(gp); });
    }
    uint64_t base_, bytes_;
};

}  // namespace canopy::platform
