#include "nand/channel.hpp"

#include "core/payload.hpp"

namespace canopy::nand {

Channel::Channel(sc_core::sc_module_name name, const NandConfig& cfg, core::Services& services,
                 uint32_t index)
    : sc_module(name), target("target"), bus_(this->name(), cfg.timing, services) {
    target.register_b_transport(this, &Channel::b_transport);
    for (uint32_t d = 0; d < cfg.geometry.dies_per_channel; ++d)
        dies_.push_back(std::make_unique<Die>(("die" + std::to_string(d)).c_str(), cfg, services,
                                              bus_, index, d));
}

void Channel::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* cmd = gp.get_extension<CommandExt>();
    if (!cmd) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    if (cmd->chip_enable >= dies_.size()) {
        cmd->error = std::string("nand ") + name() + ": chip enable " +
                     std::to_string(cmd->chip_enable) + " selects no die (the channel has " +
                     std::to_string(dies_.size()) + ")";
        cmd->status = status::kFail;
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::sc_time done = dies_[cmd->chip_enable]->execute(
        *cmd, gp.get_data_ptr(), gp.get_data_length(), now + delay, core::flow_of(gp));
    delay = done - now;
    gp.set_response_status(cmd->ok() ? tlm::TLM_OK_RESPONSE : tlm::TLM_COMMAND_ERROR_RESPONSE);
}

FlashArray::FlashArray(sc_core::sc_module_name name, const NandConfig& cfg,
                       core::Services& services)
    : sc_module(name), cfg_(cfg) {
    for (uint32_t c = 0; c < cfg_.geometry.channels; ++c)
        channels_.push_back(
            std::make_unique<Channel>(("ch" + std::to_string(c)).c_str(), cfg_, services, c));
}

}  // namespace canopy::nand
