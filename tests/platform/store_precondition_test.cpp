// Preconditioning of the flash store (platform/store_precondition): the NAND it leaves is the
// NAND the timed path leaves for the same writes (the host writing 4 KiB units through Base-IO,
// SPU-OS's FTL on the SPUs, the flash controllers), page for page and bit for bit, P/E counts
// included; and SPU-OS mounts it and reads back what was written. Each test is its own process.
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.hpp"

#include "platform/store_precondition.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/host/block_io.hpp"
#include "sw/host/kernel_hres.hpp"
#include "sw/host/willow_apps.hpp"
#include "sw/host/willow_driver.hpp"
#include "willow_machine.hpp"

namespace canopy::platform {
namespace {

#ifdef CANOPY_FIRMWARE_DIR
using namespace willow_test;

constexpr unsigned kSpus = 2;
constexpr uint32_t kBaseIo = 2;

// Two SPUs, each on a channel of one die (two planes), the FTL on 6 blocks per plane: a device
// of a few MiB that GC has to work on.
struct PreconditionMachine : WillowMachine {
    sw::BlockGeometry geo;
    std::unique_ptr<sw::WillowDriver> driver;
    std::unique_ptr<sw::KernelHres> hres;
    bool done = false;

    explicit PreconditionMachine(bool functional = true)
        : WillowMachine(kSpus, [functional](PlatformConfig& c) {
              c.nand.functional = functional;
              c.nand.geometry.channels = kSpus;
              c.ssd.store.flash = true;
              c.ssd.store.blocks_per_plane = 6;
              c.ssd.store.esp_blocks = 0;
              c.ssd.store.gc_free_blocks = 2;
          }) {
        const nand::Geometry& n = cfg.nand.geometry;
        geo.spus = kSpus;
        geo.bank_bytes = ssd().dram.bank_bytes();
        geo.stripe_bytes = BLOCK_IO_STRIPE_BYTES;
        geo.store_bytes =
            cfg.ssd.store.spu_bytes(n.dies_per_channel, n.planes_per_die, n.wordlines_per_block,
                                    n.page_bytes, geo.bank_bytes, geo.stripe_bytes);
        driver = std::make_unique<sw::WillowDriver>(platform->device.willow_device());
        hres = std::make_unique<sw::KernelHres>(*driver, kBaseIo, geo);
    }
    // Core 0 in the kernel's role: attach the store (mount it, or resume from the FTL state
    // preconditioning left), install Base-IO, then `body` with the block device; the simulation
    // runs until it is done.
    void run(const std::function<void(sw::BlockIo&, sw::WillowApps&)>& body, bool resume = false) {
        auto& proc = platform->host.kernel.create_process("kernel");
        platform->host.cores[0]->run(proc, [&](host::HostCore& cpu) {
            try {
                sw::WillowApps& apps = hres->boot(cpu);
                apps.attach_store(cfg.ssd.store, geo.bank_bytes, {}, resume);
                apps.install(firmware("app_base_io"), kBaseIo, WillowStack::kBaseIoSlot);
                body(*hres->on(cpu).base_io, apps);
                done = true;
            } catch (const host::HostFault& e) {
                ADD_FAILURE() << e.what();
            }
        });
        for (int i = 0; i < 600 && !done; ++i)
            sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_MS));
        ASSERT_TRUE(done) << "the kernel program did not finish";
    }
};

// The writes: the device in order, then three times as many 4 KiB writes to random units, so
// that GC reclaims many blocks.
std::vector<uint64_t> sequence(const StorePreconditioner& pre) {
    const Precondition rand = Precondition::parse("rand", "test");
    const uint64_t n = pre.device_units();
    std::vector<uint64_t> v = rand.units(n, 11);
    for (uint64_t seed : {12, 13}) {
        const std::vector<uint64_t> more = rand.units(n, seed);
        v.insert(v.end(), more.begin() + n, more.end());  // its random part
    }
    return v;
}

// The NAND array of `m` holds exactly `images`: each FTL block erased as often, each page the
// image has programmed with its bytes (data, metadata, parity), every other page erased;
// `without_bytes`: how many programmed pages the planes keep without their bytes
// (preconditioning's).
void expect_nand_holds(PreconditionMachine& m, const StorePreconditioner& pre,
                       const std::vector<ChannelImage>& images, uint64_t* without_bytes = nullptr) {
    const nand::Geometry& g = m.cfg.nand.geometry;
    const uint32_t bpp = m.cfg.ssd.store.blocks_per_plane;
    uint64_t pages = 0, erases = 0, kept = 0;
    std::vector<uint64_t> cells(g.page_words());
    for (uint32_t c = 0; c < kSpus; ++c) {
        const ChannelImage& img = images[c];
        for (uint32_t b = 0; b < g.dies_per_channel * g.planes_per_die * bpp; ++b) {
            uint32_t die, plane, block;
            pre.locate(b, die, plane, block);
            const nand::Plane& pl = m.platform->nand.die(c, die).plane(plane);
            const auto e = img.erases.find(b);
            EXPECT_EQ(pl.pe_cycles(block), e == img.erases.end() ? 0u : e->second)
                << "channel " << c << " block " << b;
            erases += pl.pe_cycles(block);
            for (uint32_t wl = 0; wl < g.wordlines_per_block; ++wl) {
                const nand::PageState* ps = pl.page(block, wl);
                const auto it = img.pages.find(uint64_t(b) * g.wordlines_per_block + wl);
                const bool programmed = ps && ps->mode != nand::CellMode::Erased;
                ASSERT_EQ(programmed, it != img.pages.end())
                    << "channel " << c << " block " << b << " page " << wl;
                if (!programmed) continue;
                ++pages;
                EXPECT_EQ(ps->mode, nand::CellMode::Tlc);
                EXPECT_EQ(ps->scramble, nand::Scramble::Controller);
                const std::vector<uint8_t> want = pre.page_bytes(c, it->first, it->second);
                ASSERT_TRUE(pl.stored_cells(block, wl, cells.data()));
                ASSERT_EQ(std::memcmp(cells.data(), want.data(), want.size()), 0)
                    << "channel " << c << " block " << b << " page " << wl;
                EXPECT_EQ(ps->data == nullptr, ps->from_source);
                kept += ps->from_source;
            }
        }
    }
    EXPECT_GT(pages, 0u);
    EXPECT_GT(erases, 0u);
    if (without_bytes) *without_bytes = kept;
}

TEST(StorePrecondition, LeavesTheNandTheTimedWritesLeave) {
    PreconditionMachine m;
    const StorePreconditioner pre(*m.platform, m.geo);
    const std::vector<uint64_t> units = sequence(pre);
    const uint32_t ub = pre.unit_bytes();
    ASSERT_EQ(ub, 4096u);
    ASSERT_GT(pre.device_units(), 1000u);
    m.run([&](sw::BlockIo& io, sw::WillowApps& apps) {
        std::vector<uint8_t> buf(ub);
        for (uint64_t u : units) {
            precondition_bytes(u * ub, buf.data(), ub);
            io.write(u * ub, buf.data(), ub);
        }
        apps.flush_store();
    });
    const std::vector<ChannelImage> images = pre.run(units);
    for (const ChannelImage& img : images)
        EXPECT_GT(img.gc_victims, 10u) << "little GC: a weak comparison";
    uint64_t without_bytes = 1;
    expect_nand_holds(m, pre, images, &without_bytes);
    EXPECT_EQ(without_bytes, 0u) << "pages programmed in time keep their bytes";
}

// SPU-OS resumes the FTL as preconditioning left it (its tables and saved state in SSD memory),
// reading nothing from the flash; the timed writes after it then leave exactly the NAND that
// preconditioning leaves for the whole sequence (with the host's flush between the two parts):
// the same pages, bytes and P/E counts. A mount in its place would open other blocks (its
// frontiers, P/E counts and ages start over), so this holds only if the state came along whole.
TEST(StorePrecondition, SpuOsResumesTheFtlAndGoesOnAsTheTimedPath) {
    PreconditionMachine m;
    const StorePreconditioner pre(*m.platform, m.geo);
    const std::vector<uint64_t> all = sequence(pre);
    const size_t first = pre.device_units() * 2;  // the fill and one device of random writes
    ASSERT_GT(all.size(), first + 1000);
    pre.apply(pre.run({all.begin(), all.begin() + first}));
    const uint32_t ub = pre.unit_bytes();
    m.run(
        [&](sw::BlockIo& io, sw::WillowApps& apps) {
            for (uint32_t c = 0; c < kSpus; ++c) {
                const std::string ctl = "device.ssd.flash" + std::to_string(c);
                const auto* cmds =
                    dynamic_cast<const core::Counter*>(m.services.stats.find(ctl, "commands"));
                ASSERT_NE(cmds, nullptr) << ctl;
                EXPECT_EQ(cmds->value(), 0u) << "resuming reads nothing from the flash";
            }
            std::vector<uint8_t> buf(ub);
            for (size_t i = first; i < all.size(); ++i) {
                precondition_bytes(all[i] * ub, buf.data(), ub);
                io.write(all[i] * ub, buf.data(), ub);
            }
            apps.flush_store();
        },
        true);
    const std::vector<ChannelImage> images = pre.run(all, first);
    for (const ChannelImage& img : images) EXPECT_GT(img.gc_victims, 10u);
    // GC read preconditioning's pages (made by their sources) to move them.
    expect_nand_holds(m, pre, images);
}

TEST(StorePrecondition, SpuOsMountsItAndReadsWhatWasWritten) {
    PreconditionMachine m;
    const StorePreconditioner pre(*m.platform, m.geo);
    const std::vector<ChannelImage> images = pre.run(sequence(pre));
    pre.apply(images);
    uint64_t programmed = 0;
    for (const ChannelImage& img : images) programmed += img.pages.size();
    // The planes keep none of the pages' bytes (their memory is the tokens and spare areas).
    uint64_t without_bytes = 0;
    expect_nand_holds(m, pre, images, &without_bytes);
    EXPECT_EQ(without_bytes, programmed);
    const uint32_t ub = pre.unit_bytes();
    const uint64_t n = pre.device_units();
    m.run([&](sw::BlockIo& io, sw::WillowApps& apps) {
        std::vector<uint8_t> got(ub), want(ub);
        for (uint64_t u = 0; u < n; u += 37) {  // units on both SPUs, all over each store
            io.read(u * ub, got.data(), ub);
            precondition_bytes(u * ub, want.data(), ub);
            ASSERT_EQ(got, want) << "device unit " << u;
        }
        // The FTL's map was rebuilt from the pages: no unit was lost.
        uint64_t programs = 0;
        for (uint32_t s = 0; s < kSpus; ++s) programs += apps.stat(s, SPU_OS_STAT_STORE_PROGRAMS);
        EXPECT_EQ(programs, 0u) << "mounting and reading programs nothing";
    });
}

// nand.compact_pages: the planes keep the pages SPU-OS programs in time as their units, each
// distinct unit's bytes once (preconditioning's pattern, zeros and 0xFF as tokens), and sense them
// bit for bit as programmed: three device-fulls of writes (GC moving units, erasing blocks whose
// pooled units other pages still name) of four kinds of data, every unit read back as written
// last, and no programmed page keeping its bytes.
TEST(StorePrecondition, CompactPagesKeepWhatTheHostWroteBitForBit) {
    PreconditionMachine m;
    compact_nand_pages(*m.platform);
    const StorePreconditioner pre(*m.platform, m.geo);
    const std::vector<uint64_t> units = sequence(pre);
    const uint32_t ub = pre.unit_bytes();
    const uint64_t n = pre.device_units();
    core::Rng rng(5);
    auto random_unit = [&] {
        std::vector<uint8_t> v(ub);
        for (uint8_t& x : v) x = uint8_t(rng());
        return v;
    };
    const std::vector<uint8_t> shared_a = random_unit(), shared_b = random_unit();
    std::vector<std::vector<uint8_t>> want(n);
    m.run([&](sw::BlockIo& io, sw::WillowApps& apps) {
        for (size_t i = 0; i < units.size(); ++i) {
            std::vector<uint8_t>& w = want[units[i]];
            switch (i % 5) {
                case 0:
                    w.assign(ub, 0);
                    precondition_bytes(units[i] * ub, w.data(), ub);
                    break;
                case 1:
                    w = shared_a;
                    break;
                case 2:
                    w = shared_b;
                    break;
                case 3:
                    w.assign(ub, i % 2 ? 0xFF : 0x00);
                    break;
                default:
                    w = random_unit();
                    break;
            }
            io.write(units[i] * ub, w.data(), ub);
        }
        apps.flush_store();
        std::vector<uint8_t> got(ub);
        for (uint64_t u = 0; u < n; ++u) {
            io.read(u * ub, got.data(), ub);
            ASSERT_EQ(got, want[u]) << "device unit " << u;
        }
    });
    const nand::Geometry& g = m.cfg.nand.geometry;
    uint64_t programmed = 0, erases = 0;
    for (uint32_t c = 0; c < kSpus; ++c)
        for (uint32_t p = 0; p < g.planes_per_die; ++p) {
            const nand::Plane& pl = m.platform->nand.die(c, 0).plane(p);
            for (uint32_t b = 0; b < m.cfg.ssd.store.blocks_per_plane; ++b) {
                erases += pl.pe_cycles(b);
                for (uint32_t wl = 0; wl < g.wordlines_per_block; ++wl) {
                    const nand::PageState* ps = pl.page(b, wl);
                    if (!ps || ps->mode == nand::CellMode::Erased) continue;
                    ++programmed;
                    EXPECT_TRUE(ps->from_source && !ps->data) << "block " << b << " page " << wl;
                }
            }
        }
    EXPECT_GT(programmed, 100u);
    // Three device-fulls of writes: more erases than the store has blocks.
    EXPECT_GT(erases, kSpus * g.planes_per_die * m.cfg.ssd.store.blocks_per_plane)
        << "little GC: pooled units were hardly released";
}

// A timing-only array keeps no page bytes, but the controller keeps each page's metadata: SPU-OS
// mounts the preconditioned half of the device from it. Mapped units read as the documented
// zeros, the never-written half as the FTL's 0xFF; no page holds data.
TEST(StorePrecondition, TimingOnlyKeepsTheMetadataTheFtlMountsFrom) {
    PreconditionMachine m(false);
    const StorePreconditioner pre(*m.platform, m.geo);
    const uint64_t n = pre.device_units();
    pre.apply(pre.run(Precondition::parse("50", "test").units(n, 1)));
    for (uint32_t c = 0; c < kSpus; ++c)
        for (uint32_t p = 0; p < m.cfg.nand.geometry.planes_per_die; ++p) {
            const nand::Plane& pl = m.platform->nand.die(c, 0).plane(p);
            ASSERT_NE(pl.page(0, 0), nullptr);
            EXPECT_EQ(pl.page(0, 0)->mode, nand::CellMode::Tlc);
            EXPECT_EQ(pl.page(0, 0)->data, nullptr);
        }
    const uint32_t ub = pre.unit_bytes();
    m.run([&](sw::BlockIo& io, sw::WillowApps&) {
        std::vector<uint8_t> got(ub);
        for (uint64_t u = 0; u < n; u += 29) {
            io.read(u * ub, got.data(), ub);
            const uint8_t want = u < n / 2 ? 0x00 : 0xFF;
            ASSERT_EQ(got, std::vector<uint8_t>(ub, want)) << "device unit " << u;
        }
    });
}
#endif

}  // namespace
}  // namespace canopy::platform
