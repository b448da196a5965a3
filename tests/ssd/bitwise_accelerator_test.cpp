// The ISP baseline's bitwise accelerator (models/ssd/bitwise_accelerator.hpp; Flash-Cosmos Table
// 1): each operation's result byte by byte, the page complemented on the way in and the buffer
// after, the buffer's bounds, its energy (93 pJ per 64 B, partial ones whole) and its rate (one
// operation after another at bytes_per_ns).
#include <gtest/gtest.h>

#include <vector>

#include "core/services.hpp"
#include "ssd/bitwise_accelerator.hpp"

namespace canopy::ssd {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

TEST(BitwiseAccelerator, FoldsPagesByEachOperation) {
    core::Services services;
    BitwiseAccelerator acc("isp", BitwiseAcceleratorConfig(), services);
    const std::vector<uint8_t> a = {0xF0, 0xCC, 0xAA, 0x00}, b = {0xFF, 0x0F, 0x55, 0x01};
    std::vector<uint8_t> out(4);
    auto fold = [&](AccOp op, bool invert, bool complement) {
        acc.combine({AccOp::Copy, false, false, 64}, a.data(), 4, sc_time(0, SC_NS));
        acc.combine({op, invert, complement, 64}, b.data(), 4, sc_time(0, SC_NS));
        acc.drain(64, out.data(), 4, sc_time(0, SC_NS));
        return out;
    };
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(fold(AccOp::And, false, false)[i], a[i] & b[i]);
        EXPECT_EQ(fold(AccOp::Or, false, false)[i], a[i] | b[i]);
        EXPECT_EQ(fold(AccOp::Xor, false, false)[i], a[i] ^ b[i]);
        EXPECT_EQ(fold(AccOp::And, true, false)[i], a[i] & uint8_t(~b[i]));   // a AND NOT b
        EXPECT_EQ(fold(AccOp::Or, false, true)[i], uint8_t(~(a[i] | b[i])));  // NOR
        EXPECT_EQ(fold(AccOp::Copy, true, false)[i], uint8_t(~b[i]));
    }
}

TEST(BitwiseAccelerator, BufferBoundsEnergyAndRate) {
    core::Services services;
    BitwiseAcceleratorConfig cfg;
    cfg.sram_bytes = 1024;
    cfg.bytes_per_ns = 4.0;
    BitwiseAccelerator acc("isp", cfg, services);
    EXPECT_EQ(acc.check(0, 1024), "");
    EXPECT_NE(acc.check(1000, 25).find("1024-byte buffer"), std::string::npos);
    EXPECT_NE(acc.check(0, 0), "");
    std::vector<uint8_t> page(200, 0x5A);
    // 200 B at 4 B/ns: 50 ns; the next operation waits for it.
    EXPECT_EQ(acc.combine({}, page.data(), 200, sc_time(10, SC_NS)), sc_time(60, SC_NS));
    EXPECT_EQ(acc.combine({}, page.data(), 200, sc_time(20, SC_NS)), sc_time(110, SC_NS));
    // 200 B are four 64 B operations (the last partial) each time: 8 x 93 pJ.
    EXPECT_DOUBLE_EQ(dynamic_cast<const core::Sum&>(*services.stats.find("isp", "energy")).value(),
                     8 * 93.0);
}

}  // namespace
}  // namespace canopy::ssd
