#include "platform/willow_stack.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "sw/firmware/apps/atomic_writes_abi.h"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/apps/caching_abi.h"
#include "sw/firmware/apps/flash_cosmos_abi.h"
#include "sw/firmware/apps/kv_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::platform {

namespace {
// The store on the flash needs a NAND channel per SPU (SPU i drives channel i).
bool store_on_flash(Platform& p) {
    const WillowConfig& w = p.cfg.ssd;
    if (!w.store.flash) return false;
    if (!p.cfg.nand.functional)
        throw InputError("config", "ssd.store.flash",
                         "the store on the flash needs a functional NAND array (nand.functional="
                         "false keeps no data for the FTL to read back); set ssd.store.flash="
                         "false to store in SSD memory");
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
    std::vector<App> v = {{d + "/app_base_io.elf", cfg.base_io_app, kBaseIoSlot},
                          {d + "/app_direct_io.elf", cfg.direct_io_app, kDirectIoSlot}};
    if (has_flash_cosmos())
        v.push_back({d + "/app_flash_cosmos.elf", cfg.flash_cosmos_app, kFlashCosmosSlot});
    v.push_back({d + "/app_kv.elf", cfg.kv_app, kKvSlot});
    v.push_back({d + "/app_atomic_writes.elf", cfg.atomic_writes_app, kAtomicWritesSlot});
    if (cfg.cache_bytes) v.push_back({d + "/app_caching.elf", cfg.caching_app, kCachingSlot});
    return v;
}

// The apps' regions are the stack's own choice; the store they must fit in follows from the
// user's geometry. Found here, before anything runs, not as a fault of the booting kernel.
void WillowStack::check_regions() const {
    if (cfg.kv_bytes % BLOCK_IO_STRIPE_BYTES || cfg.aw_bytes % BLOCK_IO_STRIPE_BYTES ||
        cfg.cache_bytes % BLOCK_IO_STRIPE_BYTES)
        throw std::logic_error(
            "Willow stack: Key-Value, Atomic-Writes and Caching regions must "
            "be whole numbers of 8 KiB stripes");
    const uint64_t regions = uint64_t(cfg.kv_bytes) + cfg.aw_bytes + cfg.cache_bytes;
    if (regions >= spu_store_bytes())
        throw InputError(
            "config", on_flash ? "nand.geometry" : "ssd.dram",
            "each SPU's store holds " + std::to_string(spu_store_bytes()) +
                " B, too little for Willow's Key-Value, Atomic-Writes and Caching regions (" +
                std::to_string(regions) + " B) and a file system beside them; give the " +
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

void WillowStack::attach_store(sw::WillowApps& apps) {
    const sw::BlockGeometry& g = kernel.geometry();
    apps.attach_store(platform.cfg.ssd.store, g.bank_bytes);
    // SPU-OS worked the capacity out itself: it must hold the striping's rows.
    for (uint32_t s = 0; s < g.spus; ++s) {
        const uint64_t bytes = uint64_t(apps.stat(s, SPU_OS_STAT_STORE_PAGES)) *
                               apps.stat(s, SPU_OS_STAT_STORE_PAGE_BYTES);
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
    return spu_store_bytes() - cfg.kv_bytes - cfg.aw_bytes - cfg.cache_bytes;
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
    each("KV_SETUP", cfg.kv_app, KV_E_STATE, sw::spu_os_result_name,
         [&](uint32_t s, uint32_t format) {
             return kv_setup_args{kv_base(s), cfg.kv_bytes, cfg.kv_buckets, format};
         });
    each("AW_SETUP", cfg.atomic_writes_app, AW_E_STATE, sw::atomic_writes_result_name,
         [&](uint32_t s, uint32_t format) {
             return aw_setup_args{aw_base(s), cfg.aw_bytes, s, spus, format};
         });
    if (cfg.cache_bytes)
        each("CACHE_SETUP", cfg.caching_app, CACHE_E_STATE, sw::caching_result_name,
             [&](uint32_t s, uint32_t format) { return cache_setup(s, format); });
    // Committed transactions are finished everywhere before the rest are dropped.
    for (uint32_t phase = 1; phase <= 2; ++phase)
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

std::unique_ptr<sw::AtomicWrites> WillowStack::atomic_writes(host::HostCore& cpu,
                                                             sw::DirectIo& dio) {
    grant_region(
        cpu, [&](uint32_t s) { return aw_base(s); }, cfg.aw_bytes);
    return std::make_unique<sw::AtomicWrites>(dio, cfg.atomic_writes_app);
}

std::unique_ptr<sw::KvStore> WillowStack::key_value(host::HostCore& cpu) {
    grant_region(
        cpu, [&](uint32_t s) { return kv_base(s); }, cfg.kv_bytes);
    return std::make_unique<sw::KvStore>(std::make_unique<sw::Hre>(cpu, driver.open(cpu)),
                                         cfg.kv_app, kernel.spus(), cfg.kv_buckets);
}

std::unique_ptr<sw::SsdCache> WillowStack::caching(host::HostCore& cpu) {
    if (!cfg.cache_bytes) throw host::HostFault("Willow stack: no Caching app (cache_bytes = 0)");
    grant_region(
        cpu, [&](uint32_t s) { return cache_base(s); }, cfg.cache_bytes);
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
    return on_flash && platform.cfg.ssd.store.esp_blocks > 0 && g.units() <= FC_UNITS &&
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
