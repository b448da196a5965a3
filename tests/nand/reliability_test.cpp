// Raw bit errors (models/nand/reliability.hpp; Flash-Cosmos Sections 3.2 and 5.2, Figures 8 and
// 11): the model's factors, the rate measured by reading known pages many times against the
// model, ESP's zero errors, why Flash-Cosmos cannot compute on randomised or ECC-encoded data,
// and reproducibility from the seed.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "nand/plane.hpp"
#include "nand_fixture.hpp"

namespace canopy::nand::test {
namespace {

// Wear and age of the paper's worst case (10K P/E cycles, 1 year): RBER 8.6e-4 for randomised
// SLC pages, high enough that a few thousand page reads measure it to 1%.
NandConfig stressed() {
    NandConfig cfg = small_config();
    cfg.reliability.initial_pe_cycles = 10000;
    cfg.reliability.retention_days = 365;
    return cfg;
}

double days_at(const Bench& bench) {
    return bench.cfg().reliability.retention_days + bench.now.to_seconds() / 86400.0;
}

TEST(NandReliabilityModel, FactorsOfTheFormula) {
    const Reliability r;
    const ReliabilityModel m(r);
    const double slc = m.rber(CellMode::Slc, 10000, 365, true, 0);
    EXPECT_NEAR(slc, 8.6e-4, 1e-15);  // the reference point
    // About 12 orders of magnitude above a 1e-15 UBER (Section 3.2).
    EXPECT_NEAR(std::log10(slc / 1e-15), 12.0, 0.5);
    EXPECT_NEAR(m.rber(CellMode::Slc, 10000, 365, false, 0) / slc, 1.91, 1e-12);
    EXPECT_NEAR(m.rber(CellMode::Mlc, 10000, 365, true, 0) / slc, 4.0, 1e-12);
    EXPECT_NEAR(
        m.rber(CellMode::Mlc, 10000, 365, false, 0) / m.rber(CellMode::Mlc, 10000, 365, true, 0),
        4.92, 1e-12);
    EXPECT_NEAR(m.rber(CellMode::Tlc, 10000, 365, true, 0) / slc, 12.0, 1e-12);
    EXPECT_EQ(m.rber(CellMode::Erased, 10000, 365, false, 0), 0.0);
    // ESP: tESP = tPROG is SLC, +60% is ten times lower, from 1.9 x on exactly zero.
    const double slc_nr = m.rber(CellMode::Slc, 10000, 365, false, 0);
    EXPECT_NEAR(m.rber(CellMode::Esp, 10000, 365, false, 1.0), slc_nr, 1e-18);
    EXPECT_NEAR(m.rber(CellMode::Esp, 10000, 365, false, 1.6) / slc_nr, 0.1, 1e-9);
    for (double f : {1.9, 19 / 10.0, 1.95, 2.0, 4.0}) {
        EXPECT_EQ(m.rber(CellMode::Esp, 10000, 365, false, f), 0.0) << f;
        EXPECT_EQ(m.esp_reduction(f), 0.0) << f;
    }
    EXPECT_GT(m.rber(CellMode::Esp, 10000, 365, false, 1.8999), 0.0);
    EXPECT_LT(m.esp_reduction(1.8999), 1e-8);
    double last = 1.0;
    for (double f = 1.05; f < 1.9; f += 0.05) {
        EXPECT_LT(m.esp_reduction(f), last) << f;
        last = m.esp_reduction(f);
    }
    // Wear and age raise the rate; the rate is a probability.
    EXPECT_LT(m.rber(CellMode::Slc, 0, 365, true, 0), slc);
    EXPECT_LT(m.rber(CellMode::Slc, 10000, 0, true, 0), slc);
    EXPECT_GT(m.rber(CellMode::Slc, 20000, 365, true, 0), slc);
    EXPECT_GT(m.rber(CellMode::Slc, 10000, 3650, true, 0), slc);
    EXPECT_EQ(m.rber(CellMode::Tlc, 1e7, 1e5, false, 0), 0.5);
}

TEST(NandReliabilityModel, InjectBitErrorsDrawsTheRate) {
    core::Rng rng(3);
    std::vector<uint64_t> w(1 << 14, 0);  // 2^20 bits
    const uint64_t bits = (w.size() - 1) * 64;
    uint64_t flips = 0;
    for (int i = 0; i < 20; ++i) flips += inject_bit_errors(rng, w.data(), bits, 1e-3);
    const double expected = 20 * double(bits) * 1e-3;
    EXPECT_NEAR(double(flips) / expected, 1.0, 3 / std::sqrt(expected));
    EXPECT_EQ(w.back(), 0u);  // nothing past `bits`
    uint64_t ones = 0;
    for (uint64_t x : w) ones += uint64_t(__builtin_popcountll(x));
    EXPECT_LE(ones, flips);  // a flip can undo an earlier one
    std::fill(w.begin(), w.end(), 0);
    EXPECT_EQ(inject_bit_errors(rng, w.data(), bits, 0.0), 0u);
    const uint64_t dense = inject_bit_errors(rng, w.data(), bits, 0.5);
    EXPECT_NEAR(double(dense) / double(bits), 0.5, 0.005);
    EXPECT_EQ(w.back(), 0u);
}

// --- measured against the model ---------------------------------------------------------------

struct ModeCase {
    CellMode mode;
    bool randomise;
    double esp_factor;
    const char* name;
};

void PrintTo(const ModeCase& m, std::ostream* os) { *os << m.name; }

class NandReliabilityMeasured : public ::testing::TestWithParam<ModeCase> {};

TEST_P(NandReliabilityMeasured, ReadErrorRateMatchesTheModel) {
    const ModeCase& mc = GetParam();
    Bench bench(stressed());
    if (mc.mode == CellMode::Esp) bench.set_esp_factor(0, mc.esp_factor);
    std::mt19937_64 g(11);
    const size_t n = bench.page_bytes();
    std::vector<Page> pages(8);
    for (uint32_t wl = 0; wl < pages.size(); ++wl) {
        pages[wl] = random_page(g, n);
        bench.must_program(pa(0, 1, 3, wl), pages[wl], mc.mode, mc.randomise);
    }
    const ReliabilityModel model(bench.cfg().reliability);
    const double rate = model.rber(mc.mode, bench.die(0).plane(1).pe_cycles(3), days_at(bench),
                                   mc.randomise, mc.mode == CellMode::Esp ? mc.esp_factor : 0);
    ASSERT_GT(rate, 0.0);
    // Enough reads for 12,000 expected errors: one standard deviation is 0.9%, 3 sigma < 10%.
    const uint64_t bits_per_read = uint64_t(n) * 8;
    const uint64_t reads = uint64_t(std::ceil(12000 / (rate * double(bits_per_read))));
    uint64_t errors = 0;
    for (uint64_t i = 0; i < reads; ++i) {
        const uint32_t wl = uint32_t(i % pages.size());
        errors += bit_diff(bench.read_page(pa(0, 1, 3, wl)), pages[wl]);
    }
    const double measured = double(errors) / double(reads * bits_per_read);
    EXPECT_NEAR(measured / rate, 1.0, 0.10) << "measured " << measured << ", model " << rate << ", "
                                            << errors << " errors in " << reads << " reads";
    // Every error the die drew is one the controller sees after the read.
    EXPECT_EQ(bench.counter(0, "bit_errors"), errors);
    EXPECT_EQ(bench.counter(0, "bits_sensed"), reads * bits_per_read);
}

INSTANTIATE_TEST_SUITE_P(NandModes, NandReliabilityMeasured,
                         ::testing::Values(ModeCase{CellMode::Slc, true, 0, "SlcRandomised"},
                                           ModeCase{CellMode::Slc, false, 0, "SlcNotRandomised"},
                                           ModeCase{CellMode::Mlc, true, 0, "MlcRandomised"},
                                           ModeCase{CellMode::Mlc, false, 0, "MlcNotRandomised"},
                                           ModeCase{CellMode::Tlc, false, 0, "TlcNotRandomised"},
                                           ModeCase{CellMode::Esp, false, 1.3, "Esp13"},
                                           ModeCase{CellMode::Esp, false, 1.6, "Esp16"}),
                         [](const ::testing::TestParamInfo<ModeCase>& i) {
                             return std::string(i.param.name);
                         });

TEST(NandReliability, RetentionAgeCountsFromTheProgram) {
    NandConfig cfg = stressed();
    cfg.reliability.retention_days = 0;
    Bench bench(cfg);
    std::mt19937_64 g(12);
    const size_t n = bench.page_bytes();
    const Page p = random_page(g, n);
    bench.must_program(pa(0, 0, 0, 0), p, CellMode::Slc);
    const ReliabilityModel model(cfg.reliability);
    for (double day : {0.0, 100.0}) {
        bench.now = std::max(bench.now, sc_core::sc_time(day * 86400, sc_core::SC_SEC));
        const double rate = model.rber(CellMode::Slc, 10000, day, false, 0);
        const uint64_t reads = uint64_t(std::ceil(12000 / (rate * double(n) * 8)));
        uint64_t errors = 0;
        for (uint64_t i = 0; i < reads; ++i) errors += bit_diff(bench.read_page(pa(0, 0, 0, 0)), p);
        EXPECT_NEAR(double(errors) / double(reads * n * 8) / rate, 1.0, 0.10) << "day " << day;
    }
}

// --- ESP: zero errors -------------------------------------------------------------------------

TEST(NandReliability, EspPagesFromFactor19SenseNoErrorOver1e8Bits) {
    Bench bench(stressed());
    bench.set_esp_factor(1, 1.9);
    std::mt19937_64 g(13);
    const size_t n = bench.page_bytes();
    const ReliabilityModel model(bench.cfg().reliability);
    for (uint32_t die : {0u, 1u}) {  // die 0: default tESP = 2.0 tPROG; die 1: 1.9
        SCOPED_TRACE("die " + std::to_string(die));
        Stored s;
        bench.program_blocks(s, die, 0, 0, 4, 48, CellMode::Esp, [&](uint32_t, uint32_t wl) {
            return random_page(g, n, and_friendly(wl));
        });
        const PageState* ps = bench.die(die).plane(0).page(0, 0);
        EXPECT_GE(ps->esp_factor, bench.cfg().reliability.esp_zero_factor);
        EXPECT_EQ(model.rber(ps->mode, 10000, 365, false, ps->esp_factor), 0.0);
        Slots all;
        for (uint32_t b = 0; b < 4; ++b) all.push_back({b, wl_range(0, 48)});
        const Page want = sense_oracle(s, all, n);
        ASSERT_TRUE(mixed(want));
        while (bench.counter(die, "bits_sensed") < 100'000'000) {
            Page got = bench.mws_result(die, 0, kRead, all);
            ASSERT_EQ(got, want);
        }
        EXPECT_EQ(bench.counter(die, "bit_errors"), 0u);
        EXPECT_GE(bench.counter(die, "bits_sensed"), 100'000'000u);
    }
}

TEST(NandReliability, EspZeroStartsExactlyAtTheThreshold) {
    // Set the rate just below the threshold to only 10x under SLC, so that a page programmed
    // at tESP = 1.9 tPROG that missed the threshold (1.9 rounded down) would show errors.
    NandConfig cfg = stressed();
    cfg.reliability.esp_decades_at_zero = 1.0;
    Bench bench(cfg);
    std::mt19937_64 g(14);
    const size_t n = bench.page_bytes();
    for (double f : {1.8, 1.9}) {
        const uint32_t die = f < 1.85 ? 0 : 1;
        bench.set_esp_factor(die, f);
        Stored s;
        bench.program_blocks(s, die, 0, 0, 4, 48, CellMode::Esp, [&](uint32_t, uint32_t wl) {
            return random_page(g, n, and_friendly(wl));
        });
        Slots all;
        for (uint32_t b = 0; b < 4; ++b) all.push_back({b, wl_range(0, 48)});
        for (int i = 0; i < 12; ++i) bench.mws(die, 0, kRead, all);  // 1.06e7 bits
        const double rate =
            double(bench.counter(die, "bit_errors")) / double(bench.counter(die, "bits_sensed"));
        if (f < 1.85) {
            EXPECT_NEAR(rate / (8.6e-4 * 1.91 * 0.1), 1.0, 0.15) << "tESP = 1.8 tPROG";
        } else {
            EXPECT_EQ(bench.counter(die, "bit_errors"), 0u) << "tESP = 1.9 tPROG";
        }
    }
}

TEST(NandReliability, BitsSensedCountCellsNotWordPadding) {
    // 500 + 13 bytes: the page's last 64-bit word is partly padding, which holds no cells.
    NandConfig cfg = stressed();
    cfg.geometry.page_bytes = 500;
    cfg.geometry.spare_bytes = 13;
    Bench bench(cfg);
    std::mt19937_64 g(19);
    const Page p = random_page(g, 513);
    bench.must_program(pa(0, 0, 0, 0), p, CellMode::Tlc);  // RBER 0.05: many errors
    uint64_t errors = 0;
    for (int i = 0; i < 200; ++i) errors += bit_diff(bench.read_page(pa(0, 0, 0, 0)), p);
    bench.mws(0, 0, kRead, {{1, wl_range(0, 48)}});  // 48 erased wordlines
    EXPECT_EQ(bench.counter(0, "bits_sensed"), (200 + 48) * 513 * 8u);
    EXPECT_EQ(bench.counter(0, "bit_errors"), errors);
    const double rate =
        ReliabilityModel(cfg.reliability).rber(CellMode::Tlc, 10000, days_at(bench), false, 0);
    EXPECT_NEAR(double(errors) / (200 * 513 * 8) / rate, 1.0, 0.10);
}

TEST(NandReliability, InjectErrorsOffSensesExactly) {
    NandConfig cfg = stressed();
    cfg.reliability.inject_errors = false;
    Bench bench(cfg);
    std::mt19937_64 g(15);
    const Page p = random_page(g, bench.page_bytes());
    bench.must_program(pa(0, 0, 0, 0), p, CellMode::Tlc);
    for (int i = 0; i < 50; ++i) ASSERT_EQ(bench.read_page(pa(0, 0, 0, 0)), p);
    EXPECT_EQ(bench.counter(0, "bit_errors"), 0u);
}

TEST(NandReliability, ErasedCellsHaveNoErrors) {
    Bench bench(stressed());
    for (int i = 0; i < 50; ++i)
        ASSERT_EQ(bench.read_page(pa(0, 0, 2, 5)), filled(bench.page_bytes(), 0xFF));
    bench.must_program(pa(0, 0, 3, 0), filled(bench.page_bytes(), 0x0F), CellMode::Slc);
    ASSERT_TRUE(bench.erase(pa(0, 0, 3, 0)).ok());
    for (int i = 0; i < 50; ++i)
        ASSERT_EQ(bench.read_page(pa(0, 0, 3, 0)), filled(bench.page_bytes(), 0xFF));
    EXPECT_EQ(bench.counter(0, "bit_errors"), 0u);
}

// --- randomisation and ECC break in-flash computation -----------------------------------------

TEST(NandReliability, MwsOverRandomisedPagesIsWrong) {
    // Randomisation scrambles what the cells hold; a read de-randomises one page, but an MWS
    // computes on the scrambled cells (Section 3.2): the result is not the AND of the data.
    NandConfig cfg = small_config();
    cfg.reliability.inject_errors = false;  // isolate the effect of the scrambling
    Bench bench(cfg);
    std::mt19937_64 g(16);
    const size_t n = bench.page_bytes();
    Stored scrambled;  // blocks 0 and 1 randomised; blocks 2 and 3 the same data, plain
    auto make = [&](uint32_t, uint32_t wl) { return random_page(g, n, and_friendly(wl)); };
    bench.program_blocks(scrambled, 0, 0, 0, 2, 48, CellMode::Slc, make, true);
    for (uint32_t b = 0; b < 2; ++b)
        for (uint32_t wl = 0; wl < 48; ++wl)
            bench.must_program(pa(0, 0, b + 2, wl), scrambled[b][wl], CellMode::Slc);
    for (uint32_t wl = 0; wl < 48; wl += 5)
        EXPECT_EQ(bench.read_page(pa(0, 0, 0, wl)), scrambled[0][wl]);
    for (uint32_t k = 2; k <= 48; ++k) {
        const uint64_t pbm = random_pbm(g, k, 48);
        const Page want = sense_oracle(scrambled, {{0, pbm}}, n);
        EXPECT_NE(bench.mws_result(0, 0, kRead, {{0, pbm}}), want) << k << " randomised operands";
        EXPECT_EQ(bench.mws_result(0, 0, kRead, {{2, pbm}}), want) << k << " plain operands";
    }
    // OR across blocks too.
    const Page want_or = sense_oracle(scrambled, {{0, 1}, {1, 1}}, n);
    EXPECT_NE(bench.mws_result(0, 0, kRead, {{0, 1}, {1, 1}}), want_or);
    EXPECT_EQ(bench.mws_result(0, 0, kRead, {{2, 1}, {3, 1}}), want_or);
}

uint32_t crc32(const uint8_t* p, size_t len) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

TEST(NandReliability, MwsOverEccEncodedDataBreaksTheCode) {
    // Pages carry a CRC-32 of their data in the spare area. Each page reads back consistent;
    // the AND of pages is the AND of their data, but the AND of their codes is not the code of
    // that result (Section 3.2: ECC cannot be used with in-flash bitwise operations).
    Bench bench;
    std::mt19937_64 g(17);
    const size_t n = bench.page_bytes(), data = bench.geo().page_bytes;
    auto crc_ok = [&](const Page& p) {
        const uint32_t c = crc32(p.data(), data);
        return std::equal(p.begin() + long(data), p.begin() + long(data) + 4,
                          reinterpret_cast<const uint8_t*>(&c));
    };
    Stored s;
    bench.program_blocks(s, 0, 0, 0, 1, 48, CellMode::Esp, [&](uint32_t, uint32_t wl) {
        Page p = random_page(g, data, and_friendly(wl));
        p.resize(n, 0xFF);
        const uint32_t c = crc32(p.data(), data);
        std::copy_n(reinterpret_cast<const uint8_t*>(&c), 4, p.begin() + long(data));
        return p;
    });
    for (uint32_t wl = 0; wl < 48; wl += 7) EXPECT_TRUE(crc_ok(bench.read_page(pa(0, 0, 0, wl))));
    for (uint32_t k = 2; k <= 48; ++k) {
        const uint64_t pbm = random_pbm(g, k, 48);
        const Page got = bench.mws_result(0, 0, kRead, {{0, pbm}});
        EXPECT_EQ(got, sense_oracle(s, {{0, pbm}}, n)) << k;  // the data part is right...
        EXPECT_FALSE(crc_ok(got)) << k;                       // ...and fails its code
    }
}

// --- reproducibility --------------------------------------------------------------------------

// The pages a stressed die returns for a fixed program/read sequence under `seed` (direct
// drive: the kernel is never started, so benches can be built one after another).
std::vector<Page> noisy_reads(uint64_t seed, uint64_t& errors) {
    Bench bench(stressed(), seed, Bench::Drive::Direct);
    std::mt19937_64 g(18);  // the same data for every seed
    std::vector<Page> out;
    for (uint32_t wl = 0; wl < 4; ++wl) {
        const Page p = random_page(g, bench.page_bytes());
        bench.must_program(pa(1, 1, 7, wl), p, CellMode::Slc);
        for (int i = 0; i < 10; ++i) out.push_back(bench.read_page(pa(1, 1, 7, wl)));
    }
    errors = bench.counter(1, "bit_errors");
    return out;
}

TEST(NandReliabilitySeed, SameSeedSameErrorsOtherSeedOtherErrors) {
    uint64_t e1 = 0, e1b = 0, e2 = 0;
    const std::vector<Page> a = noisy_reads(1, e1);
    const std::vector<Page> b = noisy_reads(1, e1b);
    const std::vector<Page> c = noisy_reads(2, e2);
    EXPECT_GT(e1, 100u);  // 40 reads x 4608 bits x 1.6e-3
    EXPECT_EQ(a, b);
    EXPECT_EQ(e1, e1b);
    EXPECT_NE(a, c);
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
    EXPECT_LT(same, a.size() / 4);
}

// What the die tells the flash controller's ECC (Plane::data_out): after a sensing of one page
// the controller programmed (prefix 9Bh), the positions it reports are exactly the bits where the
// data out differs from the programmed image, counted as the sensing's raw bit errors; any range
// reports only its own. Where the latch holds anything else (two wordlines, an inverse read, a
// raw page, an XOR, bytes written in) it reports nothing, and the decoder decides.
TEST(NandReliability, DataOutReportsTheSensingsFlipsOnlyWhenItKnowsThem) {
    const NandConfig cfg = stressed();
    const ReliabilityModel model(cfg.reliability);
    Plane plane(cfg, model, 7);
    core::Rng rng(11);
    const uint32_t bytes = cfg.geometry.page_total_bytes();
    std::mt19937_64 g(5);
    const Page image = random_page(g, bytes, 0.5);
    plane.program_image(3, 0, CellMode::Slc, Scramble::Controller, image.data(), bytes, 0.0);
    plane.program_image(3, 1, CellMode::Slc, Scramble::None, image.data(), bytes, 0.0);

    uint64_t total = 0;
    for (int i = 0; i < 200; ++i) {
        const SenseSlot one{3, 1ull << 0};
        const SenseResult r = plane.sense(&one, 1, SenseFlags{}, 0.0, rng, true);
        Page out(bytes);
        std::vector<uint64_t> flips;
        ASSERT_TRUE(plane.data_out(0, out.data(), bytes, &flips));
        ASSERT_EQ(flips.size(), r.bit_errors);
        ASSERT_TRUE(std::is_sorted(flips.begin(), flips.end()));
        for (uint64_t b : flips) out[b / 8] ^= uint8_t(1u << (b % 8));
        ASSERT_EQ(out, image) << "sensing " << i;
        total += r.bit_errors;
        // A part of the page: only the flips inside it, at page positions.
        std::vector<uint64_t> part;
        Page some(100);
        ASSERT_TRUE(plane.data_out(200, some.data(), 100, &part));
        std::vector<uint64_t> want;
        for (uint64_t b : flips)
            if (b >= 200 * 8 && b < 300 * 8) want.push_back(b);
        EXPECT_EQ(part, want);
    }
    EXPECT_GT(total, 200u);  // about 4 per sensing (8.6e-4 of 4,608 bits): errors happened

    std::vector<uint64_t> flips;
    Page out(bytes);
    const SenseSlot both{3, 3};
    plane.sense(&both, 1, SenseFlags{}, 0.0, rng, true);
    EXPECT_FALSE(plane.data_out(0, out.data(), bytes, &flips)) << "two wordlines";
    const SenseSlot raw{3, 1ull << 1};
    plane.sense(&raw, 1, SenseFlags{}, 0.0, rng, true);
    EXPECT_FALSE(plane.data_out(0, out.data(), bytes, &flips)) << "a page programmed raw";
    const SenseSlot one{3, 1};
    plane.sense(&one, 1, SenseFlags{true, true, true, true}, 0.0, rng, true);
    EXPECT_FALSE(plane.data_out(0, out.data(), bytes, &flips)) << "an inverse read";
    plane.sense(&one, 1, SenseFlags{}, 0.0, rng, true);
    plane.xor_latches();
    EXPECT_FALSE(plane.data_out(0, out.data(), bytes, &flips)) << "an XOR";
    plane.sense(&one, 1, SenseFlags{}, 0.0, rng, true);
    plane.data_in(10, image.data(), 4);
    EXPECT_FALSE(plane.data_out(0, out.data(), bytes, &flips)) << "bytes written in";
    // A cache read hands the sensing on to the C-latch with its flips; an erased page has none.
    const SenseSlot erased{5, 1};
    plane.sense(&one, 1, SenseFlags{false, true, false, false}, 0.0, rng, true);
    plane.cache_from_sense();
    ASSERT_TRUE(plane.data_out(0, out.data(), bytes, &flips));
    for (uint64_t b : flips) out[b / 8] ^= uint8_t(1u << (b % 8));
    EXPECT_EQ(out, image);
    flips.clear();
    plane.sense(&erased, 1, SenseFlags{}, 0.0, rng, true);
    ASSERT_TRUE(plane.data_out(0, out.data(), bytes, &flips));
    EXPECT_TRUE(flips.empty());
    EXPECT_EQ(out, Page(bytes, 0xFF));
}

// Pages by wordline of one block, as a PageSource makes them (preconditioning's way: the plane
// keeps no bytes).
struct ImageSource : PageSource {
    std::vector<Page> pages;
    mutable unsigned calls = 0;
    std::vector<uint32_t> erased_blocks;
    void cells(uint32_t, uint32_t wl, uint64_t* words) const override {
        ++calls;
        std::memcpy(words, pages.at(wl).data(), pages[wl].size());
    }
    void erased(uint32_t block) override { erased_blocks.push_back(block); }
};

// A page a source makes senses as the same page programmed with its bytes: the same latches,
// raw bit errors and reported flips from the same random stream, alone, in a multi-wordline
// sensing and inverted; an erase forgets it (and tells the source), and a plane takes one source
// only.
TEST(NandReliability, APageFromASourceSensesAsThePageWithItsBytes) {
    const NandConfig cfg = stressed();
    const ReliabilityModel model(cfg.reliability);
    Plane full(cfg, model, 7), kept(cfg, model, 7);
    const uint32_t bytes = cfg.geometry.page_total_bytes();
    auto source = std::make_shared<ImageSource>();
    std::mt19937_64 g(9);
    for (uint32_t wl = 0; wl < 2; ++wl) {
        const Scramble s = wl ? Scramble::None : Scramble::Controller;
        source->pages.push_back(random_page(g, cfg.geometry.page_words() * 8, 0.5));
        full.program_image(3, wl, CellMode::Slc, s, source->pages[wl].data(), bytes, 0.0);
        // What program_image leaves beyond the page image: the data load's ones.
        std::fill(source->pages[wl].begin() + bytes, source->pages[wl].end(), 0xFF);
        kept.program_from(source, 3, wl, CellMode::Slc, s, 0.0);
    }
    EXPECT_EQ(kept.page(3, 0)->data, nullptr);
    std::vector<uint64_t> a(cfg.geometry.page_words()), b(a.size());
    ASSERT_TRUE(full.stored_cells(3, 1, a.data()));
    ASSERT_TRUE(kept.stored_cells(3, 1, b.data()));
    EXPECT_EQ(a, b);

    core::Rng ra(11), rb(11);
    uint64_t errors = 0;
    const SenseSlot slots[] = {{3, 1}, {3, 2}, {3, 3}};
    for (int i = 0; i < 30; ++i) {
        const SenseSlot& slot = slots[i % 3];
        const SenseFlags f{i % 5 == 4, true, true, true};
        const SenseResult x = full.sense(&slot, 1, f, 0.0, ra, true);
        const SenseResult y = kept.sense(&slot, 1, f, 0.0, rb, true);
        EXPECT_EQ(x.bit_errors, y.bit_errors) << "sensing " << i;
        EXPECT_EQ(x.bits_sensed, y.bits_sensed);
        Page ox(bytes), oy(bytes);
        std::vector<uint64_t> fx, fy;
        EXPECT_EQ(full.data_out(0, ox.data(), bytes, &fx), kept.data_out(0, oy.data(), bytes, &fy));
        ASSERT_EQ(ox, oy) << "sensing " << i;
        EXPECT_EQ(fx, fy);
        errors += x.bit_errors;
    }
    EXPECT_GT(errors, 30u);  // errors were injected: the same ones
    EXPECT_GT(source->calls, 30u);

    EXPECT_THROW(kept.program_from(std::make_shared<ImageSource>(), 3, 2, CellMode::Slc,
                                   Scramble::None, 0.0),
                 std::logic_error);
    kept.erase(4);
    EXPECT_TRUE(source->erased_blocks.empty()) << "block 4 held no page of the source";
    kept.erase(3);
    EXPECT_EQ(source->erased_blocks, std::vector<uint32_t>{3});
    EXPECT_FALSE(kept.page(3, 0)->from_source);
    EXPECT_FALSE(kept.stored_cells(3, 0, b.data()));
}

}  // namespace
}  // namespace canopy::nand::test
