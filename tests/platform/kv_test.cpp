// The Key-Value SSD App (Willow Section 4.5; sw/firmware/apps/kv.c, sw/host/kv_store) on the
// whole platform with real firmware: the host kernel installs it and sets its table up on every
// SPU, a user process gets its regions granted and PUTs, GETs and DELETEs from user space.
// Checked: values round-trip across SPUs and buckets, replacement in place and by a new record,
// deletion at a chain's head and inside it, the refusals (key and value sizes, a full region, a
// process the kernel granted nothing), and that a lookup costs one store read per chain step.
// Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/kv_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 2;

// Two SPUs storing in SSD memory (the prototype's PCM emulation), so that runs stay short.
struct KvMachine : StackMachine {
    explicit KvMachine(uint32_t buckets = 1024, uint32_t kv_bytes = 4 << 20)
        : StackMachine(kSpus, nullptr, [&](WillowStackConfig& w) {
              w.kv_buckets = buckets;
              w.kv_bytes = kv_bytes;
          }) {}
};

std::vector<uint8_t> value_of(unsigned i, size_t n) { return pattern(n, 2 * i + 1); }

TEST(KeyValue, PutGetDeleteAcrossSpusAndBuckets) {
    KvMachine m;
    m.user([&](host::HostCore& cpu) {
        auto kv = m.stack->key_value(cpu);
        std::map<std::string, std::vector<uint8_t>> want;
        unsigned on_spu[kSpus] = {};
        for (unsigned i = 0; i < 120; ++i) {
            const std::string k = "user:" + std::to_string(i * 7919);
            want[k] = value_of(i, (i * 37) % 3000);  // 0 .. 3 KiB, some empty
            kv->put(k, want[k]);
            ++on_spu[sw::KvStore::hash(k) % kSpus];
        }
        EXPECT_GT(on_spu[0], 20u);
        EXPECT_GT(on_spu[1], 20u);
        for (const auto& [k, v] : want) EXPECT_EQ(kv->get(k), v) << k;
        // Replacement: the same size in place, another size by a new record.
        unsigned i = 0;
        for (auto& [k, v] : want) {
            v = value_of(1000 + i, i % 2 ? v.size() : v.size() + 17);
            ++i;
            kv->put(k, v);
        }
        for (const auto& [k, v] : want) EXPECT_EQ(kv->get(k), v) << k;
        // Deletion of every third key; the others stay.
        i = 0;
        for (auto it = want.begin(); it != want.end(); ++i) {
            if (i % 3) {
                ++it;
                continue;
            }
            EXPECT_TRUE(kv->del(it->first));
            EXPECT_FALSE(kv->del(it->first));
            EXPECT_EQ(kv->get(it->first), std::nullopt);
            it = want.erase(it);
        }
        for (const auto& [k, v] : want) EXPECT_EQ(kv->get(k), v) << k;
        EXPECT_EQ(kv->get("never-written"), std::nullopt);
    });
}

// One bucket per SPU: every key of an SPU in one chain, so deletion and replacement happen at
// the head, in the middle and at the tail; a lookup walks one record per step.
TEST(KeyValue, ChainsAndTheCostOfAStep) {
    KvMachine m(1);
    m.user([&](host::HostCore& cpu) {
        auto kv = m.stack->key_value(cpu);
        std::vector<std::string> keys;  // those of SPU 0, oldest first (the chain's tail)
        for (unsigned i = 0; keys.size() < 24; ++i) {
            const std::string k = "k" + std::to_string(i);
            if (sw::KvStore::hash(k) % kSpus == 0) keys.push_back(k);
        }
        for (size_t i = 0; i < keys.size(); ++i) kv->put(keys[i], value_of(unsigned(i), 100));
        auto ns = [&](const std::string& k) {
            const double t0 = cpu.now().to_seconds() * 1e9;
            EXPECT_TRUE(kv->get(k).has_value()) << k;
            return cpu.now().to_seconds() * 1e9 - t0;
        };
        // The newest key is the head; the oldest 23 steps further.
        const double near = ns(keys.back()), far = ns(keys.front());
        const double step = (far - near) / 23;
        EXPECT_GT(step, 100.0) << near << " ns vs " << far << " ns";  // a system call and a DMA
        EXPECT_LT(step, 10000.0) << near << " ns vs " << far << " ns";
        // Delete the head, one in the middle and the tail; replace one by a longer value.
        for (const std::string& k : {keys.back(), keys[11], keys.front()}) EXPECT_TRUE(kv->del(k));
        kv->put(keys[5], value_of(500, 900));
        for (size_t i = 1; i + 1 < keys.size(); ++i) {
            if (i == 11) {
                EXPECT_EQ(kv->get(keys[i]), std::nullopt);
                continue;
            }
            EXPECT_EQ(kv->get(keys[i]), value_of(i == 5 ? 500 : unsigned(i), i == 5 ? 900 : 100))
                << keys[i];
        }
        EXPECT_EQ(kv->get(keys.front()), std::nullopt);
        EXPECT_EQ(kv->get(keys.back()), std::nullopt);
    });
}

TEST(KeyValue, RefusalsNameTheProblem) {
    KvMachine m(16, 64 << 10);  // 64 KiB per SPU
    m.user([&](host::HostCore& cpu) {
        auto kv = m.stack->key_value(cpu);
        EXPECT_NE(refusal([&] { kv->put("", {1}); }).find("a key of 0 bytes"), std::string::npos);
        EXPECT_NE(refusal([&] { kv->put(std::string(65, 'k'), {1}); }).find("65 bytes"),
                  std::string::npos);
        EXPECT_NE(refusal([&] { kv->put("k", std::vector<uint8_t>(8193)); }).find("8193"),
                  std::string::npos);
        // Fill the region: 8 KiB values, until one SPU has no room.
        std::string full;
        for (unsigned i = 0; i < 40 && full.empty(); ++i)
            full = refusal([&] { kv->put("big" + std::to_string(i), value_of(i, 8192)); });
        EXPECT_NE(full.find("KV_E_FULL"), std::string::npos) << full;
        // A process may not set the table up (here: format it away); the table stays.
        sw::Hre own(cpu, m.stack->driver.open(cpu));
        const kv_setup_args wipe{0, 64 << 10, 16, 1};
        for (uint8_t s = 0; s < kSpus; ++s)
            EXPECT_EQ(own.call(s, SPU_OS_RPC_ID(m.stack->cfg.kv_app, KV_SETUP), &wipe, sizeof wipe)
                          .result,
                      SPU_OS_E_KERNEL_ONLY);
        // What was stored before stays readable.
        EXPECT_EQ(kv->get("big0"), value_of(0, 8192));
    });
}

// A process the kernel granted nothing reaches the app, but SPU-OS refuses its accesses.

// SPU-OS may evict the process's entry for the table (768 entries per SPU): the GET is refused
// once, the kernel's notice thread grants the region again, and the library's retry succeeds.
TEST(KeyValue, ALostEntryIsGrantedAgainAndTheRequestRetried) {
    KvMachine m;
    m.user([&](host::HostCore& cpu) {
        auto kv = m.stack->key_value(cpu);
        const std::string k = "user:1";
        kv->put(k, {4, 5, 6});
        const uint32_t spu = uint32_t(sw::KvStore::hash(k) % kSpus);
        m.stack->kernel.on(cpu).apps->revoke(cpu.process().pid, m.stack->kv_base(spu), {spu});
        const uint64_t regranted = m.stack->module.stats().regranted;
        EXPECT_EQ(kv->get(k), (std::vector<uint8_t>{4, 5, 6}));
        EXPECT_EQ(m.stack->module.stats().regranted, regranted + 1);
    });
}

TEST(KeyValue, AProcessWithoutAGrantIsRefused) {
    KvMachine m;
    auto& other = m.platform->host.kernel.create_process("no-grant");
    bool done = false;
    std::string why;
    m.platform->host.cores.at(2)->run(other, [&](host::HostCore& cpu) {
        WillowStack::User u(*m.stack, m.running);
        m.stack->wait_ready(cpu);
        sw::KvStore kv(std::make_unique<sw::Hre>(cpu, m.stack->driver.open(cpu)),
                       m.stack->cfg.kv_app, kSpus, m.stack->cfg.kv_buckets);
        why = refusal([&] { kv.put("secret", {1, 2, 3}); });
        done = true;
    });
    sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
    ASSERT_TRUE(done);
    EXPECT_NE(why.find("SPU_OS_E_PERMISSION"), std::string::npos) << why;
}
#endif

}  // namespace
}  // namespace canopy::platform
