// The flash controller (models/ssd/flash_controller.hpp) on a real NAND channel and SSD memory:
// data programmed comes back exactly, stored randomised and encoded; raw ESP operands compute
// exact MWS results; the ECC corrects the die's raw bit errors up to t per codeword and reports
// beyond that; timing follows the dies, the bus and the decoder; dies work in parallel; every
// malformed command is refused with a message naming it; the register view and its interrupt.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "nand/channel.hpp"
#include "nand/reliability.hpp"
#include "ssd/flash_controller.hpp"
#include "ssd/ssd_dram.hpp"

namespace canopy::ssd {
namespace {

using nand::CellMode;
using sc_core::SC_NS;
using sc_core::sc_time;

double us(const sc_time& t) { return t.to_seconds() * 1e6; }

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(g());
    return v;
}

// A register master standing for the SPU's core.
struct Cpu : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Cpu> bus{"bus"};
    explicit Cpu(sc_core::sc_module_name n) : sc_module(n) {}
    void write(uint64_t offset, uint64_t v, unsigned bytes = 4, sc_time at = sc_time()) {
        access(tlm::TLM_WRITE_COMMAND, offset, v, bytes, at);
    }
    uint64_t read(uint64_t offset, unsigned bytes = 4, sc_time at = sc_time()) {
        return access(tlm::TLM_READ_COMMAND, offset, 0, bytes, at);
    }
    uint64_t access(tlm::tlm_command cmd, uint64_t offset, uint64_t v, unsigned bytes, sc_time at) {
        tlm::tlm_generic_payload gp;
        core::set_access(gp, cmd, offset, reinterpret_cast<uint8_t*>(&v), bytes);
        sc_time d = at;
        bus->b_transport(gp, d);
        EXPECT_TRUE(gp.is_response_ok()) << "register at " << offset;
        return v;
    }
};

struct Bench {
    core::Services services;
    nand::NandConfig nand_cfg;
    FlashControllerConfig fc_cfg;
    std::unique_ptr<nand::FlashArray> array;
    std::unique_ptr<SsdDram> dram;
    std::unique_ptr<FlashController> fc;
    std::unique_ptr<Cpu> cpu;
    std::vector<std::pair<bool, sc_time>> irqs;

    explicit Bench(const std::function<void(Bench&)>& tune = {}) {
        nand::Geometry& g = nand_cfg.geometry;
        g.channels = 1;
        g.dies_per_channel = 2;
        g.blocks_per_plane = 64;
        if (tune) tune(*this);
        array = std::make_unique<nand::FlashArray>("nand", nand_cfg, services);
        SsdDramConfig dc;
        dc.size_mib = 16;
        dc.banks = 1;
        dram = std::make_unique<SsdDram>("dram", dc, services);
        fc = std::make_unique<FlashController>("flash0", 0, nand_cfg, services, fc_cfg);
        cpu = std::make_unique<Cpu>("cpu");
        fc->nand.bind(array->channel(0).target);
        fc->dram.bind(dram->socket);
        cpu->bus.bind(fc->socket);
        fc->on_irq([this](bool level, const sc_time& at) { irqs.push_back({level, at}); });
    }

    FlashCommand cmd(FlashOpcode op, uint32_t die, uint32_t block, uint32_t page,
                     uint64_t dram_addr = 0, uint32_t length = 0) const {
        FlashCommand c;
        c.op = op;
        c.die = die;
        c.block = block;
        c.page = page;
        c.dram_addr = dram_addr;
        c.length = length;
        return c;
    }
    // Submits now and runs the simulation to the completion.
    FlashCompletion run(const FlashCommand& c) {
        const FlashCompletion r = fc->submit(c, sc_core::sc_time_stamp());
        sc_core::sc_start(r.done - sc_core::sc_time_stamp() + sc_time(1, SC_NS));
        return r;
    }
    uint32_t page_bytes() const { return nand_cfg.geometry.page_bytes; }
    void put(uint64_t addr, const std::vector<uint8_t>& v) {
        dram->write(addr, v.data(), v.size());
    }
    std::vector<uint8_t> get(uint64_t addr, size_t n) const {
        std::vector<uint8_t> v(n);
        dram->read(addr, v.data(), n);
        return v;
    }
    FlashCompletion program(uint32_t die, uint32_t block, uint32_t page,
                            const std::vector<uint8_t>& data, CellMode mode = CellMode::Tlc,
                            bool raw = false, uint64_t meta = 0) {
        put(0x100000, data);
        FlashCommand c =
            cmd(FlashOpcode::Program, die, block, page, 0x100000, uint32_t(data.size()));
        c.mode = mode;
        c.raw = raw;
        c.meta = meta;
        return run(c);
    }
    FlashCompletion read(uint32_t die, uint32_t block, uint32_t page, uint32_t column,
                         uint32_t length, bool raw = false) {
        FlashCommand c = cmd(FlashOpcode::Read, die, block, page, 0x200000, length);
        c.column = column;
        c.raw = raw;
        return run(c);
    }
    uint64_t stat(const std::string& name) const {
        auto* c = dynamic_cast<const core::Counter*>(services.stats.find("flash0", name));
        return c ? c->value() : ~0ull;
    }
};

// The bytes on the bus of a full normal read: the data, 16 codewords' parity, the metadata
// codeword.
uint32_t normal_read_bytes(const Bench& b) {
    return b.page_bytes() + (b.page_bytes() / 1024) * b.fc->code().parity_bytes() + 8 +
           BchCode(8, b.fc_cfg.ecc.t_bits).parity_bytes();
}

TEST(FlashController, ProgrammedPageReadsBackWithItsMetadata) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const auto data = random_bytes(b.page_bytes(), 1);
    const FlashCompletion p = b.program(1, 3, 0, data, CellMode::Tlc, false, 0x1234'5678'9ABCull);
    ASSERT_EQ(p.status, FlashStatus::Ok) << p.error;
    const FlashCompletion r = b.read(1, 3, 0, 0, b.page_bytes());
    ASSERT_EQ(r.status, FlashStatus::Ok) << r.error;
    EXPECT_EQ(b.get(0x200000, data.size()), data);
    EXPECT_EQ(r.meta, 0x1234'5678'9ABCull);
    EXPECT_EQ(r.corrected_bits, 0u);
    // A partial read at an odd column: only its codewords, de-randomised from their offset.
    const FlashCompletion part = b.read(1, 3, 0, 5000, 777);
    ASSERT_EQ(part.status, FlashStatus::Ok) << part.error;
    EXPECT_EQ(b.get(0x200000, 777), std::vector<uint8_t>(data.begin() + 5000, data.begin() + 5777));
    EXPECT_LT(part.latency_ns, r.latency_ns);
}

// What the cells hold is randomised (ones balanced even for an all-zero page) and carries the
// parity: a raw read shows it, and flipping one bit of it is what the ECC sees.
TEST(FlashController, CellsHoldRandomisedEncodedData) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const std::vector<uint8_t> zeros(b.page_bytes(), 0);
    ASSERT_EQ(b.program(0, 1, 0, zeros).status, FlashStatus::Ok);
    const FlashCompletion raw = b.read(0, 1, 0, 0, b.page_bytes(), true);
    ASSERT_EQ(raw.status, FlashStatus::Ok) << raw.error;
    const auto cells = b.get(0x200000, b.page_bytes());
    uint64_t ones = 0;
    for (uint8_t v : cells) ones += __builtin_popcount(v);
    const double frac = double(ones) / (8.0 * cells.size());
    // 131,072 fair bits: standard deviation 0.0014 of the fraction.
    EXPECT_NEAR(frac, 0.5, 0.01);
    // Descrambling with the page's key gives the zeros back: the scrambler is the controller's.
    Randomiser rnd(b.services.seed ^ 0x52414E44u);
    auto back = cells;
    rnd.apply(rnd.page_key(0, 0, 0, 1, 0), 0, back.data(), back.size());
    EXPECT_EQ(back, zeros);
}

TEST(FlashController, ErasedPageReadsAsOnesAndProgramsAfterErase) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const FlashCompletion r = b.read(0, 2, 5, 0, 4096);
    ASSERT_EQ(r.status, FlashStatus::Ok) << r.error;
    EXPECT_EQ(b.get(0x200000, 4096), std::vector<uint8_t>(4096, 0xFF));
    EXPECT_EQ(r.meta, ~uint64_t(0));
    const auto data = random_bytes(b.page_bytes(), 2);
    ASSERT_EQ(b.program(0, 2, 0, data).status, FlashStatus::Ok);
    const FlashCompletion again = b.program(0, 2, 0, data);
    EXPECT_EQ(again.status, FlashStatus::Refused);
    EXPECT_NE(again.error.find("flash0"), std::string::npos) << again.error;
    EXPECT_NE(again.error.find("die 0"), std::string::npos) << again.error;
    const FlashCompletion e = b.run(b.cmd(FlashOpcode::Erase, 0, 2, 0));
    ASSERT_EQ(e.status, FlashStatus::Ok) << e.error;
    EXPECT_NEAR(e.latency_ns / 1000.0, b.nand_cfg.timing.t_erase_us, 1.0);
    ASSERT_EQ(b.program(0, 2, 0, data).status, FlashStatus::Ok);
    ASSERT_EQ(b.read(0, 2, 0, 0, b.page_bytes()).status, FlashStatus::Ok);
    EXPECT_EQ(b.get(0x200000, data.size()), data);
}

// The ECC against the die's raw bit errors: aged, worn TLC at an RBER where a 1 KiB codeword
// (8,192 + 1,008 bits) expects about 18 errors is corrected, every byte back and the count near
// the expectation; at ten times that (~180 per codeword, beyond t = 72, next test) every codeword
// fails and the read says so.
double rber_at(const nand::NandConfig& c, double pe) {
    return nand::ReliabilityModel(c.reliability)
        .rber(CellMode::Tlc, pe, c.reliability.retention_days, true, 0);
}

TEST(FlashController, EccCorrectsRawErrorsUpToT) {
    Bench b([&](Bench& b) {
        // Pick the wear for an RBER of 2e-3 from the model's own formula (linear in P/E).
        auto& r = b.nand_cfg.reliability;
        const double base = rber_at(b.nand_cfg, 0), slope = rber_at(b.nand_cfg, 1000) - base;
        r.initial_pe_cycles = uint32_t((2e-3 - base) / slope * 1000);
    });
    const double rber = rber_at(b.nand_cfg, b.nand_cfg.reliability.initial_pe_cycles);
    ASSERT_NEAR(rber, 2e-3, 1e-4);
    const auto data = random_bytes(b.page_bytes(), 3);
    ASSERT_EQ(b.program(1, 4, 0, data).status, FlashStatus::Ok);
    uint64_t corrected = 0;
    const int reads = 4;
    for (int i = 0; i < reads; ++i) {
        const FlashCompletion r = b.read(1, 4, 0, 0, b.page_bytes());
        ASSERT_EQ(r.status, FlashStatus::Ok) << r.error;
        EXPECT_EQ(b.get(0x200000, data.size()), data);
        corrected += r.corrected_bits;
    }
    const double expected = rber * 8.0 * normal_read_bytes(b) * reads;
    EXPECT_GT(double(corrected), 0.8 * expected);
    EXPECT_LT(double(corrected), 1.2 * expected);
    EXPECT_EQ(b.stat("corrected_bits"), corrected);
}

TEST(FlashController, EccReportsUncorrectableCodewords) {
    Bench worn([&](Bench& w) {
        auto& r = w.nand_cfg.reliability;
        const double base = rber_at(w.nand_cfg, 0), slope = rber_at(w.nand_cfg, 1000) - base;
        r.initial_pe_cycles = uint32_t((2e-2 - base) / slope * 1000);
    });
    const auto data = random_bytes(worn.page_bytes(), 3);
    ASSERT_EQ(worn.program(0, 4, 0, data).status, FlashStatus::Ok);
    const FlashCompletion bad = worn.read(0, 4, 0, 0, 4096);
    EXPECT_EQ(bad.status, FlashStatus::Uncorrectable);
    // The 4 data codewords (9,200 bits: ~184 errors each); the metadata's 784 bits expect ~16.
    EXPECT_EQ(bad.uncorrectable_codewords, 4u);
    EXPECT_NE(bad.error.find("beyond the ECC's 72 bits"), std::string::npos) << bad.error;
    EXPECT_EQ(worn.stat("uncorrectable"), 1u);
}

// What `f` returns, run in a child process: SystemC elaborates once per process, and a second
// bench in this one would have other module names, hence other random streams.
std::string in_child(const std::function<std::string()>& f) {
    int fd[2];
    if (pipe(fd) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        const std::string out = f();
        for (size_t at = 0; at < out.size();) {
            const ssize_t n = write(fd[1], out.data() + at, out.size() - at);
            if (n <= 0) _exit(1);
            at += size_t(n);
        }
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    close(fd[1]);
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed";
    return out;
}

// The shortcut past the decoder (ssd.flash.ecc.known_error_shortcut: the die's flips undone when
// there are at most t) changes nothing: at an RBER where a 1 KiB codeword expects about 64 errors
// (t = 72), so that some codewords are corrected and some are not, two controllers alike but for
// it read the same pages to the same bytes, counts, outcomes and times: every codeword alone, a
// 3 KiB span across codewords, a cache read of four pages.
TEST(FlashController, KnownErrorShortcutGivesTheDecodersResults) {
    uint32_t ok = 0, failed = 0, corrected = 0;
    auto session = [&](bool shortcut) {
        Bench b([=](Bench& w) {
            auto& r = w.nand_cfg.reliability;
            const double base = rber_at(w.nand_cfg, 0), slope = rber_at(w.nand_cfg, 1000) - base;
            r.initial_pe_cycles = uint32_t((7e-3 - base) / slope * 1000);
            w.fc_cfg.ecc.known_error_shortcut = shortcut;
        });
        std::ostringstream out;
        const uint32_t pages = 4;
        for (uint32_t p = 0; p < pages; ++p)
            EXPECT_EQ(b.program(1, 5, p, random_bytes(b.page_bytes(), 40 + p)).status,
                      FlashStatus::Ok);
        auto keep = [&](const FlashCompletion& r, uint64_t at, uint32_t n) {
            out << "read " << int(r.status) << " corrected " << r.corrected_bits
                << " uncorrectable " << r.uncorrectable_codewords << " in " << r.latency_ns
                << " ns, bytes ";
            for (uint8_t byte : b.get(at, n)) out << int(byte) << ',';
            out << '\n';
            (r.status == FlashStatus::Ok ? ok : failed) += 1;
            corrected += r.corrected_bits;
        };
        for (uint32_t p = 0; p < pages; ++p)
            for (uint32_t k = 0; k < b.page_bytes() / 1024; ++k)
                keep(b.read(1, 5, p, k * 1024, 1024), 0x200000, 1024);
        keep(b.read(1, 5, 2, 1000, 3072), 0x200000, 3072);
        FlashCommand c = b.cmd(FlashOpcode::Read, 1, 5, 0, 0x400000, b.page_bytes());
        c.pages = pages;
        keep(b.run(c), 0x400000, pages * b.page_bytes());
        out << "stats " << b.stat("corrected_bits") << ' ' << b.stat("codewords") << ' '
            << b.stat("uncorrectable");
        return out.str();
    };
    const std::string full = in_child([&] { return session(false); });
    const std::string fast = session(true);
    EXPECT_TRUE(full == fast) << "decoder:\n"
                              << full.substr(0, 2000) << "\nshortcut:\n"
                              << fast.substr(0, 2000);
    // Both ways were taken: codewords within t (undone) and beyond it (the decoder's verdict).
    EXPECT_GT(ok, 10u);
    EXPECT_GT(failed, 3u);
    EXPECT_GT(corrected, 64u * 10);
}

// In-flash computing: raw ESP operands in one block, an intra-block MWS gives their AND exactly
// (ESP at 2x tPROG has no raw errors), the result coming out of the C-latch raw.
TEST(FlashController, MwsOfRawEspOperandsIsExact) {
    Bench b;
    const auto x = random_bytes(b.page_bytes(), 4), y = random_bytes(b.page_bytes(), 5);
    ASSERT_EQ(b.program(0, 7, 0, x, CellMode::Esp, true).status, FlashStatus::Ok);
    ASSERT_EQ(b.program(0, 7, 1, y, CellMode::Esp, true).status, FlashStatus::Ok);
    FlashCommand m = b.cmd(FlashOpcode::Mws, 0, 0, 0, 0x300000, b.page_bytes());
    m.mws = {{7, 0b11}};
    m.mws_flags = nand::iscm::kInitS | nand::iscm::kInitC | nand::iscm::kTransfer;
    const FlashCompletion r = b.run(m);
    ASSERT_EQ(r.status, FlashStatus::Ok) << r.error;
    const auto got = b.get(0x300000, b.page_bytes());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], x[i] & y[i]) << "byte " << i;
    // An MWS costs about one read: tR of the ESP (SLC) page, not two.
    EXPECT_LT(r.latency_ns / 1000.0, 2 * b.nand_cfg.timing.t_read_slc_us);
}

// Timing from the parts: a read is tR, the bus transfer of data, parity and metadata at the
// channel rate, the decoder and the memory write; a program is the memory read, the transfer
// and tPROG. Two dies overlap their array times; one die runs its commands one after the other.
TEST(FlashController, TimingFollowsDiesBusAndDecoder) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const auto& t = b.nand_cfg.timing;
    const double xfer_us = normal_read_bytes(b) / (t.channel_rate_mbps);  // B / (B/us)
    const auto data = random_bytes(b.page_bytes(), 6);
    const FlashCompletion p = b.program(0, 0, 0, data);
    const double page_in_us = b.nand_cfg.geometry.page_total_bytes() / t.channel_rate_mbps;
    EXPECT_GT(p.latency_ns / 1000, t.t_prog_tlc_us + page_in_us);
    EXPECT_LT(p.latency_ns / 1000, t.t_prog_tlc_us + page_in_us + 10);
    const FlashCompletion r = b.read(0, 0, 0, 0, b.page_bytes());
    const double floor_us = t.t_read_tlc_us + xfer_us + b.fc_cfg.ecc.t_decode_ns / 1000;
    EXPECT_GT(r.latency_ns / 1000, floor_us);
    EXPECT_LT(r.latency_ns / 1000, floor_us + 12);  // commands, tCCS, memory write at 3.2 GB/s

    // Two programs on two dies at once: the second waits only for the bus.
    b.put(0x100000, data);
    FlashCommand c0 = b.cmd(FlashOpcode::Program, 0, 0, 1, 0x100000, b.page_bytes());
    FlashCommand c1 = c0;
    c1.die = 1;
    const sc_time now = sc_core::sc_time_stamp();
    const size_t waiting = b.fc->completions(now);  // the program and read above
    const FlashCompletion a = b.fc->submit(c0, now), d = b.fc->submit(c1, now);
    EXPECT_LT(us(d.done - a.done), page_in_us + 2);
    EXPECT_GT(us(d.done - a.done), page_in_us - 2);
    // Two on one die: the second starts when the first ends.
    FlashCommand c2 = c0;
    c2.page = 2;
    const FlashCompletion e = b.fc->submit(c2, now);
    EXPECT_GT(us(e.done - a.done), t.t_prog_tlc_us);
    sc_core::sc_start(e.done - now + sc_time(1, SC_NS));
    EXPECT_EQ(b.fc->completions(sc_core::sc_time_stamp()), waiting + 3);
}

// A cache read of consecutive pages overlaps each page's transfer with the next one's sensing:
// tR + tRCBSY steps + n transfers, where page-by-page reads cost n (tR + transfer).
TEST(FlashController, CacheReadOverlapsSensingWithTransfer) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const uint32_t n = 4;
    std::vector<std::vector<uint8_t>> data;
    for (uint32_t i = 0; i < n; ++i) {
        data.push_back(random_bytes(b.page_bytes(), 20 + i));
        ASSERT_EQ(b.program(1, 6, i, data.back()).status, FlashStatus::Ok);
    }
    FlashCommand c = b.cmd(FlashOpcode::Read, 1, 6, 0, 0x400000, b.page_bytes());
    c.pages = n;
    const FlashCompletion r = b.run(c);
    ASSERT_EQ(r.status, FlashStatus::Ok) << r.error;
    for (uint32_t i = 0; i < n; ++i)
        EXPECT_EQ(b.get(0x400000 + uint64_t(i) * b.page_bytes(), b.page_bytes()), data[i]) << i;
    const auto& t = b.nand_cfg.timing;
    const double xfer_us = normal_read_bytes(b) / t.channel_rate_mbps;
    // tR (TLC) is longer than a transfer (15.4 us): the sensing of pages 1..3 hides the
    // transfers of pages 0..2, so about 4 tR + 1 transfer, against 4 (tR + transfer) apart.
    const double overlapped = n * (t.t_read_tlc_us + t.t_cache_busy_us) + xfer_us;
    EXPECT_GT(r.latency_ns / 1000, overlapped - 1);
    EXPECT_LT(r.latency_ns / 1000, overlapped + 10);
    EXPECT_LT(r.latency_ns / 1000, n * (t.t_read_tlc_us + xfer_us) - (n - 1) * xfer_us / 2);
    // Past the block's end, or across planes, is refused.
    c.page = 46;
    EXPECT_EQ(b.fc->submit(c, sc_core::sc_time_stamp()).status, FlashStatus::Refused);
}

TEST(FlashController, MultiPlaneProgramAndRead) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    auto data = random_bytes(2 * size_t(b.page_bytes()), 7);
    b.put(0x100000, data);
    FlashCommand c = b.cmd(FlashOpcode::Program, 1, 9, 0, 0x100000, b.page_bytes());
    c.planes = 2;
    ASSERT_EQ(b.run(c).status, FlashStatus::Ok);
    FlashCommand r = b.cmd(FlashOpcode::Read, 1, 9, 0, 0x400000, b.page_bytes());
    r.planes = 2;
    const FlashCompletion got = b.run(r);
    ASSERT_EQ(got.status, FlashStatus::Ok) << got.error;
    EXPECT_EQ(b.get(0x400000, data.size()), data);
    // Each plane holds its own half.
    ASSERT_EQ(b.read(1, 9, 0, 0, b.page_bytes()).status, FlashStatus::Ok);  // plane 0
    EXPECT_EQ(b.get(0x200000, b.page_bytes()),
              std::vector<uint8_t>(data.begin(), data.begin() + b.page_bytes()));
}

// Every malformed command is refused before it reaches a die, with a message that names the
// controller, the command and the field; nothing is queued in the die.
TEST(FlashController, MalformedCommandsAreRefusedWithTheirReason) {
    Bench b;
    struct Case {
        const char* what;
        std::function<void(FlashCommand&)> edit;
        const char* message;
    };
    const Case cases[] = {
        {"die", [](FlashCommand& c) { c.die = 2; }, "die 2 is out of range"},
        {"block", [](FlashCommand& c) { c.block = 64; }, "block 64 is out of range"},
        {"page", [](FlashCommand& c) { c.page = 48; }, "page 48 is out of range"},
        {"planes", [](FlashCommand& c) { c.planes = 3; }, "exceed the die's 2"},
        {"length", [](FlashCommand& c) { c.length = 0; }, "read of 0 bytes"},
        {"column", [](FlashCommand& c) { c.column = 16000; }, "is not inside the 16384-byte page"},
        {"opcode", [](FlashCommand& c) { c.op = FlashOpcode(9); }, "unknown opcode 9"},
        {"mws", [](FlashCommand& c) { c.op = FlashOpcode::Mws; }, "MWS with 0 operand slots"},
        {"mode",
         [](FlashCommand& c) {
             c.op = FlashOpcode::Program;
             c.mode = CellMode::Erased;
         },
         "program without a cell mode"},
    };
    for (const Case& k : cases) {
        FlashCommand c = b.cmd(FlashOpcode::Read, 0, 0, 0, 0, 4096);
        k.edit(c);
        const FlashCompletion r = b.fc->submit(c, sc_core::sc_time_stamp());
        EXPECT_EQ(r.status, FlashStatus::Refused) << k.what;
        EXPECT_NE(r.error.find(k.message), std::string::npos) << k.what << ": " << r.error;
        EXPECT_EQ(r.error.rfind("flash0: ", 0), 0u) << r.error;
    }
    EXPECT_EQ(b.stat("refused"), std::size(cases));
    // SSD memory outside its 16 MiB: the bus error is reported.
    FlashCommand far = b.cmd(FlashOpcode::Read, 0, 0, 0, 16ull << 20, 4096);
    const FlashCompletion f = b.run(far);
    EXPECT_EQ(f.status, FlashStatus::Bus);
    EXPECT_NE(f.error.find("SSD memory write at 0x1000000"), std::string::npos) << f.error;
}

TEST(FlashController, FullQueueDropsTheCommandAndSaysSo) {
    Bench b([](Bench& b) { b.fc_cfg.queue_depth = 2; });
    const sc_time now = sc_core::sc_time_stamp();
    FlashCommand e = b.cmd(FlashOpcode::Erase, 0, 1, 0);
    EXPECT_EQ(b.fc->submit(e, now).status, FlashStatus::Ok);
    e.die = 1;
    EXPECT_EQ(b.fc->submit(e, now).status, FlashStatus::Ok);
    const FlashCompletion f = b.fc->submit(e, now);
    EXPECT_EQ(f.status, FlashStatus::Full);
    EXPECT_NE(f.error.find("queue full (2 commands in flight)"), std::string::npos) << f.error;
    EXPECT_EQ(b.fc->in_flight(now), 2u);
    EXPECT_EQ(b.stat("full"), 1u);
    // Once they end, the queue takes commands again.
    sc_core::sc_start(sc_time(b.nand_cfg.timing.t_erase_us + 10, sc_core::SC_US));
    EXPECT_EQ(b.fc->in_flight(sc_core::sc_time_stamp()), 0u);
    EXPECT_EQ(b.fc->submit(e, sc_core::sc_time_stamp()).status, FlashStatus::Ok);
}

// Firmware's view: the command in registers, submit, the completion queue read at the core's
// local time, pop, and the interrupt while completions wait.
TEST(FlashController, RegistersQueueCommandsAndCompletions) {
    Bench b([](Bench& b) { b.nand_cfg.reliability.inject_errors = false; });
    const core::RegisterMap map = FlashController::register_map();
    auto off = [&](const char* r) { return map.find(r)->offset; };
    const auto data = random_bytes(b.page_bytes(), 8);
    b.put(0x10000, data);
    Cpu& cpu = *b.cpu;
    // The geometry registers tell firmware the channel it drives.
    EXPECT_EQ(cpu.read(off("geo_dies")), b.nand_cfg.geometry.dies_per_channel);
    EXPECT_EQ(cpu.read(off("geo_planes")), b.nand_cfg.geometry.planes_per_die);
    EXPECT_EQ(cpu.read(off("geo_blocks")), b.nand_cfg.geometry.blocks_per_plane);
    EXPECT_EQ(cpu.read(off("geo_pages")), b.nand_cfg.geometry.wordlines_per_block);
    EXPECT_EQ(cpu.read(off("geo_page_bytes")), b.page_bytes());
    cpu.write(off("irq_enable"), 1);
    cpu.write(off("die"), 1);
    cpu.write(off("block"), 5);
    cpu.write(off("page"), 0);
    cpu.write(off("dram_addr"), 0x10000, 8);
    cpu.write(off("length"), b.page_bytes());
    cpu.write(off("meta"), 0xCAFE, 8);
    cpu.write(off("command"), 2 | (2 << 4) | (0x77u << 16));  // program, TLC, tag 0x77
    EXPECT_EQ(cpu.read(off("sq_free")), b.fc_cfg.queue_depth);
    cpu.write(off("submit"), 1);
    EXPECT_EQ(cpu.read(off("sq_free")), b.fc_cfg.queue_depth - 1);
    EXPECT_EQ(cpu.read(off("cq_count")), 0u);
    // A core running ahead of the kernel sees the completion at its local time.
    const sc_time later(1, sc_core::SC_MS);
    EXPECT_EQ(cpu.read(off("cq_count"), 4, later), 1u);
    EXPECT_EQ(cpu.read(off("cq_tag"), 4, later), 0x77u);
    EXPECT_EQ(cpu.read(off("cq_status"), 4, later), uint64_t(FlashStatus::Ok));
    const uint64_t lat = cpu.read(off("cq_latency_ns"), 4, later);
    EXPECT_GT(lat, uint64_t(b.nand_cfg.timing.t_prog_tlc_us * 1000));
    ASSERT_EQ(b.irqs.size(), 1u);
    EXPECT_TRUE(b.irqs[0].first);
    EXPECT_NEAR(us(b.irqs[0].second), lat / 1000.0 + 0.05, 0.1);  // at the completion, to an access
    cpu.write(off("cq_pop"), 1, 4, later);
    EXPECT_EQ(cpu.read(off("cq_count"), 4, later), 0u);
    ASSERT_EQ(b.irqs.size(), 2u);
    EXPECT_FALSE(b.irqs[1].first);
    // Read it back through the registers: status and metadata.
    cpu.write(off("dram_addr"), 0x80000, 8, later);
    cpu.write(off("command"), 1 | (0x78u << 16), 4, later);
    cpu.write(off("submit"), 1, 4, later);
    const sc_time end = later + sc_time(1, sc_core::SC_MS);
    EXPECT_EQ(cpu.read(off("cq_tag"), 4, end), 0x78u);
    EXPECT_EQ(cpu.read(off("cq_meta"), 8, end), 0xCAFEu);
    EXPECT_EQ(b.get(0x80000, data.size()), data);
    // The interrupt thread raises the line when the kernel reaches the completion.
    sc_core::sc_start(end);
    EXPECT_TRUE(b.irqs.back().first);
}

TEST(FlashController, SpareTooSmallForTheCodeIsAConfigError) {
    try {
        Bench b([](Bench& b) { b.fc_cfg.ecc.t_bits = 80; });
        FAIL() << "built a controller whose parity does not fit";
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "config");
        EXPECT_NE(e.place().find("ssd.flash.ecc"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("the page has 2208"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace canopy::ssd
