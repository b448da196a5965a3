// SPU-OS's store on the flash (sw/firmware/spu_os/nvm.c, docs/spu_os.md "The store"): after
// STORE_ATTACH an SPU's NVM calls go through the FTL to its NAND channel, with the FTL's tables
// in SSD memory. Real SPU-OS and the store test app on a 2-SPU SSD over a small flash array.
// Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "spu_os_host.hpp"
#include "sw/firmware/ftl/ftl.h"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace spu_os_host;

constexpr uint32_t kPage = 16384, kUnit = 4096;  // the FTL maps 4 KiB units (StoreConfig)

nand::NandConfig small_nand() {
    nand::NandConfig n;
    n.geometry.channels = 2;
    n.geometry.dies_per_channel = 2;
    n.geometry.blocks_per_plane = 16;
    return n;
}

sw::StoreConfig small_store() {
    sw::StoreConfig s;
    s.write_cache = false;  // write-through, unless a test says otherwise
    s.blocks_per_plane = 8;
    s.cell_mode = "slc";
    return s;
}

std::vector<uint8_t> with_words(std::vector<uint32_t> words, const std::vector<uint8_t>& tail) {
    std::vector<uint8_t> b = Host::bytes(words);
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
}

// The store app's STORE (handler 1, {addr, n, bytes}) and LOAD (handler 2, {addr, n} -> the
// bytes' checksum) as the host kernel (process 0: no permission entries needed).
uint32_t store(Host& h, unsigned spu, uint32_t addr, const std::vector<uint8_t>& bytes) {
    return h.call(spu, kStoreApp, 1, with_words({addr, uint32_t(bytes.size())}, bytes), kKernelHre);
}
uint32_t load(Host& h, unsigned spu, uint32_t addr, uint32_t n) {
    return h.call(spu, kStoreApp, 2, Words{addr, n}, kKernelHre);
}

TEST(SpuOsStore, NvmCallsGoThroughTheFtlToTheFlash) {
    const nand::NandConfig nc = small_nand();
    const sw::StoreConfig sc = small_store();
    run_ssd(
        2,
        [&](Host& h, Willow& ssd) {
            const uint64_t bank = ssd.dram.bank_bytes();
            for (unsigned s = 0; s < 2; ++s) {
                h.install(s, "app_store", kStoreApp, 0);
                EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_UNITS), 0u);  // SSD memory until attached
                EXPECT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                                 sc.attach_payload(bank), kKernelHre),
                          SPU_OS_OK);
            }
            // The capacity SPU-OS found is the FTL's for this geometry, as the host computes it.
            const uint64_t bytes = sc.spu_bytes(2, 2, 48, kPage, bank, 8192);
            EXPECT_GE(uint64_t(h.stat(1, SPU_OS_STAT_STORE_UNITS)) * kUnit, bytes);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_UNIT_BYTES), kUnit);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_UNITS_PER_PAGE), kPage / kUnit);
            // 200 bytes across a unit boundary of SPU 1's store: two units written, each merged
            // with an unmapped unit's 0xFF, into two of a page's four slots; write-through
            // programs that page (the other two slots padded) before the store answers.
            std::vector<uint8_t> data(200);
            for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + 3);
            const uint32_t at = uint32_t(bank) + kUnit - 100;
            ASSERT_EQ(store(h, 1, at, data), SPU_OS_OK);
            EXPECT_EQ(load(h, 1, at, 200), checksum(data));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_HOST_WRITES), 2u);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PROGRAMS), 1u);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PADDED_UNITS), 2u);
            EXPECT_GT(h.stat(1, SPU_OS_STAT_STORE_FLASH_WAIT_US), 0u);
            EXPECT_GT(h.stat(1, SPU_OS_STAT_STORE_TABLE_MISSES), 0u);
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_PROGRAMS), 0u);  // SPU 0 stored nothing
            // The bytes went to the flash, not to SSD memory at their NVM address.
            std::vector<uint8_t> dram(200);
            ssd.dram.read(at, dram.data(), dram.size());
            EXPECT_NE(dram, data);
            // Bytes never written read as erased flash.
            EXPECT_EQ(load(h, 1, uint32_t(bank) + 5 * kPage, 64),
                      checksum(std::vector<uint8_t>(64, 0xFF)));
            // Overwriting part of it is another unit written, another page programmed (three
            // slots padded); the rest stays.
            const std::vector<uint8_t> patch(16, 0xA5);
            ASSERT_EQ(store(h, 1, at + 50, patch), SPU_OS_OK);
            std::copy(patch.begin(), patch.end(), data.begin() + 50);
            EXPECT_EQ(load(h, 1, at, 200), checksum(data));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PROGRAMS), 2u);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PADDED_UNITS), 5u);
            // Outside the store: past its end, and below its base (SPU 0's bank).
            const uint32_t end = uint32_t(bank) + h.stat(1, SPU_OS_STAT_STORE_UNITS) * kUnit;
            EXPECT_EQ(load(h, 1, end - 8, 16), SPU_OS_E_RANGE);
            EXPECT_EQ(store(h, 1, 64, patch), SPU_OS_E_RANGE);
            // Once only.
            EXPECT_EQ(h.call(1, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH, sc.attach_payload(bank),
                             kKernelHre),
                      SPU_OS_E_STATE);
        },
        &nc);
}

// An SPU beyond the array's channels has no flash controller (its id register says so): SPU-OS
// refuses to attach a store there and goes on serving. Before, it read the controller's
// geometry registers and died of a load access fault in machine mode (found by the spu_os_rpc
// fuzz target, tests/fuzz).
TEST(SpuOsStore, AnSpuWithoutAFlashControllerRefusesTheStoreAndLives) {
    nand::NandConfig nc = small_nand();
    nc.geometry.channels = 1;  // SPU 1 has no channel
    run_ssd(
        2,
        [&](Host& h, Willow& ssd) {
            ASSERT_EQ(ssd.flash.size(), 1u);
            const uint64_t bank = ssd.dram.bank_bytes();
            EXPECT_EQ(h.call(1, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                             small_store().attach_payload(bank), kKernelHre),
                      SPU_OS_E_STATE);
            EXPECT_EQ(h.kernel(1, SPU_OS_RPC_PING, {}), SPU_OS_ABI_VERSION);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_UNITS), 0u);
            // SPU 0, which has one, attaches.
            EXPECT_EQ(h.call(0, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                             small_store().attach_payload(bank), kKernelHre),
                      SPU_OS_OK);
        },
        &nc);
}

TEST(SpuOsStore, ABadAttachIsRefusedAndChangesNothing) {
    const nand::NandConfig nc = small_nand();
    run_ssd(
        2,
        [&](Host& h, Willow& ssd) {
            const uint64_t bank = ssd.dram.bank_bytes();
            auto attach = [&](const std::vector<uint8_t>& p, uint32_t origin = kKernelHre) {
                return h.call(0, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH, p, origin);
            };
            sw::StoreConfig sc = small_store();
            EXPECT_EQ(attach(sc.attach_payload(bank), kUserHre), SPU_OS_E_KERNEL_ONLY);
            auto short_payload = sc.attach_payload(bank);
            short_payload.pop_back();
            EXPECT_EQ(attach(short_payload), SPU_OS_E_BAD_ARG);
            sc.blocks_per_plane = 0;
            EXPECT_EQ(attach(sc.attach_payload(bank)), SPU_OS_E_BAD_ARG);
            sc.blocks_per_plane = 17;  // the planes have 16
            EXPECT_EQ(attach(sc.attach_payload(bank)), SPU_OS_E_BAD_ARG);
            sc = small_store();
            sc.op_permille = 1000;  // nothing left for the host
            EXPECT_EQ(attach(sc.attach_payload(bank)), SPU_OS_E_BAD_ARG);
            sc = small_store();
            EXPECT_EQ(attach(sc.attach_payload(1 << 15)),
                      SPU_OS_E_BAD_ARG);  // no room for the buffers
            spu_os_store_attach raw = small_store().attach(bank);
            raw.gc_policy = FTL_GC_COST_BENEFIT | FTL_GC_PACED | 4;  // no such policy bit
            std::vector<uint8_t> p(sizeof raw);
            std::memcpy(p.data(), &raw, sizeof raw);
            EXPECT_EQ(attach(p), SPU_OS_E_BAD_ARG);
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_UNITS), 0u);
            // A good one still works after all that, paced GC as the host asks.
            sc = small_store();
            sc.write_cache = true;
            sc.gc_pacing = true;
            EXPECT_EQ(sc.attach(bank).gc_policy, uint32_t(FTL_GC_GREEDY | FTL_GC_PACED));
            EXPECT_EQ(attach(sc.attach_payload(bank)), SPU_OS_OK);
        },
        &nc);
}

// SPU_SYS_FC's checks (docs/spu_os.md "In-flash computing"), through the store app's probe
// (handler 11: {op, die, plane, block, page, slots, flags, bytes, bad_pointer}).
TEST(SpuOsStore, InFlashComputingCallsAreChecked) {
    const nand::NandConfig nc = small_nand();
    run_ssd(
        2,
        [&](Host& h, Willow& ssd) {
            const uint64_t bank = ssd.dram.bank_bytes();
            auto fc = [&](unsigned spu, uint32_t op, uint32_t block, uint32_t slots = 1,
                          uint32_t flags = SPU_FC_INIT_S, uint32_t bytes = 0, uint32_t die = 0,
                          uint32_t bad_pointer = 0) {
                return h.call(spu, kStoreApp, 11,
                              Words{op, die, 0, block, 0, slots, flags, bytes, bad_pointer},
                              kKernelHre);
            };
            const uint32_t kOk = 0x80000000u;
            for (unsigned s = 0; s < 2; ++s) h.install(s, "app_store", kStoreApp, 0);
            // Without the store on the flash, and on a store without an ESP region: not now.
            EXPECT_EQ(fc(0, SPU_FC_ALLOC, 0), SPU_OS_E_STATE);
            sw::StoreConfig sc = small_store();
            sc.esp_blocks = 0;
            ASSERT_EQ(h.call(0, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH, sc.attach_payload(bank),
                             kKernelHre),
                      SPU_OS_OK);
            EXPECT_EQ(fc(0, SPU_FC_ALLOC, 0), SPU_OS_E_STATE);
            // SPU 1: blocks 6 and 7 of every plane are the ESP region.
            sc.esp_blocks = 2;
            ASSERT_EQ(h.call(1, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH, sc.attach_payload(bank),
                             kKernelHre),
                      SPU_OS_OK);
            EXPECT_EQ(fc(1, SPU_FC_MWS, 0), SPU_OS_E_RANGE);  // a data block
            EXPECT_EQ(fc(1, SPU_FC_MWS, 6), SPU_OS_E_RANGE);  // ESP, but not handed out
            const uint32_t b = fc(1, SPU_FC_ALLOC, 0);
            ASSERT_TRUE(b == (kOk | 6) || b == (kOk | 7)) << std::hex << b;
            const uint32_t block = b & 0xFF;
            EXPECT_EQ(fc(1, SPU_FC_MWS, block), kOk | block);  // the erased block senses fine
            EXPECT_EQ(fc(1, SPU_FC_MWS, block, 5), SPU_OS_E_BAD_ARG);  // over the power cap
            EXPECT_EQ(fc(1, SPU_FC_MWS, block, 0), SPU_OS_E_BAD_ARG);
            EXPECT_EQ(fc(1, SPU_FC_MWS, block, 1, 16), SPU_OS_E_BAD_ARG);     // no such ISCM flag
            EXPECT_EQ(fc(1, SPU_FC_READ, block, 1, 0, 0), SPU_OS_E_BAD_ARG);  // moves nothing
            EXPECT_EQ(fc(1, SPU_FC_READ, block, 1, 0, kPage + 1), SPU_OS_E_BAD_ARG);
            EXPECT_EQ(fc(1, SPU_FC_XOR, block, 1, 0, 0, 7), SPU_OS_E_RANGE);  // die 7 of 2
            EXPECT_EQ(fc(1, SPU_FC_OPS, block), SPU_OS_E_BAD_ARG);            // no such op
            EXPECT_EQ(fc(1, SPU_FC_MWS, block, 1, SPU_FC_INIT_S, 0, 0, 1),
                      SPU_OS_E_BAD_POINTER);  // the command outside the app's data
            // The other ESP block, then none left; a release gives one back, once.
            EXPECT_EQ(fc(1, SPU_FC_ALLOC, 0) & kOk, kOk);
            EXPECT_EQ(fc(1, SPU_FC_ALLOC, 0), SPU_OS_E_IO);
            EXPECT_EQ(fc(1, SPU_FC_RELEASE, block), kOk | block);
            EXPECT_EQ(fc(1, SPU_FC_RELEASE, block), SPU_OS_E_RANGE);
            EXPECT_EQ(fc(1, SPU_FC_MWS, block), SPU_OS_E_RANGE);
        },
        &nc);
}

// Two controllers on one NAND array, for restarts after a sudden power loss: SSD A attaches its
// store with `store` (formatting it) and runs `on_a`, then loses power (its SPUs' memories and
// SSD memory, with the FTL's tables and write buffer, are gone: it never touches the flash
// again). SSD B, a fresh controller on the same array, mounts (its FTL rebuilds the map from the
// pages' metadata, read back through the real flash controllers: ECC, randomiser) and runs
// `on_b`. Both get the host and the bank size.
void across_a_power_loss(const sw::StoreConfig& store,
                         const std::function<void(Host&, uint64_t)>& on_a,
                         const std::function<void(Host&, uint64_t)>& on_b) {
    const nand::NandConfig nc = small_nand();
    core::Services services;
    WillowConfig cfg;
    cfg.spus = 2;
    cfg.firmware = firmware("spu_os");
    std::ostringstream console;
    nand::FlashArray array("nand", nc, services);
    Willow a("ssd_a", cfg, services, console, false, &nc),
        b("ssd_b", cfg, services, console, false, &nc);
    std::vector<std::unique_ptr<FanIn>> ports;
    for (uint32_t c = 0; c < nc.geometry.channels; ++c) {
        ports.push_back(std::make_unique<FanIn>(("port" + std::to_string(c)).c_str()));
        a.flash[c]->nand.bind(ports[c]->in);
        b.flash[c]->nand.bind(ports[c]->in);
        ports[c]->out.bind(array.channel(c).target);
    }
    sw::StoreConfig formatted = store, mounted = store;
    formatted.format = true;
    mounted.format = false;
    const uint64_t bank = a.dram.bank_bytes();
    bool a_done = false, b_done = false;
    Host ha("host_a", a, services, [&](Host& h) {
        for (unsigned s = 0; s < 2; ++s) {
            h.install(s, "app_store", kStoreApp, 0);
            ASSERT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                             formatted.attach_payload(bank), kKernelHre),
                      SPU_OS_OK);
        }
        on_a(h, bank);
        a_done = true;  // power lost: A sends nothing more
        while (!b_done) wait(sc_core::sc_time(1, sc_core::SC_MS));
    });
    Host hb("host_b", b, services, [&](Host& h) {
        while (!a_done) wait(sc_core::sc_time(100, sc_core::SC_US));
        for (unsigned s = 0; s < 2; ++s) {
            h.install(s, "app_store", kStoreApp, 0);
            ASSERT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                             mounted.attach_payload(bank), kKernelHre),
                      SPU_OS_OK);
            EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_PROGRAMS), 0u);  // mounting programs nothing
        }
        on_b(h, bank);
        b_done = true;
    });
    ha.timeout = sc_core::sc_time(1, sc_core::SC_SEC);  // the format erases 32 blocks, 3.5 ms each
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_SEC));
    EXPECT_TRUE(b_done) << console.str();
}

std::vector<uint8_t> random_record(uint32_t& seed, size_t n) {
    std::vector<uint8_t> d(n);
    for (auto& x : d) x = uint8_t((seed = seed * 1103515245u + 12345u) >> 16);
    return d;
}

// Write-through (the default): A writes, overwrites and trims nothing but acknowledges every
// write; every acknowledged byte reads back on B as last written, the newest copy winning over
// the older ones.
TEST(SpuOsStore, AMountOnAnotherControllerRecoversEveryAcknowledgedWrite) {
    // Records of 200 B, some across unit boundaries, some overwritten (later copies of the same
    // unit) and partly overwritten.
    std::map<std::pair<unsigned, uint32_t>, std::vector<uint8_t>> expect;
    uint32_t a_programs = 0, units_touched = 0, records = 0;
    across_a_power_loss(
        small_store(),
        [&](Host& h, uint64_t bank) {
            uint32_t seed = 12345;
            for (unsigned round = 0; round < 3; ++round)
                for (unsigned s = 0; s < 2; ++s)
                    for (uint32_t k = 0; k < 6; ++k) {
                        // Unit k's tail and unit k+1's head, in every round: the newest wins.
                        const uint32_t at = uint32_t(bank) * s + (k + 1) * kUnit - 64 * (k % 3);
                        const auto d = random_record(seed, 200);
                        ASSERT_EQ(store(h, s, at, d), SPU_OS_OK) << "round " << round;
                        expect[{s, at}] = d;
                        units_touched += at % kUnit + d.size() > kUnit ? 2 : 1;
                        ++records;
                    }
            for (unsigned s = 0; s < 2; ++s) a_programs += h.stat(s, SPU_OS_STAT_STORE_PROGRAMS);
        },
        [&](Host& h, uint64_t) {
            // Records overlap pairwise only within one SPU and unit pair; the last write of each
            // address was the last round's, and records at different addresses do not overlap.
            for (const auto& [where, d] : expect)
                EXPECT_EQ(load(h, where.first, where.second, 200), checksum(d))
                    << "SPU " << where.first << " at 0x" << std::hex << where.second;
        });
    // Write-through programs the units a store wrote (one or two) in one page before it answers;
    // no GC on a fresh store.
    EXPECT_EQ(a_programs, records);
    EXPECT_GT(units_touched, records);  // some records straddle two units
}

// NVM_TRIM (the store app's handler 15, {addr, n}): the store forgets the whole 4 KiB units
// inside the range, each mapped one with a TRIM record the FTL programs, so that after a power
// loss they still read as erased; the units cut at either end keep every byte. Write rights are
// needed, as for a write, and the range must lie in the store.
TEST(SpuOsStore, ATrimForgetsTheWholeUnitsInsideItAcrossAPowerLoss) {
    auto trim = [](Host& h, unsigned spu, uint32_t addr, uint32_t n, uint32_t hre = kKernelHre) {
        return h.call(spu, kStoreApp, 15, Words{addr, n}, hre);
    };
    std::map<uint32_t, std::vector<uint8_t>> kept;  // SPU 1's records that must survive
    uint32_t forgotten = 0;
    const std::vector<uint8_t> erased(200, 0xFF);
    across_a_power_loss(
        small_store(),
        [&](Host& h, uint64_t bank) {
            uint32_t seed = 4242;
            const uint32_t base = uint32_t(bank);
            // 200 B at offset 100 of units 1, 2 and 3 of SPU 1's store.
            for (uint32_t k = 1; k <= 3; ++k) {
                kept[base + k * kUnit + 100] = random_record(seed, 200);
                ASSERT_EQ(store(h, 1, base + k * kUnit + 100, kept[base + k * kUnit + 100]),
                          SPU_OS_OK);
            }
            // From unit 1's byte 500 to unit 3's byte 500: unit 2 is the one whole unit inside.
            forgotten = base + 2 * kUnit + 100;
            EXPECT_EQ(trim(h, 1, base + kUnit + 500, 2 * kUnit), SPU_OS_OK);
            EXPECT_EQ(load(h, 1, forgotten, 200), checksum(erased));
            kept.erase(forgotten);
            for (const auto& [at, d] : kept) EXPECT_EQ(load(h, 1, at, 200), checksum(d));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_TRIM_RECORDS), 1u);
            // Units never written, a range inside one unit, 0 bytes: nothing to record.
            EXPECT_EQ(trim(h, 1, base + 10 * kUnit, 4 * kUnit), SPU_OS_OK);
            EXPECT_EQ(trim(h, 1, base + kUnit + 50, 100), SPU_OS_OK);
            EXPECT_EQ(trim(h, 1, base + kUnit, 0), SPU_OS_OK);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_TRIM_RECORDS), 1u);
            EXPECT_EQ(load(h, 1, base + kUnit + 100, 200), checksum(kept[base + kUnit + 100]));
            // Outside the store (past its end; SPU 0's bank), and without write rights.
            const uint32_t end = base + h.stat(1, SPU_OS_STAT_STORE_UNITS) * kUnit;
            EXPECT_EQ(trim(h, 1, end - kUnit, 2 * kUnit), SPU_OS_E_RANGE);
            EXPECT_EQ(trim(h, 1, 0, kUnit), SPU_OS_E_RANGE);
            EXPECT_EQ(trim(h, 1, base + kUnit, kUnit, kUserHre), SPU_OS_E_PERMISSION);
            EXPECT_EQ(load(h, 1, base + kUnit + 100, 200), checksum(kept[base + kUnit + 100]));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_TRIM_RECORDS), 1u);
        },
        [&](Host& h, uint64_t) {
            // The TRIM record outlives the copy it unmapped.
            EXPECT_EQ(load(h, 1, forgotten, 200), checksum(erased));
            for (const auto& [at, d] : kept)
                EXPECT_EQ(load(h, 1, at, 200), checksum(d)) << std::hex << at;
        });
}

// The write cache (ssd.store.write_cache): writes are acknowledged from the FTL's write buffer
// in SSD memory, which packs four 4 KiB units into each 16 KiB page. What A flushed (STORE_FLUSH)
// comes back whole on B; of what it wrote after the flush, the units whose page filled were
// programmed and come back, the rest of the buffer was lost with the power and reads as before
// (never written: 0xFF), but on SPU 0, which synced the last of them (nvm_sync, a FUA write's
// flush of a range: the page holding it is programmed, padded).
TEST(SpuOsStore, TheWriteCacheKeepsWhatWasFlushedAndFullPagesAcrossAPowerLoss) {
    sw::StoreConfig cached = small_store();
    cached.write_cache = true;
    std::map<std::pair<unsigned, uint32_t>, std::vector<uint8_t>> flushed, unflushed;
    uint32_t programs_before_loss[2] = {0, 0};
    across_a_power_loss(
        cached,
        [&](Host& h, uint64_t bank) {
            uint32_t seed = 777;
            for (unsigned s = 0; s < 2; ++s)
                for (uint32_t k = 0; k < 6; ++k) {  // across unit boundaries: 12 units each
                    const uint32_t at = uint32_t(bank) * s + (2 * k + 1) * kUnit - 100;
                    flushed[{s, at}] = random_record(seed, 200);
                    ASSERT_EQ(store(h, s, at, flushed[{s, at}]), SPU_OS_OK);
                }
            for (unsigned s = 0; s < 2; ++s) {
                // 12 units fill 3 pages: programmed as they filled, nothing left to flush.
                EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_PROGRAMS), 3u);
                EXPECT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_FLUSH, Words{}, kKernelHre),
                          SPU_OS_OK);
                EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_FLUSHES), 1u);
                EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_PADDED_UNITS), 0u);
            }
            for (unsigned s = 0; s < 2; ++s)
                for (uint32_t k = 0; k < 6; ++k) {  // inside one unit each: 6 units
                    const uint32_t at = uint32_t(bank) * s + (20 + k) * kUnit + 1000;
                    unflushed[{s, at}] = random_record(seed, 200);
                    ASSERT_EQ(store(h, s, at, unflushed[{s, at}]), SPU_OS_OK);
                    EXPECT_EQ(load(h, s, at, 200), checksum(unflushed[{s, at}]));  // buffered
                }
            const uint32_t last = (20 + 5) * kUnit + 1000;
            EXPECT_EQ(h.call(0, kStoreApp, 15, Words{last, 200, 1}, kKernelHre), SPU_OS_OK);
            EXPECT_EQ(h.call(0, kStoreApp, 15, Words{uint32_t(bank) + last, 200, 1}, kKernelHre),
                      SPU_OS_E_RANGE);  // SPU 1's store
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_SYNCS), 1u);
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_PADDED_UNITS), 2u);
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_BUFFERED_UNITS), 0u);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_BUFFERED_UNITS), 2u);
            for (unsigned s = 0; s < 2; ++s)
                programs_before_loss[s] = h.stat(s, SPU_OS_STAT_STORE_PROGRAMS);
        },
        [&](Host& h, uint64_t) {
            for (const auto& [where, d] : flushed)
                EXPECT_EQ(load(h, where.first, where.second, 200), checksum(d))
                    << "SPU " << where.first << " at 0x" << std::hex << where.second;
            // The first four units after the flush filled a page; the last two were in the
            // buffer, and SPU 0 synced them.
            unsigned k = 0;
            for (const auto& [where, d] : unflushed) {
                const bool programmed = k++ % 6 < 4 || where.first == 0;
                EXPECT_EQ(load(h, where.first, where.second, 200),
                          checksum(programmed ? d : std::vector<uint8_t>(200, 0xFF)))
                    << "SPU " << where.first << " at 0x" << std::hex << where.second;
            }
        });
    EXPECT_EQ(programs_before_loss[0], 5u);
    EXPECT_EQ(programs_before_loss[1], 4u);
}
#endif

}  // namespace
}  // namespace canopy::platform
