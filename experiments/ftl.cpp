// The ftl experiment: write amplification and write latency of the FTL (sw/firmware/ftl) under
// a sustained uniform random-write workload at several over-provisioning levels. The FTL runs on
// the modelled flash: its READ, PROGRAM and ERASE go through a channel's flash controller
// (models/ssd/flash_controller) to 2 dies x 2 planes of the NAND model in timing-only mode, so
// each host write's latency holds the program and any garbage collection it triggers (copies
// and erases), at the dies' and the bus's real timing. A driver thread stands in for the SPU: the
// FTL's own instruction time is not counted. Each level runs in its own process (run_isolated).
//
// The reference column is the first-principles estimate for greedy GC under uniform random
// writes, WA = (1 + rho) / (2 rho) with spare factor rho = (physical - logical) / logical
// (Agarwal and Marrow, GLOBECOM Workshops 2010; derivation in tests/ftl/ftl_test.cpp). Willow and
// Flash-Cosmos publish no FTL figures; these are not published values.
#include "experiments/experiment.hpp"

#include <tlm_utils/simple_initiator_socket.h>
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <systemc>

#include "experiments/isolated.hpp"
#include "nand/channel.hpp"
#include "ssd/flash_controller.hpp"
#include "ssd/ssd_dram.hpp"
#include "sw/firmware/ftl/ftl.h"

namespace canopy::experiments {

using namespace platform;

using nlohmann::json;
using sc_core::sc_time;

namespace {

// The FTL's flash operations as flash-controller commands, issued from an SC_THREAD that waits
// for each completion.
class FtlDriver : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(FtlDriver);
    FtlDriver(sc_core::sc_module_name n, ssd::FlashController& fc, ssd::SsdDram& dram,
              const nand::NandConfig& nc, uint32_t op_permille, uint64_t random_writes,
              uint64_t seed)
        : sc_module(n), fc_(fc), dram_(dram), random_writes_(random_writes), seed_(seed) {
        const nand::Geometry& g = nc.geometry;
        cfg_.geo = {g.dies_per_channel,    g.planes_per_die, g.blocks_per_plane,
                    g.wordlines_per_block, g.page_bytes,     0};
        cfg_.op_permille = op_permille;
        cfg_.gc_free_blocks = 4;
        cfg_.wl_threshold = 0;  // uniform writes wear evenly; static levelling would add copies
        cfg_.ops = &kOps;
        cfg_.ctx = this;
        mem_.resize((ftl_mem_bytes(&cfg_) + 3) / 4);
        cfg_.mem = mem_.data();
        cfg_.mem_bytes = uint32_t(mem_.size() * 4);
        cfg_.buffers = kBuffers;
        SC_THREAD(run);
    }

    json result;
    // The SPU's way to the registers (unused: the driver submits commands directly).
    tlm_utils::simple_initiator_socket<FtlDriver> regs{"regs"};

  private:
    static constexpr uint64_t kData = 0x100000, kBuffers = 0x200000;

    int wait_for(const ssd::FlashCommand& c) {
        const sc_time now = sc_core::sc_time_stamp();
        const ssd::FlashCompletion d = fc_.submit(c, now);
        wait(d.done - now);
        last_meta_ = d.meta;
        switch (d.status) {
            case ssd::FlashStatus::Ok:
                return FTL_OK;
            case ssd::FlashStatus::Uncorrectable:
                return FTL_E_UNCORRECTABLE;
            case ssd::FlashStatus::Failed:
                return FTL_E_FAILED;
            default:
                throw std::runtime_error("ftl experiment: " + d.error);
        }
    }
    static ssd::FlashCommand command(ssd::FlashOpcode op, uint32_t die, uint32_t plane,
                                     uint32_t block, uint32_t page) {
        ssd::FlashCommand c;
        c.op = op;
        c.die = die, c.plane = plane, c.block = block, c.page = page;
        return c;
    }
    static FtlDriver& self(void* ctx) { return *static_cast<FtlDriver*>(ctx); }
    // A unit per page: the metadata's two words fit the controller's 64-bit metadata register.
    static int program(void* ctx, const ftl_ppa* a, uint64_t buf, const uint32_t* meta,
                       uint32_t words) {
        auto c = command(ssd::FlashOpcode::Program, a->die, a->plane, a->block, a->page);
        c.dram_addr = buf, c.length = self(ctx).cfg_.geo.page_bytes;
        std::memcpy(&c.meta, meta, std::min<size_t>(words * 4, sizeof c.meta));
        return self(ctx).wait_for(c);
    }
    static int read(void* ctx, const ftl_ppa* a, uint64_t buf, uint32_t offset, uint32_t len,
                    uint32_t* meta, uint32_t words) {
        auto c = command(ssd::FlashOpcode::Read, a->die, a->plane, a->block, a->page);
        c.dram_addr = buf, c.column = offset, c.length = std::max<uint32_t>(len, 1);
        const int rc = self(ctx).wait_for(c);
        std::memcpy(meta, &self(ctx).last_meta_, std::min<size_t>(words * 4, sizeof last_meta_));
        return rc;
    }
    static int erase(void* ctx, uint32_t die, uint32_t plane, uint32_t block) {
        return self(ctx).wait_for(command(ssd::FlashOpcode::Erase, die, plane, block, 0));
    }
    static void copy(void* ctx, uint64_t dst, uint64_t src, uint32_t len) {
        std::vector<uint8_t> b(len);
        self(ctx).dram_.read(src, b.data(), len);
        self(ctx).dram_.write(dst, b.data(), len);
    }
    static void fill(void* ctx, uint64_t dst, uint8_t byte, uint32_t len) {
        std::vector<uint8_t> b(len, byte);
        self(ctx).dram_.write(dst, b.data(), len);
    }
    static constexpr ftl_ops kOps = {program, read, erase, copy, fill, nullptr, nullptr, nullptr};

    void run() {
        if (ftl_format(&ftl_, &cfg_) != FTL_OK) throw std::runtime_error("ftl experiment: format");
        const uint32_t cap = ftl_capacity_units(&ftl_);
        auto write = [&](uint32_t lpn) {
            const int rc = ftl_write(&ftl_, lpn, kData, 0, cfg_.geo.page_bytes);
            if (rc != FTL_OK)
                throw std::runtime_error("ftl experiment: write of LPN " + std::to_string(lpn) +
                                         " returned " + std::to_string(rc));
        };
        for (uint32_t lpn = 0; lpn < cap; ++lpn) write(lpn);  // precondition: every page once
        struct ftl_stats before;
        ftl_stats(&ftl_, &before);
        std::mt19937_64 rng(seed_);
        std::vector<double> lat;
        lat.reserve(random_writes_);
        for (uint64_t i = 0; i < random_writes_; ++i) {
            const sc_time t0 = sc_core::sc_time_stamp();
            write(uint32_t(rng() % cap));
            lat.push_back((sc_core::sc_time_stamp() - t0).to_seconds() * 1e6);
        }
        struct ftl_stats after;
        ftl_stats(&ftl_, &after);
        std::sort(lat.begin(), lat.end());
        double sum = 0;
        for (double v : lat) sum += v;
        const double physical =
            double(uint64_t(cfg_.geo.dies) * cfg_.geo.planes_per_die * cfg_.geo.blocks_per_plane -
                   cfg_.gc_free_blocks) *
            cfg_.geo.pages_per_block;
        const double rho = (physical - cap) / cap;
        result = {
            {"capacity_pages", cap},
            {"random_writes", random_writes_},
            {"wa", double(after.flash_programs - before.flash_programs) /
                       double(after.host_writes - before.host_writes)},
            {"wa_estimate", (1 + rho) / (2 * rho)},
            {"rho", rho},
            {"gc_victims", after.gc_victims - before.gc_victims},
            {"erases", after.erases - before.erases},
            {"mean_us", sum / double(lat.size())},
            {"p99_us", lat[std::min(lat.size() - 1, size_t(0.99 * double(lat.size())))]},
            {"max_us", lat.back()},
        };
    }

    ssd::FlashController& fc_;
    ssd::SsdDram& dram_;
    uint64_t random_writes_, seed_;  // the random writes: how many, their stream (sim.seed)
    ftl_config cfg_{};
    ftl ftl_{};
    std::vector<uint32_t> mem_;
    uint64_t last_meta_ = 0;
};

json ftl_run(const PlatformConfig& m, uint32_t op_permille, bool quick) {
    core::Services services;
    services.seed = m.sim.seed;
    nand::NandConfig nc = m.nand;  // its timing; the geometry is the experiment's
    nc.geometry.channels = 1;
    nc.geometry.dies_per_channel = 2;
    nc.geometry.blocks_per_plane = quick ? 24 : 64;
    nc.functional = false;  // timing only: the FTL needs no data bytes, only their time
    nand::FlashArray array("nand", nc, services);
    ssd::SsdDramConfig dc = m.ssd.dram;
    dc.size_mib = 16;
    dc.banks = 1;
    ssd::SsdDram dram("dram", dc, services);
    ssd::FlashController fc("flash0", 0, nc, services, m.ssd.flash);
    fc.nand.bind(array.channel(0).target);
    fc.dram.bind(dram.socket);
    const uint64_t pages = uint64_t(nc.geometry.dies_per_channel) * nc.geometry.planes_per_die *
                           nc.geometry.blocks_per_plane * nc.geometry.wordlines_per_block;
    FtlDriver driver("driver", fc, dram, nc, op_permille, (quick ? 1 : 2) * pages, m.sim.seed);
    driver.regs.bind(fc.socket);
    sc_core::sc_start();
    if (driver.result.is_null()) throw std::runtime_error("ftl experiment: the driver did not end");
    return driver.result;
}

}  // namespace

std::vector<ExpRow> ftl_rows(const ExpOptions& o) {
    const bool quick = o.quick;
    const PlatformConfig m = o.platform();
    std::vector<ExpRow> rows;
    const std::vector<uint32_t> levels =
        quick ? std::vector<uint32_t>{70, 280} : std::vector<uint32_t>{70, 140, 200, 280};
    for (uint32_t op : levels) {
        const json r = run_isolated([&] { return ftl_run(m, op, quick); },
                                    "random writes at OP " + std::to_string(op / 10) + "%");
        const std::string at = "OP " + std::to_string(op / 10) + "%";
        const std::string id = "F" + std::to_string(op / 10);
        // Nothing is published: the analytic greedy-GC estimate is the reference, as a ratio.
        const double wa = r["wa"].get<double>();
        rows.push_back({id + ".wa", "write amplification, " + at, wa, std::nullopt, "x"});
        rows.push_back({id + ".wa_greedy",
                        "write amplification / the greedy-GC estimate (1+r)/2r, " + at,
                        wa / r["wa_estimate"].get<double>(), std::nullopt, "x"});
        rows.push_back({id + ".mean", "mean write latency, " + at, r["mean_us"].get<double>(),
                        std::nullopt, "us"});
        rows.push_back({id + ".p99", "p99 write latency, " + at, r["p99_us"].get<double>(),
                        std::nullopt, "us"});
        rows.push_back({id + ".gc", "GC victims per 1000 host writes, " + at,
                        1000.0 * r["gc_victims"].get<double>() / r["random_writes"].get<double>(),
                        std::nullopt, ""});
    }
    return rows;
}

Experiment ftl_experiment() {
    return {"ftl",
            "the FTL (sw/firmware/ftl) on a channel's flash controller and 2 dies x 2 planes of "
            "TLC: write amplification (and its ratio to the greedy-GC estimate), mean "
            "and p99 write latency and GC rate under uniform random page writes at 7-28 % "
            "over-provisioning",
            ftl_rows};
}

}  // namespace canopy::experiments
