// The willow-io experiment (Willow Sections 4.1-4.2, Figures 4-5; CALIBRATION.md "Willow"): the
// whole platform with the prototype's PCIe 1.1 x8 link, eight SPUs booting SPU-OS, the Base-IO
// and Direct-IO apps installed by the host kernel (platform/willow_stack). Each configuration
// runs in a child process (run_isolated): SystemC elaborates once per process.
//  - Base-IO bandwidth: three kernel threads stream through the block device (8 KiB RPCs, 16 in
//    flight each), writes then reads, as a fraction of the link's bandwidth each way.
//  - Small reads: 4 KiB Base-IO reads, 16 in flight per thread: IOPS.
//  - Direct-IO against Base-IO through the file system: one thread, one access at a time, 512 B
//    reads and writes (throughput = 1 / latency) and the 4 KiB read latency.
//  - The 4 KiB read's time per part (host, PCIe, ring, SPU software, storage) for both paths:
//    each part's busy time during the reads, the host's part what remains of the latency.
#include "core/error.hpp"
#include "experiments/experiment.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "experiments/isolated.hpp"
#include "platform/willow_prototype.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/apps/block_io_abi.h"

namespace canopy::experiments {

using namespace platform;

using nlohmann::json;

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr unsigned kThreads = 3;  // host cores 1..3 (core 0 runs the kernel's notice thread)
constexpr uint64_t kStripe = BLOCK_IO_STRIPE_BYTES;
constexpr uint64_t kStagger = 3 * kStripe;  // thread t starts 3t SPUs further

json bandwidth_run(bool quick, const PlatformConfig& cfg) {
    PrototypeMachine m(cfg, "willow-io");
    const uint64_t per_thread = (quick ? 1 : 4) * kMiB;
    const uint64_t small_reads = quick ? 512 : 1024;  // per thread
    Barrier barrier{kThreads, m.platform->host};
    Span write, read, small;
    sw::StoreStats before, after;  // the flash store's counters around the phases
    unsigned finished = 0, running = 0;
    for (unsigned t = 0; t < kThreads; ++t) {
        auto& proc = m.platform->host.kernel.create_process("io" + std::to_string(t));
        m.platform->host.cores[1 + t]->run(proc, [&, t](host::HostCore& cpu) {
            const WillowStack::User user(*m.stack, running);
            m.stack->wait_ready(cpu);
            sw::BlockIo& io = *m.stack->kernel.on(cpu).base_io;
            // Clear of the file system's blocks; the threads start on different SPUs.
            const uint64_t base = (t + 1) * 64 * kMiB + t * kStagger;
            std::vector<uint8_t> data(per_thread);
            for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + t);
            if (t == 0) before = m.stack->store_stats(cpu);
            barrier.wait(cpu);
            double t0 = now_ns(cpu);
            io.write(base, data.data(), per_thread);
            write.add(t0, now_ns(cpu));
            barrier.wait(cpu);
            uint64_t got = 0;
            t0 = now_ns(cpu);
            io.read_in_place(base, per_thread, [&](uint64_t, uint64_t, uint32_t n) { got += n; });
            read.add(t0, now_ns(cpu));
            if (got != per_thread) throw std::runtime_error("willow-io: short Base-IO read");
            barrier.wait(cpu);
            sw::BlockIoConfig qd;
            qd.max_piece_bytes = 4 * kKiB;  // one RPC per 4 KiB page, 16 in flight
            sw::BlockIo pages(io.hre(), m.stack->cfg.base_io_app, io.geometry(), qd);
            t0 = now_ns(cpu);
            pages.read_in_place(base, small_reads * 4 * kKiB, [](uint64_t, uint64_t, uint32_t) {});
            small.add(t0, now_ns(cpu));
            if (++finished == kThreads) after = m.stack->store_stats(cpu);
        });
    }
    m.platform->simulate();  // GDB's Ctrl-C is heard between slices
    if (finished != kThreads) throw SimulationError("willow-io: " + m.platform->host.first_fault());
    const double bytes = double(per_thread) * kThreads;
    // Bytes programmed per byte written: the FTL's own amplification (GC) times the padding of
    // pages written through part-full (an 8 KiB piece fills half a 16 KiB page).
    const double programmed =
        double(after.programs - before.programs) * m.cfg.nand.geometry.page_bytes;
    return {{"write_amplification", cfg.ssd.store.flash ? programmed / bytes : 0.0},
            {"write_gbps", bytes / write.ns()},
            {"read_gbps", bytes / read.ns()},
            {"small_iops", double(small_reads * kThreads) / small.ns() * 1e9},
            {"link_gbps", m.link_gbps()}};
}

// Small accesses from kThreads threads of one process, each in its own part of one file, each
// thread one access at a time: throughput through the file system and through libDirectIO.
json small_run(bool quick, const PlatformConfig& cfg) {
    PrototypeMachine m(cfg, "willow-io");
    const unsigned n = quick ? 16 : 64;  // accesses per thread and phase
    const uint64_t part = 8 * kStripe, bytes = 512;
    auto& proc = m.platform->host.kernel.create_process("user");
    Barrier barrier{kThreads, m.platform->host};
    Span fs_read, fs_write, dio_read, dio_write;
    bool created = false;
    unsigned finished = 0, running = 0;
    for (unsigned t = 0; t < kThreads; ++t) {
        m.platform->host.cores[1 + t]->run(proc, [&, t](host::HostCore& cpu) {
            const WillowStack::User user(*m.stack, running);
            m.stack->wait_ready(cpu);
            auto& fs = m.stack->fs;
            if (t == 0) fs.create(cpu, "/small", part * kThreads, proc.pid, 0600), created = true;
            while (!created) cpu.compute_ns(1000);
            std::vector<uint8_t> buf(bytes, uint8_t(t));
            auto phase = [&](Span& span, auto&& op) {
                barrier.wait(cpu);
                const double t0 = now_ns(cpu);
                // Step i of thread t on SPU (i + 3t) % 8: the threads never share an SPU.
                for (unsigned i = 0; i < n; ++i) op(t * part + (i * kStripe + t * kStagger) % part);
                span.add(t0, now_ns(cpu));
            };
            const int fd = fs.open(cpu, "/small", O_RDWR);
            phase(fs_read, [&](uint64_t at) { fs.pread(cpu, fd, buf.data(), bytes, at); });
            phase(fs_write, [&](uint64_t at) { fs.pwrite(cpu, fd, buf.data(), bytes, at); });
            fs.close(cpu, fd);
            auto dio = m.stack->direct_io(cpu);
            const int dfd = dio->open("/small", O_RDWR);
            phase(dio_read, [&](uint64_t at) { dio->pread(dfd, buf.data(), bytes, at); });
            phase(dio_write, [&](uint64_t at) { dio->pwrite(dfd, buf.data(), bytes, at); });
            dio->close(dfd);
            ++finished;
        });
    }
    m.platform->simulate();  // GDB's Ctrl-C is heard between slices
    if (finished != kThreads) throw SimulationError("willow-io: " + m.platform->host.first_fault());
    return {{"read_ratio", fs_read.ns() / dio_read.ns()},
            {"write_ratio", fs_write.ns() / dio_write.ns()}};
}

// One thread, one access at a time: mean latencies through the file system and Direct-IO, and
// the busy time of each part of the machine during the 4 KiB reads.
json latency_run(bool quick, const PlatformConfig& cfg) {
    PrototypeMachine m(cfg, "willow-io");
    const unsigned n = quick ? 16 : 64;
    const uint64_t file_bytes = 1 * kMiB;
    json out;
    Willow& ssd = m.platform->device.ssd;
    const std::string ring = ssd.ring.name(), dram = ssd.dram.name(),
                      link = m.platform->link.name();
    // The parts' busy time (ns) and the SPUs' instructions so far.
    auto parts = [&] {
        double spu_insns = 0;
        for (const auto& s : ssd.spus) spu_insns += double(s->core.instret());
        double storage = 0, wire = 0;
        if (cfg.ssd.store.flash) {  // the dies' sensing and programming and the channels' transfers
            const nand::Geometry& g = m.cfg.nand.geometry;
            for (uint32_t c = 0; c < g.channels; ++c) {
                const std::string ch = "nand.ch" + std::to_string(c);
                storage += m.stat(ch, "bus");
                for (uint32_t d = 0; d < g.dies_per_channel; ++d)
                    storage += m.stat(ch + ".die" + std::to_string(d), "array");
            }
        } else {
            for (uint32_t b = 0; b < m.cfg.ssd.dram.banks; ++b)
                storage += m.stat(dram, "bank" + std::to_string(b));
        }
        for (const std::string d : {".downstream", ".upstream"})
            wire += m.stat(link + d, "tlp_bytes") + m.stat(link + d, "dllp_bytes");
        return json{{"ring", m.stat(ring, "busy")},
                    {"storage", storage},
                    {"spu_ns", spu_insns * 1e3 / m.cfg.ssd.spu.core.clock_mhz},
                    {"pcie_ns", wire * m.cfg.pcie.ns_per_byte()}};
    };
    m.run_user("willow-io", [&](host::HostCore& cpu) {
        m.stack->fs.create(cpu, "/data", file_bytes, cpu.process().pid, 0600);
        std::vector<uint8_t> buf(4 * kKiB, 0x5a);
        auto mean = [&](auto&& op) {
            const double t0 = now_ns(cpu);
            for (unsigned i = 0; i < n; ++i) op(uint64_t(i) * 8 * kKiB % file_bytes);
            return (now_ns(cpu) - t0) / n;
        };
        auto breakdown = [&](auto&& op) {
            const json before = parts();
            const double lat = mean(op);
            const json after = parts();
            json b = {{"latency", lat}};
            double device = 0;
            for (const char* k : {"ring", "storage", "spu_ns", "pcie_ns"}) {
                const double v = (double(after[k]) - double(before[k])) / n;
                b[k] = v;
                device += v;
            }
            b["host"] = lat - device;
            return b;
        };
        const int fd = m.stack->fs.open(cpu, "/data", O_RDWR);
        auto& fs = m.stack->fs;
        // Written first, so that a read on the flash senses a page (an unmapped one reads as
        // erased without touching the flash).
        const std::vector<uint8_t> content(file_bytes, 0xA7);
        fs.pwrite(cpu, fd, content.data(), file_bytes, 0);
        out["fs_read_4k"] =
            breakdown([&](uint64_t at) { fs.pread(cpu, fd, buf.data(), 4 * kKiB, at); });
        fs.close(cpu, fd);
        auto dio = m.stack->direct_io(cpu);
        const int dfd = dio->open("/data", O_RDWR);
        out["dio_read_4k"] =
            breakdown([&](uint64_t at) { dio->pread(dfd, buf.data(), 4 * kKiB, at); });
        dio->close(dfd);
    });
    return out;
}

}  // namespace

std::vector<ExpRow> willow_io(const ExpOptions& o) {
    const bool quick = o.quick;
    // The prototype's store (SSD memory as emulated PCM), compared with the paper.
    const PlatformConfig pcm = o.platform();
    const json bw = run_isolated([&] { return bandwidth_run(quick, pcm); }, "bandwidth");
    const json lat = run_isolated([&] { return latency_run(quick, pcm); }, "latency");
    const json small = run_isolated([&] { return small_run(quick, pcm); }, "512 B I/O");
    const double link = bw["link_gbps"];
    std::vector<ExpRow> rows = {
        {"W.1", "Base-IO read bandwidth / PCIe bandwidth", double(bw["read_gbps"]) / link, 0.78,
         "x"},
        {"W.2", "Base-IO write bandwidth / PCIe bandwidth", double(bw["write_gbps"]) / link, 0.73,
         "x"},
        {"W.3", "Base-IO 4 KiB reads (3 threads x 16 in flight)", double(bw["small_iops"]) / 1e3,
         388, "K IOPS"},
        {"W.4", "Direct-IO / Base-IO (file system) 512 B read throughput, 3 threads",
         double(small["read_ratio"]), 1.66, "x"},
        {"W.5", "Direct-IO / Base-IO (file system) 512 B write throughput, 3 threads",
         double(small["write_ratio"]), 8.0, "x"},
        {"W.6", "Direct-IO / Base-IO (file system) 4 KiB read latency",
         double(lat["dio_read_4k"]["latency"]) / double(lat["fs_read_4k"]["latency"]), 0.65, "x"},
        {"W.7", "Base-IO read bandwidth", double(bw["read_gbps"]), std::nullopt, "GB/s"},
        {"W.8", "Base-IO write bandwidth", double(bw["write_gbps"]), std::nullopt, "GB/s"},
        // Published for the prototype's PCIe 1.1 x8 (another link is not the paper's machine).
        {"W.9",
         "PCIe " + std::to_string(pcm.pcie.generation) + (pcm.pcie.generation == 1 ? ".1" : ".0") +
             " x" + std::to_string(pcm.pcie.lanes) + " bandwidth, one way",
         link, 2.0, "GB/s"},
    };
    int id = 10;
    auto breakdown = [&](const json& l, const std::string& on) {
        for (const char* path : {"fs_read_4k", "dio_read_4k"}) {
            const json& b = l[path];
            const std::string who =
                std::string(path[0] == 'f' ? "Base-IO (file system)" : "Direct-IO") + on;
            auto add = [&](const char* key, const std::string& part) {
                rows.push_back({"W." + std::to_string(id++), who + " 4 KiB read: " + part,
                                double(b[key]), std::nullopt, "ns"});
            };
            add("latency", "latency");
            add("host", "host (what the other parts leave)");
            add("pcie_ns", "PCIe (wire time of the TLPs)");
            add("ring", "ring (busy)");
            add("spu_ns", "SPU software (instructions at 125 MHz)");
            add("storage", on.empty() ? "storage (bank busy)" : "storage (dies and channels busy)");
        }
    };
    breakdown(lat, "");
    // The same machine storing on the NAND array through the SPUs' FTL: no published values
    // (Willow's prototype had no flash); the medium's times now dominate.
    PlatformConfig flash = pcm;
    store_on_flash(flash);
    const json fbw = run_isolated([&] { return bandwidth_run(quick, flash); }, "bandwidth on NAND");
    const json flat = run_isolated([&] { return latency_run(quick, flash); }, "latency on NAND");
    const json fsmall = run_isolated([&] { return small_run(quick, flash); }, "512 B I/O on NAND");
    const std::vector<ExpRow> nand = {
        {"W.N1", "on NAND: Base-IO read bandwidth", double(fbw["read_gbps"]), std::nullopt, "GB/s"},
        {"W.N2", "on NAND: Base-IO write bandwidth", double(fbw["write_gbps"]), std::nullopt,
         "GB/s"},
        {"W.N3", "on NAND: Base-IO 4 KiB reads (3 threads x 16 in flight)",
         double(fbw["small_iops"]) / 1e3, std::nullopt, "K IOPS"},
        {"W.N4", "on NAND: bytes programmed per byte written (streaming 8 KiB writes)",
         double(fbw["write_amplification"]), std::nullopt, "x"},
        {"W.N5", "on NAND: Direct-IO / Base-IO (file system) 512 B read throughput",
         double(fsmall["read_ratio"]), std::nullopt, "x"},
        {"W.N6", "on NAND: Direct-IO / Base-IO (file system) 512 B write throughput",
         double(fsmall["write_ratio"]), std::nullopt, "x"},
    };
    rows.insert(rows.end(), nand.begin(), nand.end());
    breakdown(flat, " on NAND");
    return rows;
}

Experiment willow_io_experiment() {
    return {"willow-io",
            "Willow Sec. 4.1-4.2 (Figures 4-5): Base-IO bandwidth as a share of PCIe 1.1 x8 and "
            "4 KiB read IOPS, Direct-IO against Base-IO through the host file system (512 B reads "
            "and writes, 4 KiB read latency), and the 4 KiB read's time per part",
            willow_io,
            {},
            prototype_config,
            true};
}

}  // namespace canopy::experiments
