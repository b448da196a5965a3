#include "experiments/flashcosmos.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/error.hpp"
#include "core/services.hpp"
#include "experiments/isolated.hpp"
#include "link/pcie_config.hpp"
#include "link/tlp.hpp"
#include "nand/channel.hpp"
#include "nand/sequence.hpp"
#include "platform/willow_stack.hpp"
#include "sw/host/fc_workloads.hpp"

// The model (docs/flash_cosmos.md has the long form):
//
// Layout. Every operand is a bit vector striped page by page over all planes, page i of every
// operand in the same plane, so the in-flash operations are plane-local; a page-stripe is one
// page on each of the 128 planes (2 MiB). Operands are ESP-programmed SLC-like pages.
//
// One stripe on the die model. For each system the sensing pattern of one plane's share of a
// stripe runs on a one-die nand::FlashArray (timing-only): OSP and ISP read every operand page
// and move it out; ParaBit senses every operand once (25 us), accumulating in the latches; FC
// runs ceil(n/48) intra-block MWS accumulating in the latches (KCS: each one an inter-block MWS
// with the clique vector's block). The die reports each command's array time and energy (array
// power x time + channel I/O per byte); every plane runs the same pattern, so energies scale by
// the plane count.
//
// Full scale. A run is S page-stripes (operand bytes / 2 MiB, rounded up, x the KCS cliques),
// flowing through overlapping pipeline stages as a real SSD streams them: the planes (all in
// parallel), each channel (its 16 planes' pages and command cycles), the PCIe link, the host's
// memory and, for ISP, the per-channel accelerator. Time = S x the bottleneck stage's time per
// stripe + the first page's passage through the other stages (pipeline fill and drain). The
// ISP accelerator's 256 KiB SRAM holds exactly its channel's 16 partial result pages of a
// stripe, so it streams without spilling.
//
// Energy. NAND array and channel I/O from the die model; PCIe pJ per byte; SSD controller and
// DRAM power x time; host DRAM pJ per byte; OSP's host power x time (the paper measured it
// with RAPL); ISP's 93 pJ per 64 B operation. Energy efficiency of X over OSP = E(OSP) / E(X)
// (the same bits computed).
//
// Means (how the paper's are taken). The paper does not say; its numbers fix it. They are not
// arithmetic: BMI's FC/OSP mean alone is 198.4x, so an arithmetic mean over points or workloads
// that include BMI would be at least 66x, not the overall 32x. Geometric means fit: FC/OSP on
// BMI is d (the day count) while the result transfer bounds FC and ~580x once sensing does, and
// the geometric mean over the m points is ~196x (198.4x published); its ratio to FC/ISP (1.32
// published, 198.4/150.5) is ISP's own speed-up, as a geometric mean of ratios must be; and the
// geometric mean over all points of the three workloads lands near the overall 32x, where one
// over the three workloads' means (each weighted alike) would give ~24x. So: per workload, the
// geometric mean over its points; overall, the geometric mean over all the points.

namespace canopy::experiments {

using namespace platform;

namespace {

using sc_core::sc_time;

enum Sys { kOsp, kIsp, kPb, kFc, kSystems };
const char* const kSysName[kSystems] = {"OSP", "ISP", "PB", "FC"};

// One plane's share of one page-stripe, measured on the die model.
struct PlaneStripe {
    uint32_t sensings = 0;
    double sense_us = 0;      // array time of the sensing commands, back to back
    double sense_bus_us = 0;  // their command and address cycles on the channel
    double sense_pj = 0;      // their energy: array power x time + command-cycle I/O
    uint32_t pages_out = 0;   // pages the plane moves to the controller
    double dout_us = 0;       // channel time of those pages (command cycles, tCCS, data)
    double dout_pj = 0;       // their I/O energy
};

// A one-die array driven directly, as nand-characterisation.cpp's Rig does: the die model is
// loosely timed and never waits, so commands go in back to back with explicit times. Only plane 0
// of die 0 is used; every plane of the SSD runs the same pattern.
class DieBench {
  public:
    DieBench(const std::string& name, const nand::NandConfig& cfg) : cfg_(cfg) {
        cfg_.geometry.channels = 1;
        cfg_.geometry.dies_per_channel = 1;
        cfg_.functional = false;  // timing-only: no data kept
        services_.seed = 7;
        array_ = std::make_unique<nand::FlashArray>(name.c_str(), cfg_, services_);
    }

    // OSP and ISP: each operand page read (SLC tR, ESP page) and moved to the controller.
    PlaneStripe reads(uint32_t n) {
        PlaneStripe s;
        for (const auto& a : program(n)) {
            nand::seq::read(c_, rc(), {a});
            sense(s);
            data_out(s);
        }
        return s;
    }

    // ParaBit: one sensing per operand. The AND operands accumulate in the sensing latch (no
    // re-initialisation between them) and move to the cache latch at the end; an OR operand (the
    // KCS clique vector) re-initialises the sensing latch and ORs into the cache latch. The
    // sensings are MWS commands of one wordline, the Flash-Cosmos command set's way of issuing a
    // read with chosen latch initialisation (Section 6.2).
    PlaneStripe parabit(uint32_t and_ops, bool or_op) {
        using namespace nand::iscm;
        PlaneStripe s;
        const auto ops = program(and_ops);
        for (size_t i = 0; i < ops.size(); ++i) {
            const uint8_t f =
                uint8_t((i == 0 ? kInitS | kInitC : 0) | (i + 1 == ops.size() ? kTransfer : 0));
            nand::seq::mws(c_, rc(), 0, 0, f, {{ops[i].block, 1ull << ops[i].page}});
            sense(s);
        }
        if (or_op) {
            const auto o = program(1).front();
            nand::seq::mws(c_, rc(), 0, 0, uint8_t(kInitS | kTransfer),
                           {{o.block, 1ull << o.page}});
            sense(s);
        }
        data_out(s);
        return s;
    }

    // Flash-Cosmos: the AND operands fill blocks of 48 wordlines; one intra-block MWS per block,
    // the results accumulating in the latches (Section 6.1). With an OR operand (KCS) each MWS
    // also names the clique vector's block (inter-block, 2 of the at most 4 blocks), so every
    // sensing gives (AND of the block) OR clique and their accumulation (AND of all) OR clique.
    PlaneStripe flash_cosmos(uint32_t and_ops, bool or_op) {
        using namespace nand::iscm;
        PlaneStripe s;
        const auto ops = program(and_ops);
        // The clique vector joins each MWS as a second block when the power cap allows
        // inter-block MWS (Power::mws_max_blocks, 4); otherwise it is ORed in by a sensing of
        // its own, as ParaBit does.
        const bool fold = or_op && cfg_.power.mws_max_blocks >= 2;
        const uint32_t clique_block = or_op ? program(1).front().block : 0;
        std::vector<nand::seq::MwsOperand> blocks;
        for (const auto& a : ops) {
            if (blocks.empty() || blocks.back().block != a.block) blocks.push_back({a.block, 0});
            blocks.back().pbm |= 1ull << a.page;
        }
        for (size_t j = 0; j < blocks.size(); ++j) {
            std::vector<nand::seq::MwsOperand> slots = {blocks[j]};
            if (fold) slots.push_back({clique_block, 1});
            const uint8_t f =
                uint8_t((j == 0 ? kInitS | kInitC : 0) | (j + 1 == blocks.size() ? kTransfer : 0));
            nand::seq::mws(c_, rc(), 0, 0, f, slots);
            sense(s);
        }
        if (or_op && !fold) {
            nand::seq::mws(c_, rc(), 0, 0, uint8_t(kInitS | kTransfer), {{clique_block, 1}});
            sense(s);
        }
        data_out(s);
        return s;
    }

  private:
    const nand::RowCodec& rc() { return array_->die(0, 0).codec(); }

    sc_time send() {
        buf_.assign(c_.data_bytes(), 0xFF);
        const sc_time done =
            array_->die(0, 0).execute(c_, buf_.data(), uint32_t(buf_.size()), now_);
        if (!c_.ok()) throw std::logic_error("flashcosmos experiment: " + c_.error);
        now_ = done;
        return done;
    }

    // ESP-programs `n` pages of plane 0, 48 to a fresh block, wordlines in order.
    std::vector<nand::PageAddress> program(uint32_t n) {
        const auto& g = cfg_.geometry;
        std::vector<nand::PageAddress> pages;
        for (uint32_t i = 0; i < n; ++i) {
            if (i % g.wordlines_per_block == 0) next_block();
            const nand::PageAddress a{0, 0, 0, block_, i % g.wordlines_per_block};
            nand::seq::program(c_, rc(), {a}, nand::CellMode::Esp, false, g.page_bytes);
            send();
            pages.push_back(a);
        }
        return pages;
    }

    void next_block() {
        block_ = (block_ + 1) % cfg_.geometry.blocks_per_plane;
        if (used_.insert(block_).second) return;
        nand::seq::erase(c_, rc(), {{0, 0, 0, block_, 0}});  // reused: erase it first
        send();
    }

    void sense(PlaneStripe& s) {
        const uint64_t issue = uint64_t(now_.value());
        send();
        ++s.sensings;
        s.sense_us += double(c_.array_end_ps - c_.array_start_ps) * 1e-6;
        // From the first cycle to the array start: the cycles on the bus, then tWB.
        s.sense_bus_us += double(c_.array_start_ps - issue) * 1e-6 - cfg_.timing.t_wb_ns * 1e-3;
        s.sense_pj += c_.energy_pj;
    }

    void data_out(PlaneStripe& s) {
        nand::seq::data_out(c_, rc(), 0, 0, 0, cfg_.geometry.page_bytes);
        const sc_time issue = now_;
        send();
        ++s.pages_out;
        s.dout_us += (now_ - issue).to_seconds() * 1e6;
        s.dout_pj += c_.energy_pj;
    }

    nand::NandConfig cfg_;
    core::Services services_;
    std::unique_ptr<nand::FlashArray> array_;
    nand::CommandExt c_;
    std::vector<uint8_t> buf_;
    sc_time now_ = sc_core::SC_ZERO_TIME;
    uint32_t block_ = 0;
    std::set<uint32_t> used_;
};

enum class Workload { Bmi, Ims, Kcs };

struct Point {
    Workload w;
    std::string id, label;  // "B36", "BMI m=36 (...)"
    uint32_t and_ops = 0;
    bool or_op = false;         // KCS: OR with the clique vector
    uint64_t vector_bytes = 0;  // one operand (and the result)
    uint32_t items = 1;         // independent operations (KCS cliques)
    bool bitcount = false;      // BMI: the host counts the result's ones
    double stripes = 0;         // page-stripes of the whole run
    uint32_t operands() const { return and_ops + (or_op ? 1 : 0); }
};

struct Outcome {
    double time_s = 0, energy_j = 0;
};

std::string bytes_text(double b) {
    char s[32];
    if (b >= 1e9)
        std::snprintf(s, sizeof s, "%.3g GB", b / 1e9);
    else if (std::fmod(b, 1048576) == 0)
        std::snprintf(s, sizeof s, "%.0f MiB", b / 1048576);
    else
        std::snprintf(s, sizeof s, "%.3g MB", b / 1e6);
    return s;
}

class Model {
  public:
    explicit Model(const FlashCosmosExpConfig& c)
        : c_(c),
          reads_(name("reads"), c.nand),
          parabit_(name("parabit"), parabit_config(c)),
          fc_(name("fc"), fc_config(c)) {
        link::PcieConfig p;
        p.generation = c.pcie_generation;
        p.lanes = c.pcie_lanes;
        p.max_payload_bytes = c.pcie_max_payload_bytes;
        p.validate();
        const uint64_t bytes = 1u << 20;
        const auto w = link::transfer_wire(p, true, c.host_buffer_address, bytes);
        link_gbps_ = double(bytes) / link::serialisation_ns(p, w.request_direction_bytes());
        link_raw_gbps_ = p.lanes * p.gigatransfers_per_s() / 8.0;
        host_gbps_ =
            c.host_dram_mts * 1e6 * 8 * c.host_dram_channels * c.host_dram_efficiency / 1e9;
        isp_gbps_ = c.isp.bytes_per_ns;
        const auto& g = c.nand.geometry;
        planes_ = double(g.channels) * g.dies_per_channel * g.planes_per_die;
        planes_per_channel_ = double(g.dies_per_channel) * g.planes_per_die;
        stripe_bytes_ = planes_ * g.page_bytes;
    }

    double link_gbps() const { return link_gbps_; }
    double host_gbps() const { return host_gbps_; }
    double link_raw_gbps() const { return link_raw_gbps_; }
    double stripe_bytes() const { return stripe_bytes_; }

    // One plane's stripe of system `s` for `p`, measured once per distinct pattern.
    const PlaneStripe& cost(Sys s, const Point& p) {
        const Sys kind = s == kIsp ? kOsp : s;  // ISP reads as OSP does
        auto key = std::make_tuple(int(kind), p.and_ops, p.or_op);
        auto it = cache_.find(key);
        if (it != cache_.end()) return it->second;
        PlaneStripe ps = kind == kOsp  ? reads_.reads(p.operands())
                         : kind == kPb ? parabit_.parabit(p.and_ops, p.or_op)
                                       : fc_.flash_cosmos(p.and_ops, p.or_op);
        return cache_.emplace(key, ps).first->second;
    }

    std::array<Outcome, kSystems> run(const Point& p) {
        const double page = c_.nand.geometry.page_bytes;
        const double stripe = stripe_bytes_;
        const double n = p.operands();
        const double link_s = 1.0 / (link_gbps_ * 1e9);  // seconds per byte
        const double host_s = 1.0 / (host_gbps_ * 1e9);
        // Result bytes in host DRAM per stripe: the DMA's write, and BMI's bit count reads them.
        const double result_dram = stripe * (p.bitcount ? 2 : 1);
        std::array<Outcome, kSystems> out;
        for (int si = 0; si < kSystems; ++si) {
            const Sys s = Sys(si);
            const PlaneStripe& k = cost(s, p);
            const bool in_flash = s == kPb || s == kFc;
            // Stage times per stripe, in seconds.
            // Planes: OSP/ISP read with cache reads, so a page's data-out overlaps the next
            // sensing; PB/FC keep the result in the latches until it is out (no third latch
            // assumed), so a plane senses its next stripe after its data-out.
            const double plane = (k.sense_us + (in_flash ? k.dout_us : 0)) * 1e-6;
            const double channel = planes_per_channel_ * (k.dout_us + k.sense_bus_us) * 1e-6;
            const double link = (s == kOsp ? n : 1) * stripe * link_s;
            // Host memory: OSP's operands are written by the DMA and read by the cores.
            const double dram = (s == kOsp ? 2 * n * stripe : 0) + result_dram;
            const double host = dram * host_s;
            const double accel = s == kIsp ? n * planes_per_channel_ * page / (isp_gbps_ * 1e9) : 0;
            // Pipelined: the bottleneck stage is busy S x its per-stripe time, and the first
            // page's passage through the other stages comes on top (its sensing before it,
            // its channel, link and host transfer after it). The first page leaves its plane
            // after one read (OSP, ISP) or after the stripe's whole sensing (PB, FC).
            const std::array<double, 5> stage = {plane, channel, link, host, accel};
            const std::array<double, 5> first = {
                (in_flash ? k.sense_us : k.sense_us / k.sensings) * 1e-6,
                k.dout_us / k.pages_out * 1e-6, page * link_s, dram / stripe * page * host_s,
                s == kIsp ? page / (isp_gbps_ * 1e9) : 0};
            const size_t b = size_t(std::max_element(stage.begin(), stage.end()) - stage.begin());
            double t = p.stripes * stage[b];
            for (size_t i = 0; i < stage.size(); ++i)
                if (i != b) t += first[i];
            // Energy, in joules.
            double e = p.stripes * planes_ * (k.sense_pj + k.dout_pj) * 1e-12;  // die model
            e += p.stripes * (s == kOsp ? n : 1) * stripe * c_.pcie_pj_per_byte * 1e-12;
            e += c_.ssd_controller_w * t;
            e += p.stripes * dram * c_.dram_pj_per_byte * 1e-12;
            if (s == kIsp) e += p.stripes * n * stripe / 64 * c_.isp.pj_per_64b * 1e-12;
            if (s == kOsp)
                e += c_.host_active_w * t;
            else if (p.bitcount)
                e += c_.host_active_w * p.stripes * result_dram * host_s;
            out[s] = {t, e};
        }
        return out;
    }

  private:
    static std::string name(const char* what) {
        static int instance = 0;  // module names must be unique in the process
        return std::string("flashcosmos_exp") + std::to_string(instance++) + "_" + what;
    }
    static nand::NandConfig parabit_config(const FlashCosmosExpConfig& c) {
        nand::NandConfig n = c.nand;
        n.timing.t_read_slc_us = c.parabit_sense_us;  // ParaBit's chip: 25 us per sensing
        return n;
    }
    static nand::NandConfig fc_config(const FlashCosmosExpConfig& c) {
        nand::NandConfig n = c.nand;
        n.timing.mws_fixed_latency = c.fc_fixed_tmws;
        return n;
    }

    const FlashCosmosExpConfig& c_;
    DieBench reads_, parabit_, fc_;
    std::map<std::tuple<int, uint32_t, bool>, PlaneStripe> cache_;
    double link_gbps_ = 0, link_raw_gbps_ = 0, host_gbps_ = 0, isp_gbps_ = 0;
    double planes_ = 0, planes_per_channel_ = 0, stripe_bytes_ = 0;
};

std::vector<Point> points(const FlashCosmosExpConfig& c, Workload w, bool quick, double stripe) {
    std::vector<Point> v;
    char label[160];
    auto stripes_of = [&](const Point& p) {
        return std::ceil(double(p.vector_bytes) / stripe) * p.items;
    };
    if (w == Workload::Bmi)
        for (uint32_t m : quick ? c.bmi_months_quick : c.bmi_months) {
            Point p{w, "B" + std::to_string(m), ""};
            p.and_ops = 365 * m / 12;
            p.vector_bytes = c.bmi_users / 8;
            p.bitcount = true;
            p.stripes = stripes_of(p);
            std::snprintf(label, sizeof label, "BMI m=%u (%u x %s AND, %.0f stripes)", m, p.and_ops,
                          bytes_text(double(p.vector_bytes)).c_str(), p.stripes);
            p.label = label;
            v.push_back(p);
        }
    if (w == Workload::Ims)
        for (uint32_t i : quick ? c.ims_images_quick : c.ims_images) {
            Point p{w, "I" + std::to_string(i / 1000) + "K", ""};
            p.and_ops = 3;
            p.vector_bytes = uint64_t(i) * c.ims_width * c.ims_height * c.ims_colours / 8;
            p.stripes = stripes_of(p);
            std::snprintf(label, sizeof label, "IMS I=%uK (3 x %s AND, %.0f stripes)", i / 1000,
                          bytes_text(double(p.vector_bytes)).c_str(), p.stripes);
            p.label = label;
            v.push_back(p);
        }
    if (w == Workload::Kcs)
        for (uint32_t k : quick ? c.kcs_k_quick : c.kcs_k) {
            Point p{w, "K" + std::to_string(k), ""};
            p.and_ops = k;
            p.or_op = true;
            p.vector_bytes = c.kcs_vertices / 8;
            p.items = c.kcs_cliques;
            p.stripes = stripes_of(p);
            std::snprintf(label, sizeof label, "KCS k=%u (%u x (%u AND + 1 OR) x %s, %.0f stripes)",
                          k, p.items, k, bytes_text(double(p.vector_bytes)).c_str(), p.stripes);
            p.label = label;
            v.push_back(p);
        }
    return v;
}

double geomean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0 : std::exp(s / double(v.size()));
}

struct Result {
    Point p;
    std::array<Outcome, kSystems> o;
    double speedup(Sys a, Sys b) const { return o[b].time_s / o[a].time_s; }  // a over b
    double efficiency(Sys a, Sys b) const { return o[b].energy_j / o[a].energy_j; }
};

}  // namespace

const std::vector<std::string>& flashcosmos_workloads() {
    static const std::vector<std::string> w = {"bmi", "ims", "kcs", "all"};
    return w;
}

namespace {
// The parts of the model that are the machine's, as pairs (machine's, model's): one list for
// both directions.
template <class Machine, class Model, class Pair>
void machine_parts(Machine& m, Model& c, Pair pair) {
    pair(m.nand, c.nand);
    pair(m.pcie.generation, c.pcie_generation);
    pair(m.pcie.lanes, c.pcie_lanes);
    pair(m.pcie.max_payload_bytes, c.pcie_max_payload_bytes);
    pair(m.ssd.flash.isp, c.isp);
}
}  // namespace

PlatformConfig flashcosmos_machine() {
    PlatformConfig m;
    const FlashCosmosExpConfig table1;
    machine_parts(m, table1, [](auto& mine, const auto& model) { mine = model; });
    return m;
}

FlashCosmosExpConfig from_machine(const PlatformConfig& m) {
    FlashCosmosExpConfig c;
    machine_parts(m, c, [](const auto& mine, auto& model) { model = mine; });
    return c;
}

std::vector<ExpRow> flashcosmos_model_rows(const ExpOptions& options) {
    return flashcosmos_rows(options, from_machine(options.platform()));
}

std::vector<ExpRow> flashcosmos_rows(const ExpOptions& options, const FlashCosmosExpConfig& cfg) {
    const std::string wl = options.workload.empty() ? "all" : options.workload;
    const auto& names = flashcosmos_workloads();
    if (std::find(names.begin(), names.end(), wl) == names.end())
        throw InputError("canopy exp flashcosmos", "--workload " + wl,
                         "unknown workload; allowed: bmi|ims|kcs|all");
    const bool all = wl == "all";
    Model model(cfg);
    std::vector<ExpRow> rows;

    // The die model's numbers every composition uses (Table 1 where published).
    {
        Point one{Workload::Bmi, "", ""};
        one.and_ops = cfg.nand.geometry.wordlines_per_block;
        const PlaneStripe& r = model.cost(kOsp, one);
        const PlaneStripe& pb = model.cost(kPb, one);
        const PlaneStripe& fc = model.cost(kFc, one);
        rows.push_back({"D.tR", "die model: read of an ESP page (Table 1 tR, SLC)",
                        r.sense_us / r.sensings, 22.5, "us"});
        rows.push_back({"D.tMWS", "die model: FC intra-block MWS of 48 wordlines (Table 1 tMWS)",
                        fc.sense_us / fc.sensings, 25.0, "us"});
        rows.push_back({"D.tPB", "die model: ParaBit sensing with latch accumulation",
                        pb.sense_us / pb.sensings, cfg.parabit_sense_us, "us"});
        rows.push_back({"D.tDMA", "die model: one 16 KiB page out on a 1.2 GB/s channel",
                        r.dout_us / r.pages_out, std::nullopt, "us"});
        char q[160];
        std::snprintf(q, sizeof q,
                      "link model: PCIe Gen%u x%u payload rate (raw %.1f GB/s%s), MPS %u B",
                      cfg.pcie_generation, cfg.pcie_lanes, model.link_raw_gbps(),
                      cfg.pcie_generation == 4 && cfg.pcie_lanes == 4 ? ", Table 1" : "",
                      cfg.pcie_max_payload_bytes);
        rows.push_back({"D.link", q, model.link_gbps(), std::nullopt, "GB/s"});
        std::snprintf(q, sizeof q,
                      "host memory bandwidth for bulk AND/OR and bit count (%u x DDR4-%.0f, "
                      "%.0f%% of peak)",
                      cfg.host_dram_channels, cfg.host_dram_mts, 100 * cfg.host_dram_efficiency);
        rows.push_back({"D.host", q, model.host_gbps(), std::nullopt, "GB/s"});
    }

    std::vector<Result> results;
    for (Workload w : {Workload::Bmi, Workload::Ims, Workload::Kcs}) {
        const char* n = w == Workload::Bmi ? "bmi" : w == Workload::Ims ? "ims" : "kcs";
        if (!all && wl != n) continue;
        for (const Point& p : points(cfg, w, options.quick, model.stripe_bytes()))
            results.push_back({p, model.run(p)});
    }

    // Per point: speed-up and energy efficiency of FC, PB and ISP over OSP (Figures 17, 18).
    for (const auto& r : results) {
        for (Sys s : {kFc, kPb, kIsp})
            rows.push_back({r.p.id + "." + kSysName[s],
                            r.p.label + ": " + kSysName[s] + " speed-up over OSP",
                            r.speedup(s, kOsp), std::nullopt, "x"});
        for (Sys s : {kFc, kPb, kIsp})
            rows.push_back({r.p.id + ".e" + kSysName[s],
                            r.p.label + ": " + kSysName[s] + " energy efficiency over OSP",
                            r.efficiency(s, kOsp), std::nullopt, "x"});
    }

    // Means: geometric over the points (see the comment at the top).
    auto mean = [&](Workload w, bool any, Sys a, Sys b, bool energy) {
        std::vector<double> v;
        for (const auto& r : results)
            if (any || r.p.w == w) v.push_back(energy ? r.efficiency(a, b) : r.speedup(a, b));
        return geomean(v);
    };
    auto count = [&](Workload w) {
        return std::count_if(results.begin(), results.end(),
                             [&](const Result& r) { return r.p.w == w; });
    };
    auto find = [&](const std::string& id) -> const Result* {
        for (const auto& r : results)
            if (r.p.id == id) return &r;
        return nullptr;
    };
    const std::string over = " (geomean of " + std::to_string(results.size()) + " points)";
    if (all) {
        struct M {
            const char* id;
            Sys a, b;
            double speed;
        };
        for (const M& m :
             {M{"M.FC", kFc, kOsp, 32.0}, M{"M.FCi", kFc, kIsp, 25.0}, M{"M.FCp", kFc, kPb, 3.5},
              M{"M.PB", kPb, kOsp, 9.4}, M{"M.PBi", kPb, kIsp, 7.2}, M{"M.ISP", kIsp, kOsp, 1.28}})
            rows.push_back({m.id,
                            std::string("mean speed-up ") + kSysName[m.a] + " over " +
                                kSysName[m.b] + ", BMI+IMS+KCS" + over,
                            mean(Workload::Bmi, true, m.a, m.b, false), m.speed, "x"});
        for (const M& m :
             {M{"E.FC", kFc, kOsp, 95.0}, M{"E.FCi", kFc, kIsp, 13.4}, M{"E.FCp", kFc, kPb, 3.3}})
            rows.push_back({m.id,
                            std::string("mean energy efficiency ") + kSysName[m.a] + " over " +
                                kSysName[m.b] + ", BMI+IMS+KCS" + over,
                            mean(Workload::Bmi, true, m.a, m.b, true), m.speed, "x"});
    }
    if (count(Workload::Bmi)) {
        const std::string o = " (geomean of " + std::to_string(count(Workload::Bmi)) + " m)";
        rows.push_back({"B.FC", "BMI mean speed-up FC over OSP" + o,
                        mean(Workload::Bmi, false, kFc, kOsp, false), 198.4, "x"});
        rows.push_back({"B.FCi", "BMI mean speed-up FC over ISP" + o,
                        mean(Workload::Bmi, false, kFc, kIsp, false), 150.5, "x"});
        rows.push_back({"B.PB", "BMI mean speed-up PB over OSP" + o,
                        mean(Workload::Bmi, false, kPb, kOsp, false), 14.0, "x"});
        rows.push_back({"B.PBi", "BMI mean speed-up PB over ISP" + o,
                        mean(Workload::Bmi, false, kPb, kIsp, false), 10.7, "x"});
        if (const Result* r = find("B36")) {
            rows.push_back({"EB36.FC", "BMI m=36: energy efficiency FC over OSP",
                            r->efficiency(kFc, kOsp), 1839.0, "x"});
            rows.push_back({"EB36.FCi", "BMI m=36: energy efficiency FC over ISP",
                            r->efficiency(kFc, kIsp), 222.0, "x"});
            rows.push_back({"EB36.FCp", "BMI m=36: energy efficiency FC over PB",
                            r->efficiency(kFc, kPb), 35.5, "x"});
        }
    }
    if (count(Workload::Ims)) {
        const std::string o = " (geomean of " + std::to_string(count(Workload::Ims)) + " I)";
        rows.push_back({"I.FC", "IMS mean speed-up FC over OSP" + o,
                        mean(Workload::Ims, false, kFc, kOsp, false), 3.0, "x"});
        rows.push_back({"I.FCi", "IMS mean speed-up FC over ISP" + o,
                        mean(Workload::Ims, false, kFc, kIsp, false), 2.5, "x"});
        rows.push_back({"I.PB", "IMS mean speed-up PB over OSP" + o,
                        mean(Workload::Ims, false, kPb, kOsp, false), 3.0, "x"});
        rows.push_back({"I.FCp", "IMS mean speed-up FC over PB (nearly identical)" + o,
                        mean(Workload::Ims, false, kFc, kPb, false), 1.0, "x"});
        rows.push_back({"EI.FCp", "IMS mean energy efficiency FC over PB (2.3% saving)" + o,
                        mean(Workload::Ims, false, kFc, kPb, true), 1.0 / (1.0 - 0.023), "x"});
    }
    if (count(Workload::Kcs)) {
        const Result *k16 = find("K16"), *kmax = nullptr;
        for (const auto& r : results)
            if (r.p.w == Workload::Kcs) kmax = &r;
        if (k16 && kmax && kmax != k16) {
            rows.push_back({"K.PB",
                            "KCS: PB speed-up over OSP at k=" + kmax->p.id.substr(1) +
                                " / at k=16 (stops improving for k > 16)",
                            kmax->speedup(kPb, kOsp) / k16->speedup(kPb, kOsp), 1.0, "x"});
            rows.push_back({"K.FC",
                            "KCS: FC speed-up over OSP at k=" + kmax->p.id.substr(1) +
                                " / at k=16 (keeps improving)",
                            kmax->speedup(kFc, kOsp) / k16->speedup(kFc, kOsp), std::nullopt, "x"});
        }
    }
    return rows;
}

// ---- The platform side: rows P.* ----------------------------------------------------------
// The paper's three workloads, small, on the whole platform with real firmware (SPU-OS, the
// Flash-Cosmos app, the host library of sw/host/flash_cosmos): every system's time and whether
// its result is the host's. The paper publishes no value for this machine (Willow's SPUs and
// ring, one RPC per SPU at a time), so the rows stand beside the model's, not against the paper.
// One child process (run_isolated). On `options.platform()` with 8 SPUs, each on a channel of 2
// dies, and the store on the flash; throws when the firmware was not built.

using nlohmann::json;

namespace {

const char* const kKey[] = {"FC", "PB", "ISP", "OSP"};

// 8 SPUs, each on a channel of 2 dies x 2 planes: an operand of one page per plane is 512 KiB.
constexpr uint32_t kSpus = 8, kDies = 2;

json run(PlatformConfig cfg, const std::vector<std::string>& names) {
    core::Services services;
    cfg.ssd.spus = kSpus;
    cfg.nand.geometry.channels = kSpus;
    cfg.nand.geometry.dies_per_channel = kDies;
    cfg.nand.geometry.blocks_per_plane = 20;
    cfg.ssd.store.flash = true;
    cfg.ssd.store.format = true;
    cfg.boot_spu_os("flashcosmos");
    Platform platform(cfg, services);
    WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    WillowStack stack(platform, sc);
    stack.start_kernel(0);
    json out = json::object();
    bool done = false;
    unsigned running = 0;
    auto& proc = platform.host.kernel.create_process("fc-workloads");
    platform.host.cores[1]->run(proc, [&](host::HostCore& cpu) {
        const WillowStack::User user(stack, running);
        stack.wait_ready(cpu);
        const sw::FcGeometry g = stack.flash_cosmos_geometry();
        const uint64_t bits = uint64_t(g.spus) * g.units() * g.page_bytes * 8;
        sw::Hre hre(cpu, stack.driver.open(cpu));
        sw::FlashCosmos fc(cpu, hre, stack.cfg.flash_cosmos_app, g);
        for (const std::string& n : names) {
            const sw::FcWorkload w = n == "bmi"   ? sw::bmi_workload(bits, 30, 1)
                                     : n == "ims" ? sw::ims_workload(bits, 2)
                                                  : sw::kcs_workload(bits, 16, 3);
            const auto stored = sw::store_workload(fc, w);
            const auto want = w.reference();
            for (int s = 0; s < 4; ++s) {
                const sw::FcOutcome o = sw::run_workload(cpu, fc, w, stored, sw::kFcSystems[s]);
                out[n][kKey[s]] = {{"us", o.ns * 1e-3}, {"right", o.result == want}};
            }
            fc.release_all();
        }
        done = true;
    });
    platform.simulate(sc_core::sc_time(10, sc_core::SC_SEC));  // GDB's Ctrl-C between slices
    if (!done)
        throw SimulationError("flashcosmos on the platform: the host program did not finish: " +
                              platform.host.first_fault());
    return out;
}

}  // namespace

std::vector<ExpRow> flashcosmos_platform_rows(const ExpOptions& options) {
    std::vector<std::string> names = {"bmi", "ims", "kcs"};
    if (!options.workload.empty() && options.workload != "all") names = {options.workload};
    const PlatformConfig m = options.platform();
    const json r =
        run_isolated([&] { return run(m, names); }, "the workloads on the platform, real firmware");
    const std::map<std::string, std::string> label = {
        {"bmi", "BMI m=1 (30 days x 4 Mi users)"},
        {"ims", "IMS (3 x 4 Mi pixels)"},
        {"kcs", "KCS k=16 (16 AND + 1 OR x 4 Mi vertices)"}};
    std::vector<ExpRow> rows;
    for (const std::string& n : names) {
        const json& w = r.at(n);
        const std::string id = "P." + std::string(1, char(std::toupper(n[0])));
        double right = 0;
        for (int s = 0; s < 4; ++s) right += w.at(kKey[s]).at("right").get<bool>() ? 1 : 0;
        rows.push_back({id + ".ok",
                        "platform, " + label.at(n) + ": systems whose result is the host's (of 4)",
                        right, std::nullopt, ""});
        const double osp = w.at("OSP").at("us").get<double>();
        for (int s = 0; s < 3; ++s)
            rows.push_back({id + "." + kKey[s],
                            "platform, " + label.at(n) + ": " + kKey[s] +
                                " speed-up over OSP (8 SPUs, real firmware)",
                            osp / w.at(kKey[s]).at("us").get<double>(), std::nullopt, "x"});
    }
    return rows;
}

Experiment flashcosmos_experiment() {
    return {"flashcosmos",
            "Flash-Cosmos Sec. 7-8 (Table 1, Figures 17-18): speed-up and energy efficiency of "
            "Flash-Cosmos (FC), ParaBit (PB) and in-storage processing (ISP) over outside-storage "
            "processing (OSP) on BMI (m = 1..36 months), IMS (I = 10K..200K images) and KCS "
            "(k = 8..64); full-scale timing-only model, each page-stripe measured on the NAND die "
            "model; then the same workloads, small, on the whole platform with real firmware (rows "
            "P.*, left out by --quick); --workload bmi|ims|kcs|all",
            [](const ExpOptions& o) {
                std::vector<ExpRow> rows = flashcosmos_model_rows(o);
                if (!o.quick)  // the platform runs take seconds: --quick is the model alone
                    for (ExpRow& r : flashcosmos_platform_rows(o)) rows.push_back(std::move(r));
                return rows;
            },
            flashcosmos_workloads(),
            flashcosmos_machine,
            true};
}

}  // namespace canopy::experiments
