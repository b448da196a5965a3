#include "platform/willow_stack.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "cpu/elf_loader.hpp"
#include "sw/firmware/apps/atomic_writes_abi.h"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/apps/caching_abi.h"
#include "sw/firmware/apps/flash_cosmos_abi.h"
#include "sw/firmware/apps/kv_abi.h"
#include "sw/firmware/ftl/ftl.h"
#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::platform {

namespace {
// The store on the flash needs a NAND channel per SPU (SPU i drives channel i).
bool store_on_flash(Platform& p) {
    const WillowConfig& w = p.cfg.ssd;
    if (!w.store.flash) return false;
    if (p.device.ssd.flash.size() < p.device.ssd.spus.size())
        throw InputError("config", "ssd.store.flash",
                         "the store on the flash needs a NAND channel per SPU (nand.geometry."
                         "channels = " +
                             std::to_string(p.cfg.nand.geometry.channels) +
                             ", ssd.spus = " + std::to_string(w.spus) +
                             "); set ssd.store.flash=false to store in SSD memory");
    if (w.store.blocks_per_plane > p.cfg.nand.geometry.blocks_per_plane)
        throw InputError("config", "ssd.store.blocks_per_plane",
                         std::to_string(w.store.blocks_per_plane) +
                             " blocks, but the planes have " +
                             std::to_string(p.cfg.nand.geometry.blocks_per_plane));
    // A page's spare metadata holds the FTL's sequence word and a tag per unit.
    const uint32_t page = p.cfg.nand.geometry.page_bytes, unit = w.store.unit_bytes;
    if (unit && (unit > page || page % unit || page / unit > FTL_MAX_UNITS_PER_PAGE))
        throw InputError("config", "ssd.store.unit_bytes",
                         std::to_string(unit) + " B does not divide a " + std::to_string(page) +
                             " B page into 1 to " + std::to_string(FTL_MAX_UNITS_PER_PAGE) +
                             " units");
    const uint32_t per_page = unit ? page / unit : 1, meta = 4 * FTL_META_WORDS(per_page);
    if (meta > w.flash.meta_bytes)
        throw InputError("config", "ssd.store.unit_bytes",
                         std::to_string(unit) + " B units put " + std::to_string(per_page) +
                             " in a page, whose tags need " + std::to_string(meta) +
                             " B of spare metadata; ssd.flash.meta_bytes is " +
                             std::to_string(w.flash.meta_bytes));
    return true;
}

// The disk blocks the Caching app can name (32-bit block numbers).
uint64_t cached_blocks(const host::Disk& d) {
    return std::min<uint64_t>(d.capacity_bytes() / CACHE_BLOCK_BYTES, 0xFFFFFFFFu);
}

sw::BlockGeometry geometry(Platform& p, bool flash) {
    sw::BlockGeometry g;
    g.spus = uint32_t(p.device.ssd.spus.size());
    g.bank_bytes = p.device.ssd.dram.bank_bytes();
    g.stripe_bytes = BLOCK_IO_STRIPE_BYTES;
    if (flash) {
        const nand::Geometry& n = p.cfg.nand.geometry;
        g.store_bytes =
            p.cfg.ssd.store.spu_bytes(n.dies_per_channel, n.planes_per_die, n.wordlines_per_block,
                                      n.page_bytes, g.bank_bytes, g.stripe_bytes);
    }
    return g;
}
sw::WillowDriverConfig driver_config(const sw::HostRuntimeConfig& s) {
    sw::WillowDriverConfig c = sw::WillowDriverConfig::with_interrupts(s.willow_interrupts);
    c.coherent_queues = s.willow_coherent_queues;
    return c;
}
}  // namespace

WillowStack::WillowStack(Platform& p, WillowStackConfig c)
    : platform(p),
      cfg(std::move(c)),
      on_flash(store_on_flash(p)),
      driver(p.willow_device(p.cfg.software.willow_interrupts), sw::HreLayout(),
             driver_config(p.cfg.software)),
      kernel(driver, cfg.base_io_app, geometry(p, on_flash)),
      fs(kernel, cfg.fs),
      module(fs,
             [this] {
                 sw::DirectIoModuleConfig m = cfg.module;
                 m.direct_io_app = cfg.direct_io_app;  // Append is Direct-IO's
                 return m;
             }()),
      disk(cfg.disk),
      cache_manager(kernel, fs, disk, cfg.caching_app, cached_blocks(disk), cfg.cache_manager) {
    check_regions();
    if (platform.debugger)  // GDB gets the symbols of every app the kernel will install
        for (const App& a : apps()) platform.debugger->add_symbols(a.elf);
}

std::vector<WillowStack::App> WillowStack::apps() const {
    const std::string& d = cfg.firmware_dir;
    std::vector<App> v = {
        {"base-io", d + "/app_base_io.elf", cfg.base_io_app, kBaseIoSlot},
        {"direct-io", d + "/app_direct_io.elf", cfg.direct_io_app, kDirectIoSlot}};
    if (has_flash_cosmos())
        v.push_back(
            {"flash-cosmos", d + "/app_flash_cosmos.elf", cfg.flash_cosmos_app, kFlashCosmosSlot});
    if (has_key_value()) v.push_back({"key-value", d + "/app_kv.elf", cfg.kv_app, kKvSlot});
    if (has_atomic_writes())
        v.push_back({"atomic-writes", d + "/app_atomic_writes.elf", cfg.atomic_writes_app,
                     kAtomicWritesSlot});
    if (has_caching())
        v.push_back({"caching", d + "/app_caching.elf", cfg.caching_app, kCachingSlot});
    for (const UserApp& u : cfg.user_apps) v.push_back({u.name, u.elf, u.id, u.slot});
    return v;
}

std::optional<uint32_t> WillowStack::app_id(const std::string& name) const {
    for (const App& a : apps())
        if (a.name == name) return a.id;
    return std::nullopt;
}

std::string WillowStack::displaced_by(uint32_t slot) const {
    for (const UserApp& u : cfg.user_apps)
        if (u.slot == slot) return u.name;
    return "";
}

std::vector<UserApp> UserApp::parse(const std::string& text, const std::string& input) {
    std::vector<UserApp> out;
    std::istringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
        const auto eq = item.find('=');
        UserApp u;
        u.name = item.substr(0, eq == std::string::npos ? 0 : eq);
        u.elf = eq == std::string::npos ? "" : item.substr(eq + 1);
        auto refuse = [&](const std::string& why) { throw InputError(input, item, why); };
        if (u.name.empty() || u.elf.empty()) refuse("expected NAME=PATH.elf");
        if (u.name.size() > 32 ||
            u.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
            refuse("an app's name is 1 to 32 of a-z, 0-9, '_' and '-'");
        for (const char* b :
             {"base-io", "direct-io", "flash-cosmos", "key-value", "atomic-writes", "caching"})
            if (u.name == b) refuse("'" + u.name + "' is a built-in app's name");
        for (const UserApp& o : out)
            if (o.name == u.name) refuse("the name '" + u.name + "' is given twice");
        std::error_code ec;
        if (!std::filesystem::is_regular_file(u.elf, ec)) refuse("no such file");
        const cpu::ElfImage image(u.elf);  // InputError for what is not an ELF32 RISC-V file
        const uint32_t at = image.entry() - SPU_OS_CODE_SLOT_BASE;
        if (image.entry() < SPU_OS_CODE_SLOT_BASE || at % SPU_OS_CODE_SLOT_SIZE ||
            at / SPU_OS_CODE_SLOT_SIZE >= SPU_OS_SLOTS)
            refuse("not an SSD App: its entry " + core::TransactionTrace::hex(image.entry()) +
                   " is no slot's start (build it with canopy_spu_app(), docs/sdk.md)");
        u.slot = at / SPU_OS_CODE_SLOT_SIZE;
        if (u.slot == WillowStack::kBaseIoSlot || u.slot == WillowStack::kDirectIoSlot)
            refuse("it is linked for slot " + std::to_string(u.slot) +
                   ", Base-IO's or Direct-IO's, which the file system needs; link it for slot 0, "
                   "1, 4 or 5");
        for (const UserApp& o : out)
            if (o.slot == u.slot)
                refuse("slot " + std::to_string(u.slot) + " is already " + o.name + "'s");
        try {
            sw::app_install_rpcs(u.elf, u.slot);  // every segment inside the slot
        } catch (const host::HostFault& e) {
            refuse(e.what());
        }
        u.id = WillowStack::kUserAppIds + uint32_t(out.size());
        out.push_back(u);
    }
    return out;
}

// The apps' regions are the stack's own choice; the store they must fit in follows from the
// user's geometry. Found here, before anything runs, not as a fault of the booting kernel.
void WillowStack::check_regions() const {
    if (cfg.kv_bytes % BLOCK_IO_STRIPE_BYTES || cfg.aw_bytes % BLOCK_IO_STRIPE_BYTES ||
        cfg.cache_bytes % BLOCK_IO_STRIPE_BYTES)
        throw std::logic_error(
            "Willow stack: Key-Value, Atomic-Writes and Caching regions must "
            "be whole numbers of 8 KiB stripes");
    if (cfg.user_bytes % BLOCK_IO_STRIPE_BYTES || (!cfg.user_apps.empty() && !cfg.user_bytes))
        throw InputError("config", "scenario.app_region_bytes=" + std::to_string(cfg.user_bytes),
                         "the user apps' region must be a whole, nonzero number of " +
                             std::to_string(BLOCK_IO_STRIPE_BYTES) + " B stripes");
    const uint64_t regions =
        uint64_t(cfg.kv_bytes) + cfg.aw_bytes + cfg.cache_bytes + user_region_bytes();
    if (regions >= spu_store_bytes())
        throw InputError(
            "config", on_flash ? "nand.geometry" : "ssd.dram",
            "each SPU's store holds " + std::to_string(spu_store_bytes()) +
                " B, too little for Willow's Key-Value, Atomic-Writes and Caching regions (" +
                std::to_string(regions) + " B" +
                (user_region_bytes() ? ", with the user apps' region" : "") +
                ") and a file system beside them; give the " +
                (on_flash ? "NAND array more wordlines, blocks or dies (or set ssd.store.flash="
                            "false)"
                          : "SSD memory more bytes per SPU") +
                ", or set scenario.willow=false");
    if (cfg.cache_bytes && cache_frames() == 0)
        throw std::logic_error("Willow stack: a Caching region of " +
                               std::to_string(cfg.cache_bytes) + " B holds no frame (at least " +
                               std::to_string(CACHE_REGION_BYTES(1)) + " B)");
}

void WillowStack::stop() {
    stop_ = true;
    if (kernel_cpu_) kernel_cpu_->send_event();  // the notice thread may be asleep
}

void WillowStack::start_kernel(unsigned core) {
    auto& proc = platform.host.kernel.create_process("kernel");
    kernel_cpu_ = platform.host.cores.at(core).get();
    platform.host.cores.at(core)->run(proc, [this](host::HostCore& cpu) {
        try {
            sw::WillowApps& installer = kernel.boot(cpu);
            while (on_flash && cfg.flash_free && !cfg.flash_free()) cpu.compute_ns(10'000);
            if (on_flash) attach_store(installer);
            for (const App& a : apps()) installer.install(a.elf, a.id, a.slot);
            setup_regions(installer);
            fs.format(cpu, fs_rows() * kernel.spus(), cfg.fs_inodes);
        } catch (...) {
            failed_ = true;  // the programs waiting in wait_ready hear of it
            throw;
        }
        ready_ = true;
        module.serve_notices(cpu, stop_);
    });
}

void WillowStack::check_precondition(const PlatformConfig& cfg) {
    if (!cfg.ssd.store.flash)
        throw InputError("config", "ssd.store.flash",
                         "--precondition fills the store on the flash; it is in SSD memory");
    if (cfg.ssd.store.format)
        throw InputError("config", "ssd.store.format",
                         "true erases at boot what --precondition writes; set it false");
}

void WillowStack::precondition(const Precondition& p, uint64_t seed) {
    check_precondition(platform.cfg);
    const auto t0 = std::chrono::steady_clock::now();
    const StorePreconditioner pre(platform, kernel.geometry());
    const std::vector<ChannelImage> images = pre.run(p.units(pre.device_units(), seed));
    pre.apply(images);
    PreconditionSummary s;
    s.fill = p.name();
    for (const ChannelImage& c : images) {
        s.units += c.host_writes;
        s.programs += c.programs;
        s.gc_victims += c.gc_victims;
        s.gc_copies += c.gc_copies;
        for (const auto& e : c.erases) s.erases += e.second;
    }
    s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    preconditioned = s;
}

void WillowStack::attach_store(sw::WillowApps& apps) {
    compact_nand_pages(platform);  // before SPU-OS programs a page in time
    const sw::BlockGeometry& g = kernel.geometry();
    apps.attach_store(platform.cfg.ssd.store, g.bank_bytes, {}, preconditioned.has_value());
    // SPU-OS worked the capacity out itself: it must hold the striping's rows.
    for (uint32_t s = 0; s < g.spus; ++s) {
        const uint64_t bytes = uint64_t(apps.stat(s, SPU_OS_STAT_STORE_UNITS)) *
                               apps.stat(s, SPU_OS_STAT_STORE_UNIT_BYTES);
        if (bytes < g.store_bytes)
            throw host::HostFault("Willow stack: SPU " + std::to_string(s) + " stores " +
                                  std::to_string(bytes) + " B on the flash, the striping needs " +
                                  std::to_string(g.store_bytes));
    }
}

sw::StoreStats WillowStack::store_stats(host::HostCore& cpu) {
    sw::StoreStats t;
    if (!on_flash) return t;
    sw::WillowApps& apps = *kernel.on(cpu).apps;
    for (uint32_t s = 0; s < kernel.spus(); ++s) t += sw::StoreStats::of(apps, s);
    return t;
}

void WillowStack::flush_store(host::HostCore& cpu) {
    if (on_flash) kernel.on(cpu).apps->flush_store();
}

void WillowStack::wait_ready(host::HostCore& cpu) const {
    while (!ready_) {
        if (failed_) throw host::HostFault("Willow stack: the kernel's set-up failed");
        cpu.compute_ns(1000);
    }
}

uint64_t WillowStack::spu_store_bytes() const {
    const sw::BlockGeometry& g = kernel.geometry();
    return g.store_bytes ? g.store_bytes : g.bank_bytes;
}

uint64_t WillowStack::fs_rows() const {
    return spu_store_bytes() - cfg.kv_bytes - cfg.aw_bytes - cfg.cache_bytes - user_region_bytes();
}

uint32_t WillowStack::cache_frames() const {
    uint32_t frames = CACHE_MAX_FRAMES;
    while (frames > 0 && CACHE_REGION_BYTES(frames) > cfg.cache_bytes) --frames;
    return frames;
}

cache_setup_args WillowStack::cache_setup(uint32_t spu, uint32_t format) const {
    return cache_setup_args{
        cache_base(spu), cache_frames(), spu, kernel.spus(), uint32_t(cache_manager.disk_blocks()),
        format};
}

uint32_t WillowStack::kv_base(uint32_t spu) const {
    return uint32_t(spu * kernel.geometry().bank_bytes + spu_store_bytes() - cfg.kv_bytes);
}

void WillowStack::give_cache_region(sw::WillowApps& apps) {
    for (uint32_t s = 0; s < kernel.spus(); ++s)
        apps.give_region(cfg.caching_app, cache_base(s), cfg.cache_bytes, {s});
}

void WillowStack::setup_regions(sw::WillowApps& apps) {
    const uint32_t spus = kernel.spus();
    // SETUP without formatting; when the app finds no region there (`none`), with.
    auto each = [&](const char* what, uint32_t app, uint32_t none, auto name, auto args) {
        for (uint32_t s = 0; s < spus; ++s)
            for (uint32_t format = 0;; ++format) {
                const auto a = args(s, format);
                const uint32_t r =
                    apps.hre().call(uint8_t(s), SPU_OS_RPC_ID(app, 0), &a, sizeof a).result;
                if (r == none && format == 0) continue;
                if (r != 0)
                    throw host::HostFault("Willow stack: " + std::string(what) + " on SPU " +
                                          std::to_string(s) + " failed: " + name(r));
                break;
            }
    };
    if (has_key_value())
        each("KV_SETUP", cfg.kv_app, KV_E_STATE, sw::spu_os_result_name,
             [&](uint32_t s, uint32_t format) {
                 return kv_setup_args{kv_base(s), cfg.kv_bytes, cfg.kv_buckets, format};
             });
    if (has_atomic_writes())
        each("AW_SETUP", cfg.atomic_writes_app, AW_E_STATE, sw::atomic_writes_result_name,
             [&](uint32_t s, uint32_t format) {
                 return aw_setup_args{aw_base(s), cfg.aw_bytes, s, spus, format};
             });
    if (has_caching()) {
        give_cache_region(apps);
        each("CACHE_SETUP", cfg.caching_app, CACHE_E_STATE, sw::caching_result_name,
             [&](uint32_t s, uint32_t format) { return cache_setup(s, format); });
    }
    // Committed transactions are finished everywhere before the rest are dropped.
    for (uint32_t phase = 1; phase <= 2 && has_atomic_writes(); ++phase)
        for (uint32_t s = 0; s < spus; ++s) {
            const aw_recover_args a{phase};
            const uint16_t id = SPU_OS_RPC_ID(cfg.atomic_writes_app, AW_RECOVER);
            const uint32_t r = apps.hre().call(uint8_t(s), id, &a, sizeof a).result;
            if (r != AW_OK)
                throw host::HostFault("Willow stack: AW_RECOVER phase " + std::to_string(phase) +
                                      " on SPU " + std::to_string(s) +
                                      " failed: " + sw::atomic_writes_result_name(r));
        }
}

void WillowStack::grant_region(host::HostCore& cpu, const std::function<uint32_t(uint32_t)>& base,
                               uint32_t bytes) {
    std::vector<sw::NvmRange> ranges;
    for (uint32_t s = 0; s < kernel.spus(); ++s) ranges.push_back({s, base(s), bytes});
    module.grant_region(*kernel.on(cpu).apps, cpu.process().pid, ranges,
                        SPU_OS_PERM_READ | SPU_OS_PERM_WRITE);
}

// A built-in app a user app took the slot of: its library cannot be had.
void WillowStack::require(bool installed, const char* app, uint32_t slot) const {
    if (!installed)
        throw host::HostFault("Willow stack: no " + std::string(app) + " app: its slot " +
                              std::to_string(slot) + " holds the user app " + displaced_by(slot));
}

void WillowStack::grant_user_region(host::HostCore& cpu) {
    if (cfg.user_apps.empty())
        throw host::HostFault(
            "Willow stack: no user app is installed (scenario.apps), so there "
            "is no user region to grant");
    grant_region(
        cpu, [&](uint32_t s) { return user_base(s); }, cfg.user_bytes);
}

std::unique_ptr<sw::AtomicWrites> WillowStack::atomic_writes(host::HostCore& cpu,
                                                             sw::DirectIo& dio) {
    require(has_atomic_writes(), "Atomic-Writes", kAtomicWritesSlot);
    grant_region(
        cpu, [&](uint32_t s) { return aw_base(s); }, cfg.aw_bytes);
    return std::make_unique<sw::AtomicWrites>(dio, cfg.atomic_writes_app);
}

std::unique_ptr<sw::KvStore> WillowStack::key_value(host::HostCore& cpu) {
    require(has_key_value(), "Key-Value", kKvSlot);
    grant_region(
        cpu, [&](uint32_t s) { return kv_base(s); }, cfg.kv_bytes);
    return std::make_unique<sw::KvStore>(std::make_unique<sw::Hre>(cpu, driver.open(cpu)),
                                         cfg.kv_app, kernel.spus(), cfg.kv_buckets);
}

std::unique_ptr<sw::SsdCache> WillowStack::caching(host::HostCore& cpu) {
    if (!cfg.cache_bytes) throw host::HostFault("Willow stack: no Caching app (cache_bytes = 0)");
    require(has_caching(), "Caching", kCachingSlot);
    cache_manager.grant(cpu, cpu.process().pid, 0, uint32_t(cache_manager.disk_blocks()),
                        SPU_OS_PERM_READ | SPU_OS_PERM_WRITE);
    return std::make_unique<sw::SsdCache>(cpu, std::make_unique<sw::Hre>(cpu, driver.open(cpu)),
                                          cache_manager);
}

std::unique_ptr<sw::FlashCache> WillowStack::flash_cache(host::HostCore& cpu, uint64_t frames,
                                                         sw::FlashCacheConfig c) {
    const std::string path = "/flashcache" + std::to_string(flash_caches_++);
    const uint32_t inode = fs.create(cpu, path, sw::FlashCache::region_bytes(frames), 0, 0600);
    return std::make_unique<sw::FlashCache>(fs, disk, fs.inode(inode).extents, frames,
                                            cached_blocks(disk), c);
}

// The app keeps FC_UNITS planes per SPU and a 64-bit wordline map: larger channels go without.
bool WillowStack::has_flash_cosmos() const {
    const sw::FcGeometry g = flash_cosmos_geometry();
    // In-flash computing needs the pages' bits: not with a timing-only array.
    return displaced_by(kFlashCosmosSlot).empty() && on_flash && platform.cfg.nand.functional &&
           platform.cfg.ssd.store.esp_blocks > 0 && g.units() <= FC_UNITS &&
           g.wordlines <= FC_MAX_WORDLINES && g.page_bytes <= 0xFFFF;
}

sw::FcGeometry WillowStack::flash_cosmos_geometry() const {
    const nand::Geometry& n = platform.cfg.nand.geometry;
    sw::FcGeometry g;
    g.spus = kernel.spus();
    g.dies = n.dies_per_channel;
    g.planes = n.planes_per_die;
    g.page_bytes = n.page_bytes;
    g.wordlines = n.wordlines_per_block;
    return g;
}

std::unique_ptr<sw::DirectIo> WillowStack::direct_io(host::HostCore& cpu, sw::DirectIoConfig c) {
    return std::make_unique<sw::DirectIo>(cpu, driver, module, cfg.direct_io_app, c);
}

}  // namespace canopy::platform
