// The flash translation layer (sw/firmware/ftl), on the host against a fake NAND that enforces
// the flash's rules and a reference model (LPN -> bytes): random workloads, power cuts between
// and inside operations (GC included), wear levelling, write amplification, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "fake_nand.hpp"
#include "ftl.h"

namespace canopy::ftl_test {
namespace {

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// FTL_SEED=n in the environment shifts every test's random seed (to soak the tests).
uint64_t seed(uint64_t s) {
    const char* e = std::getenv("FTL_SEED");
    return s + (e ? std::strtoull(e, nullptr, 10) * 1000003u : 0);
}

// An FTL on a fake NAND, with its table memory and write buffer.
struct Rig {
    ftl_config cfg{};
    FakeNand nand;
    std::vector<uint32_t> mem;
    std::vector<uint8_t> buffers;
    ftl f{};

    // external_tables: the tables behind the table callbacks (cfg.mem 0), as on the SPU.
    explicit Rig(const ftl_geometry& g, uint32_t op_permille = 100, uint32_t wl_threshold = 0,
                 uint32_t gc_free = 3, bool external_tables = false, uint32_t write_cache = 0,
                 uint32_t gc_policy = FTL_GC_GREEDY)
        : nand(g) {
        cfg.geo = g;
        cfg.op_permille = op_permille;
        cfg.gc_free_blocks = gc_free;
        cfg.wl_threshold = wl_threshold;
        cfg.write_cache = write_cache;
        cfg.gc_policy = gc_policy;
        cfg.ops = nand.ops();
        cfg.ctx = &nand;
        buffers.resize(ftl_buffer_bytes(&cfg));
        EXPECT_GT(buffers.size(), 0u);
        uint32_t bytes = ftl_mem_bytes(&cfg);
        EXPECT_GT(bytes, 0u);
        if (external_tables) {
            nand.use_external_tables(bytes);
        } else {
            mem.resize(bytes / 4);
            cfg.mem = mem.data();
        }
        cfg.mem_bytes = bytes;
        cfg.buffers = addr(buffers.data());
    }
    // Bytes of a logical unit (an LPN).
    uint32_t unit_bytes() const {
        return cfg.geo.unit_bytes ? cfg.geo.unit_bytes : cfg.geo.page_bytes;
    }
    uint32_t capacity() const { return ftl_capacity_units(&f); }
    int format() { return ftl_format(&f, &cfg); }
    // Power loss: SSD memory is lost (garbage), the flash stays; then recovery.
    int cut_and_mount(std::mt19937_64& rng) {
        for (auto& w : mem) w = uint32_t(rng());
        for (auto& b : nand.tables) b = uint8_t(rng());
        std::fill(buffers.begin(), buffers.end(), uint8_t(rng()));
        std::memset(&f, 0xA5, sizeof f);
        nand.restore_power();
        return ftl_mount(&f, &cfg);
    }
    int write(uint32_t lpn, const std::vector<uint8_t>& d, uint32_t off = 0) {
        return ftl_write(&f, lpn, addr(d.data()), off, uint32_t(d.size()));
    }
    int read(uint32_t lpn, std::vector<uint8_t>& out) {
        out.assign(unit_bytes(), 0);
        return ftl_read(&f, lpn, addr(out.data()), 0, unit_bytes());
    }
    struct ftl_stats stats() const {
        struct ftl_stats s;
        ftl_stats(&f, &s);
        return s;
    }
};

// The reference: what every LPN reads; unmapped pages read 0xFF.
struct Model {
    uint32_t page_bytes;
    std::map<uint32_t, std::vector<uint8_t>> pages;
    std::vector<uint8_t> get(uint32_t lpn) const {
        auto it = pages.find(lpn);
        return it == pages.end() ? std::vector<uint8_t>(page_bytes, 0xFF) : it->second;
    }
    void write(uint32_t lpn, const std::vector<uint8_t>& d, uint32_t off) {
        auto p = get(lpn);
        std::copy(d.begin(), d.end(), p.begin() + off);
        pages[lpn] = p;
    }
    void trim(uint32_t lpn, uint32_t n) {
        for (uint32_t i = lpn; i < lpn + n; ++i) pages.erase(i);
    }
};

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng());
    return v;
}

using Changes = std::vector<std::pair<uint32_t, std::vector<uint8_t>>>;
// Acknowledged changes: the LPN, its content before and after.
using Acked = std::vector<std::tuple<uint32_t, std::vector<uint8_t>, std::vector<uint8_t>>>;

// One random operation (writes full or partial, reads, trims) checked against the model. Returns
// the FTL's code; on a failed mutation `touched` gets the LPNs whose state is now uncertain
// (the old or the new content), and the model is not updated; an acknowledged one goes into
// the model and, if given, `acked` (each LPN with its new content).
int random_op(Rig& r, Model& m, std::mt19937_64& rng, uint32_t lpn_range, Changes* touched,
              Acked* acked = nullptr) {
    uint32_t pb = r.unit_bytes();
    uint32_t lpn = uint32_t(rng() % lpn_range);
    unsigned kind = unsigned(rng() % 100);
    if (kind < 35) {
        auto d = random_bytes(rng, pb);
        int rc = r.write(lpn, d);
        if (rc == FTL_OK) {
            if (acked) acked->push_back({lpn, m.get(lpn), d});
            m.write(lpn, d, 0);
        } else if (touched) {
            touched->push_back({lpn, d});
        }
        return rc;
    }
    if (kind < 60) {
        uint32_t off = uint32_t(rng() % pb), len = 1 + uint32_t(rng() % (pb - off));
        auto d = random_bytes(rng, len);
        int rc = r.write(lpn, d, off);
        auto after = m.get(lpn);
        std::copy(d.begin(), d.end(), after.begin() + off);
        if (rc == FTL_OK) {
            if (acked) acked->push_back({lpn, m.get(lpn), after});
            m.write(lpn, d, off);
        } else if (touched) {
            touched->push_back({lpn, after});
        }
        return rc;
    }
    if (kind < 92) {
        std::vector<uint8_t> got;
        int rc = r.read(lpn, got);
        if (rc == FTL_OK) {
            EXPECT_EQ(got, m.get(lpn)) << "lpn " << lpn;
        }
        if (kind < 70 && rc == FTL_OK) {  // a partial read too
            uint32_t off = uint32_t(rng() % pb), len = uint32_t(rng() % (pb - off + 1));
            std::vector<uint8_t> part(len + 1, 0x5A);
            rc = ftl_read(&r.f, lpn, addr(part.data()), off, len);
            auto want = m.get(lpn);
            if (rc == FTL_OK) {
                EXPECT_TRUE(std::equal(part.begin(), part.begin() + len, want.begin() + off));
                EXPECT_EQ(part[len], 0x5A);  // nothing written past len
            }
        }
        return rc;
    }
    uint32_t n = 1 + uint32_t(rng() % 4);
    n = std::min(n, r.capacity() - lpn);
    int rc = ftl_trim(&r.f, lpn, n);
    if (rc == FTL_OK) {
        for (uint32_t i = lpn; acked && i < lpn + n; ++i)
            acked->push_back({i, m.get(i), std::vector<uint8_t>(pb, 0xFF)});
        m.trim(lpn, n);
    } else if (touched) {
        for (uint32_t i = lpn; i < lpn + n; ++i)
            touched->push_back({i, std::vector<uint8_t>(pb, 0xFF)});
    }
    return rc;
}

// Writes every LPN once, in order (consecutive LPNs share pages), into the FTL and the model.
void fill_in_order(Rig& r, Model& m, std::mt19937_64& rng) {
    for (uint32_t lpn = 0; lpn < r.capacity(); ++lpn) {
        auto d = random_bytes(rng, r.unit_bytes());
        ASSERT_EQ(r.write(lpn, d), FTL_OK);
        m.write(lpn, d, 0);
    }
}

void verify_all(Rig& r, const Model& m) {
    ASSERT_EQ(ftl_check(&r.f), 0);
    std::vector<uint8_t> got;
    for (uint32_t lpn = 0; lpn < r.capacity(); ++lpn) {
        ASSERT_EQ(r.read(lpn, got), FTL_OK) << "lpn " << lpn;
        ASSERT_EQ(got, m.get(lpn)) << "lpn " << lpn;
    }
}

// A power cut and a remount find the contents intact (and, if given, `bad` bad blocks), and
// 5,000 more operations break no flash rule.
void remount_and_go_on(Rig& r, Model& m, std::mt19937_64& rng, const uint32_t* bad = nullptr) {
    ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
    if (bad) {
        EXPECT_EQ(r.stats().bad_blocks, *bad);
    }
    verify_all(r, m);
    for (int i = 0; i < 5000; ++i) ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
    verify_all(r, m);
    EXPECT_EQ(r.nand.violations, 0u);
}

const ftl_geometry kSmall{2, 2, 32, 8, 512, 0};

TEST(Ftl, MemoryAndCapacity) {
    Rig r(kSmall, 100);
    ASSERT_EQ(r.format(), FTL_OK);
    // 128 blocks; reserved: 4 host frontiers + GC and WL frontiers + 3 free = 9; 10 % OP of the
    // rest: 952 - 95.
    EXPECT_EQ(r.capacity(), 857u);
    ftl_config bad = r.cfg;
    bad.op_permille = 1000;
    EXPECT_EQ(ftl_mem_bytes(&bad), 0u);
    bad = r.cfg;
    bad.gc_free_blocks = 1;
    EXPECT_EQ(ftl_mem_bytes(&bad), 0u);
    bad = r.cfg;
    bad.mem_bytes -= 4;
    ftl f2;
    EXPECT_EQ(ftl_format(&f2, &bad), FTL_E_ARG);
    std::vector<uint8_t> got;
    ASSERT_EQ(r.read(5, got), FTL_OK);
    EXPECT_EQ(got, std::vector<uint8_t>(512, 0xFF));  // never written: erased-looking
}

TEST(Ftl, StripesAcrossDiesAndPlanes) {
    Rig r(kSmall);
    ASSERT_EQ(r.format(), FTL_OK);
    std::set<std::pair<uint32_t, uint32_t>> units;  // (die, plane) of 4 consecutive writes
    std::mt19937_64 rng(seed(1));
    for (uint32_t lpn = 0; lpn < 4; ++lpn) {
        ASSERT_EQ(r.write(lpn, random_bytes(rng, 512)), FTL_OK);
        uint32_t p = r.nand.last_page_of_lpn.at(lpn);
        uint32_t b = p / kSmall.pages_per_block, u = b / kSmall.blocks_per_plane;
        units.insert({u / 2, u % 2});
    }
    EXPECT_EQ(units.size(), 4u);
}

TEST(Ftl, RandomWorkloadMatchesModel) {
    for (uint32_t page_bytes : {512u, 64u}) {
        ftl_geometry g = kSmall;
        g.page_bytes = page_bytes;
        Rig r(g, 100);
        ASSERT_EQ(r.format(), FTL_OK);
        Model m{page_bytes, {}};
        std::mt19937_64 rng(seed(42 + page_bytes));
        for (int i = 0; i < 40000; ++i)
            ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
        verify_all(r, m);
        auto s = r.stats();
        EXPECT_GT(s.gc_victims, 100u);  // many GC cycles
        EXPECT_GT(s.gc_copies, 0u);
        EXPECT_GT(s.trim_records, 0u);
        EXPECT_EQ(r.nand.violations, 0u);
        // A clean remount finds the same contents, and the workload goes on.
        remount_and_go_on(r, m, rng);
    }
}

// The SPU keeps the tables in SSD memory behind DMA: the same workload with the tables behind
// the table callbacks gives the same contents and the same flash traffic, and survives a remount.
TEST(Ftl, TablesBehindCallbacksBehaveAlike) {
    Rig in(kSmall, 100), ext(kSmall, 100, 0, 3, true);
    EXPECT_EQ(ext.cfg.mem, nullptr);
    ASSERT_EQ(in.format(), FTL_OK);
    ASSERT_EQ(ext.format(), FTL_OK);
    Model mi{kSmall.page_bytes, {}}, me{kSmall.page_bytes, {}};
    std::mt19937_64 ri(seed(5)), re(seed(5));
    for (int i = 0; i < 20000; ++i) {
        ASSERT_EQ(random_op(in, mi, ri, in.capacity(), nullptr), FTL_OK);
        ASSERT_EQ(random_op(ext, me, re, ext.capacity(), nullptr), FTL_OK);
    }
    verify_all(ext, me);
    const auto si = in.stats(), se = ext.stats();
    EXPECT_EQ(se.flash_programs, si.flash_programs);
    EXPECT_EQ(se.gc_victims, si.gc_victims);
    EXPECT_GT(se.gc_victims, 10u);
    EXPECT_EQ(ext.nand.programs, in.nand.programs);
    EXPECT_GT(ext.nand.table_accesses, 0u);
    EXPECT_EQ(ext.nand.table_out_of_range, 0u);
    ASSERT_EQ(ext.cut_and_mount(re), FTL_OK);
    verify_all(ext, me);
    // Callbacks given partly are a configuration error, and so are callbacks beside cfg.mem.
    ftl_ops partial = *ext.nand.ops();
    partial.table_fill = nullptr;
    ftl_config bad = ext.cfg;
    bad.ops = &partial;
    ftl f;
    EXPECT_EQ(ftl_mount(&f, &bad), FTL_E_ARG);
    bad = ext.cfg;
    bad.mem = in.mem.data();
    EXPECT_EQ(ftl_mount(&f, &bad), FTL_E_ARG);
}

// Two blocks whose programs fail: one part-way, one from its first page.
void fail_two_blocks(Rig& r) {
    r.nand.fail_from_page[r.nand.block_index(0, 1, 4)] = 2;
    r.nand.fail_from_page[r.nand.block_index(1, 0, 9)] = 0;
}

// Power cuts at random points: between operations and inside them (GC included), with the page
// being programmed torn or not, and with blocks that fail programs (their bad-block records
// may be lost in a cut too: then they fail again after the mount).
void power_loss_rounds(bool tear, bool failing_blocks, const ftl_geometry& g = kSmall) {
    Rig r(g, 100);
    r.nand.tear_on_cut = tear;
    if (failing_blocks) fail_two_blocks(r);
    ASSERT_EQ(r.format(), FTL_OK);
    Model m{r.unit_bytes(), {}};
    std::mt19937_64 rng(seed(7));
    unsigned cuts = 0, cuts_in_gc = 0;
    for (int round = 0; round < 300; ++round) {
        // Run until the power dies somewhere within the next few hundred programs and erases.
        r.nand.ops_until_cut = int64_t(rng() % 300);
        Changes touched;
        for (;;) {
            auto before = r.stats();
            int rc = random_op(r, m, rng, r.capacity(), &touched);
            if (r.nand.dead) {
                ++cuts;
                auto after = r.stats();
                if (after.gc_victims != before.gc_victims || after.gc_copies != before.gc_copies)
                    ++cuts_in_gc;
                break;
            }
            ASSERT_EQ(rc, FTL_OK);
            touched.clear();
        }
        ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
        // The operation cut short may or may not have happened, per LPN; the rest exactly.
        std::vector<uint8_t> got;
        for (auto& [lpn, next] : touched) {
            ASSERT_EQ(r.read(lpn, got), FTL_OK);
            auto old = m.get(lpn);
            ASSERT_TRUE(got == old || got == next) << "lpn " << lpn;
            if (got == next) {
                if (next == std::vector<uint8_t>(r.unit_bytes(), 0xFF))
                    m.trim(lpn, 1);
                else
                    m.pages[lpn] = next;
            }
        }
        verify_all(r, m);
        ASSERT_EQ(r.nand.violations, 0u);
    }
    EXPECT_EQ(cuts, 300u);
    EXPECT_GT(cuts_in_gc, 20u);
    std::printf("power cuts: %u, %u of them during GC\n", cuts, cuts_in_gc);
}

TEST(Ftl, PowerLossRecoversEveryAcknowledgedOperation) { power_loss_rounds(false, false); }
TEST(Ftl, PowerLossWithTornPages) { power_loss_rounds(true, false); }
TEST(Ftl, PowerLossWithTornPagesAndFailingBlocks) { power_loss_rounds(true, true); }

TEST(Ftl, TrimSurvivesPowerLossAndGc) {
    Rig r(kSmall, 100);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(3));
    Model m{r.unit_bytes(), {}};
    fill_in_order(r, m, rng);
    ASSERT_EQ(ftl_trim(&r.f, 10, 50), FTL_OK);
    m.trim(10, 50);
    EXPECT_EQ(ftl_trim(&r.f, r.capacity() - 1, 2), FTL_E_RANGE);
    ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
    verify_all(r, m);
    // Churn so that GC moves TRIM records and erases blocks holding the trimmed data.
    for (int i = 0; i < 20000; ++i) {
        uint32_t lpn = 100 + uint32_t(rng() % (r.capacity() - 100));
        auto d = random_bytes(rng, r.unit_bytes());
        ASSERT_EQ(r.write(lpn, d), FTL_OK);
        m.write(lpn, d, 0);
    }
    ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
    verify_all(r, m);
    // Written again after the TRIM: the later write wins over the TRIM record.
    auto d = random_bytes(rng, r.unit_bytes());
    ASSERT_EQ(r.write(20, d), FTL_OK);
    m.write(20, d, 0);
    ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
    verify_all(r, m);
    EXPECT_EQ(r.nand.violations, 0u);
}

// Skewed writes: 90 % of them to 10 % of the LPNs. Returns max - min P/E over the blocks.
uint32_t wear_spread(uint32_t wl_threshold, struct ftl_stats* out) {
    ftl_geometry g{2, 2, 32, 16, 32, 0};
    Rig r(g, 100, wl_threshold);
    EXPECT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(11));
    std::vector<uint8_t> d(g.page_bytes, 0);
    uint32_t cap = r.capacity(), hot = cap / 10;
    for (uint32_t lpn = 0; lpn < cap; ++lpn) EXPECT_EQ(r.write(lpn, d), FTL_OK);
    for (int i = 0; i < 300000; ++i) {
        uint32_t lpn = rng() % 10 < 9 ? uint32_t(rng() % hot) : hot + uint32_t(rng() % (cap - hot));
        d[0] = uint8_t(i);
        EXPECT_EQ(r.write(lpn, d), FTL_OK);
    }
    *out = r.stats();
    EXPECT_EQ(ftl_check(&r.f), 0);
    EXPECT_EQ(r.nand.violations, 0u);
    return out->pe_max - out->pe_min;
}

TEST(Ftl, StaticWearLevellingBoundsTheSpread) {
    struct ftl_stats with, without;
    uint32_t threshold = 20;
    uint32_t spread_wl = wear_spread(threshold, &with);
    uint32_t spread_none = wear_spread(0, &without);
    std::printf(
        "P/E spread: static WL (threshold %u) %u (min %u max %u mean %.1f, %llu "
        "migrations, WA %.2f); dynamic only %u (min %u max %u, WA %.2f)\n",
        threshold, spread_wl, with.pe_min, with.pe_max, double(with.pe_sum) / with.pe_blocks,
        (unsigned long long)with.wl_migrations, double(with.wa_num) / with.wa_den, spread_none,
        without.pe_min, without.pe_max, double(without.wa_num) / without.wa_den);
    EXPECT_LE(spread_wl, threshold + 3);
    EXPECT_GT(with.wl_migrations, 0u);
    EXPECT_GT(spread_none, 2 * threshold);
}

// Write amplification of greedy GC under uniform random full-page writes.
//
// First-principles estimate (Agarwal and Marrow, "A closed-form expression for write
// amplification in NAND flash", GLOBECOM Workshops 2010): with T physical and U logical pages and
// the spare factor rho = (T - U) / U, uniform random writes make a block's valid fraction fall
// roughly linearly from 1 (just written) to u (when greedy GC picks it), so the mean utilisation
// U / T = (1 + u) / 2, hence u = (1 - rho) / (1 + rho); each reclaimed block yields (1 - u) of a
// block of new space at the cost of u of copying, so WA = 1 / (1 - u) = (1 + rho) / (2 rho).
// (It is an approximation: with few pages per block the victims' valid fractions spread and
// greedy does a little better; exact values need the Markov analysis of Bux and Iliadis 2010.)
TEST(Ftl, WriteAmplificationFollowsGreedyEstimate) {
    ftl_geometry g{2, 2, 64, 64, 16, 0};
    double last = 1e9;
    for (uint32_t op : {70u, 200u, 280u}) {
        Rig r(g, op);
        ASSERT_EQ(r.format(), FTL_OK);
        std::mt19937_64 rng(seed(5));
        std::vector<uint8_t> d(g.page_bytes, 0);
        uint32_t cap = r.capacity();
        for (uint32_t lpn = 0; lpn < cap; ++lpn) ASSERT_EQ(r.write(lpn, d), FTL_OK);
        for (uint64_t i = 0; i < 4ull * cap; ++i) ASSERT_EQ(r.write(rng() % cap, d), FTL_OK);
        auto warm = r.stats();
        for (uint64_t i = 0; i < 8ull * cap; ++i) ASSERT_EQ(r.write(rng() % cap, d), FTL_OK);
        auto s = r.stats();
        double wa = double(s.wa_num - warm.wa_num) / double(s.wa_den - warm.wa_den);
        // T: the pages that can hold data at steady state (all but the blocks GC keeps free).
        double t = double(g.dies * g.planes_per_die * g.blocks_per_plane - r.cfg.gc_free_blocks) *
                   g.pages_per_block;
        double rho = (t - cap) / cap;
        double estimate = (1 + rho) / (2 * rho);
        std::printf("OP %.1f %%: rho %.3f, WA %.2f, estimate %.2f\n", op / 10.0, rho, wa, estimate);
        EXPECT_LT(wa, last);
        EXPECT_GT(wa, 0.6 * estimate);
        EXPECT_LT(wa, 1.3 * estimate);
        last = wa;
        EXPECT_EQ(ftl_check(&r.f), 0);
        EXPECT_EQ(r.nand.violations, 0u);
    }
}

TEST(Ftl, OutOfRange) {
    Rig r(kSmall);
    ASSERT_EQ(r.format(), FTL_OK);
    std::vector<uint8_t> d(512, 1), small(8, 1);
    uint32_t cap = r.capacity();
    EXPECT_EQ(r.write(cap, d), FTL_E_RANGE);
    EXPECT_EQ(r.write(cap - 1, d), FTL_OK);
    EXPECT_EQ(ftl_read(&r.f, cap, addr(d.data()), 0, 512), FTL_E_RANGE);
    EXPECT_EQ(r.write(0, small, 505), FTL_E_RANGE);  // past the page's end
    EXPECT_EQ(ftl_write(&r.f, 0, addr(small.data()), 0, 0), FTL_E_RANGE);
    EXPECT_EQ(ftl_read(&r.f, cap - 1, addr(d.data()), 500, 13), FTL_E_RANGE);  // past the end
    EXPECT_EQ(ftl_read(&r.f, 0, addr(d.data()), 513, 0), FTL_E_RANGE);  // offset past the unit
    EXPECT_EQ(ftl_trim(&r.f, cap, 1), FTL_E_RANGE);
}

// After a power cut the mount finds `bad` bad blocks (their records kept them out of use), the
// contents are intact, and 5,000 more operations break no flash rule.
void expect_bad_blocks_survive_a_remount(Rig& r, Model& m, std::mt19937_64& rng, uint32_t bad) {
    remount_and_go_on(r, m, rng, &bad);
}

TEST(Ftl, ProgramFailureRetiresTheBlock) {
    Rig r(kSmall);
    // Blocks that fail: one from its first page, two part-way (their earlier pages hold data
    // that must move); one block of each die and plane, so the host frontiers meet them.
    r.nand.fail_from_page[r.nand.block_index(0, 0, 0)] = 0;
    r.nand.fail_from_page[r.nand.block_index(0, 1, 1)] = 3;
    r.nand.fail_from_page[r.nand.block_index(1, 0, 2)] = 5;
    r.nand.fail_from_page[r.nand.block_index(1, 1, 0)] = 7;
    ASSERT_EQ(r.format(), FTL_OK);
    Model m{r.unit_bytes(), {}};
    std::mt19937_64 rng(seed(9));
    for (int i = 0; i < 20000; ++i) ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
    verify_all(r, m);
    auto s = r.stats();
    EXPECT_GE(s.program_failures, 4u);
    EXPECT_GE(s.bad_blocks, 4u);
    EXPECT_EQ(r.nand.violations, 0u);
    EXPECT_GE(s.bad_records, 4u);
    // After a power cut the bad-block records keep the blocks out of use.
    expect_bad_blocks_survive_a_remount(r, m, rng, 4);
    EXPECT_EQ(r.stats().program_failures, 0u);
}

TEST(Ftl, EraseFailureRetiresTheBlock) {
    Rig r(kSmall);
    r.nand.fail_erase.insert(r.nand.block_index(1, 1, 31));  // bad from the start
    ASSERT_EQ(r.format(), FTL_OK);
    EXPECT_EQ(r.stats().bad_blocks, 1u);
    Model m{r.unit_bytes(), {}};
    std::mt19937_64 rng(seed(23));
    for (int i = 0; i < 3000; ++i) ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
    // Two blocks holding data now fail their next erase (GC meets them) and keep their stale
    // pages, which must never come back.
    for (uint32_t b : {3u, 70u}) r.nand.fail_erase.insert(b);
    for (int i = 0; i < 20000; ++i) ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
    verify_all(r, m);
    auto s = r.stats();
    EXPECT_EQ(s.erase_failures, 2u);
    EXPECT_EQ(s.bad_blocks, 3u);
    expect_bad_blocks_survive_a_remount(r, m, rng, 3);
    EXPECT_EQ(r.stats().erase_failures, 0u);
}

TEST(Ftl, UncorrectableReadIsReported) {
    Rig r(kSmall);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(13));
    auto d = random_bytes(rng, 512);
    ASSERT_EQ(r.write(7, d), FTL_OK);
    r.nand.uncorrectable.insert(r.nand.last_page_of_lpn.at(7));
    std::vector<uint8_t> got;
    EXPECT_EQ(r.read(7, got), FTL_E_UNCORRECTABLE);
    // A sub-page write needs the old page: it fails too, and nothing changes.
    EXPECT_EQ(r.write(7, std::vector<uint8_t>(4, 0), 8), FTL_E_UNCORRECTABLE);
    EXPECT_EQ(r.read(7, got), FTL_E_UNCORRECTABLE);
    // A whole-page write replaces it.
    ASSERT_EQ(r.write(7, d), FTL_OK);
    ASSERT_EQ(r.read(7, got), FTL_OK);
    EXPECT_EQ(got, d);
}

// The page holding LPN 0 (and, with units, the LPNs beside it, written in order) reads
// uncorrectable; those LPNs are never rewritten, so GC meets the page: its units stay behind,
// mapped and reporting the error, while everything else moves and reads back.
void uncorrectable_page_survives_gc(const ftl_geometry& g, uint32_t write_cache) {
    Rig r(g, 100, 0, 3, false, write_cache);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(17));
    Model m{r.unit_bytes(), {}};
    fill_in_order(r, m, rng);
    const uint32_t bad = g.unit_bytes ? g.page_bytes / g.unit_bytes : 1;  // LPNs on the page
    r.nand.uncorrectable.insert(r.nand.last_page_of_lpn.at(0));
    for (int i = 0; i < 20000; ++i) {
        uint32_t lpn = bad + uint32_t(rng() % (r.capacity() - bad));
        auto d = random_bytes(rng, r.unit_bytes());
        ASSERT_EQ(r.write(lpn, d), FTL_OK);
        m.write(lpn, d, 0);
    }
    EXPECT_GT(r.stats().gc_victims, 0u);
    std::vector<uint8_t> got;
    for (uint32_t lpn = 0; lpn < bad; ++lpn)  // never handed out as good data
        EXPECT_EQ(r.read(lpn, got), FTL_E_UNCORRECTABLE) << "lpn " << lpn;
    for (uint32_t lpn = bad; lpn < r.capacity(); ++lpn) {
        ASSERT_EQ(r.read(lpn, got), FTL_OK);
        ASSERT_EQ(got, m.get(lpn));
    }
    EXPECT_GE(r.stats().bad_blocks, 1u);  // the block it sits in is kept, not erased
}

TEST(Ftl, UncorrectablePageSurvivesGcAsAnError) { uncorrectable_page_survives_gc(kSmall, 0); }

TEST(Ftl, EspRegionIsOutsideTheMap) {
    Rig r(kSmall);
    r.cfg.esp_blocks = 4;
    uint32_t bytes = ftl_mem_bytes(&r.cfg);
    r.mem.resize(bytes / 4);
    r.cfg.mem = r.mem.data();
    r.cfg.mem_bytes = bytes;
    ASSERT_EQ(r.format(), FTL_OK);
    EXPECT_EQ(r.capacity(), 824u - 82u);  // 112 data blocks, 9 reserved
    uint32_t blocks[5];
    for (uint32_t i = 0; i < 4; ++i) {
        ASSERT_EQ(ftl_esp_alloc(&r.f, 1, 1, &blocks[i]), FTL_OK);
        EXPECT_GE(blocks[i], 28u);
    }
    EXPECT_EQ(ftl_esp_alloc(&r.f, 1, 1, &blocks[4]), FTL_E_NOSPACE);
    Model m{r.unit_bytes(), {}};
    std::mt19937_64 rng(seed(19));
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
    // No data went to the ESP blocks of any plane.
    for (auto& [lpn, p] : r.nand.last_page_of_lpn) {
        uint32_t b = p / kSmall.pages_per_block;
        EXPECT_LT(b % kSmall.blocks_per_plane, 28u) << "lpn " << lpn;
    }
    EXPECT_EQ(ftl_esp_release(&r.f, 1, 1, blocks[2]), FTL_OK);
    EXPECT_EQ(ftl_esp_release(&r.f, 1, 1, blocks[2]), FTL_E_RANGE);
    EXPECT_EQ(ftl_esp_release(&r.f, 0, 0, 3), FTL_E_RANGE);
    ASSERT_EQ(ftl_esp_alloc(&r.f, 1, 1, &blocks[4]), FTL_OK);
    EXPECT_EQ(blocks[4], blocks[2]);
    verify_all(r, m);
}

// Hot and cold data (a fraction `hot_writes` of the writes to 10 % of the LPNs): the write
// amplification of a GC policy after warm-up.
double skewed_wa(uint32_t policy, double hot_writes) {
    ftl_geometry g{2, 2, 64, 32, 16, 0};
    Rig r(g, 100, 0, 3, false, 0, policy);
    EXPECT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(73));
    std::vector<uint8_t> d(g.page_bytes, 0);
    const uint32_t cap = r.capacity(), hot = cap / 10;
    auto next = [&] {
        return double(rng() % 1000) < hot_writes * 1000 ? uint32_t(rng() % hot)
                                                        : hot + uint32_t(rng() % (cap - hot));
    };
    for (uint32_t lpn = 0; lpn < cap; ++lpn) EXPECT_EQ(r.write(lpn, d), FTL_OK);
    for (uint64_t i = 0; i < 4ull * cap; ++i) EXPECT_EQ(r.write(next(), d), FTL_OK);
    const auto warm = r.stats();
    for (uint64_t i = 0; i < 8ull * cap; ++i) EXPECT_EQ(r.write(next(), d), FTL_OK);
    const auto s = r.stats();
    EXPECT_EQ(ftl_check(&r.f), 0);
    return double(s.wa_num - warm.wa_num) / double(s.wa_den - warm.wa_den);
}

// Cost-benefit GC (Kawaguchi, Nishioka and Motoda, USENIX Winter 1995; Rosenblum and Ousterhout's
// LFS cleaner) weighs a victim's free space by its age, so it leaves blocks of hot data to go on
// emptying themselves and takes cold blocks that greedy would wait on. Under uniform writes no
// block is colder than another and greedy is the better (it minimises each round's copies);
// with hot and cold data cost-benefit copies less.
TEST(Ftl, CostBenefitGcCopiesLessThanGreedyOnHotAndColdData) {
    const double greedy_skew = skewed_wa(FTL_GC_GREEDY, 0.9),
                 cb_skew = skewed_wa(FTL_GC_COST_BENEFIT, 0.9);
    const double greedy_uniform = skewed_wa(FTL_GC_GREEDY, 0.1),
                 cb_uniform = skewed_wa(FTL_GC_COST_BENEFIT, 0.1);
    std::printf(
        "WA, 90 %% of writes to 10 %% of LPNs: greedy %.2f, cost-benefit %.2f; uniform: "
        "greedy %.2f, cost-benefit %.2f\n",
        greedy_skew, cb_skew, greedy_uniform, cb_uniform);
    EXPECT_LT(cb_skew, greedy_skew);
    EXPECT_LE(greedy_uniform, cb_uniform * 1.02);
}

// ---- mapping units smaller than a page, and the write buffer ----

// Four units per page: 128-byte units on 512-byte pages, 4 KiB on 16 KiB scaled down.
const ftl_geometry kUnits{2, 2, 32, 8, 512, 128};

TEST(FtlUnits, CapacityCountsUnits) {
    Rig r(kUnits, 100);
    ASSERT_EQ(r.format(), FTL_OK);
    EXPECT_EQ(ftl_unit_bytes(&r.f), 128u);
    EXPECT_EQ(r.capacity(), 4 * 952u - 4 * 952u / 10);  // the units of kSmall's 952 pages, 10 % OP
    EXPECT_EQ(ftl_buffer_bytes(&r.cfg), 6u * 512);      // 4 host frontiers, GC and WL
    ftl_config bad = r.cfg;
    for (uint32_t unit : {100u, 32u, 1024u}) {  // not a divisor; 16 per page; more than a page
        bad.geo.unit_bytes = unit;
        EXPECT_EQ(ftl_mem_bytes(&bad), 0u) << unit;
    }
    EXPECT_EQ(r.write(0, std::vector<uint8_t>(129, 1)), FTL_E_RANGE);  // past the unit
}

// Random writes (whole and partial units), reads and TRIMs against the model, write-through and
// with the write cache (flushed now and then), through hundreds of GC rounds; after a flush, a
// power cut loses nothing.
TEST(FtlUnits, RandomWorkloadMatchesModel) {
    for (uint32_t cache : {0u, 1u}) {
        Rig r(kUnits, 100, 0, 3, false, cache, FTL_GC_GREEDY | (cache ? FTL_GC_PACED : 0));
        ASSERT_EQ(r.format(), FTL_OK);
        Model m{r.unit_bytes(), {}};
        std::mt19937_64 rng(seed(61 + cache));
        for (int i = 0; i < 40000; ++i) {
            ASSERT_EQ(random_op(r, m, rng, r.capacity(), nullptr), FTL_OK);
            if (rng() % 100 == 0) {
                ASSERT_EQ(ftl_flush(&r.f), FTL_OK);
            }
            if (rng() % 20 == 0) {  // a read over up to six units, from inside the first
                const uint32_t lpn = uint32_t(rng() % (r.capacity() - 6)), off = rng() % 128;
                std::vector<uint8_t> got(1 + rng() % (6 * 128 - off)), want;
                for (uint32_t u = 0; u < 6; ++u) {
                    const auto v = m.get(lpn + u);
                    want.insert(want.end(), v.begin(), v.end());
                }
                ASSERT_EQ(ftl_read(&r.f, lpn, addr(got.data()), off, uint32_t(got.size())), FTL_OK);
                ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin() + off)) << lpn;
            }
        }
        verify_all(r, m);
        auto s = r.stats();
        EXPECT_GT(s.gc_victims, 100u);
        EXPECT_GT(s.trim_records, 0u);
        if (cache) {
            EXPECT_GT(s.buffer_hits, 0u);
        }
        ASSERT_EQ(ftl_flush(&r.f), FTL_OK);
        remount_and_go_on(r, m, rng);
    }
}

// ftl_save and ftl_resume (what preconditioning hands SPU-OS): an FTL resumed from the saved
// tables, on a copy of the flash, carries on exactly as the one that saved: the same reads, the
// same programs and erases on the same blocks (GC and wear levelling choose alike: P/E counts,
// ages and frontiers came along), where a mount would start its P/E counts again. The record is
// used once, and only by its own configuration.
TEST(FtlUnits, ResumeCarriesOnExactlyAsTheFtlThatSaved) {
    Rig a(kUnits, 100, 3, 3, false, 1, FTL_GC_GREEDY | FTL_GC_PACED);
    ASSERT_EQ(a.format(), FTL_OK);
    Model m{a.unit_bytes(), {}};
    std::mt19937_64 rng(seed(81));
    for (int i = 0; i < 20000; ++i) ASSERT_EQ(random_op(a, m, rng, a.capacity(), nullptr), FTL_OK);
    ASSERT_EQ(ftl_save(&a.f), FTL_OK);
    EXPECT_EQ(a.stats().buffered_units, 0u);
    const auto before = a.stats();
    ASSERT_GT(before.pe_sum, 0u);

    Rig b(kUnits, 100, 3, 3, false, 1, FTL_GC_GREEDY | FTL_GC_PACED);
    b.nand = a.nand;
    b.mem = a.mem;
    ASSERT_EQ(ftl_resume(&b.f, &b.cfg), FTL_OK);
    EXPECT_EQ(ftl_check(&b.f), 0);
    EXPECT_EQ(b.stats().pe_sum, before.pe_sum);
    EXPECT_EQ(b.stats().free_blocks, before.free_blocks);
    EXPECT_EQ(b.stats().flash_programs, 0u);  // statistics start over
    Model mb = m;
    std::mt19937_64 rb = rng;
    const uint64_t programs = a.nand.programs, erases = a.nand.erases;
    for (int i = 0; i < 20000; ++i) {
        ASSERT_EQ(random_op(a, m, rng, a.capacity(), nullptr), FTL_OK);
        ASSERT_EQ(random_op(b, mb, rb, b.capacity(), nullptr), FTL_OK);
    }
    verify_all(b, mb);
    const auto sa = a.stats(), sb = b.stats();
    EXPECT_EQ(sb.flash_programs, sa.flash_programs - before.flash_programs);
    EXPECT_EQ(sb.gc_victims, sa.gc_victims - before.gc_victims);
    EXPECT_GT(sb.gc_victims, 50u);
    EXPECT_GT(sb.wl_migrations, 0u);
    EXPECT_EQ(b.nand.programs - programs, a.nand.programs - programs);
    EXPECT_EQ(b.nand.erases - erases, a.nand.erases - erases);
    EXPECT_EQ(b.nand.pe(), a.nand.pe());  // every block erased alike
    EXPECT_EQ(sb.pe_sum, sa.pe_sum);
    EXPECT_EQ(b.nand.violations, 0u);

    // Used up; gone after a format or a mount over it; another configuration's.
    ftl f;
    EXPECT_EQ(ftl_resume(&f, &b.cfg), FTL_E_ARG);
    Rig c(kUnits, 100, 20, 3, false, 1);
    ASSERT_EQ(c.format(), FTL_OK);
    ASSERT_EQ(ftl_save(&c.f), FTL_OK);
    ASSERT_EQ(ftl_mount(&c.f, &c.cfg), FTL_OK);
    EXPECT_EQ(ftl_resume(&f, &c.cfg), FTL_E_ARG);
    ASSERT_EQ(ftl_save(&c.f), FTL_OK);
    Rig other(kUnits, 200, 20, 3, false, 1);
    other.mem = c.mem;
    other.mem.resize(ftl_mem_bytes(&other.cfg) / 4);
    other.cfg.mem = other.mem.data();
    EXPECT_EQ(ftl_resume(&f, &other.cfg), FTL_E_ARG);
    EXPECT_EQ(ftl_resume(&f, &c.cfg), FTL_OK);
}

// Before any GC, every slot the write buffer programs holds a unit the host wrote, except the
// padding of a flush: unit writes cost one unit of flash each (WA 1). A unit rewritten while
// still buffered costs nothing more. Mapping whole pages, the same writes program a page each.
TEST(FtlUnits, WriteBufferPacksUnitWritesIntoWholePages) {
    Rig r(kUnits, 100, 0, 3, false, 1);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(67));
    const uint32_t writes = r.capacity() / 2;
    for (uint32_t i = 0; i < writes; ++i)
        ASSERT_EQ(r.write(uint32_t(rng() % r.capacity()), random_bytes(rng, 128)), FTL_OK);
    ASSERT_EQ(ftl_flush(&r.f), FTL_OK);
    auto s = r.stats();
    EXPECT_EQ(s.gc_victims, 0u);
    EXPECT_EQ(s.host_writes, writes);
    EXPECT_EQ(s.flash_programs * 4, s.host_writes - s.buffer_hits + s.padded_units);
    EXPECT_LE(s.padded_units, 4u * 3);  // the flush: at most 3 empty slots per host frontier
    const double wa = double(s.wa_num) / double(s.wa_den);
    EXPECT_LE(wa, 1.0 + 12.0 / writes);
    std::printf("unit writes: %u, WA %.4f, buffer hits %llu, padded slots %llu\n", writes, wa,
                (unsigned long long)s.buffer_hits, (unsigned long long)s.padded_units);

    ftl_geometry paged = kSmall;  // 512-byte pages mapped whole; the same 128-byte writes
    Rig p(paged, 100);
    ASSERT_EQ(p.format(), FTL_OK);
    for (uint32_t i = 0; i < writes / 4; ++i) {
        const uint32_t unit = uint32_t(rng() % (4 * p.capacity()));
        ASSERT_EQ(p.write(unit / 4, random_bytes(rng, 128), unit % 4 * 128), FTL_OK);
    }
    EXPECT_EQ(p.stats().flash_programs, writes / 4);  // a whole page each: WA 4 in units
}

// A read running over several units reads those that lie in consecutive slots of one page with
// one flash command: units written one after another share pages in order.
TEST(FtlUnits, AReadOfUnitsSharingAPageIsOneFlashRead) {
    Rig r(kUnits, 100, 0, 3, false, 1);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(79));
    std::vector<uint8_t> all;
    for (uint32_t lpn = 0; lpn < 8; ++lpn) {  // two pages' worth, programmed as they fill
        auto d = random_bytes(rng, 128);
        ASSERT_EQ(r.write(lpn, d), FTL_OK);
        all.insert(all.end(), d.begin(), d.end());
    }
    EXPECT_EQ(r.stats().flash_programs, 2u);
    std::vector<uint8_t> got(all.size() - 10 - 7, 0);
    const uint64_t before = r.nand.reads;
    ASSERT_EQ(ftl_read(&r.f, 0, addr(got.data()), 10, uint32_t(got.size())), FTL_OK);
    EXPECT_EQ(r.nand.reads - before, 2u);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), all.begin() + 10));
    // Unit 5 rewritten sits in the write buffer now: the read goes around it.
    auto d = random_bytes(rng, 128);
    ASSERT_EQ(r.write(5, d), FTL_OK);
    std::copy(d.begin(), d.end(), all.begin() + 5 * 128);
    got.assign(8 * 128, 0);
    const uint64_t again = r.nand.reads;
    ASSERT_EQ(ftl_read(&r.f, 0, addr(got.data()), 0, uint32_t(got.size())), FTL_OK);
    EXPECT_EQ(r.nand.reads - again, 3u);  // units 0-3, 4, 6-7
    EXPECT_EQ(got, all);
}

// The volatile write cache's rule: after a power loss each LPN holds what it held at the last
// completed ftl_flush, or at the last completed ftl_sync of a range holding it, or a value
// acknowledged after that (the newest, or one before; never torn, never older than the flush).
// The operation cut short may or may not have happened. Hundreds of cuts, with torn pages and
// failing blocks; the test also sees that unflushed writes do get lost (the cache is volatile)
// and that what the mount found stays.
void power_loss_with_write_cache(bool tear, bool failing_blocks) {
    Rig r(kUnits, 100, 0, 3, false, 1, FTL_GC_GREEDY | (tear ? FTL_GC_PACED : 0));
    r.nand.tear_on_cut = tear;
    if (failing_blocks) fail_two_blocks(r);
    ASSERT_EQ(r.format(), FTL_OK);
    Model m{r.unit_bytes(), {}};
    std::mt19937_64 rng(seed(71));
    // LPNs changed since the last flush: their content then, and every value acknowledged since.
    std::map<uint32_t, std::vector<std::vector<uint8_t>>> since_flush;
    unsigned lost = 0, flushes = 0, syncs = 0;
    for (int round = 0; round < 300; ++round) {
        r.nand.ops_until_cut = int64_t(rng() % 300);
        Changes touched;
        Acked acked;
        for (;;) {
            if (rng() % 50 == 0) {
                if (ftl_flush(&r.f) != FTL_OK) break;  // the cut came inside the flush
                since_flush.clear();
                ++flushes;
                continue;
            }
            if (rng() % 25 == 0 && !since_flush.empty()) {
                // A FUA write's sync: a few units from one written since the last flush on (a
                // random LPN would rarely be in the buffer).
                const uint32_t lpn =
                    std::next(since_flush.begin(), long(rng() % since_flush.size()))->first;
                const uint32_t count = std::min(1 + uint32_t(rng() % 3), r.capacity() - lpn);
                if (ftl_sync(&r.f, lpn, count) != FTL_OK) break;
                for (uint32_t i = lpn; i < lpn + count; ++i) since_flush.erase(i);
                ++syncs;
                continue;
            }
            acked.clear();
            int rc = random_op(r, m, rng, r.capacity(), &touched, &acked);
            for (auto& [lpn, old, value] : acked) {
                auto& allowed = since_flush[lpn];
                if (allowed.empty()) allowed.push_back(old);
                allowed.push_back(value);
            }
            if (r.nand.dead) break;
            ASSERT_EQ(rc, FTL_OK);
            touched.clear();
        }
        for (auto& [lpn, value] : touched) {
            auto& allowed = since_flush[lpn];
            if (allowed.empty()) allowed.push_back(m.get(lpn));
            allowed.push_back(value);
        }
        ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
        std::vector<uint8_t> got;
        for (auto& [lpn, allowed] : since_flush) {
            ASSERT_EQ(r.read(lpn, got), FTL_OK);
            ASSERT_TRUE(std::find(allowed.begin(), allowed.end(), got) != allowed.end())
                << "lpn " << lpn << " round " << round;
            if (got != m.get(lpn)) ++lost;
            if (got == std::vector<uint8_t>(r.unit_bytes(), 0xFF))
                m.trim(lpn, 1);
            else
                m.pages[lpn] = got;
        }
        since_flush.clear();  // what the mount found is on the flash
        verify_all(r, m);
        ASSERT_EQ(r.nand.violations, 0u);
    }
    EXPECT_GT(flushes, 50u);
    EXPECT_GT(syncs, 100u);
    EXPECT_GT(lost, 0u);
    std::printf("power cuts: 300, flushes %u, syncs %u, LPNs that lost unflushed writes %u\n",
                flushes, syncs, lost);
}

TEST(FtlUnits, PowerLossKeepsEverythingFlushed) { power_loss_with_write_cache(false, false); }
TEST(FtlUnits, PowerLossKeepsEverythingFlushedWithTornPagesAndFailingBlocks) {
    power_loss_with_write_cache(true, true);
}
// ftl_sync programs the page of the write buffer that holds a unit it names, padded, and leaves
// the rest of the buffer: after a power loss the synced unit is back, a unit written after it and
// not synced is lost, as the rule above says.
TEST(FtlUnits, SyncProgramsOnlyThePagesHoldingItsUnits) {
    Rig r(kUnits, 100, 0, 3, false, 1);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(83));
    const uint32_t upp = kUnits.page_bytes / kUnits.unit_bytes;
    const auto a = random_bytes(rng, r.unit_bytes()), b = random_bytes(rng, r.unit_bytes());
    ASSERT_EQ(r.write(0, a), FTL_OK);
    EXPECT_EQ(ftl_sync(&r.f, 7, 2), FTL_OK);  // units never written: nothing to program
    EXPECT_EQ(r.stats().flash_programs, 0u);
    ASSERT_EQ(ftl_sync(&r.f, 0, 1), FTL_OK);
    auto s = r.stats();
    EXPECT_EQ(s.flash_programs, 1u);
    EXPECT_EQ(s.padded_units, upp - 1);
    EXPECT_EQ(s.buffered_units, 0u);
    ASSERT_EQ(r.write(1, b), FTL_OK);
    ASSERT_EQ(ftl_sync(&r.f, 0, 1), FTL_OK);  // unit 0 is on the flash: unit 1's page waits
    s = r.stats();
    EXPECT_EQ(s.flash_programs, 1u);
    EXPECT_EQ(s.buffered_units, 1u);
    EXPECT_EQ(s.syncs, 3u);
    EXPECT_EQ(s.flushes, 0u);
    EXPECT_EQ(ftl_sync(&r.f, r.capacity() - 1, 2), FTL_E_RANGE);
    EXPECT_EQ(ftl_sync(&r.f, r.capacity(), 1), FTL_E_RANGE);
    ASSERT_EQ(r.cut_and_mount(rng), FTL_OK);
    std::vector<uint8_t> got;
    ASSERT_EQ(r.read(0, got), FTL_OK);
    EXPECT_EQ(got, a);
    ASSERT_EQ(r.read(1, got), FTL_OK);
    EXPECT_EQ(got, std::vector<uint8_t>(r.unit_bytes(), 0xFF));
}

// The units GC keeps of a victim page come in one flash read per run of consecutive slots that
// fits the GC frontier's page (a controller reads the page once). Written in order, then every
// fourth unit rewritten, the victims' pages each keep slots 0-2; GC starts each victim on an
// empty page and packs runs of three into pages of four, so four runs take six reads: half a
// read per unit moved, where a read per unit was the rule before.
TEST(FtlUnits, GcReadsTheUnitsOfAPageTogether) {
    Rig r(kUnits, 100, 0, 3, false, 1);
    ASSERT_EQ(r.format(), FTL_OK);
    std::mt19937_64 rng(seed(89));
    Model m{r.unit_bytes(), {}};
    fill_in_order(r, m, rng);
    const uint64_t reads = r.nand.reads, copies = r.stats().gc_copies;
    for (uint32_t lpn = 3; lpn < r.capacity(); lpn += 4) {  // whole units: no read of their own
        auto d = random_bytes(rng, r.unit_bytes());
        ASSERT_EQ(r.write(lpn, d), FTL_OK);
        m.write(lpn, d, 0);
    }
    const uint64_t gc_reads = r.nand.reads - reads, moved = r.stats().gc_copies - copies;
    EXPECT_GT(moved, 100u);
    EXPECT_LE(double(gc_reads), 0.55 * double(moved));
    std::printf("GC moved %llu units with %llu flash reads\n", (unsigned long long)moved,
                (unsigned long long)gc_reads);
    verify_all(r, m);
}

// FTL_GC_PACED: GC keeps pace with the host (a controller's incremental GC): once the free
// blocks run low each write first moves a few units of the victim under way, v / (all - v) of
// them for a victim keeping v of its `all` units, so that it is empty when the host has written
// the room it gives. In steady state no write then moves a block's worth of units (at most the
// rate and the rest of a page's run), where without it (GC only when a block is needed) one write
// moves whole victims, several of them. The same writes; the paced FTL keeps more blocks spare.
TEST(FtlUnits, GcKeepsPaceWithTheHostsWrites) {
    auto most_moved_by_one_write = [](uint32_t gc_policy, double* wa) {
        Rig r(kUnits, 100, 0, 3, false, 1, gc_policy);
        EXPECT_EQ(r.format(), FTL_OK);
        std::mt19937_64 rng(seed(97));
        Model m{r.unit_bytes(), {}};
        uint64_t most = 0;
        for (uint32_t i = 0; i < 6 * r.capacity(); ++i) {
            const uint32_t lpn = uint32_t(rng() % r.capacity());
            auto d = random_bytes(rng, r.unit_bytes());
            const uint64_t before = r.stats().gc_copies;
            EXPECT_EQ(r.write(lpn, d), FTL_OK);
            m.write(lpn, d, 0);
            if (i >= 2 * r.capacity()) most = std::max(most, r.stats().gc_copies - before);
        }
        verify_all(r, m);
        const auto s = r.stats();
        *wa = double(s.wa_num) / double(s.wa_den);
        return most;
    };
    double paced_wa = 0, burst_wa = 0;
    const uint64_t paced = most_moved_by_one_write(FTL_GC_GREEDY | FTL_GC_PACED, &paced_wa);
    const uint64_t burst = most_moved_by_one_write(FTL_GC_GREEDY, &burst_wa);
    const uint64_t all = kUnits.pages_per_block * (kUnits.page_bytes / kUnits.unit_bytes);
    std::printf(
        "most units moved by one write: paced %llu, unpaced %llu (a block holds "
        "%llu); WA %.2f and %.2f\n",
        (unsigned long long)paced, (unsigned long long)burst, (unsigned long long)all, paced_wa,
        burst_wa);
    EXPECT_LT(paced, all);
    EXPECT_GE(burst, all);
}

TEST(FtlUnits, UncorrectablePageSurvivesGcAsAnError) { uncorrectable_page_survives_gc(kUnits, 1); }

// Write-through: every acknowledged operation survives, as with a unit per page.
TEST(FtlUnits, WriteThroughPowerLossRecoversEveryAcknowledgedOperation) {
    power_loss_rounds(true, true, kUnits);
}

}  // namespace
}  // namespace canopy::ftl_test
