// Timing of the die and channel: a command completes after its bus phase (cycles x 10 ns plus
// data-in bytes at 1.2 GB/s), tWB and the array time (tR/tPROG/tBERS/tMWS); dies on a channel
// overlap their array times while their bus phases take turns; commands to one die queue; a
// multi-plane operation takes one array time. tMWS follows Figures 12 and 13 (Section 5.2).
#include <algorithm>

#include "nand/timing.hpp"
#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

using sc_core::SC_MS;
using sc_core::sc_time;
using sc_core::SC_US;

class NandTiming : public ::testing::Test {
  protected:
    explicit NandTiming(const NandConfig& cfg = small_config()) : bench(cfg) {}

    // Fresh, idle issue times: 10 ms after the previous one and after the bench's last command,
    // so that no earlier command is still busy.
    sc_time idle() {
        next_ = std::max(next_, bench.now) + sc_time(10, SC_MS);
        return next_;
    }
    Outcome read_at(const PageAddress& a, const sc_time& at) {
        CommandExt c;
        seq::read(c, bench.codec(), {a});
        return bench.send_at(c, {}, at);
    }
    Outcome program_at(const std::vector<PageAddress>& a, CellMode m, const sc_time& at,
                       bool randomise = false) {
        CommandExt c;
        seq::program(c, bench.codec(), a, m, randomise, uint32_t(n));
        return bench.send_at(c, Page(n * a.size(), 0x5A), at);
    }
    Outcome mws_at(uint32_t die, const Slots& s, const sc_time& at) {
        CommandExt c;
        seq::mws(c, bench.codec(), die, 0, kRead, s);
        return bench.send_at(c, {}, at);
    }
    double bus(uint32_t cycles, uint64_t bytes = 0) const { return bus_ns(T, cycles, bytes); }
    // Cycles of an MWS over `slots` block slots (3 row + 6 bitmap cycles each, CONT between).
    static uint32_t mws_cycles(uint32_t slots) { return 1 + slots * 9 + (slots - 1) + 1; }

    Bench bench;
    const Timing& T = bench.cfg().timing;
    const size_t n = bench.page_bytes();
    const double tR = T.t_read_slc_us * 1e3, tWB = T.t_wb_ns;  // ns
    sc_time next_ = sc_core::SC_ZERO_TIME;
};

TEST_F(NandTiming, ReadTakesCyclesTwbAndTheModesTr) {
    struct Case {
        CellMode mode;
        double tr_us;
    };
    const Case cases[] = {{CellMode::Slc, 22.5},
                          {CellMode::Esp, 22.5},
                          {CellMode::Mlc, 40.0},
                          {CellMode::Tlc, 60.0},
                          {CellMode::Erased, 22.5}};
    uint32_t b = 0;
    for (const Case& c : cases) {
        SCOPED_TRACE(mode_name(c.mode));
        if (c.mode != CellMode::Erased) {
            ASSERT_TRUE(program_at({pa(0, 0, b, 0)}, c.mode, idle()).ok());
        }
        Outcome o = read_at(pa(0, 0, b, 0), idle());
        ASSERT_TRUE(o.ok()) << o.error;
        EXPECT_NEAR(o.latency_ns(), bus(7) + tWB + c.tr_us * 1e3, 1e-3);
        ++b;
    }
}

TEST_F(NandTiming, ProgramTakesCyclesDataTwbAndTheModesTprog) {
    struct Case {
        CellMode mode;
        bool randomise;
        uint32_t prefixes;
        double tprog_us;
    };
    const Case cases[] = {{CellMode::Slc, false, 1, 200}, {CellMode::Mlc, false, 1, 500},
                          {CellMode::Tlc, false, 0, 700}, {CellMode::Esp, false, 1, 400},
                          {CellMode::Slc, true, 2, 200},  {CellMode::Tlc, true, 1, 700}};
    uint32_t b = 0;
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(mode_name(c.mode)) + (c.randomise ? " randomised" : ""));
        Outcome o = program_at({pa(0, 0, b++, 0)}, c.mode, idle(), c.randomise);
        ASSERT_TRUE(o.ok()) << o.error;
        EXPECT_NEAR(o.latency_ns(), bus(7 + c.prefixes, n) + tWB + c.tprog_us * 1e3, 1e-3);
    }
    // 576 bytes at 1.2 GB/s take 480 ns.
    EXPECT_NEAR(bus(0, n), 480.0, 1e-9);
}

TEST_F(NandTiming, EspProgramTimeFollowsTheFeatureSetting) {
    uint32_t b = 0;
    for (double f : {1.0, 1.6, 1.9, 2.0, 3.5}) {
        bench.now = idle();
        bench.set_esp_factor(0, f);
        Outcome o = program_at({pa(0, 0, b++, 0)}, CellMode::Esp, idle());
        ASSERT_TRUE(o.ok()) << o.error;
        EXPECT_NEAR(o.latency_ns(), bus(8, n) + tWB + f * 200e3, 1e-3) << f;
    }
    bench.now = idle();
    EXPECT_NEAR(bench.set_feature(0, feature::kEspFactor, {20, 0, 0, 0}).latency_ns(),
                bus(2, 4) + tWB + T.t_feature_us * 1e3, 1e-3);
}

TEST_F(NandTiming, EraseTakesTbers) {
    CommandExt c;
    seq::erase(c, bench.codec(), {pa(1, 1, 3, 0)});
    Outcome o = bench.send_at(c, {}, idle());
    ASSERT_TRUE(o.ok()) << o.error;
    EXPECT_NEAR(o.latency_ns(), bus(5) + tWB + 3500e3, 1e-3);
    // Multi-plane erase: one tBERS for both planes.
    seq::erase(c, bench.codec(), {pa(1, 0, 3, 0), pa(1, 1, 3, 0)});
    o = bench.send_at(c, {}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(10) + tWB + 3500e3, 1e-3);
}

TEST_F(NandTiming, DataOutTakesCyclesTccsAndTheBytes) {
    ASSERT_TRUE(read_at(pa(0, 0, 0, 0), idle()).ok());
    for (uint32_t bytes : {1u, 100u, uint32_t(n)}) {
        CommandExt c;
        seq::data_out(c, bench.codec(), 0, 0, 0, bytes);
        Outcome o = bench.send_at(c, Page(bytes), idle());
        ASSERT_TRUE(o.ok()) << o.error;
        EXPECT_NEAR(o.latency_ns(), bus(7, bytes) + T.t_ccs_ns, 1e-3) << bytes;
    }
    // Issued while the die senses, data out waits for the page.
    const sc_time at = idle();
    Outcome r = read_at(pa(0, 0, 0, 0), at);
    CommandExt c;
    seq::data_out(c, bench.codec(), 0, 0, 0, uint32_t(n));
    Outcome o = bench.send_at(c, Page(n), at);
    EXPECT_NEAR((o.done - r.done).to_seconds() * 1e9, bus(7, n) + T.t_ccs_ns, 1e-3);
}

TEST_F(NandTiming, StatusShowsBusyUntilTheArrayIsDone) {
    const sc_time at = idle();
    Outcome p = program_at({pa(0, 0, 0, 0)}, CellMode::Slc, at);
    CommandExt c;
    seq::read_status(c, 0);
    Outcome mid = bench.send_at(c, Page(1), at + sc_time(100, SC_US));
    EXPECT_EQ(mid.data[0], status::kWriteProtectOff);  // busy: neither ready bit
    EXPECT_LT(mid.latency_ns(), 1000.0);               // status is read while the die works
    Outcome after = bench.send_at(c, Page(1), p.done);
    EXPECT_EQ(after.data[0], status::kWriteProtectOff | status::kReady | status::kArrayReady);
    EXPECT_NEAR(after.latency_ns(), bus(1, 1) + T.t_whr_ns,
                1e-3);  // ONFI tWHR before the status byte
}

TEST_F(NandTiming, TwoDiesOverlapArraysAndTakeTurnsOnTheBus) {
    const sc_time at = idle();
    // Programs: each bus phase is 8 cycles + 576 bytes = 560 ns; die 1's waits for die 0's.
    Outcome p0 = program_at({pa(0, 0, 0, 0)}, CellMode::Esp, at);
    Outcome p1 = program_at({pa(1, 0, 0, 0)}, CellMode::Esp, at);
    ASSERT_TRUE(p0.ok() && p1.ok());
    EXPECT_NEAR(p0.latency_ns(), bus(8, n) + tWB + 400e3, 1e-3);
    EXPECT_NEAR((p1.done - p0.done).to_seconds() * 1e9, bus(8, n), 1e-3);  // not 400 us later
    // Reads likewise: 70 ns apart.
    const sc_time at2 = idle();
    Outcome r0 = read_at(pa(0, 0, 0, 0), at2), r1 = read_at(pa(1, 0, 0, 0), at2);
    EXPECT_NEAR(r0.latency_ns(), bus(7) + tWB + tR, 1e-3);
    EXPECT_NEAR((r1.done - r0.done).to_seconds() * 1e9, bus(7), 1e-3);
    // Their data out phases serialise on the bus.
    CommandExt d0, d1;
    seq::data_out(d0, bench.codec(), 0, 0, 0, uint32_t(n));
    seq::data_out(d1, bench.codec(), 1, 0, 0, uint32_t(n));
    const sc_time at3 = r1.done;
    Outcome o0 = bench.send_at(d0, Page(n), at3), o1 = bench.send_at(d1, Page(n), at3);
    EXPECT_NEAR((o1.done - o0.done).to_seconds() * 1e9, bus(7, n) + T.t_ccs_ns, 1e-3);
}

TEST_F(NandTiming, CommandsToOneDieQueue) {
    const sc_time at = idle();
    Outcome a = read_at(pa(0, 0, 0, 0), at), b = read_at(pa(0, 1, 0, 0), at);
    EXPECT_NEAR(a.latency_ns(), bus(7) + tWB + tR, 1e-3);
    EXPECT_NEAR((b.done - a.done).to_seconds() * 1e9, bus(7) + tWB + tR, 1e-3);
    // A program queued behind an erase.
    const sc_time at2 = idle();
    CommandExt e;
    seq::erase(e, bench.codec(), {pa(0, 0, 5, 0)});
    Outcome er = bench.send_at(e, {}, at2);
    Outcome pr = program_at({pa(0, 0, 5, 0)}, CellMode::Slc, at2);
    EXPECT_NEAR((pr.done - er.done).to_seconds() * 1e9, bus(8, n) + tWB + 200e3, 1e-3);
    // The die's statistics saw both reads.
    EXPECT_EQ(bench.counter(0, "cmd.read"), 2u);
}

TEST_F(NandTiming, MultiPlaneCommandsTakeOneArrayTime) {
    Outcome p = program_at({pa(0, 0, 1, 0), pa(0, 1, 1, 0)}, CellMode::Slc, idle());
    ASSERT_TRUE(p.ok()) << p.error;
    EXPECT_NEAR(p.latency_ns(), bus(1 + 14, 2 * n) + tWB + 200e3, 1e-3);
    CommandExt c;
    seq::read(c, bench.codec(), {pa(0, 0, 1, 0), pa(0, 1, 1, 0)});
    Outcome r = bench.send_at(c, {}, idle());
    EXPECT_NEAR(r.latency_ns(), bus(14) + tWB + tR, 1e-3);
    // Planes in different modes: the slower tR.
    ASSERT_TRUE(program_at({pa(0, 1, 2, 0)}, CellMode::Tlc, idle()).ok());
    seq::read(c, bench.codec(), {pa(0, 0, 1, 0), pa(0, 1, 2, 0)});
    r = bench.send_at(c, {}, idle());
    EXPECT_NEAR(r.latency_ns(), bus(14) + tWB + 60e3, 1e-3);
}

TEST_F(NandTiming, CacheReadReturnsAfterTrcbsyAndOverlapsTheNextSensing) {
    const double tc = T.t_cache_busy_us * 1e3;
    CommandExt c;
    seq::cache_read(c, bench.codec(), pa(0, 0, 0, 0));
    const sc_time at = idle();
    Outcome a = bench.send_at(c, {}, at);
    EXPECT_NEAR(a.latency_ns(), bus(7) + tWB + tc, 1e-3);
    // The next one waits for the array (tR + tRCBSY after the first started).
    seq::cache_read(c, bench.codec(), pa(0, 0, 0, 1));
    Outcome b = bench.send_at(c, {}, a.done);
    EXPECT_NEAR((b.done - at).to_seconds() * 1e9, bus(7) + tWB + tR + tc + bus(7) + tWB + tc, 1e-3);
}

// --- tMWS -------------------------------------------------------------------------------------

TEST(NandTimingCurve, MwsLatencyFactorFollowsFigures12And13) {
    const Timing t;
    EXPECT_DOUBLE_EQ(mws_latency_factor(t, 1, 1, 48), 1.0);
    double last = 1.0;
    for (uint32_t wl = 2; wl <= 48; ++wl) {
        const double f = mws_latency_factor(t, wl, 1, 48);
        EXPECT_GE(f, last) << wl;
        if (wl <= 8) {
            EXPECT_LE(f, 1.01) << wl;  // "< 1% for up to 8 wordlines"
        }
        last = f;
    }
    EXPECT_NEAR(mws_latency_factor(t, 48, 1, 48), 1.033, 1e-12);  // "+3.3% for all 48"
    for (uint32_t b = 1; b <= 8; ++b) EXPECT_DOUBLE_EQ(mws_latency_factor(t, 1, b, 48), 1.0) << b;
    EXPECT_GT(mws_latency_factor(t, 1, 9, 48), 1.0);
    EXPECT_NEAR(mws_latency_factor(t, 1, 32, 48), 1.363, 1e-12);  // "+36.3% for 32 blocks"
    EXPECT_NEAR(mws_latency_factor(t, 1, 20, 48), 1.0 + 0.363 * 12 / 24, 1e-12);
    // Capped at 4 blocks, every MWS is within 1.033 tR (Section 5.2).
    EXPECT_NEAR(mws_latency_factor(t, 48, 4, 48), 1.033, 1e-12);
    for (uint32_t b = 1; b <= 4; ++b)
        for (uint32_t wl = 1; wl <= 48; ++wl)
            EXPECT_LE(mws_latency_factor(t, wl, b, 48), 1.033 + 1e-12);
    // The published points stay at 8 and 48 wordlines whatever the string length.
    EXPECT_NEAR(mws_latency_factor(t, 48, 1, 64), 1.033, 1e-12);
    EXPECT_NEAR(mws_latency_factor(t, 8, 1, 16), 1.008, 1e-12);
    EXPECT_GT(mws_latency_factor(t, 64, 1, 64), 1.033);
}

TEST_F(NandTiming, MwsCommandTakesTheCharacterisedLatency) {
    Stored s;
    bench.program_blocks(s, 0, 0, 0, 4, 48, CellMode::Esp,
                         [&](uint32_t, uint32_t) { return Page(n, 0xF0); });
    // One wordline: a read.
    Outcome o = mws_at(0, {{0, 1}}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(mws_cycles(1)) + tWB + tR, 1e-3);
    // 8 wordlines: under 1% more.
    o = mws_at(0, {{0, wl_range(0, 8)}}, idle());
    EXPECT_LE(o.latency_ns(), bus(mws_cycles(1)) + tWB + 1.01 * tR);
    EXPECT_GT(o.latency_ns(), bus(mws_cycles(1)) + tWB + tR);
    // 48 wordlines: +3.3%.
    o = mws_at(0, {{0, wl_range(0, 48)}}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(mws_cycles(1)) + tWB + 1.033 * tR, 1e-3);
    // Four blocks of one wordline: hidden by the bitline precharge.
    o = mws_at(0, {{0, 1}, {1, 1}, {2, 1}, {3, 1}}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(mws_cycles(4)) + tWB + tR, 1e-3);
    // Four blocks of 48 wordlines: 1.033 tR (41 cycles on the bus).
    Slots all;
    for (uint32_t b = 0; b < 4; ++b) all.push_back({b, wl_range(0, 48)});
    o = mws_at(0, all, idle());
    EXPECT_EQ(mws_cycles(4), 41u);
    EXPECT_NEAR(o.latency_ns(), 410 + tWB + 1.033 * tR, 1e-3);
    // The slowest selected page sets tR: one MLC wordline read through MWS.
    ASSERT_TRUE(program_at({pa(0, 0, 6, 0)}, CellMode::Mlc, idle()).ok());
    o = mws_at(0, {{6, 1}}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(mws_cycles(1)) + tWB + 40e3, 1e-3);
    // XOR: a latch operation, no sensing.
    CommandExt x;
    seq::xor_latches(x, bench.codec(), 0, 0);
    o = bench.send_at(x, {}, idle());
    EXPECT_NEAR(o.latency_ns(), bus(4) + tWB + T.t_xor_us * 1e3, 1e-3);
}

TEST(NandTimingFixed, FixedMwsLatencyIsTheCappedWorstCase) {
    NandConfig cfg = small_config();
    cfg.timing.mws_fixed_latency = true;
    Bench bench(cfg);
    const double tR = 22.5e3;
    for (const Slots& s :
         {Slots{{0, 1}}, Slots{{0, wl_range(0, 8)}}, Slots{{0, 1}, {1, 1}, {2, 1}, {3, 1}}}) {
        CommandExt c;
        seq::mws(c, bench.codec(), 0, 0, kRead, s);
        bench.now += sc_time(1, SC_MS);
        Outcome o = bench.send(c);
        ASSERT_TRUE(o.ok()) << o.error;
        const uint32_t slots = uint32_t(s.size());
        EXPECT_NEAR(o.latency_ns(), bus_ns(cfg.timing, 1 + slots * 10, 0) + 100 + 1.033 * tR, 1e-3);
    }
    // A normal read is not an MWS.
    bench.now += sc_time(1, SC_MS);
    EXPECT_NEAR(bench.read(pa(0, 0, 0, 0)).latency_ns(), 70 + 100 + tR, 1e-3);
}

TEST(NandTimingWide, InterBlockMwsBeyondFourBlocksWhenTheCapIsRaised) {
    // The die caps MWS at mws_max_blocks (4 by default); raised to 32 the 32-block point of
    // Figure 13 is reachable through the command interface.
    NandConfig cfg = small_config();
    cfg.geometry.blocks_per_plane = 64;
    cfg.power.mws_max_blocks = 32;
    Bench bench(cfg);
    const double tR = 22.5e3;
    for (uint32_t blocks : {4u, 8u, 16u, 32u}) {
        Slots s;
        for (uint32_t b = 0; b < blocks; ++b) s.push_back({b, 1});
        CommandExt c;
        seq::mws(c, bench.codec(), 0, 0, kRead, s);
        Outcome o = bench.send(c);
        ASSERT_TRUE(o.ok()) << o.error;
        const double f = mws_latency_factor(cfg.timing, 1, blocks, 48);
        EXPECT_NEAR(o.latency_ns(), bus_ns(cfg.timing, 1 + blocks * 10, 0) + 100 + f * tR, 1e-3)
            << blocks;
        if (blocks == 32) {
            EXPECT_NEAR(f, 1.363, 1e-12);
        }
    }
}

// --- timing-only mode -------------------------------------------------------------------------

TEST(NandTimingOnly, CommandsAreValidatedAndTimedWithoutData) {
    NandConfig cfg = small_config();
    cfg.functional = false;
    Bench bench(cfg);
    const size_t n = bench.page_bytes();
    const double tR = 22.5e3;
    Outcome p = bench.program(pa(0, 0, 0, 0), Page(n, 0x00), CellMode::Esp);
    ASSERT_TRUE(p.ok()) << p.error;
    EXPECT_NEAR(p.latency_ns(), bus_ns(cfg.timing, 8, n) + 100 + 400e3, 1e-3);
    // Still validated: program twice, MLC out of order, MWS over MLC wordlines, the power cap.
    EXPECT_TRUE(
        bench.refused(bench.program(pa(0, 0, 0, 0), Page(n, 0), CellMode::Esp), 0, "not erased"));
    bench.must_program(pa(0, 0, 1, 4), Page(n, 0), CellMode::Mlc);
    bench.must_program(pa(0, 0, 1, 5), Page(n, 0), CellMode::Mlc);
    EXPECT_TRUE(
        bench.refused(bench.program(pa(0, 0, 1, 2), Page(n, 0), CellMode::Mlc), 0, "in order"));
    EXPECT_TRUE(
        bench.refused(bench.mws(0, 0, kRead, {{1, wl_range(4, 2)}}), 0, "needs SLC or ESP"));
    EXPECT_TRUE(bench.refused(bench.mws(0, 0, kRead, {{0, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}}), 0,
                              "exceed the limit of 4"));
    // No data: data out leaves the payload as it was.
    Outcome r = bench.read(pa(0, 0, 0, 0));
    EXPECT_NEAR(r.latency_ns(), 70 + 100 + tR, 1e-3);
    Outcome d = bench.data_out(0, 0, 0, uint32_t(n));
    ASSERT_TRUE(d.ok()) << d.error;
    EXPECT_EQ(d.data, Page(n, 0));
    EXPECT_NEAR(d.latency_ns(), bus_ns(cfg.timing, 7, n) + cfg.timing.t_ccs_ns, 1e-3);
    // MWS timing as in functional mode; bits are counted, no errors drawn.
    for (uint32_t wl = 0; wl < 48; ++wl) bench.must_program(pa(0, 0, 6, wl), {}, CellMode::Esp);
    Outcome m = bench.mws(0, 0, kRead, {{6, wl_range(0, 48)}});
    ASSERT_TRUE(m.ok()) << m.error;
    EXPECT_NEAR(m.latency_ns(), bus_ns(cfg.timing, 11, 0) + 100 + 1.033 * tR, 1e-3);
    EXPECT_EQ(bench.counter(0, "bits_sensed"), (1 + 48) * uint64_t(n) * 8);
    EXPECT_EQ(bench.counter(0, "bit_errors"), 0u);
    EXPECT_EQ(bench.die(0).plane(0).latch(Plane::C), nullptr);
    EXPECT_TRUE(bench.die(0).plane(0).page(0, 0)->data == nullptr);
}

}  // namespace
}  // namespace canopy::nand::test
