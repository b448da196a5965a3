// The register block through which SPU-OS drives its SPU's network interface (Willow Section 3.1
// "RPC interface": RPCStartRequest / RPCAppendRequest / RPCFinishRequest, RPCCreateResponse /
// RPCSendResponse, and the header of an arrived RPC that SPU-OS copies before dispatching). The
// payload bytes themselves move by DMA (ssd/spu_dma: ports ni_rx and ni_tx); these registers
// carry the headers and the commands.
//
// The map (register_map(), block "spu_ni" at SPU_NI_BASE; also the C header and the docs):
//   origin       RW  originating HRE stamped on requests this SPU sends (SPU-OS sets it when it
//                    dispatches an RPC: the hardware propagates it, apps cannot reach it)
//   tx_dst       RW  node, dst_hre          tx_rpc  RW  rpc_id, tag
//   tx_length    RW  payload bytes          tx_result RW  a response's result
//   tx_command   WT  begin_request, finish_request, send_response, abort_request
//   tx_status    RO  code (the last command's NiStatus), open, slots_free
//   rx_status    RO  request, response, requests, responses (waiting)
//   rx_src       RO  the head request's src node and dst_hre;  rx_rpc RO rpc_id, tag
//   rx_origin    RO  its originating HRE;  rx_length, rx_unread RO
//   rx_pop       WT  request, response
//   resp_src     RO  the head response's src node and tag;  resp_result RO
// Interrupt levels for the SPU's control block (ni_request, ni_response) follow the queues.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "ssd/network_interface.hpp"

namespace canopy::ssd {

class NiRegisters : public sc_core::sc_module {
  public:
    tlm::tlm_target_socket<> socket;  // at SPU_NI_BASE

    SC_HAS_PROCESS(NiRegisters);
    NiRegisters(sc_core::sc_module_name name, NetworkInterface& ni, core::Services& services,
                const core::RegisterBankConfig& cfg = core::RegisterBankConfig());

    static core::RegisterMap register_map();

    // Called with (has_request, has_response) whenever either may have changed, at that time.
    void on_levels(std::function<void(bool, bool, const sc_core::sc_time&)> fn) {
        levels_ = std::move(fn);
    }
    core::RegisterBank& bank() { return bank_; }

  private:
    void command(const core::RegisterAccess& a);
    void pop(const core::RegisterAccess& a);
    void watch_arrivals();
    void report_levels(const sc_core::sc_time& at);

    NetworkInterface& ni_;
    core::RegisterBank bank_;
    std::function<void(bool, bool, const sc_core::sc_time&)> levels_;
};

}  // namespace canopy::ssd
