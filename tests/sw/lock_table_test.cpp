// The neoDBMS lock table (sw/host/lock_table.hpp) on simulated host cores: mutual exclusion per
// bucket under contention, FIFO hand-over, and the low-contention latency built from its parts.
#include <gtest/gtest.h>

#include <memory>
#include <systemc>
#include <vector>

#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"
#include "sw/host/lock_table.hpp"

namespace canopy::sw {
namespace {

struct Bench {
    core::Services services;
    host::HostMemory memory;
    host::HomeNode home;
    host::HostKernel kernel;
    std::vector<std::unique_ptr<host::HostCore>> cores;
    host::HostKernel::Process& proc;
    struct Sink : sc_core::sc_module {  // a core's MMIO path, unused
        tlm_utils::simple_target_socket<Sink> socket;
        explicit Sink(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
    };
    struct Io : sc_core::sc_module {  // the home's I/O port, unused
        tlm_utils::simple_initiator_socket<Io> socket;
        explicit Io(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
    };
    std::vector<std::unique_ptr<Sink>> sinks;
    Io io{"io"};

    explicit Bench(unsigned n)
        : memory("memory", memory_config(), services),
          home("home", host::HomeNodeConfig(), services),
          kernel(memory, home),
          proc(kernel.create_process("neodbms")) {
        home.memory_initiator.bind(memory.socket);
        io.socket.bind(home.io_target);
        for (unsigned i = 0; i < n; ++i) {
            cores.push_back(std::make_unique<host::HostCore>(("core" + std::to_string(i)).c_str(),
                                                             host::HostCoreConfig(), home, kernel,
                                                             services));
            sinks.push_back(std::make_unique<Sink>(("mmio" + std::to_string(i)).c_str()));
            cores.back()->mmio.bind(sinks.back()->socket);
        }
    }
    static host::HostMemoryConfig memory_config() {
        host::HostMemoryConfig c;
        c.size_bytes = 64ull << 20;
        return c;
    }
};

TEST(LockTable, BucketsAreLinesAndRecordsSpreadOverThem) {
    LockTableLayout t;
    t.base = 1ull << 30;
    t.buckets = 64;
    std::vector<int> hits(64);
    for (uint64_t r = 0; r < 6400; ++r) {
        const uint64_t a = t.bucket_address(r);
        ASSERT_EQ((a - t.base) % 64, 0u);
        ASSERT_LT(a, t.base + t.bytes());
        ++hits[t.bucket_of(r)];
    }
    for (int h : hits) EXPECT_GT(h, 50);  // a fair hash: ~100 each
}

TEST(LockTable, ContendingCoresNeverHoldOneBucketTogetherAndAllFinish) {
    Bench b(3);
    LockTableLayout table;
    table.buckets = 4;  // few buckets, records colliding: high contention
    int holders[4] = {};
    int worst = 0, done = 0;
    for (unsigned c = 0; c < 3; ++c) {
        b.cores[c]->run(b.proc, [&, c](host::HostCore& cpu) {
            if (c == 0) {
                table.base = cpu.mmap(2 << 20, host::kPage2M);
                cpu.pin(table.base, 2 << 20);
            }
            cpu.compute_ns(5000);
            cpu.sync();
            HostLockPort port(cpu);
            LockClient client(port, table, c + 1);
            for (uint64_t i = 0; i < 60; ++i) {
                const uint64_t record = (i * 7 + c) % 9;
                auto l = client.lock(record);
                const int bucket = int(table.bucket_of(record));
                worst = std::max(worst, ++holders[bucket]);
                cpu.compute_ns(40);  // update the record
                --holders[bucket];
                client.unlock(l);
            }
            ++done;
        });
    }
    sc_core::sc_start();
    EXPECT_EQ(worst, 1);
    EXPECT_EQ(done, 3);
    for (auto& core : b.cores) EXPECT_EQ(core->fault(), "");
}

TEST(LockTable, WaitersAreServedInTheOrderTheyQueued) {
    Bench b(3);
    LockTableLayout table;
    table.buckets = 1;
    std::vector<unsigned> order;
    for (unsigned c = 0; c < 3; ++c) {
        b.cores[c]->run(b.proc, [&, c](host::HostCore& cpu) {
            if (c == 0) table.base = cpu.mmap(4096);
            // Core 0 first, then 1, then 2 (at absolute times).
            cpu.compute_ns(8000 + 300 * c - cpu.now().to_seconds() * 1e9);
            HostLockPort port(cpu);
            LockClient client(port, table, c + 1);
            auto l = client.lock(1);
            order.push_back(c);
            cpu.compute_ns(2000);  // hold it long enough for the others to queue
            client.unlock(l);
        });
    }
    sc_core::sc_start();
    EXPECT_EQ(order, (std::vector<unsigned>{0, 1, 2}));
}

TEST(LockTable, UncontendedHostLockCostsSoftwareAndOneFarAtomic) {
    Bench b(1);
    LockTableLayout table;
    double again = 0;
    b.cores[0]->run(b.proc, [&](host::HostCore& cpu) {
        table.base = cpu.mmap(2 << 20, host::kPage2M);
        HostLockPort port(cpu);
        LockClient client(port, table, 1);
        client.unlock(client.lock(5));  // the bucket's line is in the SLC now
        auto l = client.lock(5);
        again = l.request_ns + l.wait_ns;
        client.unlock(l);
    });
    sc_core::sc_start();
    const auto& hn = b.home.config();
    const double atomic = b.cores[0]->config().cache.l1_hit_ns + hn.request_ns + hn.slc_hit_ns;
    EXPECT_NEAR(again, LockClientConfig().software_ns + atomic, 1e-3);
    // CALIBRATION (lock table): about 80 ns from the host at low contention.
    EXPECT_NEAR(again, 80.0, 12.0);
}

}  // namespace
}  // namespace canopy::sw
