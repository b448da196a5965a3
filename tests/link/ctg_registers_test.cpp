// The CCIX Traffic Generator's register map (models/link/ctg_registers.hpp): its layout and the
// docs generated from it. Its behaviour on the platform, driven by a host program, is in
// tests/platform/ctg_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "../temp_dir.hpp"
#include "link/ctg_registers.hpp"

namespace canopy::link {
namespace {

TEST(LinkCtgRegisters, MapHoldsTheStartTransRequestAndTheCapture) {
    const core::RegisterMap m = CtgRegisters::register_map();
    EXPECT_EQ(m.block(), "ctg");
    for (const char* r :
         {"address", "length", "control", "status", "error_code", "completed", "last_latency_ns"})
        EXPECT_NE(m.find(r), nullptr) << r;
    EXPECT_EQ(m.find("address")->width_bits, 64u);
    EXPECT_EQ(m.find("last_latency_ns")->access, core::Access::RO);
    EXPECT_EQ(m.find("control")->field("start")->access, core::Access::Trigger);
    EXPECT_EQ(m.find("status")->field("done")->access, core::Access::W1C);
}

// docs/registers.md carries the generated table; it must be what the map generates today.
TEST(LinkCtgRegisters, DocsShowTheCurrentMap) {
    const std::string docs =
        canopy_test::read_text(std::string(CANOPY_SOURCE_DIR) + "/docs/registers.md");
    const std::string table = CtgRegisters::register_map().markdown();
    EXPECT_NE(docs.find(table), std::string::npos)
        << "docs/registers.md is out of date; the CTG section should read:\n"
        << table;
}

}  // namespace
}  // namespace canopy::link
