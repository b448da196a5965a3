// The host kernel's SSD App manager (Willow Section 3.1 "Building an SSD App", "Protection and
// sharing"): the part of the Willow driver that installs SSD Apps at run time. The host kernel
// allocates app slots statically (an app is linked for one slot, sw/firmware/apps/app.ld.in);
// this object keeps which slot holds which app on each SPU, refuses a double install, and carries
// the app's code and data images into the slot with SPU-OS's kernel-only RPCs
// (sw/firmware/spu_os/spu_os_abi.h: INSTALL_CODE / INSTALL_DATA in pieces, ACTIVATE, REMOVE,
// PERM_ADD / PERM_REMOVE, CALL_ALLOW, STAT) sent through one of the kernel's own HREs (high bits
// 0). Every result is checked: a refusal throws host::HostFault naming the SPU, the RPC and the
// result. It also takes the notices SPU-OS sends the kernel HRE (app faults, permission misses).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "sw/firmware/ftl/ftl.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/hre.hpp"

namespace canopy::sw {

// Where SPU-OS keeps the data its NVM calls store (docs/spu_os.md "The store"): the SPU's bank of
// SSD memory (Willow's PCM emulation, Section 3.2), or its NAND channel behind the firmware FTL
// (sw/firmware/ftl), which the driver attaches at boot with SPU_OS_RPC_STORE_ATTACH.
struct StoreConfig {
    bool flash = true;               // false: SSD memory, as in Willow's prototype
    bool format = false;             // erase every block at boot instead of mounting (recovery)
    uint32_t blocks_per_plane = 16;  // assumed: the FTL's part of each plane (block 0 up); 16
                                     // with 4 ESP blocks leaves 12 for data, ~119 MiB per SPU,
                                     // inside its 128 MiB address bank
    uint32_t op_permille = 70;       // assumed: 7 % over-provisioning, a common consumer figure
    uint32_t gc_free_blocks = 4;     // assumed: GC keeps this many blocks free
    uint32_t wl_threshold = 100;     // assumed: static levelling past this P/E spread
    uint32_t esp_blocks = 4;         // assumed: per plane, for Flash-Cosmos operands (the app
                                     // gives a group up to 2 blocks per plane)
    std::string cell_mode = "tlc";   // data pages: slc, mlc or tlc [Flash-Cosmos Table 1: TLC]
    uint32_t unit_bytes = 4096;      // the FTL's mapping unit: 4 KiB, as SSDs map (a page: 0)
    // Writes acknowledged from the FTL's write buffer in SSD memory, made durable by a flush
    // (STORE_FLUSH, nvm_flush) or when their page fills: a volatile write cache, as SSDs have
    // [assumed]; false: every write is programmed before it is acknowledged.
    bool write_cache = true;
    std::string gc_policy = "greedy";  // greedy or cost-benefit (Kawaguchi et al. 1995)
    // With the write cache: GC keeps pace with the host's writes (a few units moved per write
    // once fewer than gc_free_blocks + a block per host frontier are free), as controllers'
    // incremental GC does, instead of whole victims when a frontier needs a block [assumed: off,
    // the FTL's 12 data blocks per plane make the spare blocks it keeps costly; docs/ftl.md].
    bool gc_pacing = false;
    void describe(core::Params& p);  // relative to the caller's scope
    // The SPU_OS_RPC_STORE_ATTACH payload (struct spu_os_store_attach) for banks of bank_bytes;
    // `resume`: the FTL's tables and saved state are in SSD memory already (preconditioning).
    spu_os_store_attach attach(uint64_t bank_bytes, bool resume = false) const;
    std::vector<uint8_t> attach_payload(uint64_t bank_bytes, bool resume = false) const;
    // The FTL configuration SPU-OS builds from that payload on a channel of this geometry
    // (callbacks, memory and buffers unset).
    ftl_config ftl(uint32_t dies, uint32_t planes, uint32_t pages_per_block, uint32_t page_bytes,
                   uint64_t bank_bytes) const;
    // The store bytes each SPU offers on a channel of this geometry, as SPU-OS will compute them
    // (the FTL's capacity, capped by the bank), rounded down to whole `stripe_bytes`; throws
    // InputError naming ssd.store when the FTL refuses the configuration.
    uint64_t spu_bytes(uint32_t dies, uint32_t planes, uint32_t pages_per_block,
                       uint32_t page_bytes, uint64_t bank_bytes, uint32_t stripe_bytes) const;
};

// One kernel RPC of an app's installation: INSTALL_CODE or INSTALL_DATA with its payload
// {slot, offset, bytes...}.
struct InstallRpc {
    uint8_t handler = 0;   // SPU_OS_RPC_INSTALL_CODE or _DATA
    uint32_t address = 0;  // where the piece lands in the SPU's IMEM or DMEM (for messages)
    std::vector<uint8_t> payload;
};

// The RPCs that put the loadable segments of the app ELF at `elf_path` into `slot`, in pieces of
// at most `piece_bytes` image bytes (a multiple of 4: code goes in words); bss needs none, since
// slots start zeroed. Throws HostFault when the ELF is not an app linked for that slot.
std::vector<InstallRpc> app_install_rpcs(const std::string& elf_path, uint32_t slot,
                                         uint32_t piece_bytes = 1024);

// SPU-OS's result codes and kernel RPCs by name, for messages: "SPU_OS_E_STATE", "ACTIVATE".
std::string spu_os_result_name(uint32_t result);
std::string spu_os_rpc_name(uint8_t handler);

// A request SPU-OS sent the host kernel (dst_hre 0, so the kernel HRE on queue pair 0).
struct SpuNotice {
    uint8_t node = 0;  // the SPU that sent it
    uint16_t rpc_id = 0;
    // NOTIFY_FAULT: {node, app, mcause, mtval, mepc, origin};
    // NOTIFY_PERM_MISS: {node, process, app, addr, length, rights};
    // NOTIFY_DENIED: {node, process, app, what, a, b} (SPU_OS_DENIED_*).
    std::array<uint32_t, 6> words{};
    bool fault() const;
    bool perm_miss() const;
    bool denied() const;
};

class WillowApps {
  public:
    // `kernel` must be a kernel HRE (driver.open(cpu, true)); `spus` is the SSD's SPU count.
    WillowApps(Hre& kernel, uint32_t spus);

    // Installs the app ELF (linked for `slot`) as `app` on `spus` (empty: every SPU): all its
    // pieces, then ACTIVATE. Refuses, before sending anything, a slot this object already gave
    // to an app or an app id already installed on one of the SPUs. When some SPU refuses, the
    // SPUs where the app became active are rolled back (REMOVE) and HostFault is thrown.
    void install(const std::string& elf_path, uint32_t app, uint32_t slot,
                 const std::vector<uint32_t>& spus = {});
    // REMOVE on every SPU holding `app` (or those of `spus`); frees their slots.
    void remove(uint32_t app, const std::vector<uint32_t>& spus = {});

    // PERM_ADD: process `process` (the PID, an HRE's high bits) may reach SSD memory
    // [start, start + length) with `rights` (SPU_OS_PERM_READ | SPU_OS_PERM_WRITE).
    void grant(uint32_t process, uint32_t start, uint32_t length, uint32_t rights,
               const std::vector<uint32_t>& spus = {});
    // PERM_REMOVE of the extent starting at `start`.
    void revoke(uint32_t process, uint32_t start, const std::vector<uint32_t>& spus = {});
    // APP_REGION: app `app` reaches SSD memory [start, start + length) on its own authority,
    // whichever process it serves (0 bytes: no region); it then decides itself who may reach what.
    void give_region(uint32_t app, uint32_t start, uint32_t length,
                     const std::vector<uint32_t>& spus = {});
    // CALL_ALLOW: app `caller` may call the functions of `callee` in `mask` (0 revokes).
    void allow_call(uint32_t caller, uint32_t callee, uint32_t mask,
                    const std::vector<uint32_t>& spus = {});
    // STAT (SPU_OS_STAT_*) of one SPU.
    uint32_t stat(uint32_t spu, uint32_t which);
    // STORE_ATTACH on every SPU (or those of `spus`): their stores move onto the flash;
    // `resume`: onto the FTL state preconditioning left (StoreConfig::attach).
    void attach_store(const StoreConfig& store, uint64_t bank_bytes,
                      const std::vector<uint32_t>& spus = {}, bool resume = false);
    // STORE_FLUSH on every SPU (or those of `spus`): what the stores acknowledged is durable.
    void flush_store(const std::vector<uint32_t>& spus = {});

    // The host kernel's slot table: the app in `slot` of `spu`, the slot of `app` on `spu`.
    std::optional<uint32_t> app_in(uint32_t spu, uint32_t slot) const;
    std::optional<uint32_t> slot_of(uint32_t spu, uint32_t app) const;

    // The next notice SPU-OS sent (waits for one; try_: none when none is there), answered
    // so that its response slot on the SPU is freed. Requests other than notices are left
    // unanswered: they throw HostFault, since the kernel HRE serves only SPU-OS.
    SpuNotice next_notice();
    std::optional<SpuNotice> try_notice();

    Hre& hre() { return hre_; }

  private:
    std::vector<uint32_t> targets(const std::vector<uint32_t>& spus) const;
    // Sends one kernel RPC to each SPU at once (SPU-OS serves them in parallel) and waits for
    // every answer; returns the result on each SPU, status failures mapped to HostFault.
    std::map<uint32_t, uint32_t> broadcast(const std::vector<uint32_t>& spus, uint8_t handler,
                                           const std::vector<uint8_t>& payload);
    // broadcast, throwing HostFault ("`what`") unless every SPU answered SPU_OS_OK.
    void broadcast_ok(const std::vector<uint32_t>& spus, uint8_t handler,
                      const std::vector<uint8_t>& payload, const std::string& what);
    SpuNotice notice(const Hre::Request& r);

    Hre& hre_;
    uint32_t spus_;
    std::vector<std::map<uint32_t, uint32_t>> slots_;  // per SPU: slot -> app
};

// The flash store's counters (SPU_OS_STAT_STORE_*) of one SPU, or summed over several.
struct StoreStats {
    uint64_t host_writes = 0;  // units the FTL wrote for NVM writes (a piece counts one)
    uint64_t host_reads = 0;
    uint64_t programs = 0;  // pages programmed: host writes, GC copies, records, padding
    uint64_t gc_copies = 0, gc_victims = 0, erases = 0;
    uint64_t table_misses = 0;   // FTL table lines fetched from SSD memory
    uint64_t flash_wait_us = 0;  // SPU-OS's time waiting for the flash
    uint64_t buffer_hits = 0;    // unit writes replacing one still in the write buffer
    uint64_t padded_units = 0;   // page slots programmed empty
    uint64_t flushes = 0;
    uint64_t buffered_units = 0;  // in the write buffers now (a level: summed over SPUs only)
    uint64_t trim_records = 0;    // TRIM records written (a unit each, for a mapped unit trimmed)
    uint64_t syncs = 0;           // flushes of a range (a FUA write each)
    uint32_t units_per_page = 1;  // the same on every SPU (not summed)
    static StoreStats of(WillowApps& apps, uint32_t spu);
    StoreStats& operator+=(const StoreStats& o);
    // Flash units programmed per unit written for the host (0 before any write).
    double write_amplification() const {
        return host_writes ? double(programs) * units_per_page / double(host_writes) : 0.0;
    }
};

}  // namespace canopy::sw
