// SPU-OS's store on the flash (sw/firmware/spu_os/nvm.c, docs/spu_os.md "The store"): after
// STORE_ATTACH an SPU's NVM calls go through the FTL to its NAND channel, with the FTL's tables
// in SSD memory. Real SPU-OS and the store test app on a 2-SPU SSD over a small flash array.
// Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "spu_os_host.hpp"
#include "sw/firmware/ftl/ftl.h"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace spu_os_host;

constexpr uint32_t kPage = 16384;

nand::NandConfig small_nand() {
    nand::NandConfig n;
    n.geometry.channels = 2;
    n.geometry.dies_per_channel = 2;
    n.geometry.blocks_per_plane = 16;
    return n;
}

sw::StoreConfig small_store() {
    sw::StoreConfig s;
    s.blocks_per_plane = 8;
    s.cell_mode = "slc";
    return s;
}

std::vector<uint8_t> with_words(std::vector<uint32_t> words, const std::vector<uint8_t>& tail) {
    std::vector<uint8_t> b = Host::bytes(words);
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
}

uint32_t checksum(const std::vector<uint8_t>& b) {  // the store app's
    uint32_t s = 0;
    for (uint8_t c : b) s = s * 31 + c;
    return s;
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
                EXPECT_EQ(h.stat(s, SPU_OS_STAT_STORE_PAGES), 0u);  // SSD memory until attached
                EXPECT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                                 sc.attach_payload(bank), kKernelHre),
                          SPU_OS_OK);
            }
            // The capacity SPU-OS found is the FTL's for this geometry, as the host computes it.
            const uint64_t bytes = sc.spu_bytes(2, 2, 48, kPage, bank, 8192);
            EXPECT_GE(uint64_t(h.stat(1, SPU_OS_STAT_STORE_PAGES)) * kPage, bytes);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PAGE_BYTES), kPage);
            // 200 bytes across a page boundary of SPU 1's store: two pages programmed, each a
            // read-modify-write of an unmapped page.
            std::vector<uint8_t> data(200);
            for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + 3);
            const uint32_t at = uint32_t(bank) + kPage - 100;
            ASSERT_EQ(store(h, 1, at, data), SPU_OS_OK);
            EXPECT_EQ(load(h, 1, at, 200), checksum(data));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_HOST_WRITES), 2u);
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PROGRAMS), 2u);
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
            // Overwriting part of it is another page programmed; the rest stays.
            const std::vector<uint8_t> patch(16, 0xA5);
            ASSERT_EQ(store(h, 1, at + 50, patch), SPU_OS_OK);
            std::copy(patch.begin(), patch.end(), data.begin() + 50);
            EXPECT_EQ(load(h, 1, at, 200), checksum(data));
            EXPECT_EQ(h.stat(1, SPU_OS_STAT_STORE_PROGRAMS), 3u);
            // Outside the store: past its end, and below its base (SPU 0's bank).
            const uint32_t end = uint32_t(bank) + h.stat(1, SPU_OS_STAT_STORE_PAGES) * kPage;
            EXPECT_EQ(load(h, 1, end - 8, 16), SPU_OS_E_RANGE);
            EXPECT_EQ(store(h, 1, 64, patch), SPU_OS_E_RANGE);
            // Once only.
            EXPECT_EQ(h.call(1, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH, sc.attach_payload(bank),
                             kKernelHre),
                      SPU_OS_E_STATE);
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
            EXPECT_EQ(h.stat(0, SPU_OS_STAT_STORE_PAGES), 0u);
            // A good one still works after all that.
            EXPECT_EQ(attach(small_store().attach_payload(bank)), SPU_OS_OK);
        },
        &nc);
}

#endif

}  // namespace
}  // namespace canopy::platform
