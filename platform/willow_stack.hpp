// Willow's host software stack on an elaborated platform (Willow Section 3.1 "Willow usage
// model", Figure 2; Sections 4.1-4.2): the host kernel's side set up the way a booting system
// does it. A kernel program on one host core opens the kernel's HRE on queue pair 0, installs
// the Base-IO and Direct-IO SSD Apps on every SPU from their ELFs, formats the file system on
// the Base-IO block device, and then serves SPU-OS's notices (permission misses, app faults)
// through the Direct-IO kernel module until it is told to stop. User programs on other cores
// wait for it, then use the file system (system calls, Base-IO) or libDirectIO (OS bypass).
// The default scenario (`canopy run`), the willow-io experiment and the tests share this.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/disk.hpp"
#include "platform/platform.hpp"
#include "platform/store_precondition.hpp"
#include "sw/host/atomic_writes.hpp"
#include "sw/host/direct_io.hpp"
#include "sw/host/flash_cache.hpp"
#include "sw/host/flash_cosmos.hpp"
#include "sw/host/kernel_hres.hpp"
#include "sw/host/kv_store.hpp"
#include "sw/host/lib_direct_io.hpp"
#include "sw/host/ssd_cache.hpp"
#include "sw/host/willow_driver.hpp"
#include "sw/host/willow_fs.hpp"

struct cache_setup_args;

namespace canopy::platform {

// An SSD App built outside Canopy (the SDK: docs/sdk.md): its name, ELF, the slot its link
// address names, and the app id the kernel gives it.
struct UserApp {
    std::string name, elf;
    uint32_t slot = 0, id = 0;
    // Parses scenario.apps, "NAME=PATH.elf[,NAME=PATH.elf...]", and checks each ELF is an SSD App
    // linked for a slot a user app may take (not Base-IO's or Direct-IO's, which the file system
    // needs), no two in one slot and no name twice. Throws InputError naming `input` and the item.
    static std::vector<UserApp> parse(const std::string& text, const std::string& input);
};

struct WillowStackConfig {
    std::string firmware_dir;                     // where app_base_io.elf and app_direct_io.elf are
    uint32_t base_io_app = 1, direct_io_app = 2;  // the app ids the kernel gives them
    // Flash-Cosmos (app_flash_cosmos.elf), installed when the store is on the flash with an ESP
    // region (ssd.store.esp_blocks > 0).
    uint32_t flash_cosmos_app = 3;
    // Key-Value (app_kv.elf): its table takes the top kv_bytes of every SPU's store (the file
    // system the rest), kv_buckets buckets per SPU.
    uint32_t kv_app = 4;
    uint32_t kv_bytes = 4 << 20;  // assumed
    uint32_t kv_buckets = 1024;   // assumed
    // Atomic-Writes (app_atomic_writes.elf): its redo logs take the aw_bytes below the Key-Value
    // region of every SPU's store.
    uint32_t atomic_writes_app = 5;
    uint32_t aw_bytes = 1 << 20;  // assumed: 6 logs of 168 KiB per SPU
    // Caching (app_caching.elf, Willow 4.4): its metadata and frames take the cache_bytes below
    // the Atomic-Writes region of every SPU's store (as many 4 KiB frames as fit, at most
    // CACHE_MAX_FRAMES; 0: no Caching app), in front of `disk`.
    uint32_t caching_app = 6;
    uint32_t cache_bytes = 8 << 20;  // assumed: 2,033 frames per SPU
    host::DiskConfig disk;
    sw::CacheManagerConfig cache_manager;
    uint32_t fs_inodes = 64;
    sw::WillowFsConfig fs;
    sw::DirectIoModuleConfig module;
    // SSD Apps from outside the tree (scenario.apps, `canopy run --app NAME=PATH.elf`): each
    // installed in the slot it is linked for, in place of the built-in app of that slot (whose
    // part of the stack is then off), with ids from kUserAppIds up in order; a process that asks
    // (grant_user_region) gets user_bytes of every SPU's store below the Caching region.
    std::vector<UserApp> user_apps;
    uint32_t user_bytes = 1 << 20;  // assumed: 1 MiB per SPU, a whole number of 8 KiB stripes
    // When set, the kernel attaches the flash store only once this holds: the default scenario's
    // Flash-Cosmos demonstration drives the same dies directly (platform/flash_player), and an
    // FTL command between its MWS and the latch read-out would overwrite the latches.
    std::function<bool()> flash_free;
};

class WillowStack {
  public:
    // The slots the apps are linked for (sw/firmware/CMakeLists.txt).
    static constexpr uint32_t kBaseIoSlot = 2, kDirectIoSlot = 3, kFlashCosmosSlot = 1, kKvSlot = 0,
                              kAtomicWritesSlot = 4, kCachingSlot = 5;

    WillowStack(Platform& platform, WillowStackConfig cfg);

    // The first id the kernel gives an app from outside (scenario.apps).
    static constexpr uint32_t kUserAppIds = 16;

    // The SSD Apps the kernel installs on every SPU, in order: its name ("base-io", "key-value",
    // a user app's), the ELF, its app id, its slot.
    struct App {
        std::string name, elf;
        uint32_t id, slot;
    };
    std::vector<App> apps() const;
    // The id of the installed app `name` (none: not installed).
    std::optional<uint32_t> app_id(const std::string& name) const;
    // The user app that took built-in slot `slot` in its place, "" when none did.
    std::string displaced_by(uint32_t slot) const;

    // Starts the kernel program on host core `core` (before sc_start).
    void start_kernel(unsigned core);
    // In a user program: waits until the kernel has installed the apps and formatted the file
    // system; throws HostFault when the kernel program failed.
    void wait_ready(host::HostCore& cpu) const;
    bool ready() const { return ready_; }
    // Ends the kernel's notice thread (from any program; it wakes the kernel's core).
    void stop();
    // A user program holds one of these for its whole run: when the last of `users` programs
    // ends, even by a fault, the notice thread stops (else it would poll for ever).
    struct User {
        WillowStack& stack;
        unsigned& running;
        User(WillowStack& s, unsigned& r) : stack(s), running(r) { ++running; }
        ~User() {
            if (--running == 0) stack.stop();
        }
    };
    // A user process's libDirectIO, on the core it runs on.
    std::unique_ptr<sw::DirectIo> direct_io(host::HostCore& cpu,
                                            sw::DirectIoConfig cfg = sw::DirectIoConfig());
    // A user process's Key-Value store (a system call: the kernel grants the calling process the
    // table's regions on every SPU, then the library works on an HRE of the process's own).
    std::unique_ptr<sw::KvStore> key_value(host::HostCore& cpu);
    // A user process's Atomic-Writes library over the files its libDirectIO opens (a system
    // call: the kernel grants the process the log regions on every SPU).
    std::unique_ptr<sw::AtomicWrites> atomic_writes(host::HostCore& cpu, sw::DirectIo& dio);
    // A user process's Caching library (a system call: the kernel grants the calling process
    // every cached block, with Caching's own entries on every SPU; misses go to `cache_manager`).
    // Throws HostFault without a cache.
    std::unique_ptr<sw::SsdCache> caching(host::HostCore& cpu);
    // The FlashCache baseline in front of the same disk, with `frames` 4 KiB frames in a file the
    // kernel creates for it in the file system (Base-IO), on the calling core.
    std::unique_ptr<sw::FlashCache> flash_cache(host::HostCore& cpu, uint64_t frames,
                                                sw::FlashCacheConfig c = sw::FlashCacheConfig());
    // Frames per SPU the Caching app keeps in cache_bytes.
    uint32_t cache_frames() const;
    // APP_REGION on every SPU: the cache region is the Caching app's own (Willow 4.4: it checks
    // its users' grants itself), as the kernel gives it before CACHE_SETUP.
    void give_cache_region(sw::WillowApps& apps);
    // The CACHE_SETUP the kernel sends SPU `spu` (format 0: load what the region holds).
    cache_setup_args cache_setup(uint32_t spu, uint32_t format) const;
    // Whether the kernel installs the Flash-Cosmos app, and the geometry its library needs.
    bool has_flash_cosmos() const;
    // Whether it installs Key-Value, Atomic-Writes and Caching (a user app may take their slot).
    bool has_key_value() const { return displaced_by(kKvSlot).empty(); }
    bool has_atomic_writes() const { return displaced_by(kAtomicWritesSlot).empty(); }
    bool has_caching() const { return cfg.cache_bytes && displaced_by(kCachingSlot).empty(); }
    // A system call for the user apps: the kernel grants the calling process the user region of
    // every SPU's store for good (HostFault when no user app is installed).
    void grant_user_region(host::HostCore& cpu);
    // Where the user region starts in SPU `spu`'s store, and its bytes (0 without user apps).
    uint32_t user_base(uint32_t spu) const { return cache_base(spu) - user_region_bytes(); }
    uint32_t user_region_bytes() const { return cfg.user_apps.empty() ? 0 : cfg.user_bytes; }
    sw::FcGeometry flash_cosmos_geometry() const;

    // Preconditioning, before sc_start (the store on the flash, which SPU-OS then mounts): the
    // device's units written as `p` says, worked out without simulated time
    // (platform/store_precondition); `seed` draws random fills. What it did stays in
    // `preconditioned`.
    void precondition(const Precondition& p, uint64_t seed);
    // Throws InputError naming the key when `cfg` leaves nothing to precondition.
    static void check_precondition(const PlatformConfig& cfg);
    struct PreconditionSummary {
        std::string fill;
        uint64_t units = 0, programs = 0, erases = 0, gc_victims = 0, gc_copies = 0;
        double wall_s = 0;  // host time it took
    };
    std::optional<PreconditionSummary> preconditioned;

    // The flash store's counters summed over the SPUs, read with STAT RPCs from the calling
    // core's kernel HRE (all zero on the SSD-memory store).
    sw::StoreStats store_stats(host::HostCore& cpu);
    // The block layer's FLUSH (fsync): STORE_FLUSH on every SPU, from `cpu`, through the
    // kernel's HRE; nothing while the store is SSD memory.
    void flush_store(host::HostCore& cpu);
    // Where the Key-Value table and Atomic-Writes' log region start in SPU `spu`'s store.
    uint32_t kv_base(uint32_t spu) const;
    uint32_t aw_base(uint32_t spu) const { return kv_base(spu) - cfg.aw_bytes; }

    Platform& platform;
    const WillowStackConfig cfg;
    const bool on_flash;  // SPU-OS stores on the NAND array (ssd.store.flash)
    sw::WillowDriver driver;
    sw::KernelHres kernel;
    sw::WillowFs fs;
    sw::DirectIoModule module;
    host::Disk disk;                 // behind the caches
    sw::CacheManager cache_manager;  // the kernel's side of Caching

  private:
    void attach_store(sw::WillowApps& apps);
    // Throws HostFault when a user app holds the slot of the built-in `app` a library needs.
    void require(bool installed, const char* app, uint32_t slot) const;
    // Bytes of each SPU's store (the striping's rows).
    uint64_t spu_store_bytes() const;
    // Gives the calling process an app's region, [base(s), base(s) + bytes) on every SPU s, for
    // good: the Direct-IO module grants it again after a permission miss.
    void grant_region(host::HostCore& cpu, const std::function<uint32_t(uint32_t)>& base,
                      uint32_t bytes);
    uint32_t cache_base(uint32_t spu) const { return aw_base(spu) - cfg.cache_bytes; }
    // The store below the apps' regions: the file system's, per SPU.
    uint64_t fs_rows() const;
    // The regions of the Key-Value, Atomic-Writes and Caching apps: what the store kept (after a
    // reboot, the logs recovered, the dirty blocks still dirty), else fresh ones.
    void check_regions() const;
    void setup_regions(sw::WillowApps& apps);

    bool ready_ = false, stop_ = false, failed_ = false;
    host::HostCore* kernel_cpu_ = nullptr;
    uint32_t flash_caches_ = 0;  // files made for FlashCache
};

}  // namespace canopy::platform
