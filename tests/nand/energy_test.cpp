// Energy per command: array power x array time plus I/O energy per bus byte. MWS power follows
// Figure 14 (Section 5.2): +34% at 2 blocks, +80% at 4, above erase power beyond 4; a 4-block
// MWS uses about 53% less energy than four reads; intra-block MWS draws no more than a read.
#include "nand/timing.hpp"
#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

class NandEnergy : public ::testing::Test {
  protected:
    explicit NandEnergy(const NandConfig& cfg = small_config()) : bench(cfg) {
        bench.program_blocks(stored, 0, 0, 0, 4, 48, CellMode::Esp,
                             [&](uint32_t, uint32_t wl) { return Page(n, uint8_t(wl)); });
    }
    double io(uint32_t cycles, uint64_t bytes = 0) const {
        return P.io_pj_per_byte * double(cycles + bytes);
    }
    double read_pj() const { return P.p_read_mw * T.t_read_slc_us * 1e3; }  // mW x us = nJ

    Bench bench;
    const Timing& T = bench.cfg().timing;
    const Power& P = bench.cfg().power;
    const size_t n = bench.page_bytes();
    Stored stored;
};

TEST_F(NandEnergy, ReadIsReadPowerTimesTr) {
    Outcome o = bench.read(pa(0, 0, 0, 0));
    ASSERT_TRUE(o.ok());
    EXPECT_NEAR(read_pj(), 1.125e6, 1e-6);  // 50 mW x 22.5 us
    EXPECT_NEAR(o.energy_pj, read_pj() + io(7), 1e-6);
    Outcome d = bench.data_out(0, 0, 0, uint32_t(n));
    EXPECT_NEAR(d.energy_pj, io(7, n), 1e-6);  // data out is I/O only
}

TEST_F(NandEnergy, ProgramAndEraseEnergy) {
    const Page p(n, 0x33);
    for (CellMode m : {CellMode::Slc, CellMode::Mlc, CellMode::Tlc, CellMode::Esp}) {
        const double t = m == CellMode::Slc   ? 200
                         : m == CellMode::Mlc ? 500
                         : m == CellMode::Tlc ? 700
                                              : 400;
        Outcome o = bench.program(pa(1, 0, uint32_t(m), 0), p, m);
        ASSERT_TRUE(o.ok()) << o.error;
        const uint32_t prefixes = m == CellMode::Tlc ? 0 : 1;
        EXPECT_NEAR(o.energy_pj, P.p_read_mw * P.prog_vs_read * t * 1e3 + io(7 + prefixes, n), 1e-6)
            << mode_name(m);
    }
    Outcome e = bench.erase(pa(1, 0, 1, 0));
    EXPECT_NEAR(e.energy_pj, P.p_read_mw * P.erase_vs_read * 3500e3 + io(5), 1e-6);
}

TEST(NandEnergyCurve, MwsPowerFactorFollowsFigure14) {
    const Power p;
    EXPECT_DOUBLE_EQ(mws_power_factor(p, 1, 1, 48), 1.0);
    EXPECT_DOUBLE_EQ(mws_power_factor(p, 1, 2, 48), 1.34);  // +34% at 2 blocks
    EXPECT_DOUBLE_EQ(mws_power_factor(p, 1, 4, 48), 1.80);  // about +80% at 4 blocks
    EXPECT_NEAR(mws_power_factor(p, 1, 3, 48), 1.57, 1e-12);
    for (uint32_t b = 1; b <= 4; ++b)
        EXPECT_LT(mws_power_factor(p, 1, b, 48), p.erase_vs_read) << b;
    for (uint32_t b = 5; b <= 32; ++b)
        EXPECT_GT(mws_power_factor(p, 1, b, 48), p.erase_vs_read) << b;
    for (uint32_t b = 2; b <= 32; ++b)
        EXPECT_GT(mws_power_factor(p, 1, b, 48), mws_power_factor(p, 1, b - 1, 48)) << b;
    // Intra-block: VREF instead of VPASS on the selected wordlines, never above a read.
    for (uint32_t wl = 2; wl <= 48; ++wl) {
        EXPECT_LE(mws_power_factor(p, wl, 1, 48), 1.0) << wl;
        EXPECT_LT(mws_power_factor(p, wl, 1, 48), mws_power_factor(p, wl - 1, 1, 48)) << wl;
    }
    EXPECT_NEAR(mws_power_factor(p, 48, 1, 48), 1.0 - p.mws_intra_saving_at_48wl, 1e-12);
    EXPECT_NEAR(mws_power_factor(p, 48, 1, 64), 1.0 - p.mws_intra_saving_at_48wl, 1e-12);
}

TEST_F(NandEnergy, FourBlockMwsSavesAbout53PercentOverFourReads) {
    double reads = 0;
    for (uint32_t b = 0; b < 4; ++b) reads += bench.read(pa(0, 0, b, 0)).energy_pj;
    Outcome m = bench.mws(0, 0, kRead, {{0, 1}, {1, 1}, {2, 1}, {3, 1}});
    ASSERT_TRUE(m.ok());
    EXPECT_NEAR(m.energy_pj, 1.80 * read_pj() + io(41), 1e-6);
    const double saving = 1.0 - m.energy_pj / reads;
    EXPECT_NEAR(saving, 0.53, 0.03) << "4-block MWS vs 4 reads";  // Section 5.2: "53%"
    // Two blocks: 1.34 / 2.
    double two = bench.mws(0, 0, kRead, {{0, 1}, {1, 1}}).energy_pj;
    EXPECT_NEAR(1.0 - two / (reads / 2), 0.33, 0.01);
}

class NandEnergyFixed : public NandEnergy {
  protected:
    static NandConfig fixed() {
        NandConfig c = small_config();
        c.timing.mws_fixed_latency = true;
        return c;
    }
    NandEnergyFixed() : NandEnergy(fixed()) {}
};

TEST_F(NandEnergyFixed, FourBlockMwsAtTheFixedTmwsSaves53Percent) {
    // Section 5.2's arithmetic: 1.8x power for 1.033x time against 4 reads.
    double reads = 0;
    for (uint32_t b = 0; b < 4; ++b) reads += bench.read(pa(0, 0, b, 0)).energy_pj;
    Outcome m = bench.mws(0, 0, kRead, {{0, 1}, {1, 1}, {2, 1}, {3, 1}});
    ASSERT_TRUE(m.ok());
    EXPECT_NEAR(m.energy_pj, 1.80 * 1.033 * read_pj() + io(41), 1e-3);
    EXPECT_NEAR(1.0 - m.energy_pj / reads, 0.535, 0.002);
}

TEST_F(NandEnergy, IntraBlockMwsDrawsNoMoreThanARead) {
    const double read = bench.read(pa(0, 0, 0, 0)).energy_pj - io(7);
    for (uint32_t k : {2u, 8u, 24u, 48u}) {
        Outcome m = bench.mws(0, 0, kRead, {{0, wl_range(0, k)}});
        ASSERT_TRUE(m.ok());
        const double factor = mws_latency_factor(T, k, 1, 48);
        const double power_vs_read = (m.energy_pj - io(11)) / (read * factor);
        EXPECT_LE(power_vs_read, 1.0 + 1e-12) << k;
        EXPECT_NEAR(power_vs_read, mws_power_factor(P, k, 1, 48), 1e-9) << k;
        // 48 operands in one sensing against 48 reads.
        if (k == 48) {
            EXPECT_LT(m.energy_pj, 0.025 * 48 * read);
        }
    }
}

TEST_F(NandEnergy, DieEnergyStatisticAddsUpTheCommands) {
    const double before_uj = bench.sum(0, "energy");
    double pj = 0;
    pj += bench.read(pa(0, 0, 0, 0)).energy_pj;
    pj += bench.mws(0, 0, kInverseRead, {{1, wl_range(0, 48)}, {2, 3}}).energy_pj;
    pj += bench.xor_latches(0, 0).energy_pj;
    pj += bench.data_out(0, 0, 0, 16).energy_pj;
    pj += bench.erase(pa(0, 0, 5, 0)).energy_pj;
    CommandExt c;
    seq::read_status(c, 0);
    pj += bench.send(c, Page(1)).energy_pj;
    EXPECT_NEAR(bench.sum(0, "energy") - before_uj, pj * 1e-6, 1e-9);
    EXPECT_EQ(bench.sum(1, "energy"), 0.0);
    // A refused command costs nothing at the die.
    EXPECT_EQ(bench.mws(0, 0, iscm::kInverse, {{1, 1}}).energy_pj, 0.0);
}

}  // namespace
}  // namespace canopy::nand::test
