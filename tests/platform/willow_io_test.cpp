// The block I/O SSD Apps on the whole platform (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"):
// every SPU boots SPU-OS, a host program in the kernel's role installs Base-IO
// (sw/firmware/apps/block_io.c built kernel-only) and Direct-IO (the same code for user processes)
// from their ELFs with sw::WillowApps, and host programs move data with sw::BlockIo through their
// HREs. Checked: striped writes land in the SSD memory where the striping rule says and read back
// equal, copied and in place; Base-IO refuses a user's HRE; Direct-IO refuses a user without
// permission (and the kernel hears of it) until the kernel grants the extent; a range outside the
// device is refused before anything is sent. Latencies of single READs are recorded as test
// properties. Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/block_io.hpp"
#include "sw/host/hre.hpp"
#include "sw/host/willow_apps.hpp"
#include "sw/host/willow_driver.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;  // firmware, pattern, refusal, wait_for, WillowMachine

constexpr unsigned kSpus = 4;
constexpr uint32_t kBaseIo = 3, kDirectIo = 4;  // app ids the host kernel gives them
constexpr uint32_t kBaseIoSlot = WillowStack::kBaseIoSlot,
                   kDirectIoSlot = WillowStack::kDirectIoSlot;
constexpr uint64_t kStripe = BLOCK_IO_STRIPE_BYTES;

// Where device offset `o` lives, by the striping rule (block_io_abi.h), written out here rather
// than taken from BlockGeometry::locate so that the test checks it.
uint64_t nvm_of(uint64_t o, uint64_t bank_bytes) {
    const uint64_t spu = (o / kStripe) % kSpus, row = o / (kStripe * kSpus);
    return spu * bank_bytes + row * kStripe + o % kStripe;
}

struct IoMachine : willow_test::WillowMachine {
    sw::WillowDriver driver;
    sw::HreEndpoint kernel_hre;
    host::HostKernel::Process& kernel;
    host::HostKernel::Process& user;
    // `interrupts`: the driver sets up queue pairs that raise their MSI (host.msi) per completion.
    explicit IoMachine(const std::function<void(PlatformConfig&)>& tweak = nullptr,
                       bool interrupts = false)
        : WillowMachine(kSpus, tweak),
          driver(platform->willow_device(interrupts), sw::HreLayout(),
                 sw::WillowDriverConfig::with_interrupts(interrupts)),
          kernel(platform->host.kernel.create_process("kernel")),
          user(platform->host.kernel.create_process("user")) {}
    sw::BlockGeometry geometry() {
        sw::BlockGeometry g;
        g.spus = kSpus;
        g.bank_bytes = ssd().dram.bank_bytes();
        g.stripe_bytes = uint32_t(kStripe);
        return g;
    }
    // What the SSD memory holds for device range [offset, offset + n), byte by byte.
    std::vector<uint8_t> device(uint64_t offset, size_t n) {
        std::vector<uint8_t> b(n);
        for (size_t i = 0; i < n; ++i)
            ssd().dram.read(nvm_of(offset + i, ssd().dram.bank_bytes()), &b[i], 1);
        return b;
    }
    // The host kernel's program: opens its HRE (queue pair 0, where SPU-OS's notices go), installs
    // both apps on every SPU, then runs `then`.
    template <class F>
    void run_kernel(F then) {
        platform->host.cores[0]->run(kernel, [this, then](host::HostCore& cpu) {
            kernel_hre = driver.open(cpu, /*kernel=*/true);
            sw::Hre hre(cpu, kernel_hre);
            sw::WillowApps apps(hre, kSpus);
            apps.install(firmware("app_base_io"), kBaseIo, kBaseIoSlot);
            apps.install(firmware("app_direct_io"), kDirectIo, kDirectIoSlot);
            then(cpu, hre, apps);
        });
    }
    void run_user(std::function<void(host::HostCore&)> program) {
        platform->host.cores[1]->run(user, std::move(program));
    }
    void simulate() {
        sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
        EXPECT_EQ(platform->host.first_fault(), "");
    }
};

double since_ns(host::HostCore& cpu, sc_core::sc_time t0) {
    return (cpu.now() - t0).to_seconds() * 1e9;
}

TEST(PlatformWillowIo, BaseIoStripesAWriteOverTheSpusAndReadsItBackCopiedAndInPlace) {
    IoMachine m;
    // Unaligned start, 40 KiB: 7,192 B on SPU 3, four whole stripe units on SPUs 0..3 of the next
    // row, 1,000 B on SPU 0 of the row after.
    const uint64_t offset = 3 * kStripe + 1000, bytes = 40 * 1024;
    const std::vector<uint8_t> data = pattern(bytes, 13);
    std::vector<uint8_t> copied, in_place(bytes);
    std::vector<unsigned> in_place_hits(bytes, 0);
    bool done = false, in_rx_buffer = true;
    double read8k_ns = 0, read4k_ns = 0, read8k_in_place_ns = 0, read4k_in_place_ns = 0,
           write8k_ns = 0;
    m.run_kernel([&](host::HostCore& cpu, sw::Hre& hre, sw::WillowApps&) {
        sw::BlockIo io(hre, kBaseIo, m.geometry());
        io.write(offset, data.data(), bytes);
        copied.resize(bytes);
        io.read(offset, copied.data(), bytes);
        const uint64_t rx = m.kernel_hre.window_va + m.kernel_hre.layout.rx_offset();
        io.read_in_place(offset, bytes, [&](uint64_t at, uint64_t va, uint32_t n) {
            in_rx_buffer &= va >= rx && va + n <= rx + m.kernel_hre.layout.rx_bytes;
            for (uint32_t i = 0; i < n; i += 64)  // the host core loads up to a line at once
                cpu.load(va + i, in_place.data() + (at - offset) + i, std::min(64u, n - i));
            for (uint32_t i = 0; i < n; ++i) ++in_place_hits[at - offset + i];
        });
        // Single RPCs as the host sees them: one stripe unit, and 4 KiB.
        std::vector<uint8_t> b(kStripe);
        sc_core::sc_time t0 = cpu.now();
        io.read(4 * kStripe, b.data(), kStripe);
        read8k_ns = since_ns(cpu, t0);
        t0 = cpu.now();
        io.read(4 * kStripe, b.data(), 4096);
        read4k_ns = since_ns(cpu, t0);
        t0 = cpu.now();
        io.read_in_place(4 * kStripe, kStripe, [](uint64_t, uint64_t, uint32_t) {});
        read8k_in_place_ns = since_ns(cpu, t0);
        t0 = cpu.now();
        io.read_in_place(4 * kStripe, 4096, [](uint64_t, uint64_t, uint32_t) {});
        read4k_in_place_ns = since_ns(cpu, t0);
        t0 = cpu.now();
        io.write(4 * kStripe, b.data(), kStripe);
        write8k_ns = since_ns(cpu, t0);
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    EXPECT_TRUE(in_rx_buffer);
    EXPECT_EQ(m.device(offset, bytes), data);
    // The pieces' ends by the rule: SPU 3 of row 0, SPUs 0..3 of row 1, SPU 0 of row 2.
    const uint64_t bank = m.ssd().dram.bank_bytes();
    EXPECT_EQ(m.nvm(3 * bank + 1000, 4), std::vector<uint8_t>(data.begin(), data.begin() + 4));
    EXPECT_EQ(m.nvm(0 * bank + kStripe, 4),
              std::vector<uint8_t>(data.begin() + 7192, data.begin() + 7196));
    EXPECT_EQ(m.nvm(0 * bank + 2 * kStripe + 999, 1), std::vector<uint8_t>{data.back()});
    EXPECT_EQ(m.nvm(0 * bank + 2 * kStripe + 1000, 1), std::vector<uint8_t>{0});  // past the end
    EXPECT_EQ(copied, data);
    EXPECT_EQ(in_place, data);
    EXPECT_EQ(in_place_hits, std::vector<unsigned>(bytes, 1));  // every byte handed once
    std::printf(
        "[ Block IO ] Base-IO from the kernel HRE: READ 8 KiB %.0f ns (in place %.0f ns), "
        "4 KiB %.0f ns (in place %.0f ns); WRITE 8 KiB %.0f ns\n",
        read8k_ns, read8k_in_place_ns, read4k_ns, read4k_in_place_ns, write8k_ns);
    ::testing::Test::RecordProperty("read_8k_ns", int(read8k_ns));
    ::testing::Test::RecordProperty("read_8k_in_place_ns", int(read8k_in_place_ns));
    ::testing::Test::RecordProperty("read_4k_ns", int(read4k_ns));
    ::testing::Test::RecordProperty("read_4k_in_place_ns", int(read4k_in_place_ns));
    ::testing::Test::RecordProperty("write_8k_ns", int(write8k_ns));
}

// Completions by interrupt: an HRE with nothing to do sleeps until its queue pair's MSI. The same
// 4 KiB Base-IO read through an HRE that sleeps and one that polls (its MSIs ignored) returns the
// same bytes; the sleeper pays at least one MSI flight and one wake-up more (at most two per
// read: the DATA request and the response each end a wait).
TEST(PlatformWillowIo, CompletionsByInterruptWakeASleepingHre) {
    IoMachine m(nullptr, /*interrupts=*/true);
    const std::vector<uint8_t> data = pattern(4 * kStripe, 3);
    bool done = false;
    double sleeping_ns = 0, polling_ns = 0;
    uint64_t msis = 0, completions_read = 0;
    std::vector<uint8_t> by_irq(4096), by_poll(4096);
    m.run_kernel([&](host::HostCore& cpu, sw::Hre& hre, sw::WillowApps&) {
        EXPECT_TRUE(m.kernel_hre.interrupts);
        sw::BlockIo io(hre, kBaseIo, m.geometry());
        io.write(0, data.data(), data.size());
        sw::HreEndpoint polled = m.driver.open(cpu, /*kernel=*/true);
        polled.interrupts = false;
        sw::Hre poller(cpu, polled);
        sw::BlockIo pio(poller, kBaseIo, m.geometry());
        const uint64_t before = m.platform->host.msi.count(m.kernel_hre.qp);
        sc_core::sc_time t0 = cpu.now();
        io.read(kStripe, by_irq.data(), 4096);
        sleeping_ns = since_ns(cpu, t0);
        msis = m.platform->host.msi.count(m.kernel_hre.qp) - before;
        completions_read = 2;  // the DATA request and the READ's response
        t0 = cpu.now();
        pio.read(kStripe, by_poll.data(), 4096);
        polling_ns = since_ns(cpu, t0);
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    const std::vector<uint8_t> want(data.begin() + kStripe, data.begin() + kStripe + 4096);
    EXPECT_EQ(by_irq, want);
    EXPECT_EQ(by_poll, want);
    EXPECT_EQ(msis, completions_read);  // one MSI per completion-queue entry
    const host::MsiConfig& c = m.cfg.host.msi;
    const double one = c.msi_latency_ns + c.wake_ns;
    EXPECT_GT(sleeping_ns - polling_ns, one - 200) << sleeping_ns << " vs " << polling_ns;
    EXPECT_LT(sleeping_ns - polling_ns, 2 * one + 200) << sleeping_ns << " vs " << polling_ns;
    std::printf("[ Block IO ] 4 KiB Base-IO READ: %.0f ns sleeping on MSIs, %.0f ns polling\n",
                sleeping_ns, polling_ns);
}

TEST(PlatformWillowIo, BaseIoRefusesAUserProcess) {
    IoMachine m;
    const uint64_t offset = kStripe / 2, bytes = 3 * kStripe;
    bool installed = false, done = false, no_data = false;
    std::string write_why, read_why;
    m.run_kernel([&](host::HostCore&, sw::Hre&, sw::WillowApps&) { installed = true; });
    m.run_user([&](host::HostCore& cpu) {
        wait_for(cpu, installed);
        sw::Hre hre(cpu, m.driver.open(cpu));
        sw::BlockIo io(hre, kBaseIo, m.geometry());
        std::vector<uint8_t> b = pattern(bytes, 5);
        write_why = refusal([&] { io.write(offset, b.data(), bytes); });
        read_why = refusal([&] { io.read(offset, b.data(), bytes); });
        no_data = !hre.try_receive().has_value();  // no DATA request reached the user
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    for (const std::string& why : {write_why, read_why}) {
        EXPECT_NE(why.find("block I/O app " + std::to_string(kBaseIo)), std::string::npos) << why;
        EXPECT_NE(why.find("SPU_OS_E_KERNEL_ONLY"), std::string::npos) << why;
        EXPECT_NE(why.find("device offset 0x"), std::string::npos) << why;
    }
    EXPECT_NE(write_why.find("WRITE of"), std::string::npos) << write_why;
    EXPECT_NE(read_why.find("READ of"), std::string::npos) << read_why;
    EXPECT_TRUE(no_data);
    EXPECT_EQ(m.device(offset, bytes), std::vector<uint8_t>(bytes, 0));
}

TEST(PlatformWillowIo, DirectIoServesAUserOnlyInsideTheExtentsTheKernelGranted) {
    IoMachine m;
    // 24 KiB from SPU 1's unit of row 1 to 300 B on SPU 0 of row 2.
    const uint64_t offset = 5 * kStripe + 300, bytes = 3 * kStripe;
    const std::vector<uint8_t> data = pattern(bytes, 11);
    bool installed = false, refused = false, granted = false, done = false;
    bool no_data = false, nothing_written = false;
    std::string write_why, read_why;
    std::vector<uint8_t> back(bytes);
    sw::SpuNotice miss;
    // The extent the range covers in each SPU's bank: contiguous by the striping rule.
    const uint64_t bank = m.ssd().dram.bank_bytes();
    std::vector<uint64_t> lo(kSpus, ~uint64_t(0)), hi(kSpus, 0);
    for (uint64_t o = offset; o < offset + bytes; ++o) {
        const uint64_t a = nvm_of(o, bank), spu = a / bank;
        lo[spu] = std::min(lo[spu], a);
        hi[spu] = std::max(hi[spu], a + 1);
    }
    m.run_kernel([&](host::HostCore& cpu, sw::Hre&, sw::WillowApps& apps) {
        installed = true;
        miss = apps.next_notice();
        wait_for(cpu, refused);
        for (unsigned s = 0; s < kSpus; ++s) {
            EXPECT_EQ(hi[s] - lo[s], s == 0 ? 300u : s == 1 ? kStripe - 300 : kStripe);
            apps.grant(m.user.pid, uint32_t(lo[s]), uint32_t(hi[s] - lo[s]),
                       SPU_OS_PERM_READ | SPU_OS_PERM_WRITE, {s});
        }
        granted = true;
    });
    m.run_user([&](host::HostCore& cpu) {
        wait_for(cpu, installed);
        sw::Hre hre(cpu, m.driver.open(cpu));
        sw::BlockIo io(hre, kDirectIo, m.geometry());
        write_why = refusal([&] { io.write(offset, data.data(), bytes); });
        read_why = refusal([&] { io.read(offset, back.data(), bytes); });
        no_data = !hre.try_receive().has_value();
        nothing_written = m.device(offset, bytes) == std::vector<uint8_t>(bytes, 0);
        refused = true;
        wait_for(cpu, granted);
        io.write(offset, data.data(), bytes);
        io.read(offset, back.data(), bytes);
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    EXPECT_NE(write_why.find("SPU_OS_E_PERMISSION"), std::string::npos) << write_why;
    EXPECT_NE(read_why.find("SPU_OS_E_PERMISSION"), std::string::npos) << read_why;
    EXPECT_TRUE(no_data);  // a READ refused midway sends no DATA at all
    EXPECT_TRUE(nothing_written);
    EXPECT_TRUE(miss.perm_miss());  // the kernel heard of the first refusal
    EXPECT_EQ(miss.words[1], m.user.pid);
    EXPECT_EQ(miss.words[2], kDirectIo);
    EXPECT_EQ(miss.words[5], SPU_OS_PERM_WRITE);
    EXPECT_EQ(back, data);
    EXPECT_EQ(m.device(offset, bytes), data);
}

TEST(PlatformWillowIo, ARangeOutsideTheDeviceIsRefusedBeforeAnythingIsSent) {
    IoMachine m;
    bool done = false;
    std::vector<std::string> why;
    uint16_t tag_before = 0, tag_after = 0;
    std::vector<uint8_t> last;
    m.run_kernel([&](host::HostCore&, sw::Hre& hre, sw::WillowApps&) {
        sw::BlockIo io(hre, kBaseIo, m.geometry());
        const uint64_t end = io.geometry().device_bytes();
        std::vector<uint8_t> b(200);
        // Tags count the requests this HRE sent: none may go out between the two PINGs.
        tag_before = hre.send(0, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_PING), nullptr, 0);
        hre.wait(tag_before);
        why.push_back(refusal([&] { io.read(end - 100, b.data(), 200); }));
        why.push_back(refusal([&] { io.write(end, b.data(), 1); }));
        why.push_back(refusal([&] { io.read(~uint64_t(0), b.data(), 2); }));
        tag_after = hre.send(0, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_PING), nullptr, 0);
        hre.wait(tag_after);
        last.resize(100);
        io.read(end - 100, last.data(), 100);  // up to the end is fine
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    EXPECT_EQ(tag_after, uint16_t(tag_before + 1));
    ASSERT_EQ(why.size(), 3u);
    for (const std::string& w : why) EXPECT_NE(w.find("outside the"), std::string::npos) << w;
    EXPECT_EQ(last, std::vector<uint8_t>(100, 0));
}

// With SPUs whose network interface holds one 4 KiB WRITE (6 KiB receive buffer) and a client
// that does not hold WRITEs back per SPU, the ring drops the WRITEs that do not fit (NACKs) and
// the client sends them again: the data still lands whole.
TEST(PlatformWillowIo, WritesAnSpuCannotBufferAreDroppedAndSentAgain) {
    IoMachine m([](PlatformConfig& c) { c.ssd.ni.rx_buffer_bytes = 6 * 1024; });
    const uint64_t offset = 0, bytes = 16 * kStripe;  // four stripe units on each SPU
    const std::vector<uint8_t> data = pattern(bytes, 7);
    bool done = false;
    m.run_kernel([&](host::HostCore&, sw::Hre& hre, sw::WillowApps&) {
        sw::BlockIoConfig greedy;
        greedy.spu_write_bytes = uint32_t(bytes);
        greedy.max_piece_bytes = 4096;
        sw::BlockIo io(hre, kBaseIo, m.geometry(), greedy);
        io.write(offset, data.data(), bytes);
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    EXPECT_EQ(m.device(offset, bytes), data);
    uint64_t nacks = 0;
    for (const auto& spu : m.ssd().spus)
        if (auto* k = dynamic_cast<const core::Counter*>(
                m.services.stats.find(std::string(spu->name()) + ".ni", "nacks_sent")))
            nacks += k->value();
    EXPECT_GT(nacks, 0u);
    ::testing::Test::RecordProperty("nacks", int(nacks));
}

// The HRE's in-place receive: three DATA requests held at once, checked where they lie, handed
// back out of order (the RX head passes only leading released pieces) and one twice (refused);
// then more READ data than the receive buffer holds (256 KiB) goes through it, which works only
// if every piece's space came back.
TEST(PlatformWillowIo, InPlaceRequestsAreReleasedInAnyOrder) {
    IoMachine m;
    const std::vector<uint8_t> data = pattern(3 * kStripe, 3);
    bool done = false, matched = true;
    std::string twice;
    std::vector<uint32_t> results;
    uint64_t streamed = 0;
    m.run_kernel([&](host::HostCore&, sw::Hre& hre, sw::WillowApps&) {
        sw::BlockIo io(hre, kBaseIo, m.geometry());
        io.write(0, data.data(), data.size());  // one stripe unit on each of SPUs 0..2
        std::vector<uint16_t> tags;
        for (uint32_t s = 0; s < 3; ++s) {
            const block_io_read_args a{uint32_t(s * m.ssd().dram.bank_bytes()), uint32_t(kStripe),
                                       100 + s};
            tags.push_back(
                hre.send(uint8_t(s), SPU_OS_RPC_ID(kBaseIo, BLOCK_IO_READ), &a, sizeof a));
        }
        std::vector<sw::Hre::Request> held;
        for (int i = 0; i < 3; ++i)
            held.push_back(hre.receive_in_place(SPU_OS_RPC_ID(kBaseIo, BLOCK_IO_DATA)));
        for (const sw::Hre::Request& r : held) {
            block_io_data d{};
            hre.copy_payload(r, 0, &d, sizeof d);
            std::vector<uint8_t> got(kStripe);
            hre.copy_payload(r, sizeof d, got.data(), uint32_t(kStripe));
            const size_t unit = d.cookie - 100;
            matched &= unit < 3 && r.node == unit && d.bytes == kStripe &&
                       std::equal(got.begin(), got.end(), data.begin() + unit * kStripe);
        }
        for (int i : {1, 2, 0}) hre.release(held[i]);
        twice = refusal([&] { hre.release(held[1]); });
        for (const sw::Hre::Request& r : held) hre.respond(r, BLOCK_IO_OK);
        for (uint16_t t : tags) results.push_back(hre.wait(t).result);
        io.read_in_place(0, 320 * 1024, [&](uint64_t, uint64_t, uint32_t n) { streamed += n; });
        done = true;
    });
    m.simulate();
    ASSERT_TRUE(done);
    EXPECT_TRUE(matched);
    EXPECT_NE(twice.find("does not hold"), std::string::npos) << twice;
    EXPECT_EQ(results, std::vector<uint32_t>(3, BLOCK_IO_OK));
    EXPECT_EQ(streamed, 320u * 1024);
}

}  // namespace
#endif
}  // namespace canopy::platform
