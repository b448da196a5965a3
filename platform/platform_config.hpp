// The whole platform's configuration: one struct per module, gathered under their key prefixes
// ("sim.", "host.", "link.", "device.", "ssd.", "nand.", "scenario.", "sw."). Loading, checking and
// dumping all go through describe().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "link/ccix_config.hpp"
#include "link/pcie_config.hpp"
#include "nand/config.hpp"
#include "platform/device.hpp"
#include "platform/host_complex.hpp"
#include "platform/user_model.hpp"
#include "sw/host/runtime_config.hpp"

namespace canopy::platform {

struct SimConfig {
    uint64_t seed = 1;
    double quantum_ns = 1000;  // temporal decoupling quantum of initiators
    void describe(core::Params& p);
};

// The default scenario of `canopy run`: Flash-Cosmos against ParaBit and outside-storage
// processing on one bulk AND, on every plane of every die in parallel.
struct ScenarioConfig {
    uint32_t operands = 48;     // bit vectors per plane, one wordline each, in one block
    uint32_t dies = 0;          // dies used per channel (0: all)
    std::string mode = "esp";   // how the operands are programmed: esp or slc
    bool randomise = false;     // program the operands through the on-die randomiser
    double one_density = 0.97;  // probability of a 1 bit in an operand
    std::string host_program = "dma-check";  // run beside it on host.core0: dma-check or none
    uint32_t dma_bytes = 64 * 1024;          // dma-check's buffer
    // Willow beside it: SPU-OS boots on every SPU, the host kernel installs Base-IO and
    // Direct-IO, and a user program does file I/O through both (scenarios/willow_session).
    bool willow = true;
    // neoDBMS's lock table beside it (scenarios/lock_table): host.core3 and the device's lock
    // module (lock_table_workers requests in flight over CCIX) lock record versions in shared
    // host memory; lock_table_locks host requests (0: not run).
    uint32_t lock_table_locks = 200;
    uint32_t lock_table_workers = 2;
    std::string firmware_dir = default_firmware_dir();  // the SPU ELFs ("": none found)
    // SSD Apps from outside the tree, "NAME=PATH.elf[,...]" (`canopy run --app` adds to it):
    // the Willow scenario's kernel installs each in the slot it is linked for (docs/sdk.md), and
    // a process asking for it gets app_region_bytes of every SPU's store.
    std::string apps;
    uint32_t app_region_bytes = 1 << 20;  // assumed: 1 MiB per SPU
    // The first of firmware_search_paths() holding spu_os.elf, "" when none does.
    static std::string default_firmware_dir();
    // Where the firmware is looked for, relative to the running executable (never a path
    // compiled in, so a copied or installed binary cannot boot another tree's firmware): beside
    // it (the build tree: build/canopy, build/firmware), the install's share/canopy/firmware
    // (PREFIX/bin/canopy), and one level up (the build tree's tests and benchmarks).
    static std::vector<std::string> firmware_search_paths();
    void describe(core::Params& p);
};

// GDB on the platform (platform/debugger). Set by the command line, not a parameter: a debugger
// changes no result, so it is neither loaded from a config file nor written to stats.json.
struct DebugConfig {
    std::optional<uint16_t> gdb_port;  // --gdb PORT (0: any free port); none: no debugger
    std::string gdbinit;               // where the GDB script goes ("": not written)
};

struct PlatformConfig {
    SimConfig sim;
    HostConfig host;
    link::PcieConfig pcie;
    link::CcixConfig ccix;
    DeviceConfig device;
    WillowConfig ssd;  // the SSD controller on the device ("ssd.")
    nand::NandConfig nand;
    ScenarioConfig scenario;
    sw::HostRuntimeConfig software;  // host software layers above the drivers
    // Models from outside (--model LIB.so, platform/user_model.hpp), "model.NAME.".
    std::vector<ModelSetup> models = ModelSetup::registered();
    DebugConfig debug;
    void describe(core::Params& p);
    // The SPUs boot scenario.firmware_dir's SPU-OS, unless ssd.firmware names an ELF already;
    // throws std::runtime_error naming `who` when there is no firmware directory.
    void boot_spu_os(const std::string& who);
};

// Loads defaults, then the file (if any), then the overrides into whatever `describe` binds;
// rejects unknown keys. Returns the parameter table for dumps.
std::vector<core::ParamInfo> load_params(const std::function<void(core::Params&)>& describe,
                                         const std::string& file,
                                         const std::vector<std::string>& overrides);

// load_params for a config struct with a describe(Params&): the platform's, the ISS harness's.
template <class Config>
std::vector<core::ParamInfo> load_config(Config& cfg, const std::string& file,
                                         const std::vector<std::string>& overrides) {
    return load_params([&](core::Params& p) { cfg.describe(p); }, file, overrides);
}

}  // namespace canopy::platform
