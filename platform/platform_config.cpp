#include "platform/platform_config.hpp"

#include <filesystem>
#include <stdexcept>

namespace canopy::platform {

void SimConfig::describe(core::Params& p) {
    p("seed", seed, "", "seed of every random stream (--seed overrides)")(
        "quantum_ns", quantum_ns, "ns", "temporal decoupling quantum of initiators", 1.0, 1e9);
}

void ScenarioConfig::describe(core::Params& p) {
    p("operands", operands, "", "operand bit vectors per plane in the default scenario", 1, 64)(
        "dies", dies, "", "dies used per channel by the default scenario (0: all)", 0, 64)
        .choice("mode", mode, {"esp", "slc"}, "program mode of the scenario's operands");
    p("randomise", randomise, "program the scenario's operands with on-die randomisation")(
        "one_density", one_density, "", "probability of a 1 bit in an operand", 0.0, 1.0);
    p.choice("host_program", host_program, {"dma-check", "none"},
             "host program run beside the flash scenario on host.core0");
    p("dma_bytes", dma_bytes, "B", "dma-check: bytes copied host -> device -> host", 8, 2u << 20);
    p("willow", willow,
      "boot SPU-OS on every SPU, install Base-IO and Direct-IO, run file I/O through both")(
        "lock_table_locks", lock_table_locks, "",
        "lock-table run over CCIX: host.core3's lock requests (0: no run)", 0,
        100000)("lock_table_workers", lock_table_workers, "",
                "lock-table run: the device lock module's requests in flight", 0, 16)(
        "firmware_dir", firmware_dir,
        "the SPU firmware ELFs (spu_os.elf, app_*.elf); default: firmware/ beside canopy, "
        "or PREFIX/share/canopy/firmware when installed")(
        "apps", apps,
        "SSD Apps from outside, NAME=PATH.elf[,...], each installed in the slot it is linked "
        "for (docs/sdk.md; canopy run --app adds one)")(
        "app_region_bytes", app_region_bytes, "B",
        "per SPU: the store region a process using the apps of scenario.apps is granted "
        "(whole 8 KiB stripes)",
        8192u, 1u << 30);
}

std::vector<std::string> ScenarioConfig::firmware_search_paths() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    const std::filesystem::path dir = exe.parent_path();
    std::vector<std::string> out;
    for (const std::filesystem::path& p :
         {dir / "firmware", dir.parent_path() / "share" / "canopy" / "firmware",
          dir.parent_path() / "firmware"})
        out.push_back(p.lexically_normal().string());
    return out;
}

std::string ScenarioConfig::default_firmware_dir() {
    for (const std::string& d : firmware_search_paths()) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(d + "/spu_os.elf", ec)) return d;
    }
    return "";
}

void PlatformConfig::boot_spu_os(const std::string& who) {
    if (scenario.firmware_dir.empty())
        throw std::runtime_error(who +
                                 " needs the SPU firmware (none beside this binary: build it "
                                 "with the rv32 toolchain, or set scenario.firmware_dir)");
    if (ssd.firmware.empty()) ssd.firmware = scenario.firmware_dir + "/spu_os.elf";
}

void PlatformConfig::describe(core::Params& p) {
    core::Params s = p.scope("sim");
    sim.describe(s);
    host.describe(p);
    pcie.describe(p);
    ccix.describe(p);
    device.describe(p);
    ssd.describe(p);
    nand.describe(p);
    core::Params sc = p.scope("scenario");
    scenario.describe(sc);
    software.describe(p);
    for (ModelSetup& m : models) {
        core::Params ms = p.scope("model." + m.entry->name);
        m.describe(ms);
    }
}

std::vector<core::ParamInfo> load_params(const std::function<void(core::Params&)>& describe,
                                         const std::string& file,
                                         const std::vector<std::string>& overrides) {
    core::ConfigSource src;
    if (!file.empty()) src.load_file(file);
    for (const auto& o : overrides) src.set(o);
    core::Params params(&src);
    describe(params);
    src.check_all_used(params.keys());
    return params.infos();
}

}  // namespace canopy::platform
