// The Willow SSD on NAND (platform/willow with a flash array): firmware on each SPU drives its
// channel's flash controller through the registers (sw/firmware/tests/flash_rw.c): a page
// programmed and read back with its metadata, an erased page, an MWS AND of raw ESP operands,
// an erase, a refused command. Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <systemc>

#include "core/services.hpp"
#include "nand/channel.hpp"
#include "platform/willow.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
TEST(PlatformWillowFlash, FirmwareProgramsReadsAndComputesInFlashOnEveryChannel) {
    core::Services services;
    nand::NandConfig nc;
    nc.geometry.channels = 2;
    nc.geometry.dies_per_channel = 2;
    nc.geometry.blocks_per_plane = 16;
    WillowConfig cfg;
    cfg.spus = 3;  // SPU 2 has no channel: no flash window
    std::ostringstream console;
    nand::FlashArray array("nand", nc, services);
    Willow ssd("ssd", cfg, services, console, false, &nc);
    ASSERT_EQ(ssd.flash.size(), 2u);
    for (uint32_t c = 0; c < 2; ++c) ssd.flash[c]->nand.bind(array.channel(c).target);
    ssd.load_all(std::string(CANOPY_FIRMWARE_DIR) + "/flash_rw.elf");
    sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
    ASSERT_TRUE(ssd.all_exited()) << console.str();
    for (unsigned i = 0; i < 2; ++i) EXPECT_EQ(ssd.spus[i]->exit.code(), 0u) << console.str();
    // SPU 2's first access to the flash window faults (nothing is mapped there).
    EXPECT_NE(ssd.spus[2]->exit.code(), 0u);

    for (uint32_t c = 0; c < 2; ++c) {
        // The controller randomised the normal page (the die only keeps the hint) ...
        const nand::PageState* p = array.die(c, 0).plane(0).page(1, 0);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(p->mode, nand::CellMode::Tlc);
        EXPECT_EQ(p->scramble, nand::Scramble::Controller);
        // ... and block 2 was erased after the MWS: its P/E count is one.
        EXPECT_EQ(array.die(c, 0).plane(0).pe_cycles(2), 1u);
    }
    // A page read is about tR (TLC) plus the transfer of 18.5 KB at 1.2 GB/s.
    const auto at = console.str().find("page read ");
    ASSERT_NE(at, std::string::npos) << console.str();
    const double read_us = std::stod(console.str().substr(at + 10)) / 1000.0;
    EXPECT_GT(read_us, nc.timing.t_read_tlc_us + 15.0);
    EXPECT_LT(read_us, nc.timing.t_read_tlc_us + 25.0);
}
#endif

}  // namespace
}  // namespace canopy::platform
