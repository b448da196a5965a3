// Atomic-Writes across sudden power losses (Willow Section 4.3; sw/firmware/apps/atomic_writes.c):
// real SPU-OS and the Atomic-Writes app on 2-SPU controllers storing on one small flash array.
// Controller k runs transactions (1-4 writes over both SPUs, committed by two-phase commit) until
// its power is cut at a random point, in a random transaction's COMMIT or anywhere in it: from
// then on it never reaches the flash again (a bus transaction it had issued completes; torn pages
// are the FTL's tests' part). Controller k + 1, a fresh one on the same array, mounts the store,
// loads the logs and recovers (RECOVER phases 1 and 2 on every SPU, as the host kernel does),
// and reads the target area back: every transaction acknowledged before the cut is there, the
// one in flight is there wholly or not at all (and not at all when its COMMIT was never sent).
// Then it runs transactions until its own cut. Each seed is one TEST (its own process).
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <memory>
#include <vector>

#include "core/rng.hpp"
#include "platform/fabric.hpp"
#include "spu_os_host.hpp"
#include "sw/firmware/apps/atomic_writes_abi.h"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace spu_os_host;

constexpr unsigned kSpus = 2, kCuts = 8;
constexpr unsigned kAwApp = 3, kAwSlot = 4;
constexpr uint32_t kArea = 24 * 1024;      // each SPU's target area: the store's first bytes
constexpr uint32_t kLogAt = 1 << 20;       // its log region ...
constexpr uint32_t kLogBytes = 512 << 10;  // ... of 6 slots of 84 KiB
constexpr uint32_t kChunk = 256;           // the store app's LOAD reads up to 256 B

// A controller's power switch on one flash channel: bus transactions issued before the cut pass
// (and complete in the array), later ones never return.
class PowerGate : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<PowerGate> in;
    tlm_utils::simple_initiator_socket<PowerGate> out;
    explicit PowerGate(sc_core::sc_module_name n) : sc_module(n), in("in"), out("out") {
        in.register_b_transport(this, &PowerGate::b_transport);
        in.register_transport_dbg(this, &PowerGate::transport_dbg);
    }
    void cut_at(const sc_core::sc_time& t) { cut_ = t; }

  private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        if (sc_core::sc_time_stamp() + d >= cut_) sc_core::wait(never_);
        out->b_transport(gp, d);
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }
    sc_core::sc_time cut_ = sc_core::sc_max_time();
    sc_core::sc_event never_;
};

nand::NandConfig small_nand() {
    nand::NandConfig n;
    n.geometry.channels = kSpus;
    n.geometry.dies_per_channel = 2;
    n.geometry.blocks_per_plane = 16;
    return n;
}

sw::StoreConfig small_store(bool format, bool write_cache) {
    sw::StoreConfig s;
    s.write_cache = write_cache;
    s.blocks_per_plane = 8;
    s.cell_mode = "slc";
    s.format = format;
    return s;
}

struct Write {
    unsigned spu;
    uint32_t at;  // in the target area
    std::vector<uint8_t> data;
};
using Image = std::array<std::vector<uint8_t>, kSpus>;

Image with(Image img, const std::vector<Write>& ws) {
    for (const Write& w : ws) std::copy(w.data.begin(), w.data.end(), img[w.spu].begin() + w.at);
    return img;
}

// What the test knows across controllers.
struct Story {
    Image acked;                   // every acknowledged transaction applied
    std::vector<Write> in_flight;  // the transaction the cut interrupted (empty: none)
    bool commit_sent = false;      // ... and whether its COMMIT had gone out
    uint32_t next_tx = 1;
    unsigned applied = 0, dropped = 0, transactions = 0;
    std::array<bool, kCuts + 1> down{};  // controller k has lost power
};

void power_loss_rounds(uint64_t seed, bool write_cache = false) {
    const nand::NandConfig nc = small_nand();
    core::Services services;
    WillowConfig cfg;
    cfg.spus = kSpus;
    cfg.firmware = firmware("spu_os");
    std::ostringstream console;
    nand::FlashArray array("nand", nc, services);
    std::vector<std::unique_ptr<FanIn>> ports;
    for (unsigned c = 0; c < kSpus; ++c) {
        ports.push_back(std::make_unique<FanIn>(("port" + std::to_string(c)).c_str()));
        ports[c]->out.bind(array.channel(c).target);
    }
    Story story;
    for (auto& img : story.acked) img.assign(kArea, 0xFF);  // never written: reads as erased
    std::vector<std::unique_ptr<Willow>> ssds;
    std::vector<std::unique_ptr<PowerGate>> gates;
    std::vector<std::unique_ptr<Host>> hosts;
    bool finished = false;
    core::Rng rng(seed);

    for (unsigned k = 0; k <= kCuts; ++k) {
        const std::string n = "ssd" + std::to_string(k);
        ssds.push_back(std::make_unique<Willow>(n.c_str(), cfg, services, console, false, &nc));
        Willow& ssd = *ssds.back();
        std::vector<PowerGate*> mine;
        for (unsigned c = 0; c < kSpus; ++c) {
            gates.push_back(
                std::make_unique<PowerGate>((n + "_power" + std::to_string(c)).c_str()));
            ssd.flash[c]->nand.bind(gates.back()->in);
            gates.back()->out.bind(ports[c]->in);
            mine.push_back(gates.back().get());
        }
        auto script = [&, k, mine](Host& h) {
            while (k > 0 && !story.down[k - 1]) wait(sc_core::sc_time(100, sc_core::SC_US));
            const uint32_t bank = uint32_t(ssds[k]->dram.bank_bytes());
            h.timeout = sc_core::sc_time(1, sc_core::SC_SEC);  // the first one formats
            auto aw = [&](unsigned spu, unsigned handler, const std::vector<uint8_t>& payload) {
                return h.call(spu, kAwApp, handler, payload, kKernelHre);
            };
            // Boot as the host kernel does: the apps, the store (mounted), the logs, recovery.
            for (unsigned s = 0; s < kSpus; ++s) {
                h.install(s, "app_store", kStoreApp, 0);
                h.install(s, "app_atomic_writes", kAwApp, kAwSlot);
                ASSERT_EQ(h.call(s, SPU_OS_KERNEL_APP, SPU_OS_RPC_STORE_ATTACH,
                                 small_store(k == 0, write_cache).attach_payload(bank), kKernelHre),
                          SPU_OS_OK);
                ASSERT_EQ(
                    aw(s, AW_SETUP, Host::bytes({bank * s + kLogAt, kLogBytes, s, kSpus, k == 0})),
                    AW_OK);
            }
            for (uint32_t phase = 1; phase <= 2; ++phase)
                for (unsigned s = 0; s < kSpus; ++s)
                    ASSERT_EQ(aw(s, AW_RECOVER, Host::bytes({phase})), AW_OK) << "phase " << phase;
            // What survived: the acknowledged image, with the one in flight or without it.
            const Image before = story.acked, after = with(story.acked, story.in_flight);
            bool is_before = true, is_after = true;
            for (unsigned s = 0; s < kSpus; ++s)
                for (uint32_t at = 0; at < kArea; at += kChunk) {
                    const uint32_t got =
                        h.call(s, kStoreApp, 2, Words{bank * s + at, kChunk}, kKernelHre);
                    auto sum = [&](const Image& img) {
                        return checksum(std::vector<uint8_t>(img[s].begin() + at,
                                                             img[s].begin() + at + kChunk));
                    };
                    is_before = is_before && got == sum(before);
                    is_after = is_after && got == sum(after);
                }
            EXPECT_TRUE(is_before || is_after)
                << "after cut " << k << ": an acknowledged transaction is missing, or the one in "
                << "flight is partly there";
            if (!story.commit_sent) {
                EXPECT_TRUE(is_before) << "after cut " << k << ": applied without its COMMIT";
            }
            if (!story.in_flight.empty())
                ++(is_after && !is_before ? story.applied : story.dropped);
            if (is_after) story.acked = after;
            story.in_flight.clear();
            if (k == kCuts) {
                finished = true;
                return;
            }
            // Transactions until the power goes: at a random moment of transaction `cut_tx`,
            // inside its COMMIT or anywhere, scaled by the mean durations so far.
            h.timeout = sc_core::sc_time(50, sc_core::SC_MS);
            const unsigned cut_tx = 2 + unsigned(rng() % 4);
            const bool in_commit = (k + seed) % 2 == 0;
            sc_core::sc_time commit_time, tx_time;
            auto cut = [&](const sc_core::sc_time& from, const sc_core::sc_time& span, unsigned n) {
                const sc_core::sc_time at = from + span * (core::uniform01(rng) / n);
                for (PowerGate* g : mine) g->cut_at(at);
            };
            for (unsigned j = 0;; ++j) {
                std::vector<Write> ws(1 + rng() % 4);
                uint32_t mask = 0;
                for (Write& w : ws) {
                    w.spu = unsigned(rng() % kSpus);
                    w.data.resize(1 + rng() % 2000);
                    for (auto& b : w.data) b = uint8_t(rng());
                    w.at = uint32_t(rng() % (kArea - w.data.size()));
                    mask |= 1u << w.spu;
                }
                const uint32_t tx = story.next_tx++;
                story.in_flight = ws;
                story.commit_sent = false;
                const sc_core::sc_time t0 = sc_core::sc_time_stamp();
                if (j == cut_tx && !in_commit) cut(t0, tx_time, j);
                bool lost = false;
                for (const Write& w : ws) {
                    std::vector<uint8_t> p =
                        Host::bytes({tx, bank * w.spu + w.at, uint32_t(w.data.size())});
                    p.insert(p.end(), w.data.begin(), w.data.end());
                    const uint32_t r = aw(w.spu, AW_LOGWRITE, p);
                    if ((lost = r == ~0u)) break;
                    ASSERT_EQ(r, AW_OK) << "transaction " << tx;
                }
                if (!lost) {
                    const sc_core::sc_time t1 = sc_core::sc_time_stamp();
                    if (j == cut_tx && in_commit) cut(t1, commit_time, j);
                    story.commit_sent = true;
                    const uint32_t r =
                        aw(unsigned(__builtin_ctz(mask)), AW_COMMIT, Host::bytes({tx, mask}));
                    lost = r == ~0u;
                    if (!lost) {
                        ASSERT_EQ(r, AW_OK) << "transaction " << tx;
                    }
                    commit_time += sc_core::sc_time_stamp() - t1;
                }
                if (lost) break;
                tx_time += sc_core::sc_time_stamp() - t0;
                story.acked = with(story.acked, ws);
                story.in_flight.clear();
                ++story.transactions;
            }
            story.down[k] = true;  // this controller has lost power
            while (!finished) wait(sc_core::sc_time(1, sc_core::SC_MS));
        };
        hosts.push_back(
            std::make_unique<Host>(("host" + std::to_string(k)).c_str(), ssd, services, script));
    }
    sc_core::sc_start(sc_core::sc_time(60, sc_core::SC_SEC));
    EXPECT_TRUE(finished) << console.str();
    // Every round ran transactions before its cut; say where the cuts landed.
    EXPECT_GE(story.transactions, 2u * kCuts);
    std::cout << "seed " << seed << ": " << story.transactions << " transactions acknowledged, "
              << story.applied << " in flight at a cut recovered as applied, " << story.dropped
              << " as absent\n";
}

// Each seed its own process (SystemC elaborates once).
TEST(AtomicWritesPowerLoss, EveryTransactionIsWhollyThereOrAbsentSeed1) { power_loss_rounds(1); }
TEST(AtomicWritesPowerLoss, EveryTransactionIsWhollyThereOrAbsentSeed2) { power_loss_rounds(2); }
TEST(AtomicWritesPowerLoss, EveryTransactionIsWhollyThereOrAbsentSeed3) { power_loss_rounds(3); }
// On a store with the write cache: the app's flushes order the log and the record.
TEST(AtomicWritesPowerLoss, WithTheWriteCacheEveryTransactionIsWhollyThereOrAbsentSeed1) {
    power_loss_rounds(1, true);
}
TEST(AtomicWritesPowerLoss, WithTheWriteCacheEveryTransactionIsWhollyThereOrAbsentSeed2) {
    power_loss_rounds(2, true);
}
TEST(AtomicWritesPowerLoss, WithTheWriteCacheEveryTransactionIsWhollyThereOrAbsentSeed4) {
    power_loss_rounds(4, true);
}
#endif

}  // namespace
}  // namespace canopy::platform
