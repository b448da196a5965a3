// `canopy regs` and the register blocks it gathers (platform/register_maps): every block's table
// in docs/registers.md is what its map generates today, the C headers the firmware build writes
// are the maps' own, and a bad block name is an input error naming it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../canopy_process.hpp"
#include "platform/register_maps.hpp"

namespace canopy::platform {
namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;

TEST(PlatformRegs, DocsCarryEveryBlocksCurrentTable) {
    const std::string docs = slurp(std::string(CANOPY_SOURCE_DIR) + "/docs/registers.md");
    std::set<std::string> names;
    for (const auto& b : register_blocks()) {
        const core::RegisterMap m = b.map();
        EXPECT_TRUE(names.insert(m.block()).second) << "two blocks named " << m.block();
        EXPECT_NE(docs.find(m.markdown()), std::string::npos)
            << "docs/registers.md is out of date for block " << m.block()
            << "; `canopy regs --markdown` prints the current tables. It should read:\n"
            << m.markdown();
    }
    for (const char* b : {"dma", "ctg", "spu_ctl", "spu_ni", "spu_dma", "bridge"})
        EXPECT_TRUE(names.count(b)) << b;
}

TEST(PlatformRegs, CommandListsBlocksAndWritesTheirHeaders) {
    const std::string d = scratch("regs");
    auto list = run_canopy("regs --list", d);
    ASSERT_EQ(list.status, 0) << list.err;
    auto headers = run_canopy("regs --c-headers " + d + "/include", d);
    ASSERT_EQ(headers.status, 0) << headers.err;
    for (const auto& b : register_blocks()) {
        const core::RegisterMap m = b.map();
        EXPECT_NE(list.out.find(m.block() + "  "), std::string::npos) << m.block();
        EXPECT_EQ(slurp(d + "/include/" + header_name(m)), m.c_header(b.source)) << m.block();
    }
    auto one = run_canopy("regs --header spu_ni", d);
    ASSERT_EQ(one.status, 0);
    EXPECT_NE(one.out.find("#define SPU_NI_TX_COMMAND_OFFSET"), std::string::npos);
}

TEST(PlatformRegs, UnknownBlockIsAnInputErrorWithASuggestion) {
    const std::string d = scratch("regs-bad");
    auto r = run_canopy("regs --header spu_nj", d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--header spu_nj"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'spu_ni'"), std::string::npos) << r.err;
    auto none = run_canopy("regs", d);
    EXPECT_EQ(none.status, 2);
}

}  // namespace
}  // namespace canopy::platform
