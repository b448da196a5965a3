// Willow's protection against a hostile SSD App (Willow Section 3.1 "Protection and sharing";
// docs/spu_os.md "Protection"): each test is an attack by a second installed app (the store test
// app's relay, handler 14, sends any request in the name of the request it serves, as a hostile
// app would) or by a second process, refused by SPU-OS, reported to the host kernel
// (NOTIFY_DENIED), with the victim's apps, data and transactions intact. The Flash-Cosmos attack
// by a second process is flash_cosmos_test.cpp's AnotherProcessCanNeitherReadNorReleaseOperands.
// Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "spu_os_host.hpp"
#include "sw/firmware/apps/atomic_writes_abi.h"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace spu_os_host;

constexpr uint32_t kAttacker = kProcess + 1;
constexpr uint32_t kAttackerHre = (kAttacker << 10) | 2;
constexpr unsigned kRelay = 14;
constexpr unsigned kAwApp = 5, kAwSlot = 4;  // as the host's Willow stack installs it

// The store app on `spu` relays `payload` as RPC `rpc_id` to `node`, serving a request of
// `origin`: the relayed request's result, or SPU-OS's refusal to send it.
uint32_t relay(Host& h, unsigned spu, uint32_t origin, uint32_t node, uint32_t rpc_id,
               const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> b = Host::bytes({node, rpc_id});
    b.insert(b.end(), payload.begin(), payload.end());
    return h.call(spu, kStoreApp, kRelay, b, origin);
}

// The NOTIFY_DENIED notices among the first `n` the host kernel received.
std::vector<Words> denied(Host& h, size_t n) {
    std::vector<Words> out;
    for (const Notice& x : h.notices(n))
        if (x.rpc_id == SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_DENIED))
            out.push_back(x.words);
    return out;
}

// Hole: "kernel authority leaks through apps". An app serving the kernel's request sends
// SPU-OS's kernel-only RPCs to another SPU (remove an app, grant a process the whole store,
// install code) and forges a notice to the host kernel. Every one is refused where it is sent:
// an app's requests carry its own app id, never app 0's.
TEST(SpuOsProtection, AnAppServingTheKernelCannotUseTheKernelsAuthority) {
    run_ssd(2, [](Host& h, Willow&) {
        for (unsigned s = 0; s < 2; ++s) h.install(s, "app_store", kStoreApp, 0);
        const uint32_t bridge = 2;
        struct Attempt {
            uint32_t node, rpc_id;
            Words payload;
        };
        const Attempt attempts[] = {
            {1, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_REMOVE), {kStoreApp}},
            {1,
             SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_PERM_ADD),
             {kAttacker, 0, 0x7fffffffu, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE}},
            {1, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_INSTALL_DATA), {1, 0, 0xbad}},
            {bridge,
             SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_FAULT),
             {1, kStoreApp, 7, 0, 0, kKernelHre}},
        };
        for (const Attempt& a : attempts)
            EXPECT_EQ(relay(h, 0, kKernelHre, a.node, a.rpc_id, Host::bytes(a.payload)),
                      SPU_OS_E_PERMISSION)
                << std::hex << a.rpc_id;
        // Each reported as the app's, for the kernel's request; nothing else reached the host.
        const auto& n = h.notices(4);
        ASSERT_EQ(n.size(), 4u);
        for (size_t i = 0; i < 4; ++i)
            EXPECT_EQ(n[i].words, (Words{0, 0, kStoreApp, SPU_OS_DENIED_RPC_ID, attempts[i].node,
                                         attempts[i].rpc_id}));
        EXPECT_EQ(h.stat(0, SPU_OS_STAT_DENIED), 4u);
        // SPU 1's app is still there, and the attacker's process holds no permission.
        const std::vector<uint8_t> payload = {1, 2, 3};
        EXPECT_EQ(h.call(1, kStoreApp, 0, payload, kUserHre), checksum(payload));
        EXPECT_EQ(h.call(1, kStoreApp, 2, Words{0x8000000u + 0x1000, 8}, kAttackerHre),
                  SPU_OS_E_PERMISSION);
        // The same relay under the app's own id is served: the rule is the id, not the relay.
        EXPECT_EQ(relay(h, 0, kUserHre, 1, SPU_OS_RPC_ID(kStoreApp, 0), payload),
                  checksum(payload));
    });
}

// Hole: "Atomic-Writes trusts any app on any SPU as a peer". A second app on SPU 0, serving
// another process, sends Atomic-Writes' peer RPCs (ABORT, PREPARE, APPLY) naming the victim's
// transaction on SPU 1. None leaves SPU 0: only Atomic-Writes sends under its id, so a request
// under that id from an SPU is a peer's. The victim commits, and its data lands.
TEST(SpuOsProtection, OnlyAtomicWritesItselfActsAsItsPeer) {
    run_ssd(2, [](Host& h, Willow& ssd) {
        const uint32_t bank = uint32_t(ssd.dram.bank_bytes());
        const uint32_t log = bank + 0x100000, log_bytes = 0x20000, target = bank + 0x200000;
        h.install(0, "app_store", kStoreApp, 0);
        h.install(1, "app_atomic_writes", kAwApp, kAwSlot);
        ASSERT_EQ(h.call(1, kAwApp, AW_SETUP, Words{log, log_bytes, 1, 2, 1}, kKernelHre), AW_OK);
        ASSERT_EQ(h.kernel(1, SPU_OS_RPC_PERM_ADD,
                           {kProcess, log, log_bytes, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE,
                            kProcess, target, 4096, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE}),
                  SPU_OS_OK);
        const uint32_t tx = 9;
        std::vector<uint8_t> data(64);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(0x5a ^ i);
        std::vector<uint8_t> write = Host::bytes({tx, target, uint32_t(data.size())});
        write.insert(write.end(), data.begin(), data.end());
        ASSERT_EQ(h.call(1, kAwApp, AW_LOGWRITE, write, kUserHre), AW_OK);

        const std::vector<uint8_t> victims = Host::bytes({tx, kUserHre});
        for (unsigned rpc : {AW_ABORT, AW_PREPARE, AW_APPLY})
            EXPECT_EQ(relay(h, 0, kAttackerHre, 1, SPU_OS_RPC_ID(kAwApp, rpc), victims),
                      SPU_OS_E_PERMISSION)
                << "AW RPC " << rpc;
        const auto d = denied(h, 3);
        ASSERT_EQ(d.size(), 3u);
        EXPECT_EQ(d[0], (Words{0, kAttacker, kStoreApp, SPU_OS_DENIED_RPC_ID, 1,
                               SPU_OS_RPC_ID(kAwApp, AW_ABORT)}));

        // The transaction is whole: committed, its write is in the store.
        std::vector<uint8_t> got(data.size());
        ssd.dram.read(target, got.data(), got.size());
        EXPECT_NE(got, data);
        EXPECT_EQ(h.call(1, kAwApp, AW_COMMIT, Words{tx, 1u << 1}, kUserHre), AW_OK);
        ssd.dram.read(target, got.data(), got.size());
        EXPECT_EQ(got, data);
    });
}

// Hole: NVM transfers on the SSD-memory store were checked by permission only, which the
// kernel's requests skip. An app serving the kernel reaches for another SPU's bank, past its own
// bank's end and around the 32-bit address space: each is SPU_OS_E_RANGE, reported, and the other
// SPU's bytes stay as they were.
TEST(SpuOsProtection, NvmTransfersStayInTheSpusOwnStore) {
    run_ssd(2, [](Host& h, Willow& ssd) {
        h.install(0, "app_store", kStoreApp, 0);
        const uint32_t bank = uint32_t(ssd.dram.bank_bytes());
        const uint32_t theirs = bank + 0x1000, mine = 0x1000;
        const std::vector<uint8_t> secret(64, 0xc3);
        ssd.dram.write(theirs, secret.data(), secret.size());
        std::vector<uint8_t> store = Host::bytes({theirs, 64});
        store.insert(store.end(), 64, 0);
        auto load = [&](uint32_t addr, uint32_t n) {
            return h.call(0, kStoreApp, 2, Words{addr, n}, kKernelHre);
        };
        auto copy = [&](uint32_t dst, uint32_t src, uint32_t n) {
            return h.call(0, kStoreApp, 12, Words{dst, src, n}, kKernelHre);
        };
        EXPECT_EQ(h.call(0, kStoreApp, 1, store, kKernelHre), SPU_OS_E_RANGE);
        EXPECT_EQ(load(theirs, 64), SPU_OS_E_RANGE);
        EXPECT_EQ(load(bank - 32, 64), SPU_OS_E_RANGE);  // past the end of its own bank
        EXPECT_EQ(load(0xfffffff0u, 64), SPU_OS_E_RANGE);
        EXPECT_EQ(copy(mine, theirs, 64), SPU_OS_E_RANGE);
        EXPECT_EQ(copy(theirs, mine, 64), SPU_OS_E_RANGE);
        // Inside its own bank the kernel's request is served.
        EXPECT_EQ(load(bank - 64, 64), checksum(std::vector<uint8_t>(64, 0)));
        EXPECT_EQ(copy(mine, mine + 4096, 64), SPU_OS_OK);

        std::vector<uint8_t> got(secret.size());
        ssd.dram.read(theirs, got.data(), got.size());
        EXPECT_EQ(got, secret);
        const auto d = denied(h, 6);
        ASSERT_EQ(d.size(), 6u);
        EXPECT_EQ(d[0], (Words{0, 0, kStoreApp, SPU_OS_DENIED_RANGE, theirs, 64}));
        EXPECT_EQ(d[2], (Words{0, 0, kStoreApp, SPU_OS_DENIED_RANGE, bank - 32, 64}));
        EXPECT_EQ(h.stat(0, SPU_OS_STAT_DENIED), 6u);
    });
}

// APP_REGION (Willow 4.4: Caching's store is the app's own, its users' rights the app's entries):
// an app reaches its region for a process that holds no permission entry there, and nothing past
// it; only the kernel gives one (a user's request and an app relaying for the kernel are
// refused); length 0 takes it back; the slot's next tenant does not inherit it.
TEST(SpuOsProtection, AnAppsRegionIsItsOwnAndNoFurther) {
    run_ssd(1, [](Host& h, Willow&) {
        constexpr unsigned kOther = 3;
        h.install(0, "app_store", kStoreApp, 0);
        const uint32_t base = 0x4000, bytes = 0x2000;
        auto load = [&](unsigned app, uint32_t addr, uint32_t n) {
            return h.call(0, app, 2, Words{addr, n}, kUserHre);
        };
        auto region = [&](unsigned app, uint32_t start, uint32_t n) {
            return h.kernel(0, SPU_OS_RPC_APP_REGION, Words{app, start, n});
        };
        EXPECT_EQ(load(kStoreApp, base, 64), SPU_OS_E_PERMISSION);  // no entry, no region
        EXPECT_EQ(region(kStoreApp, base, bytes), SPU_OS_OK);
        const uint32_t zeros = checksum(std::vector<uint8_t>(64, 0));
        EXPECT_EQ(load(kStoreApp, base, 64), zeros);
        EXPECT_EQ(load(kStoreApp, base + bytes - 64, 64), zeros);
        EXPECT_EQ(load(kStoreApp, base + bytes - 32, 64), SPU_OS_E_PERMISSION);  // past its end
        EXPECT_EQ(load(kStoreApp, base - 32, 64), SPU_OS_E_PERMISSION);          // before it
        // Only the kernel's HRE gives regions: not a user, not an app relaying for the kernel.
        const std::vector<uint8_t> grab = Host::bytes({kStoreApp, 0, 0xFFFFFFFFu});
        EXPECT_EQ(h.call(0, SPU_OS_KERNEL_APP, SPU_OS_RPC_APP_REGION, grab, kUserHre),
                  SPU_OS_E_KERNEL_ONLY);
        EXPECT_NE(relay(h, 0, kKernelHre, 0, SPU_OS_RPC_ID(0, SPU_OS_RPC_APP_REGION), grab),
                  SPU_OS_OK);
        EXPECT_EQ(load(kStoreApp, 0, 64), SPU_OS_E_PERMISSION);
        // Malformed: an unknown app, a wrapping range, a short payload; nothing changes.
        EXPECT_EQ(region(9, base, bytes), SPU_OS_E_NO_APP);
        EXPECT_EQ(region(kStoreApp, 0xFFFFF000u, 0x2000), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(h.kernel(0, SPU_OS_RPC_APP_REGION, Words{kStoreApp, base}), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(load(kStoreApp, base, 64), zeros);
        EXPECT_EQ(region(kStoreApp, base, 0), SPU_OS_OK);
        EXPECT_EQ(load(kStoreApp, base, 64), SPU_OS_E_PERMISSION);
        // The slot's next tenant starts without one.
        EXPECT_EQ(region(kStoreApp, base, bytes), SPU_OS_OK);
        EXPECT_EQ(h.kernel(0, SPU_OS_RPC_REMOVE, Words{kStoreApp}), SPU_OS_OK);
        h.install(0, "app_store", kOther, 0);
        EXPECT_EQ(load(kOther, base, 64), SPU_OS_E_PERMISSION);
    });
}
#endif

}  // namespace
}  // namespace canopy::platform
