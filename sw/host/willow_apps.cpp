#include "sw/host/willow_apps.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "cpu/elf_loader.hpp"
#include "ssd/hre_queue.h"
#include "sw/firmware/ftl/ftl.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/firmware/spu_os/store_attach.h"

namespace canopy::sw {

namespace {

std::vector<uint8_t> words(std::initializer_list<uint32_t> w) {
    std::vector<uint8_t> b(w.size() * 4);
    size_t i = 0;
    for (uint32_t v : w)  // little-endian, as SPU-OS reads them
        for (int k = 0; k < 4; ++k) b[i++] = uint8_t(v >> (8 * k));
    return b;
}

std::string hex(uint32_t v) {
    char s[16];
    std::snprintf(s, sizeof s, "0x%x", v);
    return s;
}

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace

std::string spu_os_result_name(uint32_t r) {
    static const std::map<uint32_t, const char*> names = {
        {SPU_OS_OK, "SPU_OS_OK"},
        {SPU_OS_E_NO_APP, "SPU_OS_E_NO_APP"},
        {SPU_OS_E_NO_HANDLER, "SPU_OS_E_NO_HANDLER"},
        {SPU_OS_E_KERNEL_ONLY, "SPU_OS_E_KERNEL_ONLY"},
        {SPU_OS_E_APP_FAULT, "SPU_OS_E_APP_FAULT"},
        {SPU_OS_E_DISABLED, "SPU_OS_E_DISABLED"},
        {SPU_OS_E_NO_RESPONSE, "SPU_OS_E_NO_RESPONSE"},
        {SPU_OS_E_BAD_POINTER, "SPU_OS_E_BAD_POINTER"},
        {SPU_OS_E_PERMISSION, "SPU_OS_E_PERMISSION"},
        {SPU_OS_E_BAD_ARG, "SPU_OS_E_BAD_ARG"},
        {SPU_OS_E_STATE, "SPU_OS_E_STATE"},
        {SPU_OS_E_NETWORK, "SPU_OS_E_NETWORK"},
        {SPU_OS_E_DMA, "SPU_OS_E_DMA"},
        {SPU_OS_E_NO_CALL, "SPU_OS_E_NO_CALL"},
        {SPU_OS_E_UNKNOWN_SYSCALL, "SPU_OS_E_UNKNOWN_SYSCALL"},
        {SPU_OS_E_DROPPED, "SPU_OS_E_DROPPED"}};
    const auto it = names.find(r);
    return hex(r) + (it != names.end() ? std::string(" (") + it->second + ")" : "");
}

std::string spu_os_rpc_name(uint8_t handler) {
    static const char* const names[] = {"PING",        "INSTALL_CODE", "INSTALL_DATA",
                                        "ACTIVATE",    "REMOVE",       "PERM_ADD",
                                        "PERM_REMOVE", "STAT",         "CALL_ALLOW"};
    return handler < sizeof names / sizeof *names ? names[handler] : "kernel RPC " + hex(handler);
}

std::vector<InstallRpc> app_install_rpcs(const std::string& elf_path, uint32_t slot,
                                         uint32_t piece_bytes) {
    const std::string name = base_name(elf_path);
    if (slot >= SPU_OS_SLOTS)
        throw host::HostFault("Willow apps: " + name + ": no slot " + std::to_string(slot) +
                              " (SPU-OS has " + std::to_string(SPU_OS_SLOTS) + ")");
    if (piece_bytes == 0 || piece_bytes % 4)
        throw host::HostFault("Willow apps: install pieces must be whole words, not " +
                              std::to_string(piece_bytes) + " B");
    const uint32_t code_base = SPU_OS_CODE_SLOT_BASE + slot * SPU_OS_CODE_SLOT_SIZE;
    const uint32_t data_base = SPU_OS_DATA_SLOT_BASE + slot * SPU_OS_DATA_SLOT_SIZE;
    std::vector<uint8_t> code(SPU_OS_CODE_SLOT_SIZE), data(SPU_OS_DATA_SLOT_SIZE);
    // Loading into the slot's two segments only is the check that the app is linked for it.
    cpu::ElfImage image(elf_path);
    try {
        image.load({{"code slot", code_base, SPU_OS_CODE_SLOT_SIZE, code.data(), nullptr},
                    {"data slot", data_base, SPU_OS_DATA_SLOT_SIZE, data.data(), nullptr}});
    } catch (const std::exception& e) {
        throw host::HostFault("Willow apps: " + name + " is not an app linked for slot " +
                              std::to_string(slot) + ": " + e.what());
    }
    std::vector<InstallRpc> rpcs;
    for (const cpu::ElfSegment& s : image.segments()) {
        const bool is_code = s.region == "code slot";
        const uint32_t base = is_code ? code_base : data_base;
        const uint8_t* mem = (is_code ? code.data() : data.data()) - base;
        const uint32_t end = s.paddr + ((s.filesz + 3) & ~3u);  // code goes in words
        for (uint32_t at = s.paddr; at < end; at += piece_bytes) {
            InstallRpc r;
            r.handler = is_code ? SPU_OS_RPC_INSTALL_CODE : SPU_OS_RPC_INSTALL_DATA;
            r.address = at;
            r.payload = words({slot, at - base});
            r.payload.insert(r.payload.end(), mem + at, mem + std::min(end, at + piece_bytes));
            rpcs.push_back(std::move(r));
        }
    }
    return rpcs;
}

bool SpuNotice::fault() const {
    return rpc_id == SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_FAULT);
}
bool SpuNotice::perm_miss() const {
    return rpc_id == SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_PERM_MISS);
}
bool SpuNotice::denied() const {
    return rpc_id == SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, SPU_OS_RPC_NOTIFY_DENIED);
}

WillowApps::WillowApps(Hre& kernel, uint32_t spus) : hre_(kernel), spus_(spus), slots_(spus) {
    // Kernel-only RPCs from a user's HRE would all be refused: say so at once.
    if (SPU_OS_PROCESS(kernel.id()) != 0)
        throw host::HostFault("Willow apps: HRE " + hex(kernel.id()) +
                              " is a user HRE; app management needs a kernel HRE");
}

std::vector<uint32_t> WillowApps::targets(const std::vector<uint32_t>& spus) const {
    std::vector<uint32_t> t = spus;
    if (t.empty())
        for (uint32_t s = 0; s < spus_; ++s) t.push_back(s);
    for (uint32_t s : t)
        if (s >= spus_)
            throw host::HostFault("Willow apps: no SPU " + std::to_string(s) + " (the SSD has " +
                                  std::to_string(spus_) + ")");
    return t;
}

std::map<uint32_t, uint32_t> WillowApps::broadcast(const std::vector<uint32_t>& spus,
                                                   uint8_t handler,
                                                   const std::vector<uint8_t>& payload) {
    std::map<uint32_t, uint16_t> tags;
    for (uint32_t s : spus)
        tags[s] = hre_.send(uint8_t(s), SPU_OS_RPC_ID(SPU_OS_KERNEL_APP, handler), payload.data(),
                            uint32_t(payload.size()));
    std::map<uint32_t, uint32_t> results;
    std::string failed;
    for (const auto& [s, tag] : tags) {  // every answer, so none is left behind in the HRE
        const Hre::Response r = hre_.wait(tag);
        results[s] = r.result;
        if (!r.ok() && failed.empty())
            failed = "Willow apps: the bridge failed " + spu_os_rpc_name(handler) + " to SPU " +
                     std::to_string(s) + ": HRE status " + std::to_string(r.status);
    }
    if (!failed.empty()) throw host::HostFault(failed);
    return results;
}

void WillowApps::broadcast_ok(const std::vector<uint32_t>& spus, uint8_t handler,
                              const std::vector<uint8_t>& payload, const std::string& what) {
    for (const auto& [s, result] : broadcast(spus, handler, payload))
        if (result != SPU_OS_OK)
            throw host::HostFault("Willow apps: SPU " + std::to_string(s) + " refused " +
                                  spu_os_rpc_name(handler) + " (" + what + "): result " +
                                  spu_os_result_name(result));
}

void WillowApps::install(const std::string& elf_path, uint32_t app, uint32_t slot,
                         const std::vector<uint32_t>& spus) {
    const std::string name = base_name(elf_path);
    if (app == SPU_OS_KERNEL_APP || app > 0xff)
        throw host::HostFault("Willow apps: " + name + ": app id " + std::to_string(app) +
                              " is not 1..255");
    const std::vector<uint32_t> to = targets(spus);
    for (uint32_t s : to) {  // the host kernel's allocation: refused before anything is sent
        if (const auto held = app_in(s, slot))
            throw host::HostFault("Willow apps: cannot install " + name + " as app " +
                                  std::to_string(app) + " into slot " + std::to_string(slot) +
                                  " of SPU " + std::to_string(s) + ": it holds app " +
                                  std::to_string(*held));
        if (const auto at = slot_of(s, app))
            throw host::HostFault("Willow apps: app " + std::to_string(app) +
                                  " is already installed on SPU " + std::to_string(s) + " (slot " +
                                  std::to_string(*at) + ")");
    }
    for (const InstallRpc& r : app_install_rpcs(elf_path, slot))
        broadcast_ok(to, r.handler, r.payload,
                     name + " into slot " + std::to_string(slot) + " at " + hex(r.address));
    const auto results = broadcast(to, SPU_OS_RPC_ACTIVATE, words({app, slot}));
    std::string failed;
    for (const auto& [s, result] : results) {
        if (result == SPU_OS_OK) {
            slots_[s][slot] = app;
        } else if (failed.empty()) {
            failed = "Willow apps: SPU " + std::to_string(s) + " refused ACTIVATE (" + name +
                     " as app " + std::to_string(app) + " in slot " + std::to_string(slot) +
                     "): result " + spu_os_result_name(result);
        }
    }
    if (failed.empty()) return;
    // All or nothing: an app active on only some SPUs would answer some RPCs and not others.
    std::vector<uint32_t> active;
    for (const auto& [s, result] : results)
        if (result == SPU_OS_OK) active.push_back(s);
    if (!active.empty()) try {
            remove(app, active);
        } catch (const host::HostFault& e) {
            failed += std::string("; rolling back: ") + e.what();
        }
    throw host::HostFault(failed);
}

void WillowApps::remove(uint32_t app, const std::vector<uint32_t>& spus) {
    std::vector<uint32_t> holding;
    for (uint32_t s : targets(spus))
        if (slot_of(s, app)) holding.push_back(s);
    if (holding.empty())
        throw host::HostFault("Willow apps: app " + std::to_string(app) +
                              " is not installed on the SPUs given");
    const auto results = broadcast(holding, SPU_OS_RPC_REMOVE, words({app}));
    for (const auto& [s, result] : results)  // SPU-OS freed the slots that answered OK
        if (result == SPU_OS_OK) slots_[s].erase(*slot_of(s, app));
    for (const auto& [s, result] : results)
        if (result != SPU_OS_OK)
            throw host::HostFault("Willow apps: SPU " + std::to_string(s) +
                                  " refused REMOVE (app " + std::to_string(app) + "): result " +
                                  spu_os_result_name(result));
}

void WillowApps::grant(uint32_t process, uint32_t start, uint32_t length, uint32_t rights,
                       const std::vector<uint32_t>& spus) {
    broadcast_ok(targets(spus), SPU_OS_RPC_PERM_ADD, words({process, start, length, rights}),
                 "process " + std::to_string(process) + " " + hex(start) + "+" + hex(length) +
                     " rights " + std::to_string(rights));
}

void WillowApps::revoke(uint32_t process, uint32_t start, const std::vector<uint32_t>& spus) {
    broadcast_ok(targets(spus), SPU_OS_RPC_PERM_REMOVE, words({process, start}),
                 "process " + std::to_string(process) + " " + hex(start));
}

void WillowApps::give_region(uint32_t app, uint32_t start, uint32_t length,
                             const std::vector<uint32_t>& spus) {
    broadcast_ok(targets(spus), SPU_OS_RPC_APP_REGION, words({app, start, length}),
                 "app " + std::to_string(app) + " " + hex(start) + "+" + hex(length));
}

void WillowApps::allow_call(uint32_t caller, uint32_t callee, uint32_t mask,
                            const std::vector<uint32_t>& spus) {
    broadcast_ok(targets(spus), SPU_OS_RPC_CALL_ALLOW, words({caller, callee, mask}),
                 "app " + std::to_string(caller) + " -> app " + std::to_string(callee) +
                     " functions " + hex(mask));
}

void StoreConfig::describe(core::Params& p) {
    p("flash", flash,
      "SPU-OS stores on the SPU's NAND channel through the FTL (false: in SSD memory, as Willow's "
      "PCM emulation)")(
        "format", format,
        "erase every block at boot (false: mount, recovering what the flash holds)")(
        "blocks_per_plane", blocks_per_plane, "", "the FTL's blocks in each plane, from block 0", 1,
        UINT32_MAX)("op_permille", op_permille, "permille", "over-provisioning [assumed]", 0, 999)(
        "gc_free_blocks", gc_free_blocks, "", "free blocks below which GC runs [assumed]", 2,
        UINT32_MAX)("wl_threshold", wl_threshold, "",
                    "P/E spread that starts static wear levelling (0: off)")(
        "esp_blocks", esp_blocks, "", "blocks per plane kept for Flash-Cosmos operands (ESP)")
        .choice("cell_mode", cell_mode, {"slc", "mlc", "tlc"}, "how data pages are programmed")(
            "unit_bytes", unit_bytes, "B",
            "the FTL's mapping unit, a page divided by 1 to 8 (0: a page) [assumed: 4 KiB]", 0,
            1u << 20)("write_cache", write_cache,
                      "writes acknowledged from the FTL's write buffer, durable at a flush (a "
                      "volatile write cache; false: write-through)")
        .choice("gc_policy", gc_policy, {"greedy", "cost-benefit"},
                "GC victim choice: fewest valid units, or most free space weighed by age")(
            "gc_pacing", gc_pacing,
            "with the write cache, GC moves a few units per host write once free blocks run low "
            "(keeping a block per host frontier spare) instead of whole victims when a block is "
            "needed");
}

spu_os_store_attach StoreConfig::attach(uint64_t bank_bytes, bool resume) const {
    spu_os_store_attach a{};
    a.format = resume ? SPU_OS_STORE_RESUME : format ? SPU_OS_STORE_FORMAT : SPU_OS_STORE_MOUNT;
    a.bank_bytes = uint32_t(bank_bytes);
    a.blocks_per_plane = blocks_per_plane;
    a.op_permille = op_permille;
    a.gc_free_blocks = gc_free_blocks;
    a.wl_threshold = wl_threshold;
    a.esp_blocks = esp_blocks;
    a.cell_mode = cell_mode == "slc" ? 0 : cell_mode == "mlc" ? 1 : 2;
    a.unit_bytes = unit_bytes;
    a.write_cache = write_cache;
    a.gc_policy = (gc_policy == "cost-benefit" ? FTL_GC_COST_BENEFIT : FTL_GC_GREEDY) |
                  (gc_pacing ? FTL_GC_PACED : 0);
    return a;
}

ftl_config StoreConfig::ftl(uint32_t dies, uint32_t planes, uint32_t pages_per_block,
                            uint32_t page_bytes, uint64_t bank_bytes) const {
    const spu_os_store_attach a = attach(bank_bytes);
    ftl_config c;
    spu_os_store_ftl_config(&a, dies, planes, pages_per_block, page_bytes, &c);
    return c;
}

std::vector<uint8_t> StoreConfig::attach_payload(uint64_t bank_bytes, bool resume) const {
    const spu_os_store_attach a = attach(bank_bytes, resume);
    std::vector<uint8_t> out(sizeof a);
    std::memcpy(out.data(), &a, sizeof a);
    return out;
}

uint64_t StoreConfig::spu_bytes(uint32_t dies, uint32_t planes, uint32_t pages_per_block,
                                uint32_t page_bytes, uint64_t bank_bytes,
                                uint32_t stripe_bytes) const {
    const ftl_config c = ftl(dies, planes, pages_per_block, page_bytes, bank_bytes);
    const uint64_t units = ftl_config_capacity_units(&c);
    const uint64_t unit = unit_bytes ? unit_bytes : page_bytes;
    const uint64_t bytes = std::min(units * unit, bank_bytes) / stripe_bytes * stripe_bytes;
    if (bytes == 0)
        throw InputError("config", "ssd.store",
                         "the FTL offers no store with " + std::to_string(blocks_per_plane) +
                             " blocks per plane, " + std::to_string(gc_free_blocks) +
                             " GC blocks, " + std::to_string(esp_blocks) + " ESP blocks and " +
                             std::to_string(op_permille) + " permille over-provisioning and " +
                             std::to_string(unit) + " B units on " + std::to_string(dies) +
                             " dies x " + std::to_string(planes) + " planes");
    return bytes;
}

namespace {
constexpr std::pair<uint64_t StoreStats::*, uint32_t> kStoreStats[] = {
    {&StoreStats::host_writes, SPU_OS_STAT_STORE_HOST_WRITES},
    {&StoreStats::host_reads, SPU_OS_STAT_STORE_HOST_READS},
    {&StoreStats::programs, SPU_OS_STAT_STORE_PROGRAMS},
    {&StoreStats::gc_copies, SPU_OS_STAT_STORE_GC_COPIES},
    {&StoreStats::gc_victims, SPU_OS_STAT_STORE_GC_VICTIMS},
    {&StoreStats::erases, SPU_OS_STAT_STORE_ERASES},
    {&StoreStats::table_misses, SPU_OS_STAT_STORE_TABLE_MISSES},
    {&StoreStats::flash_wait_us, SPU_OS_STAT_STORE_FLASH_WAIT_US},
    {&StoreStats::buffer_hits, SPU_OS_STAT_STORE_BUFFER_HITS},
    {&StoreStats::padded_units, SPU_OS_STAT_STORE_PADDED_UNITS},
    {&StoreStats::flushes, SPU_OS_STAT_STORE_FLUSHES},
    {&StoreStats::buffered_units, SPU_OS_STAT_STORE_BUFFERED_UNITS},
    {&StoreStats::trim_records, SPU_OS_STAT_STORE_TRIM_RECORDS},
    {&StoreStats::syncs, SPU_OS_STAT_STORE_SYNCS},
};
}  // namespace

StoreStats StoreStats::of(WillowApps& apps, uint32_t spu) {
    StoreStats s;
    for (const auto& [field, which] : kStoreStats) s.*field = apps.stat(spu, which);
    s.units_per_page = std::max<uint32_t>(1, apps.stat(spu, SPU_OS_STAT_STORE_UNITS_PER_PAGE));
    return s;
}

StoreStats& StoreStats::operator+=(const StoreStats& o) {
    for (const auto& [field, which] : kStoreStats) this->*field += o.*field;
    units_per_page = o.units_per_page;
    return *this;
}

void WillowApps::attach_store(const StoreConfig& store, uint64_t bank_bytes,
                              const std::vector<uint32_t>& spus, bool resume) {
    if (bank_bytes > UINT32_MAX)
        throw host::HostFault("Willow apps: STORE_ATTACH: banks of " + std::to_string(bank_bytes) +
                              " B exceed SPU-OS's 32-bit NVM addresses");
    broadcast_ok(targets(spus), SPU_OS_RPC_STORE_ATTACH, store.attach_payload(bank_bytes, resume),
                 std::string(resume         ? "resume"
                             : store.format ? "format"
                                            : "mount") +
                     " of the flash store");
}

void WillowApps::flush_store(const std::vector<uint32_t>& spus) {
    broadcast_ok(targets(spus), SPU_OS_RPC_STORE_FLUSH, {}, "flush of the flash store");
}

uint32_t WillowApps::stat(uint32_t spu, uint32_t which) {
    return broadcast(targets({spu}), SPU_OS_RPC_STAT, words({which})).at(spu);
}

std::optional<uint32_t> WillowApps::app_in(uint32_t spu, uint32_t slot) const {
    if (spu >= slots_.size()) return std::nullopt;
    const auto it = slots_[spu].find(slot);
    return it == slots_[spu].end() ? std::nullopt : std::optional<uint32_t>(it->second);
}

std::optional<uint32_t> WillowApps::slot_of(uint32_t spu, uint32_t app) const {
    if (spu >= slots_.size()) return std::nullopt;
    for (const auto& [slot, held] : slots_[spu])
        if (held == app) return slot;
    return std::nullopt;
}

SpuNotice WillowApps::notice(const Hre::Request& r) {
    SpuNotice n;
    n.node = r.node;
    n.rpc_id = r.rpc_id;
    if (!n.fault() && !n.perm_miss() && !n.denied())
        throw host::HostFault("Willow apps: the kernel HRE got RPC " + hex(r.rpc_id) +
                              " from SPU " + std::to_string(r.node) + ", not a SPU-OS notice");
    if (r.payload.size() != n.words.size() * 4)
        throw host::HostFault("Willow apps: a " + std::to_string(r.payload.size()) +
                              " B notice from SPU " + std::to_string(r.node) + " (24 B expected)");
    if (!r.payload.empty())
        std::memcpy(n.words.data(), r.payload.data(), r.payload.size());  // little-endian host
    hre_.respond(r, SPU_OS_OK);  // frees the SPU's response slot (SPU-OS ignores the result)
    return n;
}

SpuNotice WillowApps::next_notice() { return notice(hre_.receive()); }

std::optional<SpuNotice> WillowApps::try_notice() {
    if (auto r = hre_.try_receive()) return notice(*r);
    return std::nullopt;
}

}  // namespace canopy::sw
