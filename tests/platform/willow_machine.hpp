// Shared by the whole-platform Willow tests that boot SPU-OS and drive it from host programs
// (willow_install_test.cpp, willow_io_test.cpp; Willow Section 3.1, 4.1-4.2): the platform with
// a small NAND and `spus` SPUs booting SPU-OS, the firmware ELFs, test data, and the host
// programs' small helpers.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/services.hpp"
#include "host/host_core.hpp"
#include "platform/platform.hpp"
#include "platform/willow_stack.hpp"

namespace canopy::platform::willow_test {

#ifdef CANOPY_FIRMWARE_DIR
inline std::string firmware(const std::string& name) {
    return std::string(CANOPY_FIRMWARE_DIR) + "/" + name + ".elf";
}
#endif

inline std::vector<uint8_t> pattern(size_t n, unsigned seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * seed + 1);
    return v;
}

// The message of the HostFault `f` throws ("" when none).
template <class F>
std::string refusal(F f) {
    try {
        f();
    } catch (const host::HostFault& e) {
        return e.what();
    }
    return "";
}

// A host program waits (in simulated time) for another one's flag.
inline void wait_for(host::HostCore& cpu, const bool& flag) {
    while (!flag) cpu.compute_ns(1000);
}

#ifdef CANOPY_FIRMWARE_DIR
struct WillowMachine {
    PlatformConfig cfg;
    core::Services services;
    std::unique_ptr<Platform> platform;
    // `tweak` may change the configuration before the platform is built.
    explicit WillowMachine(unsigned spus,
                           const std::function<void(PlatformConfig&)>& tweak = nullptr) {
        cfg.nand.geometry.channels = 1;
        cfg.nand.geometry.dies_per_channel = 1;
        cfg.nand.geometry.blocks_per_plane = 16;
        cfg.ssd.spus = spus;
        cfg.ssd.store.flash = false;  // SSD memory, where nvm() sees the bytes
        cfg.ssd.firmware = firmware("spu_os");
        if (tweak) tweak(cfg);
        platform = std::make_unique<Platform>(cfg, services);
    }
    Willow& ssd() { return platform->device.ssd; }
    std::vector<uint8_t> nvm(uint64_t addr, size_t n) {
        std::vector<uint8_t> b(n);
        ssd().dram.read(addr, b.data(), n);
        return b;
    }
};

// The machine with the host's Willow stack (platform/willow_stack) booting on host core 0, and
// user programs run on it: the SSD Apps' tests (flash_cosmos_test.cpp, kv_test.cpp).
struct StackMachine : WillowMachine {
    std::unique_ptr<WillowStack> stack;
    unsigned running = 0;
    StackMachine(unsigned spus, const std::function<void(PlatformConfig&)>& tweak,
                 const std::function<void(WillowStackConfig&)>& stack_tweak = nullptr)
        : WillowMachine(spus, tweak) {
        WillowStackConfig w;
        w.firmware_dir = CANOPY_FIRMWARE_DIR;
        if (stack_tweak) stack_tweak(w);
        stack = std::make_unique<WillowStack>(*platform, w);
        stack->start_kernel(0);
    }
    // Runs `body` as a user program on host core 1 once the stack is ready, then the simulation
    // for up to `seconds` (simulated); a HostFault fails the test with its message.
    void user(const std::function<void(host::HostCore&)>& body, double seconds = 2) {
        users({body}, seconds);
    }
    // Runs each body as a user program of a process of its own, body i on host core i + 1, all
    // at once (they order themselves, e.g. with wait_for).
    void users(const std::vector<std::function<void(host::HostCore&)>>& bodies,
               double seconds = 2) {
        std::vector<char> finished(bodies.size(), 0);
        for (size_t i = 0; i < bodies.size(); ++i) {
            auto& proc = platform->host.kernel.create_process("user" + std::to_string(i));
            platform->host.cores.at(i + 1)->run(
                proc, [this, &bodies, &finished, i](host::HostCore& cpu) {
                    WillowStack::User u(*stack, running);
                    stack->wait_ready(cpu);
                    try {
                        bodies[i](cpu);
                        finished[i] = 1;
                    } catch (const host::HostFault& e) {
                        ADD_FAILURE() << "user program " << i << ": " << e.what();
                    }
                });
        }
        sc_core::sc_start(sc_core::sc_time(seconds, sc_core::SC_SEC));
        for (size_t i = 0; i < bodies.size(); ++i)
            ASSERT_TRUE(finished[i]) << "user program " << i << " did not finish";
    }
};
#endif

}  // namespace canopy::platform::willow_test
