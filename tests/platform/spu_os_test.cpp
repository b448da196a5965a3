// SPU-OS on the whole Willow SSD (Willow Section 3.1; sw/firmware/spu_os, docs/spu_os.md): every
// SPU boots SPU-OS, and a network interface of the test's own at the bridge's ring node stands
// for the host: it sends kernel RPCs (origin HRE with zero high bits) to install SSD Apps from
// their ELF images and grant permissions, user RPCs (a process's HRE) to run them, and answers the
// notices SPU-OS sends the host kernel (faults, permission misses). Each TEST elaborates once
// (its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "spu_os_host.hpp"

namespace canopy::platform {
namespace {
using namespace spu_os_host;

#ifdef CANOPY_FIRMWARE_DIR
TEST(SpuOs, BootsOnEverySpuAndDispatchesKernelRpcs) {
    const std::string console = run_ssd(4, [](Host& host, Willow&) {
        for (unsigned spu = 0; spu < 4; ++spu)
            EXPECT_EQ(host.call(spu, SPU_OS_KERNEL_APP, SPU_OS_RPC_PING, Words{}, kUserHre),
                      SPU_OS_ABI_VERSION);
        // No app 5 yet; a kernel-only RPC from a user HRE is refused, from the kernel served.
        EXPECT_EQ(host.call(1, 5, 0, Words{}, kUserHre), SPU_OS_E_NO_APP);
        EXPECT_EQ(
            host.call(2, SPU_OS_KERNEL_APP, SPU_OS_RPC_STAT, Words{SPU_OS_STAT_FAULTS}, kUserHre),
            SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(host.call(2, SPU_OS_KERNEL_APP, SPU_OS_RPC_ACTIVATE, Words{1, 0}, kUserHre),
                  SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(host.stat(2, SPU_OS_STAT_FAULTS), 0u);
        // Malformed kernel RPCs fail cleanly.
        EXPECT_EQ(host.kernel(2, SPU_OS_RPC_ACTIVATE, {1}), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(host.kernel(2, SPU_OS_RPC_ACTIVATE, {1, 0}), SPU_OS_E_BAD_ARG);  // empty slot
        EXPECT_EQ(host.kernel(2, SPU_OS_RPC_INSTALL_CODE, {SPU_OS_SLOTS, 0, 0}), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(host.kernel(2, SPU_OS_RPC_INSTALL_CODE, {0, SPU_OS_CODE_SLOT_SIZE - 4, 1, 2}),
                  SPU_OS_E_BAD_ARG);
        EXPECT_EQ(host.kernel(2, 0x55, {}), SPU_OS_E_NO_HANDLER);
    });
    for (unsigned spu = 0; spu < 4; ++spu)
        EXPECT_NE(console.find("spu-os " + std::to_string(SPU_OS_ABI_VERSION) + ": node " +
                               std::to_string(spu) + " of 4"),
                  std::string::npos)
            << console;
}

TEST(SpuOs, InstalledAppServesRpcsInUserMode) {
    const std::string console = run_ssd(3, [](Host& host, Willow&) {
        host.install(1, "app_store", kStoreApp, 0);
        host.install(2, "app_store", kStoreApp, 0);
        // A user process cannot install, remove or activate.
        EXPECT_EQ(host.call(1, 0, SPU_OS_RPC_REMOVE, Words{kStoreApp}, kUserHre),
                  SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(host.call(1, 0, SPU_OS_RPC_INSTALL_DATA, Words{1, 0, 0}, kUserHre),
                  SPU_OS_E_KERNEL_ONLY);
        // The same slot or app id twice is refused.
        EXPECT_EQ(host.kernel(1, SPU_OS_RPC_ACTIVATE, {9, 0}), SPU_OS_E_STATE);
        EXPECT_EQ(host.kernel(1, SPU_OS_RPC_INSTALL_CODE, {0, 0, 0}), SPU_OS_E_STATE);

        std::vector<uint8_t> payload(200);
        for (size_t i = 0; i < payload.size(); ++i) payload[i] = uint8_t(i * 13 + 1);
        EXPECT_EQ(host.call(1, kStoreApp, 0, payload, kUserHre), checksum(payload));
        EXPECT_EQ(host.call(1, kStoreApp, 4, Words{}, kUserHre), SPU_OS_E_NO_RESPONSE);
        EXPECT_EQ(host.call(1, kStoreApp, 16, Words{}, kUserHre), SPU_OS_E_NO_HANDLER);
        EXPECT_EQ(host.call(1, kStoreApp, 8, Words{}, kUserHre), SPU_OS_OK);
        // Every bad pointer was refused, and SPU-OS still answers.
        EXPECT_EQ(host.call(1, kStoreApp, 3, Words{}, kUserHre), 0xfu);
        EXPECT_EQ(host.call(1, kStoreApp, 0, payload, kUserHre), checksum(payload));

        const uint32_t cycles = host.call(1, kStoreApp, 5, Words{}, kUserHre);
        const uint32_t os_part = host.stat(1, SPU_OS_STAT_DISPATCH_CYCLES);
        std::cout << "[ SPU-OS   ] dispatch: " << cycles << " cycles (" << cycles / 125.0
                  << " us) from reading the header to the handler's first instruction, " << os_part
                  << " of them before the switch to user mode\n";
        RecordProperty("dispatch_cycles", int(cycles));
        EXPECT_GT(cycles, os_part);
        EXPECT_LT(cycles, 500u);

        // A synchronous RPC from SPU 1's app to SPU 2's: data and result come back ...
        std::vector<uint8_t> sixteen(16);
        for (size_t i = 0; i < 16; ++i) sixteen[i] = uint8_t(i + 1);
        EXPECT_EQ(host.call(1, kStoreApp, 6, Words{2, SPU_OS_RPC_ID(kStoreApp, 0)}, kUserHre),
                  checksum(sixteen));
        // ... but an app sends under its own id only: not to SPU-OS's kernel RPCs (refused
        // where it is sent, and reported: spu_os_protection_test.cpp).
        EXPECT_EQ(
            host.call(1, kStoreApp, 6,
                      Words{2, SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_REMOVE)}, kUserHre),
            SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.call(2, kStoreApp, 0, payload, kUserHre), checksum(payload));

        // Removed, the app is gone.
        EXPECT_EQ(host.kernel(1, SPU_OS_RPC_REMOVE, {kStoreApp}), SPU_OS_OK);
        EXPECT_EQ(host.call(1, kStoreApp, 0, payload, kUserHre), SPU_OS_E_NO_APP);
        EXPECT_EQ(host.stat(1, SPU_OS_STAT_FAULTS), 0u);
        ASSERT_EQ(host.notices(1).size(), 1u);
        EXPECT_EQ(host.notices(1)[0].rpc_id,
                  SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_DENIED));
    });
    EXPECT_NE(console.find("hello from the store app"), std::string::npos) << console;
}

TEST(SpuOs, FaultingAppIsDisabledAndReportedWhileOthersGoOn) {
    struct Case {
        unsigned handler;
        uint32_t mcause, mtval;
    };
    // Store outside the segment, jump outside it, a privileged CSR, an endless loop (watchdog).
    const Case cases[] = {{1, 7, 0x10010}, {2, 1, 0x100}, {4, 2, 0}, {3, 0x80000007u, 0}};
    const std::string console = run_ssd(2, [&](Host& host, Willow&) {
        host.install(0, "app_store", kStoreApp, 0);
        std::vector<uint8_t> payload = {1, 2, 3};
        size_t seen = 0;
        for (const Case& c : cases) {
            host.install(0, "app_rogue", kRogueApp, 1);
            EXPECT_EQ(host.call(0, kRogueApp, 0, Words{}, kUserHre), 42u);
            EXPECT_EQ(host.call(0, kRogueApp, c.handler, Words{}, kUserHre), SPU_OS_E_APP_FAULT);
            const auto& n = host.notices(seen + 1);
            ASSERT_EQ(n.size(), seen + 1) << "no FAULT notice for handler " << c.handler;
            const Notice& f = n[seen++];
            EXPECT_EQ(f.src, 0u);
            EXPECT_EQ(f.rpc_id, SPU_OS_RPC_ID(0, SPU_OS_RPC_NOTIFY_FAULT));
            ASSERT_EQ(f.words.size(), 6u);
            EXPECT_EQ(f.words[0], 0u);         // node
            EXPECT_EQ(f.words[1], kRogueApp);  // app
            EXPECT_EQ(f.words[2], c.mcause);   // cause
            if (c.mcause != 2 && c.mcause != 0x80000007u) {
                EXPECT_EQ(f.words[3], c.mtval);
            }
            if (c.mcause == 1) {
                EXPECT_EQ(f.words[4], 0x100u);  // the pc: where it jumped ...
            } else {
                EXPECT_EQ((f.words[4] - SPU_OS_CODE_SLOT_BASE) / SPU_OS_CODE_SLOT_SIZE,
                          1u)  // ... or in slot 1
                    << std::hex << f.words[4];
            }
            EXPECT_EQ(f.words[5], kUserHre);  // on whose behalf
            // Disabled from now on; the other app goes on.
            EXPECT_EQ(host.call(0, kRogueApp, 0, Words{}, kUserHre), SPU_OS_E_DISABLED);
            EXPECT_EQ(host.call(0, kStoreApp, 0, payload, kUserHre), checksum(payload));
            EXPECT_EQ(host.kernel(0, SPU_OS_RPC_REMOVE, {kRogueApp}), SPU_OS_OK);
        }
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_FAULTS), 4u);
    });
    EXPECT_NE(console.find("spu-os: app 2 disabled"), std::string::npos) << console;
}

// The system-call contract (spu_os_abi.h): a call that returns to its caller keeps what a callee
// keeps and hands a1-a7 and t0-t6 back zero, so none of SPU-OS's values reach the app; one that
// may run other handlers (WAIT_RESPONSE) keeps every register. rogue.c's handler 5 sets every
// register, makes the call and answers the registers that broke the contract.
TEST(SpuOs, SystemCallsKeepWhatACalleeKeepsAndHandBackNothingElse) {
    run_ssd(1, [](Host& host, Willow&) {
        host.install(0, "app_rogue", kRogueApp, 1);
        EXPECT_EQ(host.call(0, kRogueApp, 5, Words{}, kUserHre), 0u);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_FAULTS), 0u);
    });
}

TEST(SpuOs, NvmAccessNeedsAPermissionTheKernelGrants) {
    run_ssd(2, [](Host& host, Willow& ssd) {
        host.install(0, "app_store", kStoreApp, 0);
        const uint32_t addr = 0x200000, other = 0x300000;
        std::vector<uint8_t> data(64);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(0xa0 + i);
        std::vector<uint8_t> store = Host::bytes({addr, uint32_t(data.size())});
        store.insert(store.end(), data.begin(), data.end());
        const Words load = {addr, uint32_t(data.size())};

        // No entry: refused, and the kernel hears who wanted what.
        EXPECT_EQ(host.call(0, kStoreApp, 1, store, kUserHre), SPU_OS_E_PERMISSION);
        const auto& n = host.notices(1);
        ASSERT_EQ(n.size(), 1u);
        EXPECT_EQ(n[0].rpc_id, SPU_OS_RPC_ID(0, SPU_OS_RPC_NOTIFY_PERM_MISS));
        EXPECT_EQ(n[0].words, (Words{0, kProcess, kStoreApp, addr, 64, SPU_OS_PERM_WRITE}));
        std::vector<uint8_t> got(data.size());
        ssd.dram.read(addr, got.data(), got.size());
        EXPECT_NE(got, data);

        // Granted (read and write on 4 KiB): stored, and read back.
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_PERM_ADD,
                              {kProcess, addr, 4096, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE, kProcess,
                               other, 4096, SPU_OS_PERM_READ}),
                  SPU_OS_OK);
        EXPECT_EQ(host.call(0, kStoreApp, 1, store, kUserHre), SPU_OS_OK);
        ssd.dram.read(addr, got.data(), got.size());
        EXPECT_EQ(got, data);
        EXPECT_EQ(host.call(0, kStoreApp, 2, load, kUserHre), checksum(data));

        // Read-only, beyond the extent, another process: refused.
        std::vector<uint8_t> store_other = Host::bytes({other, 4});
        store_other.insert(store_other.end(), 4, 0);
        EXPECT_EQ(host.call(0, kStoreApp, 1, store_other, kUserHre), SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.call(0, kStoreApp, 2, Words{other + 4, 8}, kUserHre),
                  checksum({0, 0, 0, 0, 0, 0, 0, 0}));
        EXPECT_EQ(host.call(0, kStoreApp, 2, Words{addr + 4090, 8}, kUserHre), SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.call(0, kStoreApp, 2, load, ((kProcess + 1) << 10) | 3),
                  SPU_OS_E_PERMISSION);
        // The kernel itself may access everything.
        EXPECT_EQ(host.call(0, kStoreApp, 2, load, kKernelHre), checksum(data));
        EXPECT_EQ(host.notices(4).size(), 4u);

        // NVM_COPY needs read rights on the source and write rights on the destination; with
        // 0 bytes it only checks them.
        auto copy = [&](uint32_t dst, uint32_t src, uint32_t n) {
            return host.call(0, kStoreApp, 12, Words{dst, src, n}, kUserHre);
        };
        EXPECT_EQ(copy(addr + 1024, addr, 64), SPU_OS_OK);
        ssd.dram.read(addr + 1024, got.data(), got.size());
        EXPECT_EQ(got, data);
        EXPECT_EQ(copy(other, addr, 64), SPU_OS_E_PERMISSION);               // other is read-only
        EXPECT_EQ(copy(addr + 2048, other + 4096, 4), SPU_OS_E_PERMISSION);  // beyond its entry
        EXPECT_EQ(copy(addr + 2048, other, 8), SPU_OS_OK);
        EXPECT_EQ(copy(other, addr, 0), SPU_OS_E_PERMISSION);
        EXPECT_EQ(copy(addr, other, 0), SPU_OS_OK);
        EXPECT_EQ(copy(addr + 4096, addr, 0), SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.notices(7).size(), 7u);

        // Revoked: refused again; a user cannot grant itself the permission.
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_PERM_REMOVE, {kProcess, addr}), SPU_OS_OK);
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_PERM_REMOVE, {kProcess, addr}), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(host.call(0, kStoreApp, 2, load, kUserHre), SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.call(0, SPU_OS_KERNEL_APP, SPU_OS_RPC_PERM_ADD,
                            Words{kProcess, addr, 4096, SPU_OS_PERM_READ}, kUserHre),
                  SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(host.call(0, kStoreApp, 2, load, kUserHre), SPU_OS_E_PERMISSION);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_ENTRIES), 1u);
    });
}

TEST(SpuOs, InterAppCallsFollowTheCallTable) {
    run_ssd(1, [](Host& host, Willow&) {
        host.install(0, "app_store", kStoreApp, 0);
        host.install(0, "app_rogue", kRogueApp, 1);
        const Words twice = {kRogueApp, 0, 21}, peek = {kRogueApp, 1, 0x10000};
        EXPECT_EQ(host.call(0, kStoreApp, 7, twice, kUserHre), SPU_OS_E_NO_CALL);
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_CALL_ALLOW, {kStoreApp, kRogueApp, 1}), SPU_OS_OK);
        EXPECT_EQ(host.call(0, kStoreApp, 7, twice, kUserHre), 42u);
        EXPECT_EQ(host.call(0, kStoreApp, 7, peek, kUserHre), SPU_OS_E_NO_CALL);
        // A called function that faults is disabled with its app; the caller goes on.
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_CALL_ALLOW, {kStoreApp, kRogueApp, 3}), SPU_OS_OK);
        EXPECT_EQ(host.call(0, kStoreApp, 7, peek, kUserHre), SPU_OS_E_APP_FAULT);
        ASSERT_EQ(host.notices(1).size(), 1u);
        EXPECT_EQ(host.notices(1)[0].words[1], kRogueApp);
        EXPECT_EQ(host.notices(1)[0].words[3], 0x10000u);
        EXPECT_EQ(host.call(0, kStoreApp, 7, twice, kUserHre), SPU_OS_E_DISABLED);
        EXPECT_EQ(host.call(0, kStoreApp, 0, Words{5}, kUserHre), checksum({5, 0, 0, 0}));
    });
}

TEST(SpuOs, WorstCasePermissionCheck) {
    run_ssd(1, [](Host& host, Willow&) {
        host.install(0, "app_store", kStoreApp, 0);
        // 768 extents of one process, added in ascending order: its splay tree degenerates into
        // a path, so the first check of the lowest extent walks all of it.
        constexpr uint32_t kEntries = 768, kBase = 0x100000, kStride = 0x2000;
        for (uint32_t first = 0; first < kEntries; first += 64) {
            Words batch;
            for (uint32_t i = first; i < first + 64; ++i)
                batch.insert(batch.end(), {kProcess, kBase + i * kStride, 4096, SPU_OS_PERM_READ});
            ASSERT_EQ(host.kernel(0, SPU_OS_RPC_PERM_ADD, batch), SPU_OS_OK);
        }
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_ENTRIES), kEntries);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_EVICTIONS), 0u);
        auto check = [&](uint32_t i) {
            EXPECT_EQ(host.call(0, kStoreApp, 2, Words{kBase + i * kStride + 8, 16}, kUserHre),
                      checksum(std::vector<uint8_t>(16)));
            return host.stat(0, SPU_OS_STAT_PERM_CHECK_LAST);
        };
        const uint32_t degenerate = check(0);
        // Then checks spread over the table (a stride prime to 768): once the first ones have
        // reshaped the tree, the cost splaying settles at (amortised O(log n)).
        std::vector<uint32_t> settled;
        for (uint32_t k = 1; k <= 300; ++k) {
            const uint32_t c = check(k * 389 % kEntries);
            if (k > 100) settled.push_back(c);
        }
        std::sort(settled.begin(), settled.end());
        const uint32_t median = settled[settled.size() / 2], worst = settled.back();
        // Cycles equal instructions here: SPU-OS's tables are in DMEM, one cycle per access.
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_CHECK_MAX),
                  host.stat(0, SPU_OS_STAT_PERM_CHECK_INSNS_MAX) + 2);
        std::cout << "[ SPU-OS   ] permission check, 768 entries of one process: " << degenerate
                  << " cycles (" << degenerate / 125.0
                  << " us at 125 MHz) for the first check of the deepest extent of a degenerate "
                     "tree; then over 200 spread checks median "
                  << median << " cycles (" << median / 125.0 << " us), worst " << worst
                  << " cycles (" << worst / 125.0 << " us)\n";
        RecordProperty("perm_check_degenerate_cycles", int(degenerate));
        RecordProperty("perm_check_median_cycles", int(median));
        RecordProperty("perm_check_worst_settled_cycles", int(worst));
        EXPECT_LT(median, 375u);  // Willow 3.1: about 2 us (250 cycles)
        EXPECT_LT(worst, 1250u);
        EXPECT_GT(degenerate, 10 * median);
        // One more entry evicts one (the table is full); the check still works.
        EXPECT_EQ(host.kernel(0, SPU_OS_RPC_PERM_ADD, {kProcess + 1, 0, 4096, SPU_OS_PERM_READ}),
                  SPU_OS_OK);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_ENTRIES), kEntries);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_PERM_EVICTIONS), 1u);
        EXPECT_EQ(host.call(0, kStoreApp, 2, Words{8, 16}, ((kProcess + 1) << 10) | 1),
                  checksum(std::vector<uint8_t>(16)));
    });
}
TEST(SpuOs, HandlerWaitingForAResponseLetsOtherRpcsRun) {
    run_ssd(1, [](Host& host, Willow&) {
        host.install(0, "app_store", kStoreApp, 0);
        const uint16_t asked = SPU_OS_RPC_ID(kStoreApp, 0x20);
        host.hold(asked);
        // A handler asks the host (HRE 0x405) and waits: it is suspended on lane 0 ...
        const std::vector<uint8_t> echo = Host::bytes({5});
        const uint16_t first = host.send(0, kStoreApp, 9, Host::bytes({1, 0x405, 10}), kUserHre);
        ASSERT_EQ(host.held(1).size(), 1u);
        EXPECT_EQ(host.held(1)[0].origin_hre, kUserHre);  // propagated
        EXPECT_EQ(host.held(1)[0].dst_hre, 0x405u);
        // ... and the SPU serves other requests meanwhile, of the same app (lane 1) and others.
        EXPECT_EQ(host.call(0, kStoreApp, 0, echo, kUserHre), checksum(echo));
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_SUSPENDED), 1u);
        // A second one takes lane 1: the app's next request waits for a lane, and the requests
        // behind it with it (the network interface shows only its head).
        const uint16_t second = host.send(0, kStoreApp, 9, Host::bytes({1, 0x405, 20}), kUserHre);
        ASSERT_EQ(host.held(2).size(), 2u);
        const uint16_t blocked = host.send(0, kStoreApp, 0, echo, kUserHre);
        EXPECT_EQ(host.held(3).size(), 2u);  // 10 ms pass
        EXPECT_FALSE(host.has_result(blocked));
        // The answers resume the handlers, in any order.
        host.answer(1, 200);
        EXPECT_EQ(host.result(second), 201u);
        EXPECT_EQ(host.result(blocked), checksum(echo));
        host.answer(0, 100);
        EXPECT_EQ(host.result(first), 101u);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_SUSPENDED), 2u);
        EXPECT_EQ(host.call(0, kStoreApp, 0, Words{5}, kUserHre), checksum({5, 0, 0, 0}));
    });
}

// A response that never comes: the suspended handler resumes with SPU_OS_E_TIMEOUT after
// SPU_OS_WAIT_TIMEOUT_US (the store app answers its wait's result plus one), its lane is free
// again, and the late answer is dropped.
// A fan-out: a handler finishes several requests, then waits once for all of them (Atomic-Writes'
// coordinator broadcasts PREPARE and APPLY so). The wait answers SPU_OS_OK when every response
// was, else the failing one's result; more than SPU_OS_MAX_AWAITED unanswered is refused.
TEST(SpuOs, AHandlerWaitsOnceForAFanOutOfRequests) {
    run_ssd(2, [](Host& host, Willow&) {
        for (unsigned s = 0; s < 2; ++s) host.install(s, "app_store", kStoreApp, 0);
        auto fan_out = [&](uint32_t n, uint32_t bad) {
            return host.call(0, kStoreApp, 13, Words{1, n, bad}, kKernelHre);
        };
        EXPECT_EQ(fan_out(1, ~0u), SPU_OS_OK);
        EXPECT_EQ(fan_out(SPU_OS_MAX_AWAITED, ~0u), SPU_OS_OK);
        EXPECT_EQ(fan_out(5, 3), SPU_OS_E_BAD_ARG);  // request 3 of 5 failed
        EXPECT_EQ(fan_out(5, 0), SPU_OS_E_BAD_ARG);
        EXPECT_EQ(fan_out(SPU_OS_MAX_AWAITED + 1, ~0u), SPU_OS_E_STATE);
        // Waiting without a request finished, and the SPUs still serve after all that.
        EXPECT_EQ(fan_out(0, ~0u), SPU_OS_E_STATE);
        EXPECT_EQ(fan_out(3, ~0u), SPU_OS_OK);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_WAIT_TIMEOUTS), 0u);
    });
}

TEST(SpuOs, ASuspendedHandlerWhoseResponseNeverComesTimesOut) {
    run_ssd(1, [](Host& host, Willow&) {
        host.install(0, "app_store", kStoreApp, 0);
        host.hold(SPU_OS_RPC_ID(kStoreApp, 0x20));
        host.timeout = sc_core::sc_time(1, sc_core::SC_SEC);
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        const uint16_t asking = host.send(0, kStoreApp, 9, Host::bytes({1, 0x405, 10}), kUserHre);
        ASSERT_EQ(host.held(1).size(), 1u);
        EXPECT_EQ(host.result(asking), SPU_OS_E_TIMEOUT + 1);
        const double waited_us = (sc_core::sc_time_stamp() - t0).to_seconds() * 1e6;
        EXPECT_GE(waited_us, SPU_OS_WAIT_TIMEOUT_US);
        EXPECT_LT(waited_us, SPU_OS_WAIT_TIMEOUT_US + 1000);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_WAIT_TIMEOUTS), 1u);
        host.answer(0, 7);  // too late: nobody waits for it
        // Both lanes serve again: two handlers suspended at once, both answered in time.
        const uint16_t a = host.send(0, kStoreApp, 9, Host::bytes({1, 0x405, 20}), kUserHre);
        const uint16_t b = host.send(0, kStoreApp, 9, Host::bytes({1, 0x405, 30}), kUserHre);
        ASSERT_EQ(host.held(3).size(), 3u);
        host.answer(1, 40);
        host.answer(2, 50);
        EXPECT_EQ(host.result(a), 41u);
        EXPECT_EQ(host.result(b), 51u);
        EXPECT_EQ(host.stat(0, SPU_OS_STAT_WAIT_TIMEOUTS), 1u);
    });
}
#endif

}  // namespace
}  // namespace canopy::platform
