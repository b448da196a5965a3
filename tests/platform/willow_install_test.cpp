// Installing SSD Apps at run time from the host (Willow Section 3.1 "Building an SSD App",
// "Protection and sharing"), on the whole platform: every SPU boots SPU-OS, a host program in the
// kernel's role installs app_store (and app_rogue) from their ELFs with sw::WillowApps through a
// kernel HRE and grants a user process an extent of the SSD memory; a user process on another
// core opens its own HRE and calls the app. Checked: the user's data lands in the SSD memory and
// reads back, the user cannot install (kernel-only RPC), the library refuses a taken slot, an app
// id twice, and an ELF linked for another slot, permission misses and app faults reach the kernel
// HRE as notices while the store app keeps working, and REMOVE frees the slot for a reinstall.
// Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/services.hpp"
#include "platform/platform.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/hre.hpp"
#include "sw/host/willow_apps.hpp"
#include "sw/host/willow_driver.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;  // firmware, pattern, refusal, wait_for, WillowMachine

constexpr uint32_t kStoreApp = 1, kRogueApp = 2;    // app ids the host kernel gives them
constexpr uint32_t kStoreSlot = 0, kRogueSlot = 1;  // the slots they are linked for
// store.c's handlers: 1 {addr, n, bytes} -> NVM; 2 {addr, n} -> checksum. rogue.c: 0 answers
// 42, 1 stores to 0x10010 (SPU-OS's data). store.c's 7 {app, fn, arg} calls function fn of
// app (rogue.c's function 0 doubles its argument).
constexpr uint8_t kStore = 1, kLoad = 2, kCall = 7, kFine = 0, kPoke = 1;
constexpr uint32_t kTwice = 0;
constexpr uint32_t kFineResult = 42, kPokeAddress = 0x10010;
constexpr uint32_t kStoreAccessFault = 7;  // mcause (RISC-V privileged spec)
constexpr uint32_t kExtentOffset = 0x1000, kExtentBytes = 0x1000;

uint32_t checksum(const std::vector<uint8_t>& p) {  // store.c's
    uint32_t s = 0;
    for (uint8_t b : p) s = s * 31 + b;
    return s;
}

// Little-endian words, then raw bytes: the apps' payloads.
std::vector<uint8_t> payload(std::vector<uint32_t> words, const std::vector<uint8_t>& tail = {}) {
    std::vector<uint8_t> b(words.size() * 4);
    if (!b.empty()) std::memcpy(b.data(), words.data(), b.size());
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
}

uint32_t call(sw::Hre& hre, unsigned spu, uint32_t app, uint8_t handler,
              const std::vector<uint8_t>& p) {
    const sw::Hre::Response r =
        hre.call(uint8_t(spu), SPU_OS_RPC_ID(app, handler), p.data(), uint32_t(p.size()));
    EXPECT_TRUE(r.ok()) << "status " << r.status;
    return r.result;
}

struct SsdMachine : willow_test::WillowMachine {
    using WillowMachine::WillowMachine;
    // The user's extent: in SPU `spu`'s local bank.
    uint32_t extent(unsigned spu) {
        return uint32_t(spu * ssd().dram.bank_bytes() + kExtentOffset);
    }
};

TEST(PlatformWillowInstall, KernelInstallsAppAndGrantsAUserProcessWhoStoresAndLoads) {
    constexpr unsigned kSpus = 3;
    SsdMachine m(kSpus);
    sw::WillowDriver driver(m.platform->device.willow_device());
    auto& kernel = m.platform->host.kernel.create_process("kernel");
    auto& user = m.platform->host.kernel.create_process("user");
    bool installed = false, kernel_done = false, user_done = false;
    uint32_t miss_addr = 0, miss_bytes = 0;
    std::vector<std::vector<uint8_t>> stored(kSpus);
    m.platform->host.cores[0]->run(kernel, [&](host::HostCore& cpu) {
        const sw::HreEndpoint ep = driver.open(cpu, /*kernel=*/true);
        EXPECT_EQ(ep.qp, 0u);  // SPU-OS's notices go to HRE 0
        sw::Hre hre(cpu, ep);
        sw::WillowApps apps(hre, kSpus);
        apps.install(firmware("app_store"), kStoreApp, kStoreSlot);
        for (unsigned s = 0; s < kSpus; ++s) {
            EXPECT_EQ(apps.app_in(s, kStoreSlot), kStoreApp);
            apps.grant(user.pid, m.extent(s), kExtentBytes, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE,
                       {s});
            EXPECT_EQ(apps.stat(s, SPU_OS_STAT_PERM_ENTRIES), 1u);
        }
        // The host kernel's slot table refuses a taken slot and an app id twice; the ELF must be
        // linked for the slot it goes to.
        std::string why = refusal([&] { apps.install(firmware("app_store"), 9, kStoreSlot); });
        EXPECT_NE(why.find("slot " + std::to_string(kStoreSlot) + " of SPU 0"), std::string::npos)
            << why;
        EXPECT_NE(why.find("holds app " + std::to_string(kStoreApp)), std::string::npos) << why;
        why = refusal([&] { apps.install(firmware("app_rogue"), kStoreApp, kRogueSlot, {1}); });
        EXPECT_NE(why.find("app 1 is already installed on SPU 1"), std::string::npos) << why;
        why = refusal([&] { apps.install(firmware("app_rogue"), kRogueApp, kRogueSlot + 1); });
        EXPECT_NE(why.find("not an app linked for slot"), std::string::npos) << why;
        for (unsigned s = 0; s < kSpus; ++s) {
            EXPECT_EQ(apps.app_in(s, kStoreSlot), kStoreApp);
            EXPECT_FALSE(apps.app_in(s, kRogueSlot).has_value());
        }
        // A table that does not know the slot is taken: SPU-OS refuses, the library reports it.
        sw::WillowApps stale(hre, kSpus);
        why = refusal([&] { stale.install(firmware("app_store"), 9, kStoreSlot, {2}); });
        EXPECT_NE(why.find("SPU 2 refused INSTALL_"), std::string::npos) << why;
        EXPECT_NE(why.find("SPU_OS_E_STATE"), std::string::npos) << why;
        EXPECT_FALSE(stale.app_in(2, kStoreSlot).has_value());
        installed = true;
        // The user's store outside its extent is reported to the kernel.
        const sw::SpuNotice n = apps.next_notice();
        EXPECT_TRUE(n.perm_miss());
        EXPECT_EQ(n.node, 0u);
        EXPECT_EQ(n.words[0], 0u);         // node
        EXPECT_EQ(n.words[1], user.pid);   // process
        EXPECT_EQ(n.words[2], kStoreApp);  // app
        miss_addr = n.words[3];
        miss_bytes = n.words[4];
        EXPECT_EQ(n.words[5], SPU_OS_PERM_WRITE);
        kernel_done = true;
    });
    m.platform->host.cores[1]->run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, installed);
        sw::Hre hre(cpu, driver.open(cpu));
        // The install RPCs are the kernel's only: the library will not manage apps from a
        // user's HRE, and SPU-OS refuses them from one.
        EXPECT_NE(refusal([&] { sw::WillowApps apps(hre, kSpus); }).find("user HRE"),
                  std::string::npos);
        EXPECT_EQ(call(hre, 1, SPU_OS_KERNEL_APP, SPU_OS_RPC_INSTALL_CODE,
                       payload({kRogueSlot, 0, 0x13})),
                  SPU_OS_E_KERNEL_ONLY);
        EXPECT_EQ(
            call(hre, 1, SPU_OS_KERNEL_APP, SPU_OS_RPC_ACTIVATE, payload({kRogueApp, kRogueSlot})),
            SPU_OS_E_KERNEL_ONLY);
        for (unsigned s = 0; s < kSpus; ++s) {
            stored[s] = pattern(200 + 8 * s, 3 + s);
            const uint32_t n = uint32_t(stored[s].size());
            EXPECT_EQ(call(hre, s, kStoreApp, kStore, payload({m.extent(s), n}, stored[s])),
                      SPU_OS_OK);
            EXPECT_EQ(call(hre, s, kStoreApp, kLoad, payload({m.extent(s), n})),
                      checksum(stored[s]));
        }
        // Outside its extent: refused, and nothing written.
        EXPECT_EQ(call(hre, 0, kStoreApp, kStore,
                       payload({m.extent(0) + kExtentBytes, 16}, pattern(16, 5))),
                  SPU_OS_E_PERMISSION);
        user_done = true;
    });
    sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
    EXPECT_EQ(m.platform->host.first_fault(), "");
    ASSERT_TRUE(kernel_done);
    ASSERT_TRUE(user_done);
    for (unsigned s = 0; s < kSpus; ++s)
        EXPECT_EQ(m.nvm(m.extent(s), stored[s].size()), stored[s]) << "SPU " << s;
    EXPECT_EQ(miss_addr, m.extent(0) + kExtentBytes);
    EXPECT_EQ(miss_bytes, 16u);
    EXPECT_EQ(m.nvm(miss_addr, miss_bytes), std::vector<uint8_t>(miss_bytes, 0));
}

TEST(PlatformWillowInstall, RogueFaultReachesTheKernelHreWhileTheStoreAppGoesOn) {
    constexpr unsigned kSpus = 2, kVictim = 1;
    SsdMachine m(kSpus);
    sw::WillowDriver driver(m.platform->device.willow_device());
    auto& kernel = m.platform->host.kernel.create_process("kernel");
    auto& user = m.platform->host.kernel.create_process("user");
    bool installed = false, faulted = false, reinstalled = false, user_done = false;
    uint32_t user_hre = 0;
    sw::SpuNotice fault, miss;
    std::vector<uint8_t> data = pattern(96, 7);
    m.platform->host.cores[0]->run(kernel, [&](host::HostCore& cpu) {
        sw::Hre hre(cpu, driver.open(cpu, /*kernel=*/true));
        sw::WillowApps apps(hre, kSpus);
        apps.install(firmware("app_store"), kStoreApp, kStoreSlot);
        apps.install(firmware("app_rogue"), kRogueApp, kRogueSlot);
        apps.grant(user.pid, m.extent(kVictim), kExtentBytes, SPU_OS_PERM_READ | SPU_OS_PERM_WRITE,
                   {kVictim});
        installed = true;
        fault = apps.next_notice();
        EXPECT_EQ(apps.stat(kVictim, SPU_OS_STAT_FAULTS), 1u);
        EXPECT_EQ(apps.stat(0, SPU_OS_STAT_FAULTS), 0u);
        faulted = true;
        // The kernel removes the faulty app everywhere; its slot is free for a new install.
        apps.remove(kRogueApp);
        for (unsigned s = 0; s < kSpus; ++s) {
            EXPECT_FALSE(apps.app_in(s, kRogueSlot).has_value());
            EXPECT_EQ(apps.app_in(s, kStoreSlot), kStoreApp);
        }
        EXPECT_NE(refusal([&] { apps.remove(kRogueApp); }).find("not installed"),
                  std::string::npos);
        apps.install(firmware("app_rogue"), kRogueApp, kRogueSlot, {kVictim});
        EXPECT_EQ(apps.slot_of(kVictim, kRogueApp), kRogueSlot);
        // Composition as the kernel allows it; and the user's extent taken back.
        apps.allow_call(kStoreApp, kRogueApp, 1u << kTwice, {kVictim});
        apps.revoke(user.pid, m.extent(kVictim), {kVictim});
        reinstalled = true;
        miss = apps.next_notice();
    });
    m.platform->host.cores[1]->run(user, [&](host::HostCore& cpu) {
        wait_for(cpu, installed);
        sw::Hre hre(cpu, driver.open(cpu));
        user_hre = hre.id();
        EXPECT_EQ(call(hre, kVictim, kRogueApp, kPoke, {}), SPU_OS_E_APP_FAULT);
        EXPECT_EQ(call(hre, kVictim, kRogueApp, kFine, {}), SPU_OS_E_DISABLED);
        EXPECT_EQ(call(hre, 0, kRogueApp, kFine, {}), kFineResult);  // only the victim's copy
        const uint32_t n = uint32_t(data.size());
        EXPECT_EQ(call(hre, kVictim, kStoreApp, kStore, payload({m.extent(kVictim), n}, data)),
                  SPU_OS_OK);
        EXPECT_EQ(call(hre, kVictim, kStoreApp, kLoad, payload({m.extent(kVictim), n})),
                  checksum(data));
        wait_for(cpu, reinstalled);
        EXPECT_EQ(call(hre, kVictim, kRogueApp, kFine, {}), kFineResult);
        EXPECT_EQ(call(hre, 0, kRogueApp, kFine, {}), SPU_OS_E_NO_APP);  // removed there
        const uint32_t arg = 21;
        EXPECT_EQ(call(hre, kVictim, kStoreApp, kCall, payload({kRogueApp, kTwice, arg})), 2 * arg);
        EXPECT_EQ(call(hre, kVictim, kStoreApp, kLoad, payload({m.extent(kVictim), n})),
                  SPU_OS_E_PERMISSION);
        user_done = true;
    });
    sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
    EXPECT_EQ(m.platform->host.first_fault(), "");
    ASSERT_TRUE(faulted);
    ASSERT_TRUE(user_done);
    EXPECT_TRUE(fault.fault());
    EXPECT_EQ(fault.node, kVictim);
    EXPECT_EQ(fault.words[0], kVictim);  // node
    EXPECT_EQ(fault.words[1], kRogueApp);
    EXPECT_EQ(fault.words[2], kStoreAccessFault);
    EXPECT_EQ(fault.words[3], kPokeAddress);  // mtval
    EXPECT_EQ(fault.words[5], user_hre);      // the origin: the user's HRE
    EXPECT_TRUE(miss.perm_miss());
    EXPECT_EQ(miss.words[1], user_hre >> SPU_OS_HRE_INDEX_BITS);  // the process
    EXPECT_EQ(miss.words[3], m.extent(kVictim));
    EXPECT_EQ(miss.words[5], SPU_OS_PERM_READ);
    EXPECT_EQ(m.nvm(m.extent(kVictim), data.size()), data);
}
#endif

}  // namespace
}  // namespace canopy::platform
