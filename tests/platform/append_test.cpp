// Append (Willow Section 4.6 "File system offload"; sw/firmware/apps/block_io.c, Direct-IO's
// APPEND handlers; sw/host/lib_direct_io append(), the module's O_APPEND) on the whole platform
// with real firmware: user processes append to a file from user space, the SPU holding the
// inode updates its size, and the file system reads back exactly what was appended. Checked:
// records crossing stripe units and SPUs land in order, concurrent appenders never overlap, the
// size never covers unwritten data, and the refusals. Each TEST elaborates once (its own
// process).
#include <gtest/gtest.h>

#include <fcntl.h>

#include <map>
#include <string>
#include <vector>

#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 4;
constexpr uint64_t kRoom = 64 * 1024;  // the file's blocks: 8 stripe units over the 4 SPUs

// Reads the whole file through the file system (system calls, Base-IO).
std::vector<uint8_t> through_fs(WillowStack& s, host::HostCore& cpu, const std::string& path) {
    const int fd = s.fs.open(cpu, path, O_RDONLY);
    std::vector<uint8_t> v(s.fs.inode(*s.fs.lookup(path)).size);
    EXPECT_EQ(s.fs.pread(cpu, fd, v.data(), v.size(), 0), v.size());
    s.fs.close(cpu, fd);
    return v;
}

TEST(Append, RecordsLandInOrderAndTheSpuUpdatesTheSize) {
    StackMachine m(kSpus, nullptr);
    m.user([&](host::HostCore& cpu) {
        WillowStack& s = *m.stack;
        const uint32_t ino = s.fs.create(cpu, "/log", kRoom, cpu.process().pid, 0600, 0);
        // 100 bytes written through the file system first: the appends follow them.
        std::vector<uint8_t> want = pattern(100, 3);
        const int fd = s.fs.open(cpu, "/log", O_RDWR);
        s.fs.write(cpu, fd, want.data(), want.size());
        s.fs.close(cpu, fd);
        auto dio = s.direct_io(cpu);
        const int a = dio->open("/log", O_WRONLY | O_APPEND);
        const uint64_t commits = s.fs.inode_commits();
        for (unsigned i = 0; i < 40; ++i) {  // 1 B .. 2.9 KiB, crossing units and SPUs
            const std::vector<uint8_t> r = pattern(1 + (i * 733) % 2900, 5 + i);
            EXPECT_EQ(dio->append(a, r.data(), r.size()), r.size());
            want.insert(want.end(), r.begin(), r.end());
        }
        // One 8 KiB + 3 KiB append: two APPEND RPCs, the first across a unit boundary.
        const std::vector<uint8_t> big = pattern(11 * 1024, 7);
        dio->append(a, big.data(), big.size());
        want.insert(want.end(), big.begin(), big.end());
        ASSERT_LE(want.size(), kRoom);
        EXPECT_EQ(s.fs.inode_commits(), commits);  // the host's file system did nothing
        dio->close(a);
        EXPECT_EQ(s.fs.inode(ino).size, want.size());  // read back from the device's inode
        EXPECT_EQ(through_fs(s, cpu, "/log"), want);
        // Opened again: appending goes on after what is there.
        const int b = dio->open("/log", O_WRONLY | O_APPEND);
        const std::vector<uint8_t> tail = pattern(500, 9);
        dio->append(b, tail.data(), tail.size());
        dio->close(b);
        want.insert(want.end(), tail.begin(), tail.end());
        EXPECT_EQ(through_fs(s, cpu, "/log"), want);
    });
}

// Two processes append self-describing records to one file at once (each on its own core and
// HRE): every record is in the file exactly once and whole.
TEST(Append, ConcurrentAppendersNeverOverlap) {
    StackMachine m(kSpus, nullptr);
    constexpr unsigned kRecords = 30;
    bool created = false;
    unsigned done = 0;
    auto writer = [&](uint8_t who) {
        return [&, who](host::HostCore& cpu) {
            WillowStack::User u(*m.stack, m.running);
            m.stack->wait_ready(cpu);
            if (who == 1) {
                m.stack->fs.create(cpu, "/shared", kRoom, cpu.process().pid, 0666, 0);
                created = true;
            }
            wait_for(cpu, created);
            auto dio = m.stack->direct_io(cpu);
            const int fd = dio->open("/shared", O_WRONLY | O_APPEND);
            for (unsigned i = 0; i < kRecords; ++i) {
                // {who, sequence, length (2 B)} then `length` bytes of who's pattern.
                const uint16_t len = uint16_t(100 + (i * 397 + who * 131) % 900);
                std::vector<uint8_t> r = {who, uint8_t(i), uint8_t(len), uint8_t(len >> 8)};
                const std::vector<uint8_t> body = pattern(len, who * 16 + i);
                r.insert(r.end(), body.begin(), body.end());
                dio->append(fd, r.data(), r.size());
            }
            dio->close(fd);
            ++done;
        };
    };
    auto& p1 = m.platform->host.kernel.create_process("writer1");
    auto& p2 = m.platform->host.kernel.create_process("writer2");
    m.platform->host.cores.at(1)->run(p1, writer(1));
    m.platform->host.cores.at(2)->run(p2, writer(2));
    bool checked = false;
    auto& reader = m.platform->host.kernel.create_process("reader");
    m.platform->host.cores.at(3)->run(reader, [&](host::HostCore& cpu) {
        WillowStack::User u(*m.stack, m.running);
        while (done < 2) cpu.compute_ns(10'000);
        const std::vector<uint8_t> f = through_fs(*m.stack, cpu, "/shared");
        std::map<std::pair<int, int>, int> seen;
        size_t at = 0;
        while (at + 4 <= f.size()) {
            const uint8_t who = f[at], seq = f[at + 1];
            const uint16_t len = uint16_t(f[at + 2] | f[at + 3] << 8);
            ASSERT_LE(at + 4 + len, f.size()) << "a record cut short at " << at;
            EXPECT_EQ(std::vector<uint8_t>(f.begin() + at + 4, f.begin() + at + 4 + len),
                      pattern(len, who * 16 + seq))
                << "record " << int(who) << "/" << int(seq);
            ++seen[{who, seq}];
            at += 4 + len;
        }
        EXPECT_EQ(at, f.size());
        EXPECT_EQ(seen.size(), 2u * kRecords);
        for (const auto& [k, n] : seen) EXPECT_EQ(n, 1) << k.first << "/" << k.second;
        checked = true;
    });
    sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
    EXPECT_TRUE(checked) << m.platform->host.first_fault();
}

// A full file, an fd not opened for appending, O_APPEND without writing, and the raw RPCs a
// process may not send or gets wrong.
TEST(Append, RefusalsNameTheProblem) {
    StackMachine m(kSpus, nullptr);
    m.user([&](host::HostCore& cpu) {
        WillowStack& s = *m.stack;
        s.fs.create(cpu, "/small", 8192, cpu.process().pid, 0600, 0);
        auto dio = s.direct_io(cpu);
        const int a = dio->open("/small", O_WRONLY | O_APPEND);
        const std::vector<uint8_t> d = pattern(5000, 3);
        dio->append(a, d.data(), d.size());
        std::string why = refusal([&] { dio->append(a, d.data(), d.size()); });
        EXPECT_NE(why.find("BLOCK_IO_E_FULL"), std::string::npos) << why;
        // The part that fits is not taken either, and what was appended stays.
        const std::vector<uint8_t> rest = pattern(8192 - 5000, 4);
        dio->append(a, rest.data(), rest.size());
        dio->close(a);
        std::vector<uint8_t> want = d;
        want.insert(want.end(), rest.begin(), rest.end());
        EXPECT_EQ(through_fs(s, cpu, "/small"), want);
        const int w = dio->open("/small", O_RDWR);
        why = refusal([&] { dio->append(w, d.data(), 1); });
        EXPECT_NE(why.find("not open for appending"), std::string::npos) << why;
        why = refusal([&] { dio->open("/small", O_RDONLY | O_APPEND); });
        EXPECT_NE(why.find("for appending without writing"), std::string::npos) << why;
        // Raw RPCs on the process's HRE: the kernel's open and close, an unknown file.
        auto raw = [&](unsigned handler, const std::vector<uint32_t>& words) {
            return dio->hre()
                .call(0, SPU_OS_RPC_ID(s.cfg.direct_io_app, handler), words.data(),
                      uint32_t(4 * words.size()))
                .result;
        };
        EXPECT_EQ(
            raw(BLOCK_IO_APPEND_OPEN, std::vector<uint32_t>(sizeof(block_io_append_open) / 4)),
            SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(raw(BLOCK_IO_APPEND_CLOSE, {0}), SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(raw(BLOCK_IO_APPEND, {77, 4, 0}), BLOCK_IO_E_HANDLE);
        EXPECT_EQ(raw(BLOCK_IO_APPEND, {77, 8, 0}), BLOCK_IO_E_LENGTH);  // 4 bytes, not 8
    });
}
#endif

}  // namespace
}  // namespace canopy::platform
