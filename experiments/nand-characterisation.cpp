#include "experiments/experiment.hpp"

#include <map>
#include <memory>

#include "core/services.hpp"
#include "nand/channel.hpp"
#include "nand/sequence.hpp"
#include "platform/flash_op.hpp"

namespace canopy::experiments {

using namespace platform;

namespace {

using nand::CellMode;
using nand::PageAddress;
using sc_core::sc_time;

// One array driven directly through its dies, without running the kernel: the die model is
// loosely timed and never waits, so commands can be sent from here with explicit times.
class Rig {
  public:
    Rig(const char* name, const nand::NandConfig& cfg, uint64_t seed) : cfg_(cfg) {
        services_.seed = seed;
        array_ = std::make_unique<nand::FlashArray>(name, cfg, services_);
    }
    nand::Die& die(uint32_t ch = 0, uint32_t d = 0) { return array_->die(ch, d); }
    const nand::RowCodec& rc() { return die().codec(); }
    const nand::Geometry& g() const { return cfg_.geometry; }

    // Sends `c` to die (ch, d) at `at`; data-in bytes from `in`, data out into `out`.
    sc_time send(nand::CommandExt& c, uint32_t ch, sc_time at,
                 const std::vector<uint8_t>* in = nullptr, std::vector<uint8_t>* out = nullptr) {
        buf_.clear();
        if (in) buf_ = *in;
        buf_.resize(c.data_bytes(), 0xFF);
        sc_time done =
            array_->die(ch, c.chip_enable).execute(c, buf_.data(), uint32_t(buf_.size()), at);
        if (!c.ok()) throw std::logic_error("experiment command refused: " + c.error);
        if (out) *out = buf_;
        return done;
    }
    double array_us(const nand::CommandExt& c) const {
        return double(c.array_end_ps - c.array_start_ps) * 1e-6;
    }

  private:
    nand::NandConfig cfg_;
    core::Services services_;
    std::unique_ptr<nand::FlashArray> array_;
    std::vector<uint8_t> buf_;
};

// The machine's NAND (its timing, power and reliability) as a one-die array.
nand::NandConfig one_die(const PlatformConfig& m, bool functional) {
    nand::NandConfig c = m.nand;
    c.geometry.channels = 1;
    c.geometry.dies_per_channel = 1;
    c.functional = functional;
    return c;
}

uint64_t wls(uint32_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

// tMWS/tR and energy of one MWS over `blocks` blocks of `wordlines` each.
struct MwsCost {
    double t_us, energy_pj;
};
MwsCost mws_cost(const PlatformConfig& m, const char* name, uint32_t wordlines, uint32_t blocks,
                 bool fixed = false) {
    nand::NandConfig cfg = one_die(m, false);
    cfg.timing.mws_fixed_latency = fixed;
    cfg.power.mws_max_blocks =
        std::max<uint32_t>(blocks, cfg.power.mws_max_blocks);  // lifted to measure
    Rig rig(name, cfg, m.sim.seed);
    std::vector<nand::seq::MwsOperand> ops;
    for (uint32_t b = 0; b < blocks; ++b) ops.push_back({b, wls(wordlines)});
    nand::CommandExt c;
    nand::seq::mws(c, rig.rc(), 0, 0,
                   nand::iscm::kInitS | nand::iscm::kInitC | nand::iscm::kTransfer, ops);
    rig.send(c, 0, sc_core::SC_ZERO_TIME);
    return {rig.array_us(c), c.energy_pj};
}

// Bit error rate measured by programming random pages and reading them back `reads` times.
double measured_rber(const PlatformConfig& m, const char* name, CellMode mode, bool randomise,
                     double esp_factor, uint32_t reads, uint64_t* bits_out = nullptr,
                     uint64_t* errors_out = nullptr) {
    nand::NandConfig cfg = one_die(m, true);
    cfg.reliability.retention_days = cfg.reliability.ref_retention_days;  // the reference condition
    cfg.reliability.initial_pe_cycles = uint32_t(cfg.reliability.ref_pe_cycles);
    cfg.timing.esp_factor = esp_factor;
    Rig rig(name, cfg, m.sim.seed);
    const uint32_t bytes = rig.g().page_total_bytes();
    const uint32_t pages = 8;
    std::vector<std::vector<uint8_t>> data(pages);
    nand::CommandExt c;
    sc_time t = sc_core::SC_ZERO_TIME;
    nand::seq::erase(c, rig.rc(), {{0, 0, 0, 1, 0}});
    t = rig.send(c, 0, t);
    for (uint32_t wl = 0; wl < pages; ++wl) {
        DataSpec spec;
        spec.kind = DataSpec::Random;
        spec.seed = 1000 + wl;
        spec.generate(data[wl], bytes);
        nand::seq::program(c, rig.rc(), {{0, 0, 0, 1, wl}}, mode, randomise, bytes);
        t = rig.send(c, 0, t, &data[wl]);
    }
    uint64_t errors = 0, bits = 0;
    std::vector<uint8_t> out;
    for (uint32_t r = 0; r < reads; ++r) {
        const uint32_t wl = r % pages;
        nand::seq::read(c, rig.rc(), {{0, 0, 0, 1, wl}});
        t = rig.send(c, 0, t);
        nand::seq::data_out(c, rig.rc(), 0, 0, 0, bytes);
        t = rig.send(c, 0, t, nullptr, &out);
        for (uint32_t i = 0; i < bytes; ++i)
            errors += uint64_t(__builtin_popcount(uint8_t(out[i] ^ data[wl][i])));
        bits += uint64_t(bytes) * 8;
    }
    if (bits_out) *bits_out = bits;
    if (errors_out) *errors_out = errors;
    return double(errors) / double(bits);
}

// Sequential write bandwidth of the machine's array (by default Table 1's): every die programs
// `pages` multi-plane pages.
double write_bandwidth_gbps(const PlatformConfig& m, const char* name, CellMode mode,
                            uint32_t pages) {
    nand::NandConfig cfg = m.nand;
    cfg.functional = false;
    Rig rig(name, cfg, m.sim.seed);
    const auto& g = rig.g();
    std::map<std::pair<uint32_t, uint32_t>, sc_time> ready;
    sc_time end = sc_core::SC_ZERO_TIME;
    nand::CommandExt c;
    for (uint32_t wl = 0; wl < pages; ++wl)
        for (uint32_t d = 0; d < g.dies_per_channel; ++d)
            for (uint32_t ch = 0; ch < g.channels; ++ch) {
                std::vector<PageAddress> planes;
                for (uint32_t p = 0; p < g.planes_per_die; ++p) planes.push_back({ch, d, p, 0, wl});
                nand::seq::program(c, rig.rc(), planes, mode, false, g.page_bytes);
                sc_time done = rig.send(c, ch, ready[{ch, d}]);
                ready[{ch, d}] = done;
                end = std::max(end, done);
            }
    double bytes =
        double(pages) * g.channels * g.dies_per_channel * g.planes_per_die * g.page_bytes;
    return bytes / end.to_seconds() / 1e9;
}

}  // namespace

std::vector<ExpRow> nand_characterisation(const ExpOptions& o) {
    const bool quick = o.quick;
    const PlatformConfig m = o.platform();
    std::vector<ExpRow> rows;
    const double t_r = m.nand.timing.t_read_slc_us;
    // Section 5.2, Figures 12 and 13: tMWS in units of tR.
    rows.push_back({"F12a", "tMWS/tR, intra-block MWS of 8 wordlines (paper: < 1% above tR)",
                    mws_cost(m, "m8", 8, 1).t_us / t_r, 1.01, "x", 1.0, 1.01});
    rows.push_back({"F12b", "tMWS/tR, intra-block MWS of 48 wordlines",
                    mws_cost(m, "m48", 48, 1).t_us / t_r, 1.033, "x"});
    rows.push_back({"F13a", "tMWS/tR, inter-block MWS of 8 blocks (hidden)",
                    mws_cost(m, "b8", 1, 8).t_us / t_r, 1.0, "x"});
    rows.push_back({"F13b", "tMWS/tR, inter-block MWS of 32 blocks",
                    mws_cost(m, "b32", 1, 32).t_us / t_r, 1.363, "x"});
    const MwsCost c4 = mws_cost(m, "c4", 48, 4);
    rows.push_back({"T1", "tMWS, 4 blocks x 48 wordlines (Table 1)", c4.t_us, 25.0, "us"});
    rows.push_back({"S52", "fixed tMWS/tR under the 4-block cap",
                    mws_cost(m, "fx", 1, 1, true).t_us / t_r, 1.033, "x"});
    // Figure 14: power of inter-block MWS relative to a read, and the energy saving at 4 blocks.
    // Figure 14 measures one wordline per block; the saving is quoted at the fixed tMWS.
    const MwsCost read = mws_cost(m, "r1", 1, 1), two = mws_cost(m, "p2", 1, 2),
                  four = mws_cost(m, "p4", 1, 4), four_fixed = mws_cost(m, "p4f", 1, 4, true);
    auto power = [&](const MwsCost& m) {
        return (m.energy_pj / m.t_us) / (read.energy_pj / read.t_us);
    };
    rows.push_back({"F14a", "MWS power / read power, 2 blocks", power(two), 1.34, "x"});
    rows.push_back({"F14b", "MWS power / read power, 4 blocks", power(four), 1.80, "x"});
    // The curves of Figures 12-14 (their published points are the rows above): tMWS/tR against
    // the wordlines of one block and against blocks of one wordline each, and power against
    // blocks.
    for (uint32_t n : {1, 2, 4, 8, 16, 24, 32, 48}) {
        const std::string name = "w" + std::to_string(n);
        rows.push_back({"F12.w" + std::to_string(n),
                        "tMWS/tR, intra-block MWS of " + std::to_string(n) +
                            (n == 1 ? " wordline" : " wordlines"),
                        mws_cost(m, name.c_str(), n, 1).t_us / t_r, std::nullopt, "x"});
    }
    for (uint32_t n : {1, 2, 4, 8, 16, 32}) {
        const std::string name = "b" + std::to_string(n);
        const MwsCost c = mws_cost(m, name.c_str(), 1, n);
        rows.push_back(
            {"F13.b" + std::to_string(n),
             "tMWS/tR, inter-block MWS of " + std::to_string(n) + (n == 1 ? " block" : " blocks"),
             c.t_us / t_r, std::nullopt, "x"});
        rows.push_back(
            {"F14.b" + std::to_string(n),
             "MWS power / read power, " + std::to_string(n) + (n == 1 ? " block" : " blocks"),
             power(c), std::nullopt, "x"});
    }
    rows.push_back({"F14c", "energy saved by a 4-block MWS vs 4 reads",
                    100.0 * (1.0 - four_fixed.energy_pj / (4 * read.energy_pj)), 53.0, "%"});
    // Table 1: tESP = 2 x tPROG(SLC).
    {
        Rig rig("esp", one_die(m, false), m.sim.seed);
        nand::CommandExt c;
        nand::seq::program(c, rig.rc(), {{0, 0, 0, 0, 0}}, CellMode::Esp, false,
                           rig.g().page_bytes);
        rig.send(c, 0, sc_core::SC_ZERO_TIME);
        rows.push_back({"T1e", "tESP (ESP program latency)", rig.array_us(c), 400.0, "us"});
    }
    // Figure 7: moving one die's 2 x 16 KiB over a 1.2 GB/s channel.
    {
        Rig rig("dma", one_die(m, false), m.sim.seed);
        nand::CommandExt c;
        sc_time t = sc_core::SC_ZERO_TIME;
        for (uint32_t p = 0; p < 2; ++p) {
            nand::seq::data_out(c, rig.rc(), 0, p, 0, rig.g().page_bytes);
            t = rig.send(c, 0, t);
        }
        rows.push_back({"F7", "tDMA, 32 KiB from one die to the controller", t.to_seconds() * 1e6,
                        27.0, "us"});
    }
    // Section 3.2 and Figure 11: raw bit errors at 10K P/E cycles and 1-year retention.
    const uint32_t reads = quick ? 200 : 2000;
    const double slc_rand = measured_rber(m, "rs", CellMode::Slc, true, 2.0, reads);
    const double slc_plain = measured_rber(m, "rp", CellMode::Slc, false, 2.0, reads);
    const double mlc_rand = measured_rber(m, "rm", CellMode::Mlc, true, 2.0, reads);
    const double esp16 = measured_rber(m, "e16", CellMode::Esp, false, 1.6, reads);
    uint64_t bits = 0, errors = 0;
    measured_rber(m, "e19", CellMode::Esp, false, 1.9, reads * 4, &bits, &errors);
    rows.push_back({"F8a", "RBER, SLC with randomisation, 10K P/E, 1 year", slc_rand, 8.6e-4, ""});
    rows.push_back(
        {"F8b", "RBER increase without randomisation, SLC", slc_plain / slc_rand, 1.91, "x"});
    rows.push_back({"F8c", "RBER MLC / SLC", mlc_rand / slc_rand, 4.0, "x"});
    rows.push_back(
        {"F11a", "RBER reduction, ESP at 1.6 tPROG (median block)", slc_plain / esp16, 10.0, "x"});
    rows.push_back({"F11b", "bit errors, ESP at 1.9 tPROG, over " + std::to_string(bits) + " bits",
                    double(errors), 0.0, "bits"});
    // Section 7.3: sequential write bandwidth of the Table 1 SSD.
    const uint32_t pages = quick ? 4 : 24;
    rows.push_back({"S7a", "sequential write bandwidth, SLC",
                    write_bandwidth_gbps(m, "ws", CellMode::Slc, pages), 6.4, "GB/s"});
    rows.push_back({"S7b", "sequential write bandwidth, ESP",
                    write_bandwidth_gbps(m, "we", CellMode::Esp, pages), 4.7, "GB/s"});
    rows.push_back({"S7c", "sequential write bandwidth, MLC",
                    write_bandwidth_gbps(m, "wm", CellMode::Mlc, pages), 3.87, "GB/s"});
    rows.push_back({"S7d", "sequential write bandwidth, TLC",
                    write_bandwidth_gbps(m, "wt", CellMode::Tlc, pages), 2.82, "GB/s"});
    return rows;
}

Experiment nand_characterisation_experiment() {
    return {
        "nand-characterisation",
        "Flash-Cosmos Sec. 5 / Table 1: tMWS, MWS power and energy, ESP latency and reliability, "
        "Fig. 7 transfer times, measured on the NAND die model",
        nand_characterisation};
}

}  // namespace canopy::experiments
