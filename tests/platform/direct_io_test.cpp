// Direct-IO against the file system on Base-IO (Willow Section 3.1 "Willow usage model",
// Figure 2, "Non-volatile storage protection"; Section 4.2), on the whole platform with real
// firmware: every SPU boots SPU-OS, a kernel program on core 0 opens the kernel HRE (queue pair
// 0), installs app_base_io and app_direct_io, formats sw::WillowFs on the device, creates files,
// and then runs the Direct-IO module's notice thread; user processes on other cores use the file
// system's system calls and libDirectIO. Checked: bytes written one way read back the other
// (and lie in the SSD memory where the striping puts them; the file system's metadata mounts
// again from the device); a process the mode bits exclude is refused by both, and its
// hand-made Direct-IO READ of the file's blocks is refused by SPU-OS; a permission entry lost
// behind the library's back, or evicted from a full table, becomes a miss the kernel thread
// resolves while the library retries, and close leaves no entry; a Direct-IO access beats the
// same access through the file system by the file system's configured costs (less what SPU-OS's
// permission check adds). Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/io_engine.hpp"
#include "sw/host/lib_direct_io.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;  // firmware, pattern, refusal, wait_for, WillowMachine

constexpr unsigned kSpus = 4;
constexpr uint32_t kBaseIo = 2, kDirectIo = 3;  // app ids the host kernel gives them
constexpr uint32_t kBaseIoSlot = WillowStack::kBaseIoSlot,
                   kDirectIoSlot = WillowStack::kDirectIoSlot;
constexpr uint64_t kFsBytes = 16 << 20;
constexpr uint64_t kBlock = sw::WillowFs::kBlockBytes;
const sc_core::sc_time kRunFor(50, sc_core::SC_MS);

double ns(host::HostCore& cpu) { return cpu.now().to_seconds() * 1e9; }

// The platform with SPU-OS on every SPU, the host kernel's Willow driver, kernel HREs, file
// system and Direct-IO module; core 0 runs the kernel program.
struct DirectIoMachine : willow_test::WillowMachine {
    std::unique_ptr<sw::WillowDriver> driver;
    std::unique_ptr<sw::KernelHres> hres;
    std::unique_ptr<sw::WillowFs> fs;
    std::unique_ptr<sw::DirectIoModule> module;
    host::HostKernel::Process* kernel = nullptr;
    bool ready = false, stop = false;  // the kernel program's set-up is done; end its thread

    explicit DirectIoMachine(sw::WillowFsConfig fs_cfg = sw::WillowFsConfig())
        : WillowMachine(kSpus) {
        driver = std::make_unique<sw::WillowDriver>(platform->device.willow_device());
        hres = std::make_unique<sw::KernelHres>(*driver, kBaseIo, geometry());
        fs = std::make_unique<sw::WillowFs>(*hres, fs_cfg);
        module = std::make_unique<sw::DirectIoModule>(*fs);
        kernel = &platform->host.kernel.create_process("kernel");
    }
    sw::BlockGeometry geometry() {
        sw::BlockGeometry g;
        g.spus = kSpus;
        g.bank_bytes = ssd().dram.bank_bytes();
        g.stripe_bytes = BLOCK_IO_STRIPE_BYTES;
        return g;
    }
    host::HostKernel::Process& user(const std::string& name) {
        return platform->host.kernel.create_process(name);
    }
    host::HostCore& core(unsigned i) { return *platform->host.cores[i]; }
    // Ends the notice thread (waking the kernel's core, where it sleeps until a notice).
    void halt() {
        stop = true;
        core(0).send_event();
    }
    // Core 0: boot the kernel HRE, install the apps, format, `setup` (files), then serve
    // SPU-OS's notices until `stop`.
    void run_kernel(std::function<void(host::HostCore&)> setup) {
        core(0).run(*kernel, [this, setup](host::HostCore& cpu) {
            sw::WillowApps& apps = hres->boot(cpu);
            apps.install(firmware("app_base_io"), kBaseIo, kBaseIoSlot);
            apps.install(firmware("app_direct_io"), kDirectIo, kDirectIoSlot);
            fs->format(cpu, kFsBytes);
            setup(cpu);
            ready = true;
            module->serve_notices(cpu, stop);
        });
    }
    // The file's bytes as they lie in the SSD memory, gathered through the striping.
    std::vector<uint8_t> file_in_nvm(const sw::WillowFs::Inode& ino) {
        std::vector<uint8_t> out(ino.size);
        sw::for_each_piece(ino.extents, 0, ino.size, [&](uint64_t dev, uint64_t at, uint64_t n) {
            for (uint64_t done = 0; done < n;) {
                const sw::BlockGeometry::Location l = geometry().locate(dev + done);
                const uint64_t k = std::min<uint64_t>(l.bytes, n - done);
                ssd().dram.read(l.nvm, out.data() + at + done, k);
                done += k;
            }
        });
        return out;
    }
    void finish() {
        sc_core::sc_start(kRunFor);
        EXPECT_EQ(platform->host.first_fault(), "");
    }
};

// (a) What the file system writes libDirectIO reads, and the other way round.
TEST(PlatformDirectIo, FileSystemAndDirectIoSeeTheSameBytes) {
    DirectIoMachine m;
    auto& user = m.user("user");
    constexpr uint64_t kFile = 40 * 1024;  // 10 blocks: 5 stripe units over all 4 SPUs
    uint32_t ino = 0;
    m.run_kernel([&](host::HostCore& cpu) {
        m.fs->create(cpu, "/scratch", 3 * kBlock, m.kernel->pid, 0600);  // another file first
        ino = m.fs->create(cpu, "/data", kFile, user.pid, 0600);
    });
    const std::vector<uint8_t> by_fs = pattern(kFile, 7), by_dio = pattern(3000, 11);
    constexpr uint64_t kDioAt = 6000;  // crosses the first stripe boundary (8 KiB)
    bool done = false;
    m.core(1).run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        // Through the file system: write() from the file position, in two calls.
        const int fd = m.fs->open(cpu, "/data", O_RDWR);
        EXPECT_EQ(m.fs->write(cpu, fd, by_fs.data(), kFile / 2), kFile / 2);
        EXPECT_EQ(m.fs->write(cpu, fd, by_fs.data() + kFile / 2, kFile / 2), kFile / 2);
        // Read back through libDirectIO.
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        const int dfd = dio.open("/data", O_RDWR);
        EXPECT_EQ(dio.size(dfd), kFile);
        std::vector<uint8_t> got(kFile);
        EXPECT_EQ(dio.read(dfd, got.data(), kFile), kFile);
        EXPECT_EQ(got, by_fs);
        // Past the end: short, then nothing.
        EXPECT_EQ(dio.pread(dfd, got.data(), 4096, kFile - 100), 100u);
        EXPECT_EQ(dio.read(dfd, got.data(), 1), 0u);
        // libDirectIO overwrites in place; the file system reads it back.
        EXPECT_EQ(dio.lseek(dfd, kDioAt), kDioAt);
        EXPECT_EQ(dio.write(dfd, by_dio.data(), by_dio.size()), by_dio.size());
        std::vector<uint8_t> back(by_dio.size());
        EXPECT_EQ(m.fs->lseek(cpu, fd, kDioAt), kDioAt);
        EXPECT_EQ(m.fs->read(cpu, fd, back.data(), back.size()), back.size());
        EXPECT_EQ(back, by_dio);
        // Direct-IO changes no metadata: growing the file is the file system's.
        EXPECT_NE(refusal([&] {
                      dio.pwrite(dfd, by_dio.data(), 200, kFile - 100);
                  }).find("reaches past the file's"),
                  std::string::npos);
        const uint64_t commits = m.fs->inode_commits();
        EXPECT_EQ(m.fs->pwrite(cpu, fd, by_dio.data(), 200, kFile - 100), 200u);
        EXPECT_EQ(m.fs->inode_commits(), commits + 1);  // the size grew: the inode committed
        EXPECT_EQ(m.fs->inode(ino).size, kFile + 100);
        EXPECT_EQ(m.fs->pwrite(cpu, fd, by_dio.data(), 200, 0), 200u);
        EXPECT_EQ(m.fs->inode_commits(), commits + 1);  // no growth, no mtime commit (default)
        dio.close(dfd);
        EXPECT_NE(refusal([&] { dio.read(dfd, got.data(), 1); }).find("no fd"), std::string::npos);
        m.fs->close(cpu, fd);
        EXPECT_NE(refusal([&] { m.fs->read(cpu, fd, got.data(), 1); }).find("no fd"),
                  std::string::npos);
        // The metadata lives in the SSD: a second mount finds the file as it is.
        sw::WillowFs again(*m.hres);
        again.mount(cpu);
        const auto found = again.lookup("/data");
        ASSERT_TRUE(found.has_value());
        EXPECT_EQ(again.inode(*found).size, kFile + 100);
        EXPECT_EQ(again.inode(*found).owner, user.pid);
        EXPECT_EQ(again.inode(*found).extents.size(), m.fs->inode(ino).extents.size());
        EXPECT_EQ(again.inode(*found).extents[0].device_offset,
                  m.fs->inode(ino).extents[0].device_offset);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    // One extent, after the metadata and the other file: its blocks follow on.
    const sw::WillowFs::Inode& file = m.fs->inode(ino);
    ASSERT_EQ(file.extents.size(), 1u);
    EXPECT_EQ(file.extents[0].bytes, kFile + kBlock);  // grown by one block, contiguously
    std::vector<uint8_t> expect = by_fs;
    std::copy(by_dio.begin(), by_dio.end(), expect.begin() + kDioAt);
    std::copy(by_dio.begin(), by_dio.begin() + 200, expect.begin());
    expect.resize(kFile + 100);
    std::copy(by_dio.begin(), by_dio.begin() + 200, expect.begin() + (kFile - 100));
    EXPECT_EQ(m.file_in_nvm(file), expect);
    EXPECT_EQ(m.module->stats().opens, 1u);
    EXPECT_EQ(m.module->stats().closes, 1u);
}

// (b) Mode bits decide, for the file system's open and the module's; SPU-OS backs them up.
TEST(PlatformDirectIo, AProcessTheModeExcludesIsRefusedByTheKernelAndBySpuOs) {
    DirectIoMachine m;
    auto& owner = m.user("owner");
    auto& other = m.user("other");
    uint32_t secret = 0;
    m.run_kernel([&](host::HostCore& cpu) {
        secret = m.fs->create(cpu, "/secret", 4 * kBlock, owner.pid, 0600);
        m.fs->create(cpu, "/public", 2 * kBlock, owner.pid, 0644);
    });
    bool done = false;
    uint32_t direct_read = 0, base_read = 0;
    m.core(1).run(other, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        std::string why = refusal([&] { dio.open("/secret", O_RDONLY); });
        EXPECT_NE(why.find("/secret"), std::string::npos) << why;
        EXPECT_NE(why.find("pid " + std::to_string(other.pid)), std::string::npos) << why;
        why = refusal([&] { m.fs->open(cpu, "/secret", O_RDONLY); });
        EXPECT_NE(why.find("may not open /secret"), std::string::npos) << why;
        EXPECT_NE(refusal([&] { dio.open("/nothing", O_RDONLY); }).find("no such file"),
                  std::string::npos);
        // Others may read /public but not write it.
        EXPECT_NE(refusal([&] { dio.open("/public", O_RDWR); }).find("for writing"),
                  std::string::npos);
        const int fd = dio.open("/public", O_RDONLY);
        std::vector<uint8_t> buf(512);
        EXPECT_EQ(dio.pread(fd, buf.data(), buf.size(), 0), buf.size());
        EXPECT_NE(refusal([&] { dio.pwrite(fd, buf.data(), 16, 0); }).find("not open for writing"),
                  std::string::npos);
        // A hand-made READ of the secret file's first block through the process's own HRE:
        // the Direct-IO app serves anyone, SPU-OS's permission table refuses; Base-IO is the
        // kernel's only.
        const sw::BlockGeometry::Location l =
            m.geometry().locate(m.fs->inode(secret).extents[0].device_offset);
        const block_io_read_args a{l.nvm, 512, 1};
        direct_read =
            dio.hre()
                .call(uint8_t(l.spu), SPU_OS_RPC_ID(kDirectIo, BLOCK_IO_READ), &a, sizeof a)
                .result;
        base_read = dio.hre()
                        .call(uint8_t(l.spu), SPU_OS_RPC_ID(kBaseIo, BLOCK_IO_READ), &a, sizeof a)
                        .result;
        // The kernel thread sees the miss and finds no open file explaining it.
        while (m.module->stats().misses == 0) cpu.compute_ns(1000);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    EXPECT_EQ(direct_read, SPU_OS_E_PERMISSION);
    EXPECT_EQ(base_read, SPU_OS_E_KERNEL_ONLY);
    EXPECT_EQ(m.module->stats().regranted, 0u);
    EXPECT_EQ(m.module->stats().unresolved, 1u);
    const std::vector<sw::SpuNotice> seen = m.module->notices();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_TRUE(seen[0].perm_miss());
    EXPECT_EQ(seen[0].words[1], other.pid);
    EXPECT_EQ(seen[0].words[2], kDirectIo);
    EXPECT_EQ(seen[0].words[5], SPU_OS_PERM_READ);
}

// (c) A permission entry lost behind the library's back (as an eviction would lose it): the
// Direct-IO read misses, SPU-OS tells the kernel HRE, the module's thread grants the extent again,
// the library's retry succeeds. Close takes every grant back.
TEST(PlatformDirectIo, APermissionMissIsResolvedByTheKernelThreadAndTheReadRetried) {
    constexpr unsigned kLoser = 2;  // the SPU whose entry goes
    DirectIoMachine m;
    auto& user = m.user("user");
    constexpr uint64_t kFile = 8 * kBlock;  // 32 KiB: 4 stripe units, every SPU holds some
    uint32_t ino = 0;
    m.run_kernel(
        [&](host::HostCore& cpu) { ino = m.fs->create(cpu, "/log", kFile, user.pid, 0600); });
    const std::vector<uint8_t> data = pattern(kFile, 5);
    std::vector<uint8_t> got(kFile);
    bool done = false;
    sw::NvmRange lost;
    uint64_t retried = 0;
    uint32_t entries_open = 0, entries_closed = 0;
    m.core(1).run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        const int fd = dio.open("/log", O_RDWR);
        EXPECT_EQ(dio.pwrite(fd, data.data(), kFile, 0), kFile);
        EXPECT_EQ(dio.retried(), 0u);
        // The test, in the kernel's role on this core, takes SPU kLoser's entry away.
        sw::WillowApps& apps = *m.hres->on(cpu).apps;
        for (const sw::FileExtent& e : m.fs->inode(ino).extents)
            for (const sw::NvmRange& r : sw::nvm_ranges(m.geometry(), e.device_offset, e.bytes))
                if (r.spu == kLoser) lost = r;
        entries_open = apps.stat(kLoser, SPU_OS_STAT_PERM_ENTRIES);
        apps.revoke(user.pid, lost.nvm, {kLoser});
        EXPECT_EQ(dio.pread(fd, got.data(), kFile, 0), kFile);
        retried = dio.retried();
        dio.close(fd);
        for (unsigned s = 0; s < kSpus; ++s)
            entries_closed += apps.stat(s, SPU_OS_STAT_PERM_ENTRIES);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    ASSERT_GT(lost.bytes, 0u);
    EXPECT_EQ(entries_open, 1u);
    EXPECT_EQ(got, data);
    EXPECT_GE(retried, 1u);
    EXPECT_GE(m.module->stats().regranted, 1u);
    EXPECT_EQ(m.module->stats().unresolved, 0u);
    EXPECT_EQ(entries_closed, 0u);
    const std::vector<sw::SpuNotice> seen = m.module->notices();
    ASSERT_FALSE(seen.empty());
    for (const sw::SpuNotice& n : seen) {
        EXPECT_TRUE(n.perm_miss());
        EXPECT_EQ(n.node, kLoser);
        EXPECT_EQ(n.words[1], user.pid);
        EXPECT_EQ(n.words[2], kDirectIo);
        EXPECT_GE(n.words[3], lost.nvm);
        EXPECT_LE(uint64_t(n.words[3]) + n.words[4], uint64_t(lost.nvm) + lost.bytes);
        EXPECT_EQ(n.words[5], SPU_OS_PERM_READ);
    }
}

// (c) through the asynchronous engine (sw/host/io_engine, `canopy fio` and `replay --iodepth`
// on Direct-IO): eight 4 KiB reads in flight over the process's own HRE, one of them on the SPU
// whose entry went; the refused range is sent again after the kernel thread's grant, and every
// byte comes back as written (by libDirectIO, synchronously, before).
TEST(PlatformDirectIo, TheAsyncEngineRetriesAPermissionMissAndReadsEveryByte) {
    constexpr unsigned kLoser = 1;
    DirectIoMachine m;
    auto& user = m.user("user");
    constexpr uint64_t kFile = 8 * kBlock;
    uint32_t ino = 0;
    m.run_kernel(
        [&](host::HostCore& cpu) { ino = m.fs->create(cpu, "/log", kFile, user.pid, 0600); });
    const std::vector<uint8_t> data = pattern(kFile, 9);
    std::vector<uint8_t> got(kFile, 0);
    bool done = false;
    uint64_t retried = 0, max_in_flight = 0;
    std::string errors;
    m.core(1).run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        const int fd = dio.open("/log", O_RDWR);
        EXPECT_EQ(dio.pwrite(fd, data.data(), kFile, 0), kFile);
        sw::WillowApps& apps = *m.hres->on(cpu).apps;
        for (const sw::FileExtent& e : m.fs->inode(ino).extents)
            for (const sw::NvmRange& r : sw::nvm_ranges(m.geometry(), e.device_offset, e.bytes))
                if (r.spu == kLoser) apps.revoke(user.pid, r.nvm, {kLoser});
        sw::IoEngine engine(cpu, *m.driver, /*kernel=*/false, kDirectIo, m.geometry(),
                            sw::IoEngineConfig::direct_io(8));
        for (uint64_t at = 0; at < kFile; at += kBlock) {
            engine.submit(sw::BlockOp::Read, dio.ranges(fd, at, kBlock, SPU_OS_PERM_READ),
                          got.data() + at);
            max_in_flight = std::max<uint64_t>(max_in_flight, engine.in_flight());
        }
        for (size_t left = kFile / kBlock; left;)
            for (const sw::IoEngine::Done& d : engine.reap(1)) {
                errors += d.error;
                --left;
            }
        retried = engine.retried();
        engine.close();
        dio.close(fd);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    EXPECT_EQ(errors, "");
    EXPECT_EQ(max_in_flight, 8u);
    EXPECT_EQ(got, data);
    EXPECT_GE(retried, 1u);
    EXPECT_GE(m.module->stats().regranted, 1u);
}

// (c, for real) SPU-OS's table is full: another process's grants push the user's entry out
// (the clock hand sweeps the 768 entries once to clear their use bits, then evicts in turn, so
// two tables' worth of new entries evict every older one). The next Direct-IO read misses; the
// kernel thread and the library's retry bring it back as above.
TEST(PlatformDirectIo, AnEntryEvictedFromAFullTableIsInstalledAgain) {
    constexpr unsigned kVictim = 1;  // the SPU whose table fills
    constexpr uint32_t kFiller = 60, kFillerEntries = 2 * 768, kPerRpc = 128;
    DirectIoMachine m;
    auto& user = m.user("user");
    constexpr uint64_t kFile = 8 * kBlock;  // every SPU holds some
    m.run_kernel([&](host::HostCore& cpu) { m.fs->create(cpu, "/big", kFile, user.pid, 0600); });
    const std::vector<uint8_t> data = pattern(kFile, 9);
    std::vector<uint8_t> got(kFile);
    bool done = false;
    uint64_t retried = 0;
    uint32_t evictions = 0;
    m.core(1).run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        const int fd = dio.open("/big", O_RDWR);
        EXPECT_EQ(dio.pwrite(fd, data.data(), kFile, 0), kFile);
        // The test, in the kernel's role on this core: PERM_ADD in batches for process kFiller.
        sw::Hre& kernel = *m.hres->on(cpu).hre;
        const uint32_t base = uint32_t(kVictim * m.geometry().bank_bytes + (64u << 20));
        for (uint32_t i = 0; i < kFillerEntries; i += kPerRpc) {
            std::vector<uint32_t> records;
            for (uint32_t k = i; k < i + kPerRpc; ++k)
                records.insert(records.end(), {kFiller, base + 16 * k, 16, SPU_OS_PERM_READ});
            const sw::Hre::Response r =
                kernel.call(kVictim, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_PERM_ADD),
                            records.data(), uint32_t(records.size() * 4));
            EXPECT_TRUE(r.ok() && r.result == SPU_OS_OK) << r.status << " " << r.result;
        }
        evictions = m.hres->on(cpu).apps->stat(kVictim, SPU_OS_STAT_PERM_EVICTIONS);
        EXPECT_EQ(dio.pread(fd, got.data(), kFile, 0), kFile);
        retried = dio.retried();
        dio.close(fd);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    std::printf("[ DirectIO ] %u evictions on SPU %u; the read retried %llu times, %zu notices\n",
                evictions, kVictim, (unsigned long long)retried, m.module->notices().size());
    EXPECT_GE(evictions, kFillerEntries - 768 + 1);
    EXPECT_EQ(got, data);
    EXPECT_GE(retried, 1u);
    EXPECT_GE(m.module->stats().regranted, 1u);
    EXPECT_EQ(m.module->stats().unresolved, 0u);
    for (const sw::SpuNotice& n : m.module->notices()) {
        EXPECT_TRUE(n.perm_miss());
        EXPECT_EQ(n.node, kVictim);
        EXPECT_EQ(n.words[1], user.pid);
    }
}

// Two writers of one file on two cores: the file system's writes take the inode's lock
// exclusively (XFS's iolock), so one waits for the other; Direct-IO's do not touch the file
// system at all, and run in parallel on their SPUs. Each writer's bytes land (checked through the
// other path); the phases' lengths are printed for both paths.
TEST(PlatformDirectIo, FileSystemWritersOfOneFileTakeTurnsDirectIoWritersDoNot) {
    constexpr unsigned kWriters = 2, kWrites = 8;
    constexpr uint64_t kBytes = 512, kStripe = BLOCK_IO_STRIPE_BYTES;
    static_assert(kWrites * kBytes <= kStripe);
    DirectIoMachine m;
    auto& owner = m.user("owner");
    std::vector<host::HostKernel::Process*> writers;
    for (unsigned w = 0; w < kWriters; ++w)
        writers.push_back(&m.user("writer" + std::to_string(w)));
    m.run_kernel([&](host::HostCore& cpu) {
        m.fs->create(cpu, "/shared", kWriters * kStripe, owner.pid, 0666);
    });
    std::vector<double> fs_begin(kWriters), fs_end(kWriters), dio_begin(kWriters),
        dio_end(kWriters);
    std::vector<double> shared_begin(kWriters), shared_end(kWriters);
    unsigned at_fs = 0, at_dio = 0, at_shared = 0, finished = 0;
    std::vector<std::vector<uint8_t>> via_dio(kWriters), via_fs(kWriters);
    for (unsigned w = 0; w < kWriters; ++w) {
        m.core(1 + w).run(*writers[w], [&, w](host::HostCore& cpu) {
            wait_for(cpu, m.ready);
            const int fd = m.fs->open(cpu, "/shared", O_RDWR);
            sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
            const int dfd = dio.open("/shared", O_RDWR);
            const std::vector<uint8_t> by_fs = pattern(kBytes, 3 + w);
            const std::vector<uint8_t> by_dio = pattern(kBytes, 13 + w);
            // Each writer in a stripe unit of its own (another SPU: the device is not the
            // bottleneck), the file's inode shared.
            auto slot = [&](unsigned i) { return w * kStripe + i * kBytes; };
            // Warm both paths (the core's kernel HRE, the HREs' pages in the TLB).
            m.fs->pwrite(cpu, fd, by_fs.data(), kBytes, slot(0));
            dio.pwrite(dfd, by_fs.data(), kBytes, slot(0));
            auto barrier = [&](unsigned& count) {  // both writers start together
                ++count;
                while (count < kWriters) cpu.compute_ns(100);
            };
            barrier(at_fs);
            fs_begin[w] = ns(cpu);
            for (unsigned i = 0; i < kWrites; ++i)
                m.fs->pwrite(cpu, fd, by_fs.data(), kBytes, slot(i));
            fs_end[w] = ns(cpu);
            std::vector<uint8_t> b(kBytes);
            for (unsigned i = 0; i < kWrites; ++i) {
                dio.pread(dfd, b.data(), kBytes, slot(i));
                via_dio[w].insert(via_dio[w].end(), b.begin(), b.end());
            }
            barrier(at_dio);
            dio_begin[w] = ns(cpu);
            for (unsigned i = 0; i < kWrites; ++i) dio.pwrite(dfd, by_dio.data(), kBytes, slot(i));
            dio_end[w] = ns(cpu);
            for (unsigned i = 0; i < kWrites; ++i) {
                m.fs->pread(cpu, fd, b.data(), kBytes, slot(i));
                via_fs[w].insert(via_fs[w].end(), b.begin(), b.end());
            }
            // The file system again, its writes taking the lock shared.
            m.fs->config().exclusive_writes = false;
            barrier(at_shared);
            shared_begin[w] = ns(cpu);
            for (unsigned i = 0; i < kWrites; ++i)
                m.fs->pwrite(cpu, fd, by_fs.data(), kBytes, slot(i));
            shared_end[w] = ns(cpu);
            if (++finished == kWriters) m.halt();
        });
    }
    m.finish();
    ASSERT_EQ(finished, kWriters);
    EXPECT_GE(m.fs->lock_waits(), 1u);
    for (unsigned w = 0; w < kWriters; ++w)
        for (unsigned i = 0; i < kWrites; ++i) {
            const auto at = int64_t(i * kBytes);
            const std::vector<uint8_t> fs_bytes = pattern(kBytes, 3 + w);
            const std::vector<uint8_t> dio_bytes = pattern(kBytes, 13 + w);
            EXPECT_TRUE(std::equal(fs_bytes.begin(), fs_bytes.end(), via_dio[w].begin() + at))
                << "writer " << w << " #" << i;
            EXPECT_TRUE(std::equal(dio_bytes.begin(), dio_bytes.end(), via_fs[w].begin() + at))
                << "writer " << w << " #" << i;
        }
    auto phase = [](const std::vector<double>& begin, const std::vector<double>& end) {
        return *std::max_element(end.begin(), end.end()) -
               *std::min_element(begin.begin(), begin.end());
    };
    const double fs_ns = phase(fs_begin, fs_end), dio_ns = phase(dio_begin, dio_end),
                 shared_ns = phase(shared_begin, shared_end);
    std::printf(
        "[ DirectIO ] %u writers x %u writes of %llu B to one file: file system %.0f ns "
        "(writes sharing the lock: %.0f ns), libDirectIO %.0f ns\n",
        kWriters, kWrites, (unsigned long long)kBytes, fs_ns, shared_ns, dio_ns);
    // Sharing the lock, the writers overlap: the phase is one writer's kWrites calls, each its
    // system call and file-system work and then its transfer. The exclusive lock puts every
    // writer's transfers back to back (the host-side costs may overlap a transfer).
    const sw::WillowFsConfig& c = m.fs->config();
    const double transfers_ns = shared_ns - kWrites * (c.syscall_ns + c.write_ns);
    EXPECT_GE(fs_ns, kWriters * transfers_ns - m.cfg.host.core.quantum_ns);
    EXPECT_LT(shared_ns, fs_ns);
    ::testing::Test::RecordProperty("fs_two_writers_shared_lock_ns", std::to_string(shared_ns));
    ::testing::Test::RecordProperty("fs_two_writers_ns", std::to_string(fs_ns));
    ::testing::Test::RecordProperty("direct_two_writers_ns", std::to_string(dio_ns));
}

// (d) The same 4 KiB read through the file system and through libDirectIO share the hardware
// path (an RPC to the SPU, its DATA request, the copy into the caller's buffer) but for two
// things: the file system adds a system call and its own work on the host, and SPU-OS checks
// the Direct-IO transfer against the user's permission table (the kernel's Base-IO transfers,
// process 0, skip the check). So Direct-IO is faster by at least syscall_ns + read_ns (writes:
// write_ns) less the slowest permission check SPU-OS measured, and less one quantum of the host
// core's temporal decoupling: a program polling its completion queue runs up to a quantum ahead
// of the device and may see a completion that late (the best of several runs narrows this, both
// ways). Also measured: 512 B, and writes.
TEST(PlatformDirectIo, DirectIoBeatsTheFileSystemByItsCosts) {
    DirectIoMachine m;
    auto& user = m.user("user");
    constexpr uint64_t kFile = 16 * kBlock;
    constexpr int kReps = 5;
    uint32_t ino = 0;
    m.run_kernel(
        [&](host::HostCore& cpu) { ino = m.fs->create(cpu, "/bench", kFile, user.pid, 0600); });
    struct Latency {
        double fs_read = 0, dio_read = 0, fs_write = 0, dio_write = 0;
        double fs_write_commit = 0;  // with write_updates_inode: each write commits its inode
    };
    std::map<uint64_t, Latency> lat;  // by transfer size
    bool done = false;
    uint32_t check_cycles = 0;
    m.core(1).run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, m.ready);
        const int fd = m.fs->open(cpu, "/bench", O_RDWR);
        sw::DirectIo dio(cpu, *m.driver, *m.module, kDirectIo);
        const int dfd = dio.open("/bench", O_RDWR);
        std::vector<uint8_t> buf = pattern(kBlock, 3);
        // The best of kReps after a warm-up (first use opens the core's kernel HRE, warms TLBs).
        auto best = [&](const std::function<void()>& op) {
            op();
            double b = 1e18;
            for (int i = 0; i < kReps; ++i) {
                const double t0 = ns(cpu);
                op();
                b = std::min(b, ns(cpu) - t0);
            }
            return b;
        };
        for (uint64_t n : {uint64_t(4096), uint64_t(512)}) {
            Latency& l = lat[n];
            l.fs_read = best([&] { m.fs->pread(cpu, fd, buf.data(), n, 0); });
            l.dio_read = best([&] { dio.pread(dfd, buf.data(), n, 0); });
            l.fs_write = best([&] { m.fs->pwrite(cpu, fd, buf.data(), n, 0); });
            l.dio_write = best([&] { dio.pwrite(dfd, buf.data(), n, 0); });
        }
        m.fs->config().write_updates_inode = true;
        for (auto& [size, l] : lat) {
            const uint64_t n = size;  // a lambda may not capture a structured binding (C++17)
            l.fs_write_commit = best([&] { m.fs->pwrite(cpu, fd, buf.data(), n, 0); });
        }
        m.fs->config().write_updates_inode = false;
        // Every access above lies in the file's first block, on one SPU.
        const uint32_t spu = m.geometry().locate(m.fs->inode(ino).extents[0].device_offset).spu;
        check_cycles = m.hres->on(cpu).apps->stat(spu, SPU_OS_STAT_PERM_CHECK_MAX);
        done = true;
        m.halt();
    });
    m.finish();
    ASSERT_TRUE(done);
    const sw::WillowFsConfig& c = m.fs->config();
    const double check_ns = check_cycles * 1000.0 / m.cfg.ssd.spu.core.clock_mhz;
    const double slack_ns = check_ns + m.cfg.host.core.quantum_ns;
    EXPECT_GT(check_cycles, 0u);
    std::printf("[ DirectIO ] SPU-OS permission check: at most %u cycles (%.0f ns)\n", check_cycles,
                check_ns);
    for (auto& [n, l] : lat) {
        std::printf(
            "[ DirectIO ] %4llu B: read fs %.0f ns, direct %.0f ns; write fs %.0f ns, "
            "direct %.0f ns; write fs committing the inode %.0f ns\n",
            (unsigned long long)n, l.fs_read, l.dio_read, l.fs_write, l.dio_write,
            l.fs_write_commit);
        const std::string k = std::to_string(n) + "B_";
        ::testing::Test::RecordProperty(k + "fs_read_ns", std::to_string(l.fs_read));
        ::testing::Test::RecordProperty(k + "direct_read_ns", std::to_string(l.dio_read));
        ::testing::Test::RecordProperty(k + "fs_write_ns", std::to_string(l.fs_write));
        ::testing::Test::RecordProperty(k + "direct_write_ns", std::to_string(l.dio_write));
        ::testing::Test::RecordProperty(k + "fs_write_commit_ns",
                                        std::to_string(l.fs_write_commit));
        EXPECT_GE(l.fs_read - l.dio_read, c.syscall_ns + c.read_ns - slack_ns) << n << " B";
        EXPECT_GE(l.fs_write - l.dio_write, c.syscall_ns + c.write_ns - slack_ns) << n << " B";
        // An inode commit is one more Base-IO write, of a whole 4 KiB block: at least the
        // round trip of the smallest Direct-IO write, which also paid a permission check.
        EXPECT_GE(l.fs_write_commit - l.fs_write, lat[512].dio_write - slack_ns) << n << " B";
    }
}
#endif

}  // namespace
}  // namespace canopy::platform
