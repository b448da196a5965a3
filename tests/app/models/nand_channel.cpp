// A different NAND on one flash channel (tests of platform/user_model.hpp,
// Attach::flash_channel): Canopy's own channel model built with timing of its own, here the SLC
// sensing time (model.slow_nand.t_read_slc_us), in place of the array's channel.
#include "nand/channel.hpp"
#include "platform/user_model.hpp"

namespace {

using namespace canopy;

class SlowNand : public platform::UserModel {
  public:
    struct Config {
        nand::NandConfig nand;  // the platform's defaults: the same geometry
        void describe(core::Params& p) {
            p("t_read_slc_us", nand.timing.t_read_slc_us, "us", "tR in SLC mode on this channel",
              0.1, 1000.0);
        }
    };
    SlowNand(sc_core::sc_module_name name, const Config& cfg, core::Services& services)
        : UserModel(name), channel_("ch", cfg.nand, services, 0) {}
    tlm::tlm_target_socket<>* flash_target() override { return &channel_.target; }

  private:
    nand::Channel channel_;
};

}  // namespace

CANOPY_MODEL_LIBRARY(registry) {
    registry.add<SlowNand>("slow_nand", canopy::platform::Attach::flash_channel,
                           "a channel of dies with a slower tR");
}
