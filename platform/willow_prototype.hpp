// The machine of Willow's prototype [Willow 3.2] as the Willow experiments build it (willow-io,
// willow-apps, rpc-latency): PCIe 1.1 x8 (2 GB/s each way), 8 SPUs booting SPU-OS, the host
// kernel's Willow stack (platform/willow_stack) started on host core 0; and the host programs'
// small tools for phased runs. One machine per process (SystemC elaborates once): experiments build
// it inside run_isolated.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "platform/platform.hpp"
#include "platform/willow_stack.hpp"

namespace canopy::platform {

// The prototype's machine on the platform's defaults: PCIe 1.1 x8 (2 GB/s each way), 8 SPUs,
// the store in SSD memory (the prototype's emulated PCM) beside a one-die NAND array. willow-io
// and willow-apps start from it, and `canopy exp --config/--set` change it.
inline PlatformConfig prototype_config() {
    PlatformConfig cfg;
    cfg.pcie.generation = 1;
    cfg.pcie.lanes = 8;
    cfg.ssd.spus = 8;
    cfg.ssd.store.flash = false;
    cfg.nand.geometry.channels = 1;
    cfg.nand.geometry.dies_per_channel = 1;
    cfg.nand.geometry.blocks_per_plane = 16;
    return cfg;
}

// The store on the NAND array behind each SPU's FTL instead: 8 channels, one per SPU, of
// Flash-Cosmos's TLC dies (4 per channel here).
inline void store_on_flash(PlatformConfig& cfg) {
    cfg.ssd.store.flash = true;
    cfg.nand.geometry.channels = cfg.ssd.spus;
    cfg.nand.geometry.dies_per_channel = 4;
}

// `config` is the machine's whole configuration; the SPUs boot scenario.firmware_dir's SPU-OS
// (ssd.firmware, if set, instead). `who` names the experiment when there is no firmware.
// `stack_tweak` may change the Willow stack's configuration.
struct PrototypeMachine {
    PlatformConfig cfg;
    core::Services services;
    std::unique_ptr<Platform> platform;
    std::unique_ptr<WillowStack> stack;
    PrototypeMachine(const PlatformConfig& config, const std::string& who,
                     const std::function<void(WillowStackConfig&)>& stack_tweak = nullptr)
        : cfg(config) {
        cfg.boot_spu_os(who);
        platform = std::make_unique<Platform>(cfg, services);
        WillowStackConfig sc;
        sc.firmware_dir = cfg.scenario.firmware_dir;
        if (stack_tweak) stack_tweak(sc);
        stack = std::make_unique<WillowStack>(*platform, sc);
        stack->start_kernel(0);
    }
    // Runs `body` as one user program on host core 1 once the stack is ready, then the
    // simulation; throws naming `who` and the first host fault when the program did not finish.
    void run_user(const std::string& who, const std::function<void(host::HostCore&)>& body) {
        bool done = false;
        platform->host.cores[1]->run(platform->host.kernel.create_process("user"),
                                     [&](host::HostCore& cpu) {
                                         unsigned running = 0;
                                         const WillowStack::User user(*stack, running);
                                         stack->wait_ready(cpu);
                                         body(cpu);
                                         done = true;
                                     });
        platform->simulate();
        if (!done) throw SimulationError(who + ": " + platform->host.first_fault());
    }
    // Bytes per ns (GB/s) one direction of the link carries, encoding included.
    double link_gbps() const { return 1.0 / cfg.pcie.ns_per_byte(); }
    double stat(const std::string& module, const std::string& name) const {
        const core::Stat* s = services.stats.find(module, name);
        if (auto* c = dynamic_cast<const core::Counter*>(s)) return double(c->value());
        if (auto* o = dynamic_cast<const core::Occupancy*>(s)) return o->busy_ns();
        throw std::runtime_error("no statistic " + module + "." + name);
    }
};

// Host programs meeting between phases; a program that faulted never comes, so the others
// give up too (with a fault of their own) instead of waiting for ever.
struct Barrier {
    unsigned parties;
    const HostComplex& host;
    unsigned arrived = 0, generation = 0;
    void wait(host::HostCore& cpu) {
        const unsigned g = generation;
        if (++arrived == parties) {
            arrived = 0;
            ++generation;
            return;
        }
        while (generation == g) {
            if (!host.first_fault().empty())
                throw host::HostFault("another program faulted: " + host.first_fault());
            cpu.compute_ns(100);
        }
    }
};

// Phase spans: the earliest start and the latest end over the threads.
struct Span {
    double start = 1e300, end = 0;
    void add(double s, double e) { start = std::min(start, s), end = std::max(end, e); }
    double ns() const { return end - start; }
};

inline double now_ns(host::HostCore& cpu) { return cpu.now_ns(); }

}  // namespace canopy::platform
