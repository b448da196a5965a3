#include "scenarios/host_plugin.hpp"

#include <dlfcn.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "canopy/host_program.h"
#include "core/error.hpp"
#include "scenarios/willow_session.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::scenarios {

namespace {
const char* const kOption = "--host-program";
}

HostPluginSpec HostPluginSpec::parse(const std::string& text) {
    HostPluginSpec s;
    const auto eq = text.find('=');
    const std::string core = text.substr(0, eq == std::string::npos ? 0 : eq);
    const auto r = std::from_chars(core.data(), core.data() + core.size(), s.core);
    if (eq == std::string::npos || core.empty() || r.ec != std::errc() ||
        r.ptr != core.data() + core.size())
        throw InputError(kOption, text, "expected CORE=PATH.so[:SYMBOL], CORE a host core's index");
    s.path = text.substr(eq + 1);
    // PATH.so:SYMBOL (a path may hold ':' itself: the symbol is what follows the last one, if
    // it follows the library's name).
    const auto colon = s.path.rfind(':');
    if (colon != std::string::npos && colon > s.path.rfind('/') + 1 &&
        s.path.rfind(".so", colon) != std::string::npos) {
        s.symbol = s.path.substr(colon + 1);
        s.path = s.path.substr(0, colon);
    }
    if (s.path.empty()) throw InputError(kOption, text, "no library path");
    if (s.symbol.empty()) throw InputError(kOption, text, "an empty symbol after ':'");
    return s;
}

// What the program's thread and the API table share: the core, the configuration, the outcome.
struct HostPlugin::Run {
    host::HostCore* core = nullptr;
    unsigned core_index = 0;
    WillowScenario* willow = nullptr;  // the Willow SSD's stack, when the scenario runs
    std::unique_ptr<sw::Hre> hre;      // the process's own HRE, at its first ssd_ call
    std::set<uint16_t> pending;        // tags of requests sent and not yet waited for
    std::map<std::string, std::string> config;
    std::vector<std::string> argv_text;
    std::vector<const char*> argv;
    std::unique_ptr<std::ofstream> log;  // OUT/console/host.coreN.log, at the first line
    std::string console_dir;
    bool ran = false, returned = false;
    int exit_code = -1;
    double start_ns = 0, end_ns = 0;
    uint64_t lines = 0;
};

namespace {

// The C table over HostCore. A `canopy_host*` is the Run (the core and what the program shares).

HostPlugin::Run& run_of(canopy_host* h) { return *reinterpret_cast<HostPlugin::Run*>(h); }
host::HostCore& core_of(canopy_host* h) { return *run_of(h).core; }

// The Willow stack, ready: the kernel has installed the apps, granted the process the user
// apps' region (a system call, once) and the process has an HRE of its own.
sw::Hre& ssd(canopy_host* h, const char* call) {
    HostPlugin::Run& r = run_of(h);
    if (!r.willow)
        throw host::HostFault(std::string(call) +
                              ": no Willow SSD on this platform (scenario.willow=false)");
    if (!r.hre) {
        platform::WillowStack& s = r.willow->stack();
        s.wait_ready(*r.core);
        if (s.user_region_bytes()) s.grant_user_region(*r.core);
        r.hre = std::make_unique<sw::Hre>(*r.core, s.driver.open(*r.core));
    }
    return *r.hre;
}

uint32_t ssd_send(canopy_host* h, unsigned spu, uint32_t app, uint32_t handler, const void* payload,
                  uint32_t length) {
    sw::Hre& hre = ssd(h, "ssd_send");
    const unsigned spus = run_of(h).willow->stack().kernel.spus();
    auto refuse = [](const std::string& why) { throw host::HostFault("ssd_send: " + why); };
    if (spu >= spus)
        refuse("no SPU " + std::to_string(spu) + " (the SSD has " + std::to_string(spus) + ")");
    if (app == SPU_OS_KERNEL_APP || app > 0xFF)
        refuse("app " + std::to_string(app) + " is not an app id (1..255; ssd_app names them)");
    if (handler >= SPU_OS_MAX_HANDLERS)
        refuse("handler " + std::to_string(handler) + " (an app has handlers 0.." +
               std::to_string(SPU_OS_MAX_HANDLERS - 1) + ")");
    if (length && !payload) refuse("a NULL payload of " + std::to_string(length) + " bytes");
    const uint16_t tag = hre.send(uint8_t(spu), SPU_OS_RPC_ID(app, handler), payload, length);
    run_of(h).pending.insert(tag);
    return tag;
}

uint32_t ssd_wait(canopy_host* h, uint32_t tag, uint32_t* result) {
    sw::Hre& hre = ssd(h, "ssd_wait");
    HostPlugin::Run& r = run_of(h);
    if (tag > 0xFFFF || !r.pending.erase(uint16_t(tag)))
        throw host::HostFault("ssd_wait: no request with tag " + std::to_string(tag) +
                              " is waiting for its response");
    const sw::Hre::Response resp = hre.wait(uint16_t(tag));
    if (result) *result = resp.result;
    return resp.status;
}

const canopy_host_api kApi = {
    CANOPY_HOST_ABI_VERSION,
    sizeof(canopy_host_api),
    [](canopy_host* h, uint64_t va, void* b, unsigned n) { core_of(h).load(va, b, n); },
    [](canopy_host* h, uint64_t va, const void* b, unsigned n) { core_of(h).store(va, b, n); },
    [](canopy_host* h, uint64_t va, uint64_t expected, uint64_t desired, uint8_t size) {
        return core_of(h).compare_and_swap(va, expected, desired, size);
    },
    [](canopy_host* h, uint64_t va, uint64_t v, uint8_t size) {
        return core_of(h).swap(va, v, size);
    },
    [](canopy_host* h, uint64_t va, uint64_t v, uint8_t size) {
        return core_of(h).fetch_add(va, v, size);
    },
    [](canopy_host* h, double ns) {
        if (!(ns >= 0 && ns <= 1e15)) throw host::HostFault("compute_ns: not in [0, 1e15] ns");
        core_of(h).compute_ns(ns);
    },
    [](canopy_host* h, uint64_t cycles) { core_of(h).compute_cycles(cycles); },
    [](canopy_host* h) { return core_of(h).now_ns(); },
    [](canopy_host* h, uint64_t bytes, uint64_t page) { return core_of(h).mmap(bytes, page); },
    [](canopy_host* h, uint64_t va, uint64_t bytes) { core_of(h).munmap(va, bytes); },
    [](canopy_host* h, uint64_t va, uint64_t bytes) { core_of(h).pin(va, bytes); },
    [](canopy_host* h, uint64_t va) { return core_of(h).physical(va); },
    [](canopy_host* h, uint64_t pa, uint64_t bytes) { return core_of(h).map_device(pa, bytes); },
    [](canopy_host* h, const char* line) {
        HostPlugin::Run& r = run_of(h);
        const std::string text = line ? std::string(line).substr(0, 4096) : "";
        const std::string who = r.core->name();
        std::cout << who << ": " << text << "\n";
        if (!r.log && !r.console_dir.empty()) {
            std::filesystem::create_directories(r.console_dir);
            r.log = std::make_unique<std::ofstream>(r.console_dir + "/" + who + ".log");
        }
        if (r.log) *r.log << text << "\n" << std::flush;
        ++r.lines;
    },
    [](canopy_host* h) { return run_of(h).core_index; },
    [](canopy_host* h, const char* key) -> const char* {
        if (!key) return nullptr;
        const auto& c = run_of(h).config;
        const auto it = c.find(key);
        return it == c.end() ? nullptr : it->second.c_str();
    },
    [](canopy_host* h) -> unsigned {
        const HostPlugin::Run& r = run_of(h);
        return r.willow ? r.willow->stack().kernel.spus() : 0;
    },
    [](canopy_host* h, const char* name) -> uint32_t {
        ssd(h, "ssd_app");
        if (!name) return 0;
        return run_of(h).willow->stack().app_id(name).value_or(0);
    },
    [](canopy_host* h, unsigned spu, uint32_t* base, uint32_t* length) {
        ssd(h, "ssd_region");
        const platform::WillowStack& s = run_of(h).willow->stack();
        if (spu >= s.kernel.spus())
            throw host::HostFault("ssd_region: no SPU " + std::to_string(spu));
        if (base) *base = s.user_region_bytes() ? s.user_base(spu) : 0;
        if (length) *length = s.user_region_bytes();
    },
    ssd_send,
    ssd_wait,
    [](canopy_host* h, unsigned spu, uint32_t app, uint32_t handler, const void* payload,
       uint32_t length, uint32_t* result) {
        return ssd_wait(h, ssd_send(h, spu, app, handler, payload, length), result);
    },
};

}  // namespace

HostPlugin::HostPlugin(HostPluginSpec spec, const std::vector<core::ParamInfo>& config,
                       unsigned cores, const std::map<unsigned, std::string>& busy)
    : spec_(std::move(spec)), run_(std::make_unique<Run>()) {
    const std::string what = std::to_string(spec_.core) + "=" + spec_.path;
    if (spec_.core >= cores)
        throw InputError(kOption, what,
                         "the host has cores 0.." + std::to_string(cores - 1) +
                             " (host.cores=" + std::to_string(spec_.core + 1) + " adds more)");
    if (const auto it = busy.find(spec_.core); it != busy.end())
        throw InputError(kOption, what,
                         "host.core" + std::to_string(spec_.core) + " runs " + it->second +
                             "; choose a free core (host.cores adds cores) or turn that off");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(spec_.path, ec))
        throw InputError(kOption, what, "no such file");
    // RTLD_LOCAL: its symbols stay its own; RTLD_NOW: an unresolved one is refused here.
    handle_ = dlopen(std::filesystem::absolute(spec_.path).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw InputError(kOption, what, std::string("cannot load it: ") + dlerror());
    const auto* version = static_cast<const uint32_t*>(dlsym(handle_, "canopy_host_abi_version"));
    if (!version)
        throw InputError(kOption, what,
                         "not a Canopy host program: no canopy_host_abi_version (build it with "
                         "CANOPY_HOST_PROGRAM_ABI() from canopy/host_program.h)");
    // The table only grows: a library built against an older version finds what it knows.
    if (*version == 0 || *version > CANOPY_HOST_ABI_VERSION)
        throw InputError(kOption, what,
                         "built against host program ABI version " + std::to_string(*version) +
                             "; this canopy runs versions 1 to " +
                             std::to_string(CANOPY_HOST_ABI_VERSION) +
                             ": rebuild it against this canopy's canopy/host_program.h");
    entry_ = dlsym(handle_, spec_.symbol.c_str());
    if (!entry_)
        throw InputError(kOption, what + ":" + spec_.symbol, "no such symbol in the library");
    for (const auto& p : config) run_->config[p.key] = p.value_text;
    run_->argv_text.push_back(spec_.path);
    for (const auto& a : spec_.args) run_->argv_text.push_back(a);
    for (const auto& a : run_->argv_text) run_->argv.push_back(a.c_str());
    run_->argv.push_back(nullptr);
}

HostPlugin::~HostPlugin() {
    if (handle_) dlclose(handle_);
}

void HostPlugin::start(platform::Platform& platform, const std::string& console_dir,
                       WillowScenario* willow) {
    host::HostCore& core = *platform.host.cores[spec_.core];
    run_->core = &core;
    run_->core_index = spec_.core;
    run_->console_dir = console_dir;
    run_->willow = willow;
    auto& proc =
        platform.host.kernel.create_process(std::filesystem::path(spec_.path).filename().string());
    const auto entry = reinterpret_cast<canopy_host_main_fn>(entry_);
    Run* r = run_.get();
    core.run(proc, [r, entry](host::HostCore& cpu) {
        // While it runs, the Willow kernel keeps serving notices (its apps' faults).
        std::optional<platform::WillowStack::User> user;
        if (r->willow) user.emplace(r->willow->stack(), r->willow->users());
        r->ran = true;
        r->start_ns = cpu.now_ns();
        r->exit_code = entry(&kApi, reinterpret_cast<canopy_host*>(r), int(r->argv.size() - 1),
                             r->argv.data());
        r->returned = true;
        r->end_ns = cpu.now_ns();
    });
}

bool HostPlugin::report(std::ostream& out, core::StatsRegistry& stats) const {
    const host::HostCore& core = *run_->core;
    const std::string m = std::string(core.name()) + ".program";
    out << "Host program " << spec_.path << " (" << spec_.symbol << ") on " << core.name() << ": ";
    bool ok = false;
    if (!core.fault().empty()) {
        out << "FAULT: " << core.fault() << "\n";
        stats.counter(m, "faults", "faults that ended the program", true).add(1);
    } else if (!run_->returned) {
        out << "did not return (still running when the simulation ended)\n";
    } else {
        ok = run_->exit_code == 0;
        char t[64];
        std::snprintf(t, sizeof t, "%.1f ns", run_->end_ns - run_->start_ns);
        out << "exit " << run_->exit_code << " after " << t << " simulated\n";
        stats.sum(m, "exit_code", "", "the program's exit code", true).add(run_->exit_code);
        stats.sum(m, "time", "ns", "from its start to its return", true)
            .add(run_->end_ns - run_->start_ns);
    }
    stats.counter(m, "lines", "lines it printed", true).add(run_->lines);
    return ok;
}

}  // namespace canopy::scenarios
