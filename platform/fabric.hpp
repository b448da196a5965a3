// Small pieces of interconnect the platform wires models with: a fan-in of several initiators
// onto one target (the device's internal interconnect in front of the link, as the ATS Switch
// of the paper's Xilinx design; the host cores' path to the root complex for MMIO), and a BAR
// decoder that turns a host physical address inside a device's BAR into an offset for the
// register block whose window holds it (as an endpoint decodes its BARs). Both are free: their time
// is in the link's layer latencies and the targets' own.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

namespace canopy::platform {

class FanIn : public sc_core::sc_module {
  public:
    tlm_utils::multi_passthrough_target_socket<FanIn> in;
    tlm_utils::simple_initiator_socket<FanIn> out;

    explicit FanIn(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
        in.register_b_transport(this, &FanIn::b_transport);
        in.register_transport_dbg(this, &FanIn::transport_dbg);
        in.register_get_direct_mem_ptr(this, &FanIn::get_direct_mem_ptr);
        out.register_invalidate_direct_mem_ptr(this, &FanIn::invalidate_direct_mem_ptr);
    }

  private:
    void b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        out->b_transport(gp, d);
    }
    unsigned transport_dbg(int, tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }
    // DMI passes through (an SPU core fetches from its IMEM by pointer); a revocation goes back to
    // every initiator.
    bool get_direct_mem_ptr(int, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
        return out->get_direct_mem_ptr(gp, dmi);
    }
    void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
        for (unsigned i = 0; i < in.size(); ++i) in[i]->invalidate_direct_mem_ptr(start, end);
    }
};

// An initiator that sends nothing, for a target nothing else drives (a channel of the NAND array
// whose place a model from outside took): SystemC wants every socket bound.
class IdleInitiator : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<IdleInitiator> out;
    explicit IdleInitiator(sc_core::sc_module_name name) : sc_module(name), out("out") {}
};

class BarDecoder : public sc_core::sc_module {
  public:
    // A register block inside the BAR: its byte offset from the BAR's base and its size.
    struct Window {
        uint64_t offset, bytes;
    };
    tlm_utils::simple_target_socket<BarDecoder> in;
    // One binding per window, in the order of `windows`; a block sees offsets from its window.
    tlm_utils::multi_passthrough_initiator_socket<BarDecoder> out;

    BarDecoder(sc_core::sc_module_name name, uint64_t base, uint64_t bytes,
               std::vector<Window> windows)
        : sc_module(name),
          in("in"),
          out("out"),
          base_(base),
          bytes_(bytes),
          windows_(std::move(windows)) {
        in.register_b_transport(this, &BarDecoder::b_transport);
        in.register_transport_dbg(this, &BarDecoder::transport_dbg);
    }
    uint64_t base() const { return base_; }
    uint64_t bytes() const { return bytes_; }

  private:
    // The window holding the whole access, or -1 (outside the BAR or every block).
    int window(const tlm::tlm_generic_payload& gp) const {
        const uint64_t a = gp.get_address(), n = gp.get_data_length();
        if (a < base_ || n > bytes_ || a - base_ > bytes_ - n) return -1;
        for (size_t i = 0; i < windows_.size(); ++i) {
            const Window& w = windows_[i];
            const uint64_t off = a - base_;
            if (off >= w.offset && n <= w.bytes && off - w.offset <= w.bytes - n) return int(i);
        }
        return -1;
    }
    // Forwards with the offset in the window and restores the address, as the initiator expects.
    template <class F>
    auto forward(tlm::tlm_generic_payload& gp, int w, F&& f) {
        const uint64_t a = gp.get_address();
        gp.set_address(a - base_ - windows_[size_t(w)].offset);
        auto r = f();
        gp.set_address(a);
        return r;
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        const int w = window(gp);
        if (w < 0) return gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        forward(gp, w, [&] {
            out[w]->b_transport(gp, d);
            return 0;
        });
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) {
        const int w = window(gp);
        if (w < 0) return 0;
        return forward(gp, w, [&] { return out[w]->transport_dbg(gp); });
    }
    uint64_t base_, bytes_;
    std::vector<Window> windows_;
};

}  // namespace canopy::platform
