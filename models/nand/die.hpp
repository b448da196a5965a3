// One NAND flash die (Flash-Cosmos Sections 2, 4 and 6): planes of blocks with their latches,
// a command state machine that decodes ONFI-style sequences, including the Flash-Cosmos MWS,
// ESP PROGRAM and XOR commands (Figure 15), ready/busy and status, timing from the
// characterisation, power and energy per operation, and raw bit errors at sensing.
// Illegal sequences are refused: FAIL in the status, an error naming the die and the reason,
// and no state changed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/resource.hpp"
#include "core/rng.hpp"
#include "core/services.hpp"
#include "nand/address.hpp"
#include "nand/bus.hpp"
#include "nand/command.hpp"
#include "nand/plane.hpp"
#include "nand/reliability.hpp"

namespace canopy::nand {

class Die : public sc_core::sc_module {
  public:
    Die(sc_core::sc_module_name name, const NandConfig& cfg, core::Services& services,
        ChannelBus& bus, uint32_t channel, uint32_t index);

    // Runs one command sequence whose first cycle is on the bus at `at`. `data` holds the
    // data-in bytes and receives the data-out bytes, in cycle order. Fills the extension's
    // results and returns when the die is ready again (R/B# high).
    sc_core::sc_time execute(CommandExt& cmd, uint8_t* data, uint32_t length,
                             const sc_core::sc_time& at, uint64_t flow = 0);

    Plane& plane(uint32_t p) { return *planes_.at(p); }
    const RowCodec& codec() const { return codec_; }
    uint32_t index() const { return index_; }
    // The status register as the controller would read it at time `t`.
    uint8_t status_at(const sc_core::sc_time& t) const;
    double esp_factor() const { return features_[feature::kEspFactor][0] / 10.0; }

    struct Decoded;  // a sequence after decoding (die.cpp)

  private:
    std::string decode(const CommandExt& c, uint32_t length, Decoded& d) const;
    std::string check(const Decoded& d, const uint8_t* data) const;
    void run(CommandExt& c, Decoded& d, uint8_t* data, const sc_core::sc_time& at, uint64_t flow);
    double read_time_us(CellMode m) const;
    void account(OpKind op, const sc_core::sc_time& issue, const sc_core::sc_time& done);

    const NandConfig& cfg_;
    core::Services& services_;
    ChannelBus& bus_;
    uint32_t index_;
    std::string path_;  // "ch0.die1", for messages
    RowCodec codec_;
    ReliabilityModel model_;
    core::Rng rng_;
    std::vector<std::unique_ptr<Plane>> planes_;
    std::array<std::array<uint8_t, 4>, 256> features_{};
    bool failed_ = false;  // FAIL bit of the last operation
    uint32_t last_plane_ = 0;

    core::Probe<uint8_t> state_probe_;
    core::SharedResource array_;
    sc_core::sc_time cache_ready_ = sc_core::SC_ZERO_TIME;
    int track_;
    core::Counter& refused_;
    core::Counter &bits_sensed_, &bit_errors_, &wordlines_sensed_;
    core::Sum& energy_uj_;
    std::array<core::Counter*, size_t(OpKind::Count)> op_count_{};
    std::array<core::Distribution*, size_t(OpKind::Count)> op_latency_{};
};

}  // namespace canopy::nand
