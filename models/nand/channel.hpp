// One flash channel: its shared bus and the dies on it (Flash-Cosmos Section 2.1). A TLM
// target: each transaction carries one command sequence in a CommandExt whose chip enable picks
// the die; data-in bytes come from, and data-out bytes go to, the payload's data array. The
// annotated delay comes back as the time until the die is ready again.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "nand/bus.hpp"
#include "nand/die.hpp"

namespace canopy::nand {

class Channel : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<Channel> target;

    Channel(sc_core::sc_module_name name, const NandConfig& cfg, core::Services& services,
            uint32_t index);

    Die& die(uint32_t i) { return *dies_.at(i); }
    uint32_t dies() const { return uint32_t(dies_.size()); }

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

    ChannelBus bus_;
    std::vector<std::unique_ptr<Die>> dies_;
};

// The whole array: `channels` channels of `dies_per_channel` dies. Named "nand" in a platform.
class FlashArray : public sc_core::sc_module {
  public:
    FlashArray(sc_core::sc_module_name name, const NandConfig& cfg, core::Services& services);

    Channel& channel(uint32_t i) { return *channels_.at(i); }
    Die& die(uint32_t ch, uint32_t d) { return channels_.at(ch)->die(d); }
    const NandConfig& config() const { return cfg_; }

  private:
    NandConfig cfg_;
    std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace canopy::nand
