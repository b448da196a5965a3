// The Willow SSD's hardware with real firmware (platform/willow, sw/firmware/tests): SPUs on the
// ring exchanging an RPC through their network interfaces and DMA controllers, and storing into
// the SSD's memory. Each TEST elaborates once (its own process).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <systemc>

#include "core/services.hpp"
#include "platform/willow.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
std::string firmware(const std::string& name) {
    return std::string(CANOPY_FIRMWARE_DIR) + "/" + name + ".elf";
}

uint64_t counter(const core::Services& s, const std::string& module, const std::string& name) {
    const auto* c = dynamic_cast<const core::Counter*>(s.stats.find(module, name));
    return c ? c->value() : ~0ull;
}

TEST(PlatformWillow, SpusExchangeAnRpcOverTheRingAndStoreIntoSsdMemory) {
    core::Services services;
    WillowConfig cfg;
    cfg.spus = 4;
    std::ostringstream console;
    Willow ssd("ssd", cfg, services, console);
    ssd.load_all(firmware("ring_pingpong"));
    sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
    ASSERT_TRUE(ssd.all_exited()) << console.str();
    for (const auto& spu : ssd.spus) EXPECT_EQ(spu->exit.code(), 0u) << spu->name();
    EXPECT_NE(console.str().find("round trip ok"), std::string::npos) << console.str();

    // SPU 1 stored the payload (byte i = 7 i + 3) at 0x1000 in its bank (bank 1 of 4 x 256 MiB).
    std::vector<uint8_t> got(1024);
    ssd.dram.read(ssd.dram.bank_bytes() + 0x1000, got.data(), got.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], uint8_t(i * 7 + 3)) << i;

    // One request and one response crossed the ring; nothing was dropped.
    EXPECT_EQ(counter(services, "ssd.spu1.ni", "requests_received"), 1u);
    EXPECT_EQ(counter(services, "ssd.spu0.ni", "responses_received"), 1u);
    // The request alone occupies the ring for 1 + 64 flits of 4 ns: SPU 0 cannot have finished
    // before that, nor before SPU 1 (which answered).
    EXPECT_GT(ssd.spus[0]->exit.time(), sc_core::sc_time(65 * 4, sc_core::SC_NS));
    EXPECT_GT(ssd.spus[0]->exit.time(), ssd.spus[1]->exit.time());
}
#endif

}  // namespace
}  // namespace canopy::platform
