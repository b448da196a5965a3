// The Atomic-Writes SSD App (Willow Section 4.3; sw/firmware/apps/atomic_writes.c,
// sw/host/atomic_writes) on the whole platform with real firmware: the host kernel installs it and
// sets up its logs on every SPU, a user process opens a file with libDirectIO and runs
// transactions over it. Checked: nothing reaches the file before COMMIT, and everything after;
// transactions across SPUs (two-phase commit); LOGWRITECOMMIT and VECTORLOGWRITE; an edit of a
// logged range; ABORT; the refusals (a file opened read-only, a full log, every slot busy, a
// transaction the SPU does not know, peer RPCs from the host); permission entries SPU-OS loses
// (evicted) mid-transaction, granted again by the kernel while the library retries. Each TEST
// elaborates once (its own process).
#include <gtest/gtest.h>

#include <fcntl.h>

#include <memory>
#include <string>
#include <vector>

#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/atomic_writes_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 4;
constexpr uint64_t kFile = 64 * 1024;  // 8 stripe units: two on every SPU

// Four SPUs storing in SSD memory (the prototype's PCM emulation), so that runs stay short; a
// user process with a file opened through libDirectIO and the Atomic-Writes library over it.
struct AwMachine : StackMachine {
    AwMachine() : StackMachine(kSpus, nullptr) {}
    void run(
        const std::function<void(host::HostCore&, sw::DirectIo&, sw::AtomicWrites&, int)>& body,
        int flags = O_RDWR) {
        user([&](host::HostCore& cpu) {
            stack->fs.create(cpu, "/db", kFile, cpu.process().pid, 0600);
            auto dio = stack->direct_io(cpu);
            const int fd = dio->open("/db", flags);
            auto aw = stack->atomic_writes(cpu, *dio);
            body(cpu, *dio, *aw, fd);
        });
    }
};

std::vector<uint8_t> read(sw::DirectIo& dio, int fd, uint64_t at, uint64_t n) {
    std::vector<uint8_t> v(n);
    EXPECT_EQ(dio.pread(fd, v.data(), n, at), n);
    return v;
}

TEST(AtomicWrites, NothingBeforeCommitEverythingAfterAcrossSpus) {
    AwMachine m;
    m.run([&](host::HostCore&, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
        const std::vector<uint8_t> before = pattern(kFile, 3);
        dio.pwrite(fd, before.data(), kFile, 0);
        // Three writes: one inside SPU 0's first unit, one across the units of SPUs 1 and 2,
        // one on SPU 3; the file's image with them applied.
        const std::vector<uint8_t> a = pattern(700, 5), b = pattern(5000, 7), c = pattern(64, 11);
        const uint64_t at_a = 100, at_b = 2 * 8192 - 2000, at_c = 3 * 8192 + 4000;
        std::vector<uint8_t> after = before;
        std::copy(a.begin(), a.end(), after.begin() + at_a);
        std::copy(b.begin(), b.end(), after.begin() + at_b);
        std::copy(c.begin(), c.end(), after.begin() + at_c);
        const uint32_t tx = aw.begin();
        aw.write(tx, fd, at_a, a.data(), a.size());
        aw.write(tx, fd, at_b, b.data(), b.size());
        aw.write(tx, fd, at_c, c.data(), c.size());
        EXPECT_EQ(read(dio, fd, 0, kFile), before);  // logged, not applied
        const uint64_t rpcs = aw.stats().rpcs;
        aw.commit(tx);
        EXPECT_EQ(aw.stats().rpcs, rpcs + 1);  // one COMMIT: the coordinator does the rest
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
        // The transaction is gone: committing or writing it again is the library's refusal.
        EXPECT_NE(refusal([&] { aw.commit(tx); }).find("not open"), std::string::npos);
        // An aborted one leaves no trace, and its slots serve the next.
        const uint32_t t2 = aw.begin();
        const std::vector<uint8_t> d = pattern(3 * 8192, 13);
        aw.write(t2, fd, 0, d.data(), d.size());
        aw.abort(t2);
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
        EXPECT_EQ(aw.stats().aborts, 1u);
        for (unsigned i = 0; i < 2 * AW_SLOTS; ++i) {
            const uint32_t t = aw.begin();
            aw.write(t, fd, i * 97, d.data(), 8192);
            aw.commit(t);
            std::copy(d.begin(), d.begin() + 8192, after.begin() + i * 97);
        }
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
    });
}

// SPU-OS's 768-entry table may evict any permission entry. The file's entry on a participant,
// lost between LOGWRITE and COMMIT, fails its APPLY after the commit point: the coordinator
// answers AW_E_INCOMPLETE, the kernel's notice thread grants the range again, and the library's
// COMMIT again finishes the transaction. The log region's entry, lost before a LOGWRITE, is an
// app region the kernel gave the process: granted again the same way, the LOGWRITE retried.
TEST(AtomicWrites, LostPermissionEntriesAreGrantedAgainAndTheCommitFinishes) {
    AwMachine m;
    m.run([&](host::HostCore& cpu, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
        std::vector<uint8_t> after = read(dio, fd, 0, kFile);
        const std::vector<uint8_t> a = pattern(500, 3), b = pattern(600, 5), c = pattern(64, 7);
        const uint64_t at_a = 100, at_b = 8192 + 200;  // SPU 0 (the coordinator), SPU 1
        std::copy(a.begin(), a.end(), after.begin() + at_a);
        std::copy(b.begin(), b.end(), after.begin() + at_b);
        const uint32_t pid = cpu.process().pid;
        sw::WillowApps& apps = *m.stack->kernel.on(cpu).apps;  // the test in the kernel's role
        const uint32_t tx = aw.begin();
        aw.write(tx, fd, at_a, a.data(), a.size());
        aw.write(tx, fd, at_b, b.data(), b.size());
        // SPU 1's entry of the file (granted from the start of the file's range there).
        const sw::BlockGeometry& g = m.stack->kernel.on(cpu).base_io->geometry();
        const auto& extent = m.stack->fs.inode(*m.stack->fs.lookup("/db")).extents.at(0);
        for (const sw::NvmRange& r : sw::nvm_ranges(g, extent.device_offset, extent.bytes))
            if (r.spu == 1) apps.revoke(pid, r.nvm, {1});
        const uint64_t regranted = m.stack->module.stats().regranted;
        aw.commit(tx);
        EXPECT_GE(aw.stats().finishes, 1u);
        EXPECT_GT(m.stack->module.stats().regranted, regranted);
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
        // The log region on SPU 1 goes; the next LOGWRITE there is refused, then retried.
        apps.revoke(pid, m.stack->aw_base(1), {1});
        const uint64_t retries = aw.stats().retries;
        const uint32_t t2 = aw.begin();
        aw.write(t2, fd, at_b, c.data(), c.size());
        aw.commit(t2);
        std::copy(c.begin(), c.end(), after.begin() + at_b);
        EXPECT_GT(aw.stats().retries, retries);
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
        EXPECT_EQ(m.stack->module.stats().unresolved, 0u);
    });
}

// LOGWRITECOMMIT saves the COMMIT round trip; VECTORLOGWRITE sends a batch in one RPC per SPU;
// a write of a range the transaction logged already replaces its data (the later one wins).
TEST(AtomicWrites, LogWriteCommitVectorsAndEdits) {
    AwMachine m;
    m.run([&](host::HostCore&, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
        std::vector<uint8_t> image = read(dio, fd, 0, kFile);
        auto apply = [&](uint64_t at, const std::vector<uint8_t>& d) {
            std::copy(d.begin(), d.end(), image.begin() + at);
        };
        const std::vector<uint8_t> x = pattern(1000, 3), y = pattern(1000, 5), z = pattern(300, 9);
        uint32_t tx = aw.begin();
        uint64_t rpcs = aw.stats().rpcs;
        aw.write_commit(tx, fd, 8192 + 10, x.data(), x.size());  // all on SPU 1
        EXPECT_EQ(aw.stats().rpcs, rpcs + 1);
        apply(8192 + 10, x);
        EXPECT_EQ(read(dio, fd, 0, kFile), image);
        // Eight records over SPUs 0 and 2 in one batch: one VECTORLOGWRITE each, then COMMIT.
        tx = aw.begin();
        std::vector<sw::AtomicWrites::Update> batch;
        for (uint64_t i = 0; i < 8; ++i) {
            const uint64_t at = (i % 2 ? 2 * 8192 : 0) + i * 500;
            batch.push_back({fd, at, z.data(), z.size()});
            apply(at, z);
        }
        rpcs = aw.stats().rpcs;
        aw.write(tx, batch);
        EXPECT_EQ(aw.stats().rpcs, rpcs + 2);
        // An edit: the same range again, other data.
        aw.write(tx, fd, 0, y.data(), z.size());
        apply(0, std::vector<uint8_t>(y.begin(), y.begin() + z.size()));
        aw.write_commit(tx, fd, 5000, y.data(), y.size());  // on SPU 0, the coordinator
        apply(5000, y);
        EXPECT_EQ(read(dio, fd, 0, kFile), image);
        // A last write on another SPU than the coordinator: LOGWRITE, then COMMIT.
        tx = aw.begin();
        aw.write(tx, fd, 10, x.data(), 10);
        rpcs = aw.stats().rpcs;
        aw.write_commit(tx, fd, 3 * 8192, x.data(), x.size());
        EXPECT_EQ(aw.stats().rpcs, rpcs + 2);
        apply(10, std::vector<uint8_t>(x.begin(), x.begin() + 10));
        apply(3 * 8192, x);
        EXPECT_EQ(read(dio, fd, 0, kFile), image);
    });
}

// A file opened read-only is no target (SPU-OS's own check at LOGWRITE: the raw-RPC test).
TEST(AtomicWrites, AReadOnlyFileIsNoTarget) {
    AwMachine m;
    m.run(
        [&](host::HostCore&, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
            const std::vector<uint8_t> before = read(dio, fd, 0, kFile);
            const std::vector<uint8_t> d = pattern(100, 3);
            const uint32_t tx = aw.begin();
            EXPECT_NE(refusal([&] {
                          aw.write(tx, fd, 0, d.data(), d.size());
                      }).find("not open for writing"),
                      std::string::npos);
            EXPECT_EQ(read(dio, fd, 0, kFile), before);
        },
        O_RDONLY);
}

// The limits: a transaction's log on one SPU (AW_MAX_ENTRIES writes), every slot in use.
TEST(AtomicWrites, FullLogsAndBusySlotsAreRefused) {
    AwMachine m;
    m.run([&](host::HostCore&, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
        const std::vector<uint8_t> before = read(dio, fd, 0, kFile);
        const std::vector<uint8_t> d = pattern(16, 3);
        uint32_t tx = aw.begin();
        for (unsigned i = 0; i < AW_MAX_ENTRIES; ++i) aw.write(tx, fd, i * 32, d.data(), d.size());
        std::string why = refusal([&] { aw.write(tx, fd, 4000, d.data(), d.size()); });
        EXPECT_NE(why.find("AW_E_FULL"), std::string::npos) << why;
        EXPECT_NE(why.find("SPU 0"), std::string::npos) << why;
        // The failure aborted the transaction: its log is gone, the slot free again.
        EXPECT_NE(refusal([&] { aw.commit(tx); }).find("not open"), std::string::npos);
        std::vector<uint32_t> open;
        for (unsigned i = 0; i < AW_SLOTS; ++i) {
            open.push_back(aw.begin());
            aw.write(open.back(), fd, i * 32, d.data(), d.size());
        }
        tx = aw.begin();
        why = refusal([&] { aw.write(tx, fd, 4000, d.data(), d.size()); });
        EXPECT_NE(why.find("AW_E_BUSY"), std::string::npos) << why;
        for (uint32_t t : open) aw.abort(t);
        tx = aw.begin();
        aw.write_commit(tx, fd, 4000, d.data(), d.size());
        std::vector<uint8_t> after = before;
        std::copy(d.begin(), d.end(), after.begin() + 4000);
        EXPECT_EQ(read(dio, fd, 0, kFile), after);
    });
}

// The app's own refusals, on raw RPCs from the process's HRE: PREPARE and APPLY are the
// coordinator's, a COMMIT must come to the lowest participant, unknown transactions, a target
// inside the log region, a malformed request.
TEST(AtomicWrites, TheAppRefusesWhatIsNotItsProtocol) {
    AwMachine m;
    m.run([&](host::HostCore&, sw::DirectIo& dio, sw::AtomicWrites& aw, int fd) {
        const uint32_t app = m.stack->cfg.atomic_writes_app;
        auto call = [&](unsigned spu, unsigned handler, const std::vector<uint32_t>& words) {
            return dio.hre()
                .call(uint8_t(spu), SPU_OS_RPC_ID(app, handler), words.data(),
                      uint32_t(4 * words.size()))
                .result;
        };
        const std::vector<uint8_t> d = pattern(64, 3);
        const uint32_t tx = aw.begin();
        aw.write(tx, fd, 8192, d.data(), d.size());  // on SPU 1
        EXPECT_EQ(call(1, AW_PREPARE, {tx, 0}), AW_E_PEER);
        EXPECT_EQ(call(1, AW_APPLY, {tx, 0}), AW_E_PEER);
        EXPECT_EQ(call(1, AW_COMMIT, {tx, 0x3}), AW_E_ARGS);  // SPU 0 would coordinate
        EXPECT_EQ(call(1, AW_COMMIT, {tx, 0x1 << 1 | 1 << kSpus}), AW_E_ARGS);  // no SPU 4
        EXPECT_EQ(call(2, AW_COMMIT, {tx, 0x4}), AW_E_UNKNOWN);
        EXPECT_EQ(call(2, AW_ABORT, {tx, 0}), AW_E_UNKNOWN);
        EXPECT_EQ(call(1, AW_RECOVER, {1}), SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(call(1, AW_SETUP, {0, 0, 0, 0, 0}), SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(call(1, AW_LOGWRITE, {tx, 0x1000, 8}), AW_E_ARGS);  // no data
        EXPECT_EQ(call(1, AW_LOGWRITE, {tx, 0x1000, 0}), AW_E_ARGS);  // empty
        // Into the log region (the kernel granted it, but it is no target).
        const sw::BlockGeometry& g = m.stack->kernel.geometry();
        const uint32_t log = uint32_t(2 * g.bank_bytes) - m.stack->cfg.kv_bytes -
                             m.stack->cfg.aw_bytes;  // SPU 1's, on the SSD-memory store
        EXPECT_EQ(call(1, AW_LOGWRITE, {tx, log + 4096, 4, 0}), AW_E_ARGS);
        // Outside the process's file (the file system's last bytes there): SPU-OS's check.
        EXPECT_EQ(call(1, AW_LOGWRITE, {tx, log - 16, 4, 0}), SPU_OS_E_PERMISSION);
        aw.commit(tx);  // still fine
        EXPECT_EQ(read(dio, fd, 8192, d.size()), d);
    });
}
#endif

}  // namespace
}  // namespace canopy::platform
