// Flash-Cosmos end to end (Flash-Cosmos Section 6.2; sw/host/flash_cosmos, sw/firmware/apps/
// flash_cosmos.c): on the whole platform with real firmware, the host kernel attaches the flash
// store with an ESP region and installs the Flash-Cosmos app; a user program stores operands
// with fc_write and computes with fc_read on Flash-Cosmos, ParaBit and outside-storage
// processing. Checked against the host's own computation: every operation on every system, the
// sensings each plan takes (from the operands' placement: one per block for an intra-block AND,
// one per operand for ParaBit), the order of their run times, and the refusals. Each TEST
// elaborates once (its own process).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "platform/willow_stack.hpp"
#include "sw/host/fc_workloads.hpp"
#include "tests/platform/willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 2;

// 2 SPUs on 2 channels of 2 dies x 2 planes: 8 plane units, 16 KiB pages, 48 wordlines.
struct FcMachine : StackMachine {
    FcMachine()
        : StackMachine(kSpus, [](PlatformConfig& c) {
              c.nand.geometry.channels = kSpus;
              c.nand.geometry.dies_per_channel = 2;
              c.nand.geometry.blocks_per_plane = 20;
              c.ssd.store.flash = true;
              c.ssd.store.format = true;
              c.ssd.store.blocks_per_plane = 16;
              c.ssd.store.esp_blocks = 4;
          }) {}
    using Body = std::function<void(host::HostCore&, sw::FlashCosmos&)>;
    // Runs `body` as a user program with the library on its own HRE.
    void user(const Body& body) { users({body}); }
    // Each body a user program of its own process (StackMachine::users), with its library.
    void users(const std::vector<Body>& bodies) {
        std::vector<std::function<void(host::HostCore&)>> programs;
        for (const Body& body : bodies)
            programs.push_back([this, &body](host::HostCore& cpu) {
                ASSERT_TRUE(stack->has_flash_cosmos());
                sw::Hre hre(cpu, stack->driver.open(cpu));
                sw::FlashCosmos fc(cpu, hre, stack->cfg.flash_cosmos_app,
                                   stack->flash_cosmos_geometry());
                body(cpu, fc);
            });
        StackMachine::users(programs);
    }
};

std::vector<uint8_t> random_vector(size_t bytes, uint64_t seed) {
    core::Rng rng(seed);
    std::vector<uint8_t> v(bytes);
    for (auto& b : v) b = uint8_t(rng() | rng());  // 75% ones: ANDs stay interesting
    return v;
}

double now_us(host::HostCore& cpu) { return cpu.now().to_seconds() * 1e6; }

// Three pieces (the last one short) on SPU 0 unit 0, SPU 1 unit 0, SPU 0 unit 1.
constexpr size_t kBytes = 2 * 16384 + 1000;

TEST(FlashCosmos, EveryOperationOnEverySystemMatchesTheHost) {
    FcMachine m;
    m.user([](host::HostCore&, sw::FlashCosmos& fc) {
        std::vector<std::vector<uint8_t>> plain, inv;
        std::vector<sw::FlashCosmos::Operand> p, n;
        for (unsigned i = 0; i < 5; ++i) {
            plain.push_back(random_vector(kBytes, 10 + i));
            p.push_back(fc.write(0, plain.back().data(), kBytes));
        }
        for (unsigned i = 0; i < 3; ++i) {
            inv.push_back(random_vector(kBytes, 20 + i));
            n.push_back(fc.write(1, inv.back().data(), kBytes, true));
        }
        using sw::FcOp;
        using sw::FcSystem;
        // Operands as written: AND and NAND by intra-block sensing, OR sensing by sensing.
        for (FcOp op : {FcOp::And, FcOp::Or, FcOp::Nand, FcOp::Xor, FcOp::Xnor, FcOp::AndOr})
            for (FcSystem s : sw::kFcSystems)
                EXPECT_EQ(fc.read(op, p, s), sw::FlashCosmos::reference(op, plain))
                    << sw::fc_op_name(op) << " on " << sw::fc_system_name(s);
        // Operands written inverted: NOR is the AND of what the flash holds, OR and NAND are
        // inverse sensings (De Morgan).
        for (FcOp op : {FcOp::Nor, FcOp::Or, FcOp::Nand, FcOp::Xor, FcOp::Xnor})
            for (FcSystem s : sw::kFcSystems)
                EXPECT_EQ(fc.read(op, n, s), sw::FlashCosmos::reference(op, inv))
                    << sw::fc_op_name(op) << " of inverted operands on " << sw::fc_system_name(s);
        // Mixed: an operand as written and one inverted, in different blocks.
        EXPECT_EQ(fc.read(FcOp::Xor, {p[0], n[0]}),
                  sw::FlashCosmos::reference(FcOp::Xor, {plain[0], inv[0]}));
        EXPECT_EQ(fc.read(FcOp::Or, {p[1], n[1]}),
                  sw::FlashCosmos::reference(FcOp::Or, {plain[1], inv[1]}));
    });
}

TEST(FlashCosmos, SensingsFollowThePlacementAndFlashCosmosIsFastest) {
    FcMachine m;
    m.user([](host::HostCore& cpu, sw::FlashCosmos& fc) {
        // 60 operands of one group: wordlines 0..47 of its first block and 0..11 of a second.
        std::vector<std::vector<uint8_t>> plain;
        std::vector<sw::FlashCosmos::Operand> ops;
        for (unsigned i = 0; i < 60; ++i) {
            plain.push_back(random_vector(kBytes, 100 + i));
            ops.push_back(fc.write(2, plain.back().data(), kBytes));
        }
        const auto want = sw::FlashCosmos::reference(sw::FcOp::And, plain);
        auto run = [&](sw::FcSystem s, uint64_t* sensings, uint64_t* pages) {
            const uint64_t s0 = fc.stats().sensings, p0 = fc.stats().pages_read;
            const double t0 = now_us(cpu);
            EXPECT_EQ(fc.read(sw::FcOp::And, ops, s), want) << sw::fc_system_name(s);
            *sensings = fc.stats().sensings - s0;
            *pages = fc.stats().pages_read - p0;
            return now_us(cpu) - t0;
        };
        uint64_t s_fc, s_pb, s_isp, s_osp, p_fc, p_pb, p_isp, p_osp;
        const double t_fc = run(sw::FcSystem::FlashCosmos, &s_fc, &p_fc);
        const double t_pb = run(sw::FcSystem::ParaBit, &s_pb, &p_pb);
        const double t_isp = run(sw::FcSystem::Isp, &s_isp, &p_isp);
        const double t_osp = run(sw::FcSystem::Osp, &s_osp, &p_osp);
        // Three pieces: Flash-Cosmos senses each block once, ParaBit each operand once, OSP reads
        // every operand page out.
        EXPECT_EQ(s_fc, 3u * 2);
        EXPECT_EQ(s_pb, 3u * 60);
        EXPECT_EQ(s_osp, 0u);
        EXPECT_EQ(s_isp, 0u);
        EXPECT_EQ(p_osp, 3u * 60);
        // SPU 0 holds two of the pieces and serves them one after the other; what ParaBit adds
        // is 58 more sensings of an ESP page (tR = 22.5 us) per piece, plus the firmware's cost of
        // issuing each (bounded here by half a tR). Both share the result's trip to the host.
        const double extra_us = 2 * 58 * 22.5;
        EXPECT_GT(t_pb - t_fc, extra_us) << t_fc << " us vs ParaBit " << t_pb << " us";
        EXPECT_LT(t_pb - t_fc, 1.5 * extra_us) << t_fc << " us vs ParaBit " << t_pb << " us";
        // KCS's shape over two blocks: each of the AND's two sensings also names the OR
        // operand's block, (B1 | c) & (B2 | c) = (B1 & B2) | c, so still two sensings per piece.
        const auto c = random_vector(kBytes, 99);
        std::vector<sw::FlashCosmos::Operand> kcs = ops;
        kcs.push_back(fc.write(3, c.data(), kBytes));
        std::vector<std::vector<uint8_t>> kcs_plain = plain;
        kcs_plain.push_back(c);
        const uint64_t k0 = fc.stats().sensings;
        EXPECT_EQ(fc.read(sw::FcOp::AndOr, kcs),
                  sw::FlashCosmos::reference(sw::FcOp::AndOr, kcs_plain));
        EXPECT_EQ(fc.stats().sensings - k0, 3u * 2);
        // ISP reads every operand page too, but only into the channel's accelerator: against
        // ParaBit each operand adds its piece's transfer over the 1.2 GB/s channel (SPU 0's
        // pieces are the first, 16 KiB, and the last, 1000 B).
        const double transfer_us = 60 * (16384 + (kBytes - 2 * 16384)) / 1.2e3;
        EXPECT_GT(t_isp - t_pb, 0.9 * transfer_us) << t_pb << " us vs ISP " << t_isp;
        EXPECT_LT(t_isp - t_pb, 1.5 * transfer_us) << t_pb << " us vs ISP " << t_isp;
        // OSP moves each page on to the host as well.
        EXPECT_GT(t_osp - t_isp, transfer_us) << t_isp << " us vs OSP " << t_osp;
    });
}

// The paper's workloads, small: every system gives the host's result, and the orders of the
// systems' times follow the sensings and transfers each needs (Flash-Cosmos Section 8).
TEST(FlashCosmos, BmiImsKcsAgreeOnTheFourSystems) {
    FcMachine m;
    m.user([](host::HostCore& cpu, sw::FlashCosmos& fc) {
        const std::vector<sw::FcWorkload> ws = {sw::bmi_workload(40000, 60, 1),
                                                sw::ims_workload(70000, 2),
                                                sw::kcs_workload(50000, 8, 3)};
        for (const sw::FcWorkload& w : ws) {
            const auto stored = sw::store_workload(fc, w);
            const auto want = w.reference();
            double ns[4] = {};
            for (int s = 0; s < 4; ++s) {
                const auto o = sw::run_workload(cpu, fc, w, stored, sw::kFcSystems[s]);
                EXPECT_EQ(o.result, want)
                    << w.name << " on " << sw::fc_system_name(sw::kFcSystems[s]);
                if (w.bitcount) {
                    uint64_t ones = 0;
                    for (uint8_t b : want) ones += uint64_t(__builtin_popcount(b));
                    EXPECT_EQ(o.ones, ones) << w.name;
                }
                ns[s] = o.ns;
            }
            // Flash-Cosmos fastest, OSP slowest; ParaBit beats ISP, which saves OSP's transfers.
            EXPECT_LT(ns[0], ns[1]) << w.name;
            EXPECT_LT(ns[1], ns[2]) << w.name;
            EXPECT_LT(ns[2], ns[3]) << w.name;
            fc.release_all();
        }
    });
}

TEST(FlashCosmos, RefusalsNameTheProblem) {
    FcMachine m;
    m.user([](host::HostCore&, sw::FlashCosmos& fc) {
        const auto a = random_vector(kBytes, 1), b = random_vector(kBytes, 2);
        const auto oa = fc.write(0, a.data(), kBytes), ob = fc.write(0, b.data(), kBytes);
        // NOR of operands as written in one block: no latch sequence computes it.
        EXPECT_NE(refusal([&] {
                      fc.read(sw::FcOp::Nor, {oa, ob});
                  }).find("FC_E_PLAN"),
                  std::string::npos);
        // A group holds operands of one size.
        EXPECT_NE(refusal([&] { fc.write(0, a.data(), 100); }).find("holds operands of"),
                  std::string::npos);
        // Operands of different sizes cannot be combined.
        const auto oc = fc.write(1, a.data(), 100);
        EXPECT_NE(refusal([&] {
                      fc.read(sw::FcOp::And, {oa, oc});
                  }).find("different sizes"),
                  std::string::npos);
        // After release the app holds no operand: a read of one is refused by the app.
        fc.release_all();
        EXPECT_NE(refusal([&] {
                      fc.read(sw::FcOp::And, {oa, ob});
                  }).find("FC_E_ARGS"),
                  std::string::npos);
        // The blocks came back: a new group is stored and computed again.
        const auto oa2 = fc.write(0, a.data(), kBytes), ob2 = fc.write(0, b.data(), kBytes);
        EXPECT_EQ(fc.read(sw::FcOp::And, {oa2, ob2}),
                  sw::FlashCosmos::reference(sw::FcOp::And, {a, b}));
    });
}

// Operands are their writer's (docs/spu_os.md "Protection"): a second, unprivileged process
// names the first one's operand (the app's groups are one table per SPU, shared by name). SPU-OS
// refuses its sensing and the release of the blocks, tells the kernel (NOTIFY_DENIED), and the
// owner computes on its data as before.
TEST(FlashCosmos, AnotherProcessCanNeitherReadNorReleaseOperands) {
    FcMachine m;
    const auto secret = random_vector(kBytes, 5), mask = random_vector(kBytes, 6);
    sw::FlashCosmos::Operand a, b;
    bool written = false, attacked = false;
    m.users({[&](host::HostCore& cpu, sw::FlashCosmos& fc) {
                 a = fc.write(0, secret.data(), kBytes);
                 b = fc.write(0, mask.data(), kBytes);
                 written = true;
                 wait_for(cpu, attacked);
                 EXPECT_EQ(fc.read(sw::FcOp::Or, {a}), secret);
                 EXPECT_EQ(fc.read(sw::FcOp::And, {a, b}),
                           sw::FlashCosmos::reference(sw::FcOp::And, {secret, mask}));
             },
             [&](host::HostCore& cpu, sw::FlashCosmos& fc) {
                 wait_for(cpu, written);
                 EXPECT_NE(refusal([&] { fc.read(sw::FcOp::Or, {a}); }).find("SPU_OS_E_PERMISSION"),
                           std::string::npos);
                 EXPECT_NE(refusal([&] {
                               fc.read(sw::FcOp::And, {a, b}, sw::FcSystem::Osp);
                           }).find("SPU_OS_E_PERMISSION"),
                           std::string::npos);
                 EXPECT_NE(refusal([&] { fc.release_all(); }).find("SPU_OS_E_PERMISSION"),
                           std::string::npos);
                 attacked = true;
             }});
    // Each refusal was reported to the kernel, which has nothing to resolve.
    EXPECT_GE(m.stack->module.stats().denied, 3u);
    EXPECT_EQ(m.stack->module.stats().regranted, 0u);
}
#endif

}  // namespace
}  // namespace canopy::platform
