// A register block for a window of the device's BAR0 (tests of platform/user_model.hpp,
// Attach::bar): word 0 is an ID register (model.scratch.id, read-only), the rest scratch words;
// every access is counted (model.scratch.reads, .writes) and costs access_ns.
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <vector>

#include "platform/user_model.hpp"

namespace {

using namespace canopy;

class BarRegisters : public platform::UserModel {
  public:
    struct Config {
        uint32_t id = 0x5ca1ab1e;
        double access_ns = 10.0;
        void describe(core::Params& p) {
            p("id", id, "", "the ID register's value")("access_ns", access_ns, "ns",
                                                       "time of one register access", 0.0, 1e6);
        }
    };
    tlm_utils::simple_target_socket<BarRegisters> socket;

    BarRegisters(sc_core::sc_module_name name, const Config& cfg, core::Services& services)
        : UserModel(name),
          socket("socket"),
          cfg_(cfg),
          words_(1024),
          reads_(services.stats.counter(this->name(), "reads", "register reads", true)),
          writes_(services.stats.counter(this->name(), "writes", "register writes", true)) {
        words_[0] = cfg.id;
        socket.register_b_transport(this, &BarRegisters::b_transport);
    }
    tlm::tlm_target_socket<>* bar_target() override { return &socket; }

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
        const uint64_t a = gp.get_address();
        if (gp.get_data_length() != 4 || a % 4 || a / 4 >= words_.size())
            return gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        uint32_t& w = words_[a / 4];
        if (gp.is_read()) {
            std::memcpy(gp.get_data_ptr(), &w, 4);
            reads_.add(1);
        } else {
            if (a != 0) std::memcpy(&w, gp.get_data_ptr(), 4);  // the ID is read-only
            writes_.add(1);
        }
        delay += sc_core::sc_time(cfg_.access_ns, sc_core::SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }

    Config cfg_;
    std::vector<uint32_t> words_;
    core::Counter &reads_, &writes_;
};

}  // namespace

CANOPY_MODEL_LIBRARY(registry) {
    registry.add<BarRegisters>("scratch", canopy::platform::Attach::bar,
                               "an ID register and scratch words behind a BAR0 window");
}
