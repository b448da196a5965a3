// Shared helpers of the NAND model tests: a small geometry, a bench that owns the services, the
// flash array and a TLM initiator (or drives the dies directly), one-line helpers for the
// commands of models/nand/sequence.hpp, and a plain software oracle over pages.
//
// Each TEST runs in its own process (gtest_discover_tests), so a test builds one Bench: the TLM
// bench finishes elaboration with sc_start(SC_ZERO_TIME) and then calls b_transport from
// sc_main's context (the model never calls wait()). A Direct bench never starts the kernel, so a
// test may destroy it and build another with the same module names (to compare seeds).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/services.hpp"
#include "core/stats.hpp"
#include "nand/channel.hpp"
#include "nand/command.hpp"
#include "nand/reliability.hpp"
#include "nand/sequence.hpp"

namespace canopy::nand::test {

using Page = std::vector<uint8_t>;
using Slots = std::vector<seq::MwsOperand>;

// 1 channel, 2 dies, 2 planes, 16 blocks of 48 wordlines, 512 + 64 byte pages.
NandConfig small_config();

// ISCM flag sets used throughout.
constexpr uint8_t kRead = iscm::kInitS | iscm::kInitC | iscm::kTransfer;  // a normal read
constexpr uint8_t kInverseRead = kRead | iscm::kInverse;

inline PageAddress pa(uint32_t die, uint32_t plane, uint32_t block, uint32_t wl) {
    return PageAddress{0, die, plane, block, wl};
}
// A page bitmap of wordlines [first, first + count).
inline uint64_t wl_range(uint32_t first, uint32_t count) {
    return (count >= 64 ? ~0ull : ((1ull << count) - 1)) << first;
}
inline uint64_t wl_bit(uint32_t wl) { return 1ull << wl; }

// --- software oracle -------------------------------------------------------------------------
// Each bit is 1 with probability p_one.
Page random_page(std::mt19937_64& g, size_t bytes, double p_one = 0.5);
Page filled(size_t bytes, uint8_t v);
Page page_and(const Page& a, const Page& b);
Page page_or(const Page& a, const Page& b);
Page page_xor(const Page& a, const Page& b);
Page page_not(const Page& a);
uint64_t popcount(const Page& a);
uint64_t bit_diff(const Page& a, const Page& b);
// Neither all zeros nor all ones: a result that can tell a wrong operation from a right one.
bool mixed(const Page& a);

// Stored pages by block, one per wordline; an empty Page is an erased wordline (reads ones).
using Stored = std::map<uint32_t, std::vector<Page>>;
// What a sensing of `slots` gives: the OR over slots of the AND of each slot's selected pages.
Page sense_oracle(const Stored& s, const Slots& slots, size_t bytes);
// A page bitmap of `count` distinct wordlines drawn from [0, wordlines).
uint64_t random_pbm(std::mt19937_64& g, uint32_t count, uint32_t wordlines);
// Bits of wordline `wl` are 1 with probability 1 - 1/(wl + 2): the AND of any k of a block's
// pages keeps at least 1/(k + 1) of the bits at one, so every AND/OR result stays mixed.
inline double and_friendly(uint32_t wl) { return 1.0 - 1.0 / double(wl + 2); }

// --- bench -----------------------------------------------------------------------------------
struct Outcome {
    tlm::tlm_response_status response = tlm::TLM_INCOMPLETE_RESPONSE;
    std::string error;
    uint8_t status = 0;
    OpKind op = OpKind::None;
    double energy_pj = 0;
    sc_core::sc_time issue, done;
    Page data;  // the payload after the command: data-out bytes land here

    bool ok() const { return response == tlm::TLM_OK_RESPONSE && error.empty(); }
    double latency_ns() const { return (done - issue).to_seconds() * 1e9; }
    double latency_us() const { return (done - issue).to_seconds() * 1e6; }
};

class Initiator;

class Bench {
  public:
    enum class Drive { Tlm, Direct };

    explicit Bench(const NandConfig& cfg = small_config(), uint64_t seed = 1,
                   Drive drive = Drive::Tlm);
    ~Bench();
    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;

    const NandConfig& cfg() const { return array_->config(); }
    const Geometry& geo() const { return cfg().geometry; }
    uint32_t page_bytes() const { return geo().page_total_bytes(); }
    const RowCodec& codec() const { return codec_; }
    FlashArray& array() { return *array_; }
    Die& die(uint32_t d = 0, uint32_t ch = 0) { return array_->die(ch, d); }
    core::Services& services() { return services_; }
    // A block that the helpers never program: its wordlines read as all ones (see s_latch).
    uint32_t spare_block() const { return geo().blocks_per_plane - 1; }

    // Issue time of the next command of send(); send() moves it to the command's completion so
    // that dependent commands follow one another.
    sc_core::sc_time now = sc_core::SC_ZERO_TIME;

    Outcome send(CommandExt& c, Page data = {}, uint32_t channel = 0);
    // A payload as it is (TLM bench only), for payloads without a command.
    tlm::tlm_response_status raw(tlm::tlm_generic_payload& gp, uint32_t channel = 0);
    // Issues at `at` without touching `now`.
    Outcome send_at(CommandExt& c, Page data, const sc_core::sc_time& at, uint32_t channel = 0);

    // One-line commands (channel 0). They return the outcome; the checking ones ADD_FAILURE
    // when the model refuses.
    Outcome program(const PageAddress& a, const Page& p, CellMode m, bool randomise = false);
    Outcome program_planes(const std::vector<PageAddress>& a, const std::vector<Page>& p,
                           CellMode m, bool randomise = false);
    Outcome read(const PageAddress& a);
    Outcome erase(const PageAddress& a);
    Outcome data_out(uint32_t die, uint32_t plane, uint32_t column, uint32_t bytes);
    Outcome mws(uint32_t die, uint32_t plane, uint8_t flags, const Slots& slots);
    Outcome xor_latches(uint32_t die, uint32_t plane);
    Outcome set_feature(uint32_t die, uint8_t feature, std::array<uint8_t, 4> p);
    Outcome get_feature(uint32_t die, uint8_t feature);
    void set_esp_factor(uint32_t die, double factor);  // SET FEATURES 90h, checked
    uint8_t status(uint32_t die = 0);                  // READ STATUS

    void must_program(const PageAddress& a, const Page& p, CellMode m, bool randomise = false);
    Page c_latch(uint32_t die = 0, uint32_t plane = 0);  // DATA OUT of the whole page
    Page read_page(const PageAddress& a);                // READ + DATA OUT
    // The S-latch, observed through an MWS over an erased wordline of spare_block() with only
    // init-C and transfer: S = S AND 1 = S, C = S. Overwrites the C-latch.
    Page s_latch(uint32_t die = 0, uint32_t plane = 0);
    // Leaves S = page s and C = page c (both programmed in the same die and plane).
    void load_latches(const PageAddress& s, const PageAddress& c);
    // An MWS whose result is then read out of the C-latch (checked).
    Page mws_result(uint32_t die, uint32_t plane, uint8_t flags, const Slots& slots);

    // Programs wordlines [0, wordlines) of blocks [first, first + n) of (die, plane) with
    // make(block, wl), checked; records them in `into` and returns nothing.
    void program_blocks(Stored& into, uint32_t die, uint32_t plane, uint32_t first, uint32_t n,
                        uint32_t wordlines, CellMode m,
                        const std::function<Page(uint32_t, uint32_t)>& make,
                        bool randomise = false);

    // Die statistics ("nand.ch0.die0").
    uint64_t counter(uint32_t die, const std::string& name) const;
    double sum(uint32_t die, const std::string& name) const;
    static std::string die_path(uint32_t die) { return "ch0.die" + std::to_string(die); }

    // The command was refused as the model promises: COMMAND_ERROR, an error naming the die and
    // containing `reason`, FAIL in the returned status and in a following READ STATUS.
    ::testing::AssertionResult refused(const Outcome& o, uint32_t die, const std::string& reason);

  private:
    core::Services services_;
    Drive drive_;
    std::unique_ptr<FlashArray> array_;
    std::unique_ptr<Initiator> initiator_;
    RowCodec codec_;
};

// Bus time of `cycles` command/address cycles and `bytes` data bytes, in ns.
double bus_ns(const Timing& t, uint32_t cycles, uint64_t bytes);

}  // namespace canopy::nand::test
