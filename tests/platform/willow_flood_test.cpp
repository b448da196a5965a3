// A full receive buffer on the whole platform (Willow Section 3.1 "RPC interface": "the network
// drops a request when the receiver's buffer is full, which is rare"; responses are always
// delivered because their space is reserved when the request is sent). SPU-OS runs on every SPU
// with the store test app (sw/firmware/apps/store.c) installed from the host; a user process
// keeps one SPU's 32 KiB receive buffer full with a slow handler holding a 20 KiB request and
// sends more 20 KiB requests behind it. Checked: each of those comes back as a NACK (the bridge's
// HRE_STATUS_NACK), exactly as many as the SPU's network interface dropped, while every accepted
// request's response arrives with the right result, the other SPUs go on serving, and the same
// requests sent again once the buffer drained all succeed. Each TEST elaborates once.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ssd/hre_queue.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/hre.hpp"
#include "sw/host/willow_apps.hpp"
#include "sw/host/willow_driver.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;  // firmware, pattern, wait_for, WillowMachine

constexpr uint32_t kStoreApp = 1, kStoreSlot = 0;
constexpr uint8_t kEcho = 0, kSlowEcho = 10;  // store.c's handlers
constexpr unsigned kSpus = 3, kFull = 1;      // SPU kFull's buffer is kept full
constexpr uint32_t kBig = 20 * 1024;          // two do not fit a 32 KiB receive buffer
constexpr uint32_t kSlowCycles = 40000;       // 320 us at 125 MHz: far longer than the sends
constexpr unsigned kBehind = 5;               // big requests sent behind the slow one

uint32_t checksum(const uint8_t* p, size_t n) {  // store.c's, over at most 256 B
    uint32_t s = 0;
    for (size_t i = 0; i < n && i < 256; ++i) s = s * 31 + p[i];
    return s;
}

uint64_t counter(core::Services& s, const std::string& module, const char* name) {
    auto* c = dynamic_cast<const core::Counter*>(s.stats.find(module, name));
    EXPECT_NE(c, nullptr) << module << "." << name;
    return c ? c->value() : 0;
}

TEST(PlatformWillowFlood, FullReceiveBufferDropsRequestsButNoResponse) {
    WillowMachine m(kSpus);
    ASSERT_GE(m.cfg.ssd.ni.rx_buffer_bytes, kBig + 64);
    ASSERT_LT(m.cfg.ssd.ni.rx_buffer_bytes, 2 * kBig);
    core::Services& services = m.services;
    Platform& platform = *m.platform;
    sw::WillowDriver driver(platform.device.willow_device());
    auto& kernel = platform.host.kernel.create_process("kernel");
    auto& user = platform.host.kernel.create_process("user");
    bool installed = false, done = false;
    unsigned nacks = 0, resent_ok = 0;
    platform.host.cores[0]->run(kernel, [&](host::HostCore& cpu) {
        sw::Hre hre(cpu, driver.open(cpu, /*kernel=*/true));
        sw::WillowApps apps(hre, kSpus);
        apps.install(firmware("app_store"), kStoreApp, kStoreSlot);
        installed = true;
    });
    platform.host.cores[1]->run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, installed);
        sw::Hre hre(cpu, driver.open(cpu));
        // The slow request: {cycles} + data; the big ones: data.
        std::vector<uint8_t> slow = pattern(kBig, 7);
        std::memcpy(slow.data(), &kSlowCycles, 4);
        const uint16_t slow_tag =
            hre.send(kFull, SPU_OS_RPC_ID(kStoreApp, kSlowEcho), slow.data(), kBig);
        std::vector<std::vector<uint8_t>> big;
        std::vector<uint16_t> tags;
        for (unsigned i = 0; i < kBehind; ++i) {
            big.push_back(pattern(kBig, 11 + i));
            tags.push_back(
                hre.send(kFull, SPU_OS_RPC_ID(kStoreApp, kEcho), big.back().data(), kBig));
        }
        // The other SPUs are not held up.
        std::vector<std::vector<uint8_t>> small;
        std::vector<uint16_t> small_tags;
        for (unsigned s = 0; s < kSpus; ++s) {
            if (s == kFull) continue;
            small.push_back(pattern(64, 3 + s));
            small_tags.push_back(
                hre.send(uint8_t(s), SPU_OS_RPC_ID(kStoreApp, kEcho), small.back().data(), 64));
        }
        for (size_t i = 0; i < small_tags.size(); ++i) {
            const sw::Hre::Response r = hre.wait(small_tags[i]);
            EXPECT_TRUE(r.ok()) << "status " << r.status;
            EXPECT_EQ(r.result, checksum(small[i].data(), 64));
        }
        for (size_t i = 0; i < tags.size(); ++i) {
            const sw::Hre::Response r = hre.wait(tags[i]);
            EXPECT_EQ(r.node, kFull);
            if (r.status == HRE_STATUS_NACK)
                ++nacks;
            else
                EXPECT_EQ(r.result, checksum(big[i].data(), kBig)) << "request " << i;
        }
        const sw::Hre::Response r = hre.wait(slow_tag);
        EXPECT_TRUE(r.ok()) << "status " << r.status;
        EXPECT_EQ(r.result, checksum(slow.data() + 4, kBig - 4));
        // Sent again one at a time, the dropped requests go through.
        for (size_t i = 0; i < big.size(); ++i) {
            const sw::Hre::Response again =
                hre.call(kFull, SPU_OS_RPC_ID(kStoreApp, kEcho), big[i].data(), kBig);
            resent_ok += again.ok() && again.result == checksum(big[i].data(), kBig);
        }
        done = true;
    });
    sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
    EXPECT_EQ(platform.host.first_fault(), "");
    ASSERT_TRUE(done);
    // Every request behind the slow one found the buffer full.
    EXPECT_EQ(nacks, kBehind);
    EXPECT_EQ(resent_ok, kBehind);
    Willow& ssd = platform.device.ssd;
    const std::string full_ni = std::string(ssd.spus[kFull]->name()) + ".ni";
    EXPECT_EQ(counter(services, full_ni, "rx_dropped"), kBehind);
    EXPECT_EQ(counter(services, full_ni, "nacks_sent"), kBehind);
    // No response was lost anywhere on the ring.
    for (const auto& spu : ssd.spus)
        EXPECT_EQ(counter(services, std::string(spu->name()) + ".ni", "responses_dropped"), 0u);
    EXPECT_EQ(counter(services, ssd.bridge_ni->name(), "responses_dropped"), 0u);
    EXPECT_EQ(counter(services, ssd.bridge_ni->name(), "nacks_received"), kBehind);
}
#endif

}  // namespace
}  // namespace canopy::platform
