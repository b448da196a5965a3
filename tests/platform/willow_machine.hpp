// Shared by the whole-platform Willow tests that boot SPU-OS and drive it from host programs
// (willow_install_test.cpp, willow_io_test.cpp; Willow Section 3.1, 4.1-4.2): the platform with
// a small NAND and `spus` SPUs booting SPU-OS, the firmware ELFs, test data, and the host
// programs' small helpers.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/services.hpp"
#include "host/host_core.hpp"
#include "platform/platform.hpp"

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
#endif

}  // namespace canopy::platform::willow_test
