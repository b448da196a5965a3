#include "nand_fixture.hpp"

#include <tlm_utils/simple_initiator_socket.h>
#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace canopy::nand::test {

using sc_core::sc_time;

NandConfig small_config() {
    NandConfig c;
    c.geometry.channels = 1;
    c.geometry.dies_per_channel = 2;
    c.geometry.planes_per_die = 2;
    c.geometry.blocks_per_plane = 16;
    c.geometry.wordlines_per_block = 48;
    c.geometry.page_bytes = 512;
    c.geometry.spare_bytes = 64;
    return c;
}

// --- oracle ----------------------------------------------------------------------------------

Page random_page(std::mt19937_64& g, size_t bytes, double p_one) {
    Page p(bytes, 0);
    if (p_one == 0.5) {
        for (auto& b : p) b = uint8_t(g());
        return p;
    }
    for (size_t i = 0; i < bytes * 8; ++i)
        if (core::uniform01(g) < p_one) p[i / 8] |= uint8_t(1u << (i % 8));
    return p;
}

Page filled(size_t bytes, uint8_t v) { return Page(bytes, v); }

template <class F>
static Page zip(const Page& a, const Page& b, F f) {
    EXPECT_EQ(a.size(), b.size());
    Page r(a.size());
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) r[i] = uint8_t(f(a[i], b[i]));
    return r;
}

Page page_and(const Page& a, const Page& b) {
    return zip(a, b, [](int x, int y) { return x & y; });
}
Page page_or(const Page& a, const Page& b) {
    return zip(a, b, [](int x, int y) { return x | y; });
}
Page page_xor(const Page& a, const Page& b) {
    return zip(a, b, [](int x, int y) { return x ^ y; });
}
Page page_not(const Page& a) {
    Page r(a.size());
    for (size_t i = 0; i < a.size(); ++i) r[i] = uint8_t(~a[i]);
    return r;
}

uint64_t popcount(const Page& a) {
    uint64_t n = 0;
    for (uint8_t b : a) n += uint64_t(__builtin_popcount(b));
    return n;
}

uint64_t bit_diff(const Page& a, const Page& b) {
    EXPECT_EQ(a.size(), b.size());
    uint64_t n = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        n += uint64_t(__builtin_popcount(a[i] ^ b[i]));
    return n;
}

bool mixed(const Page& a) {
    const uint64_t ones = popcount(a);
    return ones != 0 && ones != a.size() * 8;
}

Page sense_oracle(const Stored& s, const Slots& slots, size_t bytes) {
    Page res(bytes, 0);
    for (const auto& slot : slots) {
        Page acc(bytes, 0xFF);
        auto it = s.find(slot.block);
        for (uint32_t wl = 0; wl < 64; ++wl) {
            if (!(slot.pbm >> wl & 1)) continue;
            if (it == s.end() || wl >= it->second.size() || it->second[wl].empty()) continue;
            acc = page_and(acc, it->second[wl]);
        }
        res = page_or(res, acc);
    }
    return res;
}

uint64_t random_pbm(std::mt19937_64& g, uint32_t count, uint32_t wordlines) {
    std::vector<uint32_t> wl(wordlines);
    for (uint32_t i = 0; i < wordlines; ++i) wl[i] = i;
    std::shuffle(wl.begin(), wl.end(), g);
    uint64_t pbm = 0;
    for (uint32_t i = 0; i < count && i < wordlines; ++i) pbm |= 1ull << wl[i];
    return pbm;
}

double bus_ns(const Timing& t, uint32_t cycles, uint64_t bytes) {
    return double(cycles) * t.t_cmd_cycle_ns + double(bytes) * 1e3 / t.channel_rate_mbps;
}

// --- bench -----------------------------------------------------------------------------------

class Initiator : public sc_core::sc_module {
  public:
    sc_core::sc_vector<tlm_utils::simple_initiator_socket<Initiator>> sockets;
    Initiator(sc_core::sc_module_name n, uint32_t channels)
        : sc_module(n), sockets("socket", channels) {}
};

Bench::Bench(const NandConfig& cfg, uint64_t seed, Drive drive)
    : drive_(drive), codec_(cfg.geometry) {
    services_.seed = seed;
    array_ = std::make_unique<FlashArray>("nand", cfg, services_);
    if (drive_ == Drive::Tlm) {
        initiator_ = std::make_unique<Initiator>("controller", cfg.geometry.channels);
        for (uint32_t c = 0; c < cfg.geometry.channels; ++c)
            initiator_->sockets[c].bind(array_->channel(c).target);
        sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration
    }
}

Bench::~Bench() = default;

Outcome Bench::send_at(CommandExt& c, Page data, const sc_time& at, uint32_t channel) {
    Outcome o;
    o.issue = at;
    uint8_t* ptr = data.empty() ? nullptr : data.data();
    if (drive_ == Drive::Tlm) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_IGNORE_COMMAND);
        gp.set_address(0);
        gp.set_data_ptr(ptr);
        gp.set_data_length(uint32_t(data.size()));
        gp.set_streaming_width(uint32_t(data.size()));
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        gp.set_extension(&c);
        sc_time delay = at - sc_core::sc_time_stamp();
        initiator_->sockets[channel]->b_transport(gp, delay);
        gp.clear_extension(&c);  // the payload would free it otherwise
        o.response = gp.get_response_status();
        o.done = sc_core::sc_time_stamp() + delay;
    } else {
        o.done = die(c.chip_enable, channel).execute(c, ptr, uint32_t(data.size()), at);
        o.response = c.ok() ? tlm::TLM_OK_RESPONSE : tlm::TLM_COMMAND_ERROR_RESPONSE;
    }
    o.error = c.error;
    o.status = c.status;
    o.op = c.op;
    o.energy_pj = c.energy_pj;
    o.data = std::move(data);
    return o;
}

tlm::tlm_response_status Bench::raw(tlm::tlm_generic_payload& gp, uint32_t channel) {
    sc_time delay = sc_core::SC_ZERO_TIME;
    initiator_->sockets[channel]->b_transport(gp, delay);
    return gp.get_response_status();
}

Outcome Bench::send(CommandExt& c, Page data, uint32_t channel) {
    Outcome o = send_at(c, std::move(data), now, channel);
    if (o.done > now) now = o.done;
    return o;
}

Outcome Bench::program(const PageAddress& a, const Page& p, CellMode m, bool randomise) {
    return program_planes({a}, {p}, m, randomise);
}

Outcome Bench::program_planes(const std::vector<PageAddress>& a, const std::vector<Page>& p,
                              CellMode m, bool randomise) {
    CommandExt c;
    uint32_t bytes = p.empty() ? 0 : uint32_t(p[0].size());
    seq::program(c, codec_, a, m, randomise, bytes);
    Page data;
    for (const Page& x : p) data.insert(data.end(), x.begin(), x.end());
    return send(c, std::move(data));
}

void Bench::must_program(const PageAddress& a, const Page& p, CellMode m, bool randomise) {
    Outcome o = program(a, p, m, randomise);
    if (!o.ok()) ADD_FAILURE() << "program " << to_string(a) << ": " << o.error;
}

Outcome Bench::read(const PageAddress& a) {
    CommandExt c;
    seq::read(c, codec_, {a});
    return send(c);
}

Outcome Bench::erase(const PageAddress& a) {
    CommandExt c;
    seq::erase(c, codec_, {a});
    return send(c);
}

Outcome Bench::data_out(uint32_t die, uint32_t plane, uint32_t column, uint32_t bytes) {
    CommandExt c;
    seq::data_out(c, codec_, die, plane, column, bytes);
    return send(c, Page(bytes, 0));
}

Outcome Bench::mws(uint32_t die, uint32_t plane, uint8_t flags, const Slots& slots) {
    CommandExt c;
    seq::mws(c, codec_, die, plane, flags, slots);
    return send(c);
}

Outcome Bench::xor_latches(uint32_t die, uint32_t plane) {
    CommandExt c;
    seq::xor_latches(c, codec_, die, plane);
    return send(c);
}

Outcome Bench::set_feature(uint32_t die, uint8_t feature, std::array<uint8_t, 4> p) {
    CommandExt c;
    seq::set_features(c, die, feature);
    return send(c, Page(p.begin(), p.end()));
}

Outcome Bench::get_feature(uint32_t die, uint8_t feature) {
    CommandExt c;
    seq::get_features(c, die, feature);
    return send(c, Page(4, 0));
}

void Bench::set_esp_factor(uint32_t die, double factor) {
    Outcome o = set_feature(die, feature::kEspFactor, {uint8_t(std::lround(factor * 10)), 0, 0, 0});
    if (!o.ok()) ADD_FAILURE() << "SET FEATURES ESP factor " << factor << ": " << o.error;
}

uint8_t Bench::status(uint32_t die) {
    CommandExt c;
    seq::read_status(c, die);
    Outcome o = send(c, Page(1, 0));
    if (!o.ok()) ADD_FAILURE() << "READ STATUS: " << o.error;
    return o.data[0];
}

Page Bench::c_latch(uint32_t die, uint32_t plane) {
    Outcome o = data_out(die, plane, 0, page_bytes());
    if (!o.ok()) ADD_FAILURE() << "DATA OUT: " << o.error;
    return o.data;
}

Page Bench::read_page(const PageAddress& a) {
    Outcome o = read(a);
    if (!o.ok()) ADD_FAILURE() << "READ " << to_string(a) << ": " << o.error;
    return c_latch(a.die, a.plane);
}

Page Bench::s_latch(uint32_t die, uint32_t plane) {
    Outcome o = mws(die, plane, iscm::kInitC | iscm::kTransfer, {{spare_block(), 1}});
    if (!o.ok()) ADD_FAILURE() << "S-latch peek: " << o.error;
    return c_latch(die, plane);
}

void Bench::load_latches(const PageAddress& s, const PageAddress& c) {
    Outcome o = read(c);
    if (!o.ok()) ADD_FAILURE() << "READ " << to_string(c) << ": " << o.error;
    o = mws(s.die, s.plane, iscm::kInitS, {{s.block, wl_bit(s.page)}});
    if (!o.ok()) ADD_FAILURE() << "MWS " << to_string(s) << ": " << o.error;
}

Page Bench::mws_result(uint32_t die, uint32_t plane, uint8_t flags, const Slots& slots) {
    Outcome o = mws(die, plane, flags, slots);
    if (!o.ok()) ADD_FAILURE() << "MWS: " << o.error;
    return c_latch(die, plane);
}

void Bench::program_blocks(Stored& into, uint32_t die, uint32_t plane, uint32_t first, uint32_t n,
                           uint32_t wordlines, CellMode m,
                           const std::function<Page(uint32_t, uint32_t)>& make, bool randomise) {
    for (uint32_t b = first; b < first + n; ++b) {
        auto& pages = into[b];
        pages.resize(geo().wordlines_per_block);
        for (uint32_t wl = 0; wl < wordlines; ++wl) {
            pages[wl] = make(b, wl);
            must_program(pa(die, plane, b, wl), pages[wl], m, randomise);
        }
    }
}

static const core::Stat* find_stat(const core::Services& s, uint32_t die, const std::string& name) {
    const core::Stat* st = s.stats.find("nand.ch0.die" + std::to_string(die), name);
    if (!st) ADD_FAILURE() << "no statistic nand.ch0.die" << die << "." << name;
    return st;
}

uint64_t Bench::counter(uint32_t die, const std::string& name) const {
    auto* c = dynamic_cast<const core::Counter*>(find_stat(services_, die, name));
    return c ? c->value() : 0;
}

double Bench::sum(uint32_t die, const std::string& name) const {
    auto* c = dynamic_cast<const core::Sum*>(find_stat(services_, die, name));
    return c ? c->value() : 0.0;
}

::testing::AssertionResult Bench::refused(const Outcome& o, uint32_t die,
                                          const std::string& reason) {
    if (o.response != tlm::TLM_COMMAND_ERROR_RESPONSE)
        return ::testing::AssertionFailure()
               << "response " << o.response << " instead of TLM_COMMAND_ERROR_RESPONSE (error \""
               << o.error << "\")";
    const std::string who = "nand " + die_path(die) + ": ";
    if (o.error.rfind(who, 0) != 0)
        return ::testing::AssertionFailure()
               << "error does not start with \"" << who << "\": " << o.error;
    if (o.error.find(reason) == std::string::npos)
        return ::testing::AssertionFailure()
               << "error does not say \"" << reason << "\": " << o.error;
    const std::string op = op_name(o.op);
    if (o.error.find(op + ": " + op + ":") != std::string::npos)
        return ::testing::AssertionFailure() << "error names the operation twice: " << o.error;
    if (!(o.status & status::kFail))
        return ::testing::AssertionFailure()
               << "returned status " << int(o.status) << " lacks FAIL";
    if (!(status(die) & status::kFail))
        return ::testing::AssertionFailure() << "READ STATUS after the refusal lacks FAIL";
    return ::testing::AssertionSuccess() << o.error;
}

}  // namespace canopy::nand::test
