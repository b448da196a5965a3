#include "platform/flashcosmos_platform.hpp"

#include <cctype>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "platform/isolated.hpp"
#include "platform/willow_stack.hpp"
#include "sw/host/fc_workloads.hpp"

namespace canopy::platform {

using nlohmann::json;

namespace {

const char* const kKey[] = {"FC", "PB", "ISP", "OSP"};

// 8 SPUs, each on a channel of 2 dies x 2 planes: an operand of one page per plane is 512 KiB.
constexpr uint32_t kSpus = 8, kDies = 2;

json run(PlatformConfig cfg, const std::vector<std::string>& names) {
    core::Services services;
    cfg.ssd.spus = kSpus;
    cfg.nand.geometry.channels = kSpus;
    cfg.nand.geometry.dies_per_channel = kDies;
    cfg.nand.geometry.blocks_per_plane = 20;
    cfg.ssd.store.flash = true;
    cfg.ssd.store.format = true;
    cfg.boot_spu_os("flashcosmos");
    Platform platform(cfg, services);
    WillowStackConfig sc;
    sc.firmware_dir = cfg.scenario.firmware_dir;
    WillowStack stack(platform, sc);
    stack.start_kernel(0);
    json out = json::object();
    bool done = false;
    unsigned running = 0;
    auto& proc = platform.host.kernel.create_process("fc-workloads");
    platform.host.cores[1]->run(proc, [&](host::HostCore& cpu) {
        const WillowStack::User user(stack, running);
        stack.wait_ready(cpu);
        const sw::FcGeometry g = stack.flash_cosmos_geometry();
        const uint64_t bits = uint64_t(g.spus) * g.units() * g.page_bytes * 8;
        sw::Hre hre(cpu, stack.driver.open(cpu));
        sw::FlashCosmos fc(cpu, hre, stack.cfg.flash_cosmos_app, g);
        for (const std::string& n : names) {
            const sw::FcWorkload w = n == "bmi"   ? sw::bmi_workload(bits, 30, 1)
                                     : n == "ims" ? sw::ims_workload(bits, 2)
                                                  : sw::kcs_workload(bits, 16, 3);
            const auto stored = sw::store_workload(fc, w);
            const auto want = w.reference();
            for (int s = 0; s < 4; ++s) {
                const sw::FcOutcome o = sw::run_workload(cpu, fc, w, stored, sw::kFcSystems[s]);
                out[n][kKey[s]] = {{"us", o.ns * 1e-3}, {"right", o.result == want}};
            }
            fc.release_all();
        }
        done = true;
    });
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_SEC));
    if (!done)
        throw std::runtime_error("flashcosmos on the platform: the host program did not finish: " +
                                 platform.host.first_fault());
    return out;
}

}  // namespace

std::vector<ExpRow> flashcosmos_platform_rows(const ExpOptions& options) {
    std::vector<std::string> names = {"bmi", "ims", "kcs"};
    if (!options.workload.empty() && options.workload != "all") names = {options.workload};
    const PlatformConfig m = options.platform();
    const json r = run_isolated([&] { return run(m, names); });
    const std::map<std::string, std::string> label = {
        {"bmi", "BMI m=1 (30 days x 4 Mi users)"},
        {"ims", "IMS (3 x 4 Mi pixels)"},
        {"kcs", "KCS k=16 (16 AND + 1 OR x 4 Mi vertices)"}};
    std::vector<ExpRow> rows;
    for (const std::string& n : names) {
        const json& w = r.at(n);
        const std::string id = "P." + std::string(1, char(std::toupper(n[0])));
        double right = 0;
        for (int s = 0; s < 4; ++s) right += w.at(kKey[s]).at("right").get<bool>() ? 1 : 0;
        rows.push_back({id + ".ok",
                        "platform, " + label.at(n) + ": systems whose result is the host's (of 4)",
                        right, 0, ""});
        const double osp = w.at("OSP").at("us").get<double>();
        for (int s = 0; s < 3; ++s)
            rows.push_back({id + "." + kKey[s],
                            "platform, " + label.at(n) + ": " + kKey[s] +
                                " speed-up over OSP (8 SPUs, real firmware; no published value)",
                            osp / w.at(kKey[s]).at("us").get<double>(), 0, "x"});
    }
    return rows;
}

}  // namespace canopy::platform
