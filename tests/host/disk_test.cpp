// The hard disk behind the host (models/host/disk), the backing store of the SSD caches (Willow
// Section 4.4). Every expected time is built from the configuration by the mechanism's formulas
// (seek by the square-root law, rotation from the platter's angle, transfer at the track's rate),
// never from a run's output. Each TEST is its own process.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cmath>
#include <memory>
#include <systemc>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "host/disk.hpp"
#include "host/home_node.hpp"
#include "host/host_core.hpp"
#include "host/host_kernel.hpp"
#include "host/host_memory.hpp"

namespace canopy::host {
namespace {

// Host cores to call the disk from; nothing answers their device accesses, and no device DMAs.
struct Cores {
    struct NoDma : sc_core::sc_module {
        tlm_utils::simple_initiator_socket<NoDma> socket;
        explicit NoDma(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
    };
    struct NoDevice : sc_core::sc_module {
        tlm_utils::simple_target_socket<NoDevice> socket;
        explicit NoDevice(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
            socket.register_b_transport(this, &NoDevice::b_transport);
        }
        void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        }
    };
    core::Services services;
    HostMemory memory;
    HomeNode home;
    HostKernel kernel;
    NoDma dma;
    std::vector<std::unique_ptr<NoDevice>> devices;
    std::vector<std::unique_ptr<HostCore>> cores;
    HostKernel::Process& proc;
    explicit Cores(unsigned n)
        : memory("memory", small(), services),
          home("home", HomeNodeConfig{}, services),
          kernel(memory, home),
          dma("dma"),
          proc(kernel.create_process("test")) {
        home.memory_initiator.bind(memory.socket);
        dma.socket.bind(home.io_target);
        for (unsigned i = 0; i < n; ++i) {
            const std::string c = "core" + std::to_string(i);
            cores.push_back(
                std::make_unique<HostCore>(c.c_str(), HostCoreConfig{}, home, kernel, services));
            devices.push_back(std::make_unique<NoDevice>((c + "_mmio").c_str()));
            cores.back()->mmio.bind(devices.back()->socket);
        }
    }
    static HostMemoryConfig small() {
        HostMemoryConfig c;
        c.size_bytes = 64 * kMiB;
        return c;
    }
    void run(unsigned core, HostProgram p) { cores[core]->run(proc, std::move(p)); }
};

double ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }

TEST(Disk, GeometryAndDerivedFigures) {
    const DiskConfig c;
    Disk d(c);
    // The full stroke that makes the mean over random cylinder pairs the datasheet's average:
    // t2t + (full - t2t) x 8/15 = average.
    EXPECT_NEAR(c.full_stroke_ms(), 1.0 + 7.5 * 15 / 8, 1e-12);
    EXPECT_NEAR(c.track_to_track_ms + (c.full_stroke_ms() - c.track_to_track_ms) * 8 / 15,
                c.average_seek_ms, 1e-12);
    EXPECT_NEAR(c.revolution_ns(), 60e9 / 7200, 1e-6);
    // Zones: 2400 sectors per track outermost, 1200 innermost, 80 fewer per zone.
    EXPECT_EQ(c.sectors_per_track(0), 2400u);
    EXPECT_EQ(c.sectors_per_track(15), 1200u);
    EXPECT_EQ(c.sectors_per_track(1), 2320u);
    // Equal bands of 16,562 cylinders (the last 16,570): the capacity sums them.
    uint64_t sectors = 0;
    for (uint32_t z = 0; z < 16; ++z)
        sectors += uint64_t(z < 15 ? 16562 : 265000 - 15 * 16562) * 4 * (2400 - 80 * z);
    EXPECT_EQ(d.capacity_bytes(), sectors * 512);
    // Places round-trip: track by track across the heads, then the next cylinder.
    const uint32_t places[][3] = {{0, 0, 0}, {0, 3, 2399}, {16562, 1, 7}, {264999, 3, 1199}};
    for (const auto& q : places) {
        const Disk::Place p = d.place(d.offset_of(q[0], q[1], q[2]));
        EXPECT_EQ(p.cylinder, q[0]);
        EXPECT_EQ(p.head, q[1]);
        EXPECT_EQ(p.sector, q[2]);
    }
    EXPECT_EQ(d.offset_of(0, 1, 0), 2400u * 512);
    EXPECT_EQ(d.offset_of(1, 0, 0), 4u * 2400 * 512);
    EXPECT_EQ(d.place(d.capacity_bytes() - 1).cylinder, 264999u);
}

TEST(Disk, BadConfigurationsNameTheField) {
    DiskConfig c;
    c.average_seek_ms = 0.5;
    EXPECT_THROW(Disk{c}, InputError);
    c = DiskConfig();
    c.sector_bytes = 1000;
    try {
        Disk{c};
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.place(), "disk.sector_bytes");
    }
}

// Seek, rotation and transfer of single accesses from the arm's position at cylinder 0.
TEST(Disk, AnAccessIsOverheadSeekRotationAndTransfer) {
    const DiskConfig c;
    Disk d(c);
    const double rev = c.revolution_ns(), over = c.overhead_us * 1e3;
    const double t2t = c.track_to_track_ms * 1e6, full = c.full_stroke_ms() * 1e6;
    // Same cylinder: no seek; sector 600 of 2400 is a quarter turn on, the platter at angle
    // (start + overhead) / rev.
    const double start = 1234567.0;
    Disk::Timing t = d.time_access(start, d.offset_of(0, 2, 600), 4096);
    EXPECT_EQ(t.seek_ns, 0.0);
    EXPECT_EQ(t.overhead_ns, over);
    double angle = std::fmod(start + over, rev) / rev, wait = 0.25 - angle;
    EXPECT_NEAR(t.rotation_ns, (wait < 0 ? wait + 1 : wait) * rev, 1e-3);
    EXPECT_NEAR(t.transfer_ns, 8.0 / 2400 * rev, 1e-6);  // 8 sectors at the outer rate
    // The innermost cylinder: a full-stroke seek (less a cylinder's worth), and the inner rate.
    t = d.time_access(0, d.offset_of(264999, 0, 0), 4096);
    EXPECT_NEAR(t.seek_ns, t2t + (full - t2t) * std::sqrt(264999.0 / 265000), 1e-3);
    EXPECT_NEAR(t.seek_ns, full, 30.0);
    angle = std::fmod(over + t.seek_ns, rev) / rev;
    EXPECT_NEAR(t.rotation_ns, (angle > 0 ? 1 - angle : 0) * rev, 1e-3);
    EXPECT_NEAR(t.transfer_ns, 8.0 / 1200 * rev, 1e-6);
    // One cylinder away: little more than track-to-track.
    t = d.time_access(0, d.offset_of(1, 0, 0), 512);
    EXPECT_NEAR(t.seek_ns, t2t + (full - t2t) * std::sqrt(1.0 / 265000), 1e-3);
    // A transfer crossing tracks: the first track's tail, then the next track from its start.
    t = d.time_access(0, d.offset_of(0, 0, 2396), 4096);
    EXPECT_NEAR(t.transfer_ns, 8.0 / 2400 * rev, 1e-6);
    EXPECT_EQ(t.seek_ns, 0.0);
    // A whole track takes one revolution.
    t = d.time_access(0, d.offset_of(5, 1, 0), 2400 * 512);
    EXPECT_NEAR(t.transfer_ns, rev, 1e-3);
}

// Rotation is bounded by a revolution and averages half of one over random starts; seeks
// between random cylinders average the datasheet's figure.
TEST(Disk, RandomAccessesAverageHalfARevolutionAndTheAverageSeek) {
    const DiskConfig c;
    Cores h(1);
    Disk d(c);
    core::Rng rng(7);
    const unsigned n = 4000;
    double seek = 0, rotation = 0, max_rotation = 0;
    h.run(0, [&](HostCore& cpu) {
        for (unsigned i = 0; i < n; ++i) {
            const uint32_t cyl = uint32_t(rng() % c.cylinders);
            const Disk::Place p0 = d.place(d.offset_of(cyl, 0, 0));
            const uint32_t sec = uint32_t(rng() % p0.sectors_per_track);
            std::vector<uint8_t> b(512);
            const Disk::Timing t =
                d.read(cpu, d.offset_of(cyl, uint32_t(rng() % 4), sec), b.data(), 512);
            seek += t.seek_ns;
            rotation += t.rotation_ns;
            max_rotation = std::max(max_rotation, t.rotation_ns);
            cpu.compute_ns(double(rng() % 1000000));  // think time: a random platter angle
        }
    });
    sc_core::sc_start();
    ASSERT_EQ(h.cores[0]->fault(), "");
    // Standard errors: seek ~4 ms / sqrt(n) = 0.06 ms; rotation rev / sqrt(12 n) = 0.04 ms.
    EXPECT_NEAR(seek / n, c.average_seek_ms * 1e6, 0.25e6);
    EXPECT_NEAR(rotation / n, c.revolution_ns() / 2, 0.2e6);
    EXPECT_LT(max_rotation, c.revolution_ns());
    EXPECT_EQ(d.stats().reads, n);
    EXPECT_NEAR(
        d.stats().busy_ns,
        d.stats().seek_ns + d.stats().rotation_ns + d.stats().transfer_ns + n * c.overhead_us * 1e3,
        1.0);
}

// Back to back on one track: no seek, and the next sector has just passed under the head by
// the command overhead, so the disk waits a revolution less the overhead (no read-ahead).
TEST(Disk, SequentialRequestsOnOneTrackMissARevolution) {
    const DiskConfig c;
    Cores h(1);
    Disk d(c);
    Disk::Timing first, second;
    double took = 0;
    h.run(0, [&](HostCore& cpu) {
        std::vector<uint8_t> b(4096);
        first = d.read(cpu, d.offset_of(0, 0, 100), b.data(), 4096);
        const double t0 = ns(cpu.now());
        second = d.read(cpu, d.offset_of(0, 0, 108), b.data(), 4096);
        took = ns(cpu.now()) - t0;
    });
    sc_core::sc_start();
    ASSERT_EQ(h.cores[0]->fault(), "");
    EXPECT_EQ(second.seek_ns, 0.0);
    EXPECT_NEAR(second.rotation_ns, c.revolution_ns() - c.overhead_us * 1e3, 1.0);
    EXPECT_NEAR(took, second.service_ns(), 1.0);
}

// Two programs asking at once: the second waits for the first's whole service.
TEST(Disk, ConcurrentCallersQueue) {
    Cores h(2);
    Disk d;
    Disk::Timing t[2];
    double end[2] = {0, 0};
    for (unsigned i = 0; i < 2; ++i)
        h.run(i, [&, i](HostCore& cpu) {
            cpu.compute_ns(1000.0 * (i + 1));  // core 0 first
            std::vector<uint8_t> b(4096);
            t[i] = d.read(cpu, d.offset_of(1000 * (i + 1), 0, 0), b.data(), 4096);
            end[i] = ns(cpu.now());
        });
    sc_core::sc_start();
    EXPECT_EQ(t[0].queued_ns, 0.0);
    EXPECT_NEAR(t[1].queued_ns, 1000.0 + t[0].service_ns() - 2000.0, 1.0);
    EXPECT_NEAR(end[0], 1000.0 + t[0].service_ns(), 1.0);
    EXPECT_NEAR(end[1], end[0] + t[1].service_ns(), 1.0);
    EXPECT_EQ(t[1].from_cylinder, 1000u);  // the arm where the first left it
    EXPECT_NEAR(d.stats().queued_ns, t[1].queued_ns, 1e-6);
}

// A write-behind (a kernel's background write-back): the caller goes on at once, the disk is
// busy for the write's whole service, so a read asked for next waits for it; the data is there.
TEST(Disk, AWriteBehindTakesTheDiskNotTheCaller) {
    Cores h(1);
    Disk d;
    Disk::Timing w, r;
    double after_write = 0, end = 0;
    std::vector<uint8_t> in(4096, 0x3c), out(4096);
    h.run(0, [&](HostCore& cpu) {
        const double t0 = ns(cpu.now());
        w = d.write_behind(cpu, d.offset_of(5000, 0, 0), in.data(), 4096);
        after_write = ns(cpu.now()) - t0;
        r = d.read(cpu, d.offset_of(5000, 0, 0), out.data(), 4096);
        end = ns(cpu.now()) - t0;
    });
    sc_core::sc_start();
    ASSERT_EQ(h.cores[0]->fault(), "");
    EXPECT_LT(after_write, 1.0);
    EXPECT_GT(w.service_ns(), 1e6);  // a seek across 5,000 cylinders
    EXPECT_NEAR(r.queued_ns, w.service_ns(), 1.0);
    EXPECT_NEAR(end, w.service_ns() + r.service_ns(), 1.0);
    EXPECT_EQ(out, in);
    EXPECT_EQ(d.stats().writes, 1u);
}

TEST(Disk, DataRoundTripsSparselyAndRangesAreChecked) {
    Cores h(1);
    Disk d;
    std::string refused;
    h.run(0, [&](HostCore& cpu) {
        std::vector<uint8_t> in(10000), out(10000, 0xEE);
        for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 13 + 5);
        d.read(cpu, 1ull << 36, out.data(), 4096);  // never written: zeros
        EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 4096),
                  std::vector<uint8_t>(4096, 0));
        d.write(cpu, (1ull << 36) + 1000, in.data(), 10000);  // across three blocks
        d.read(cpu, (1ull << 36) + 1000, out.data(), 10000);
        EXPECT_EQ(in, out);
        std::vector<uint8_t> edge(8);
        d.read(cpu, (1ull << 36) + 996, edge.data(), 8);  // zeros, then the write's first bytes
        EXPECT_EQ(edge, (std::vector<uint8_t>{0, 0, 0, 0, in[0], in[1], in[2], in[3]}));
        try {
            d.read(cpu, d.capacity_bytes() - 100, out.data(), 4096);
        } catch (const HostFault& e) {
            refused = e.what();
        }
    });
    sc_core::sc_start();
    ASSERT_EQ(h.cores[0]->fault(), "");
    EXPECT_NE(refused.find("the disk holds"), std::string::npos) << refused;
    EXPECT_EQ(d.stats().reads, 3u);
    EXPECT_EQ(d.stats().writes, 1u);
    std::vector<uint8_t> p(4);
    d.peek((1ull << 36) + 1000, p.data(), 4);
    EXPECT_EQ(p[0], 5);
}

}  // namespace
}  // namespace canopy::host
