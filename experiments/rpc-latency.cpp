#include "experiments/experiment.hpp"

#include <fcntl.h>

#include <nlohmann/json.hpp>
#include <string>

#include "experiments/isolated.hpp"
#include "platform/willow_prototype.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::experiments {

using namespace platform;

using nlohmann::json;

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

// Mean round trips (ns) of each kind of access, and the null RPC's device-side counts, with the
// queues served by doorbells or (`coherent`) over CCIX.
json run(PlatformConfig cfg, bool quick, bool coherent) {
    cfg.software.willow_coherent_queues = coherent;
    PrototypeMachine m(cfg, "rpc-latency");
    const unsigned n = quick ? 16 : 128;
    const std::string core1 = m.platform->host.cores[1]->name();
    json out;
    m.run_user("rpc-latency", [&](host::HostCore& cpu) {
        auto mean = [&](auto&& op) {
            op(0);  // warm: translations, lines, the SPU's code
            const double t0 = now_ns(cpu);
            for (unsigned i = 0; i < n; ++i) op(i);
            return (now_ns(cpu) - t0) / n;
        };
        sw::Hre hre(cpu, m.stack->driver.open(cpu));
        const double writes0 = m.stat(core1, "mmio.writes"),
                     snoops0 = m.stat("device.ra", "snoops");
        out["null"] = mean([&](unsigned i) {
            const auto r = hre.call(uint8_t(i % m.cfg.ssd.spus), SPU_OS_RPC_ID(0, SPU_OS_RPC_PING),
                                    nullptr, 0);
            if (!r.ok() || r.result != SPU_OS_ABI_VERSION)
                throw host::HostFault("rpc-latency: PING answered " + std::to_string(r.result));
        });
        out["null_doorbells"] = (m.stat(core1, "mmio.writes") - writes0) / (n + 1);
        out["null_snoops"] = (m.stat("device.ra", "snoops") - snoops0) / (n + 1);
        std::vector<uint8_t> buf(4 * kKiB, 0x5a), back(4 * kKiB);
        // Each access on the next SPU (a stripe unit apart), clear of the file system's blocks.
        sw::BlockIo& io = *m.stack->kernel.on(cpu).base_io;
        auto block = [&](unsigned i) {
            return 64 * kMiB + uint64_t(i) * io.geometry().stripe_bytes;
        };
        out["base_write"] = mean([&](unsigned i) { io.write(block(i), buf.data(), 4 * kKiB); });
        out["base_read"] = mean([&](unsigned i) { io.read(block(i), back.data(), 4 * kKiB); });
        if (back != buf) throw host::HostFault("rpc-latency: Base-IO read back other data");
        // Under load: one RPC per 4 KiB page, 16 in flight, over all SPUs.
        sw::BlockIoConfig qd;
        qd.max_piece_bytes = 4 * kKiB;
        sw::BlockIo pages(io.hre(), m.stack->cfg.base_io_app, io.geometry(), qd);
        const uint64_t streamed = (quick ? 64 : 512) * 4 * kKiB;
        uint64_t got = 0;
        const double t0 = now_ns(cpu);
        pages.read_in_place(64 * kMiB, streamed,
                            [&](uint64_t, uint64_t, uint32_t bytes) { got += bytes; });
        if (got != streamed) throw host::HostFault("rpc-latency: a short Base-IO stream");
        out["base_iops"] = double(streamed / (4 * kKiB)) / (now_ns(cpu) - t0) * 1e9;
        auto& fs = m.stack->fs;
        const uint64_t file_bytes = 2 * kMiB;
        fs.create(cpu, "/data", file_bytes, cpu.process().pid, 0600);
        auto dio = m.stack->direct_io(cpu);
        const int fd = dio->open("/data", O_RDWR);
        auto at = [&](unsigned i) { return uint64_t(i) * 8 * kKiB % file_bytes; };
        out["dio_write"] = mean([&](unsigned i) { dio->pwrite(fd, buf.data(), 4 * kKiB, at(i)); });
        out["dio_read"] = mean([&](unsigned i) { dio->pread(fd, back.data(), 4 * kKiB, at(i)); });
        if (back != buf) throw host::HostFault("rpc-latency: Direct-IO read back other data");
        dio->close(fd);
    });
    return out;
}

}  // namespace

PlatformConfig rpc_latency_machine() {
    PlatformConfig c = prototype_config();
    c.pcie = PlatformConfig().pcie;  // the CCIX paper's PCIe 4.0 x8
    return c;
}

std::vector<ExpRow> rpc_latency(const ExpOptions& o) {
    const bool quick = o.quick;
    const PlatformConfig cfg = o.platform();
    const json pcie = run_isolated([&] { return run(cfg, quick, false); }, "PCIe doorbells");
    const json ccix = run_isolated([&] { return run(cfg, quick, true); }, "CCIX coherent queues");
    std::vector<ExpRow> rows;
    int id = 1;
    const std::pair<const char*, const char*> kinds[] = {
        {"null", "null RPC (SPU-OS PING)"},     {"base_read", "Base-IO 4 KiB read"},
        {"base_write", "Base-IO 4 KiB write"},  {"dio_read", "Direct-IO 4 KiB read"},
        {"dio_write", "Direct-IO 4 KiB write"},
    };
    for (const auto& [key, what] : kinds) {
        const double d = double(pcie[key]) / 1e3, c = double(ccix[key]) / 1e3;
        rows.push_back({"R." + std::to_string(id++), std::string(what) + ", PCIe doorbells", d,
                        std::nullopt, "us"});
        rows.push_back({"R." + std::to_string(id++), std::string(what) + ", CCIX coherent queues",
                        c, std::nullopt, "us"});
        rows.push_back({"R." + std::to_string(id++), std::string(what) + ": CCIX / doorbells",
                        c / d, std::nullopt, "x"});
    }
    const double di = double(pcie["base_iops"]) / 1e3, ci = double(ccix["base_iops"]) / 1e3;
    rows.push_back({"R." + std::to_string(id++),
                    "Base-IO 4 KiB reads, 16 in flight on one HRE, PCIe doorbells", di,
                    std::nullopt, "K IOPS"});
    rows.push_back({"R." + std::to_string(id++),
                    "Base-IO 4 KiB reads, 16 in flight on one HRE, CCIX coherent queues", ci,
                    std::nullopt, "K IOPS"});
    rows.push_back(
        {"R." + std::to_string(id++), "the same: CCIX / doorbells", ci / di, std::nullopt, "x"});
    rows.push_back({"R." + std::to_string(id++), "null RPC: host device writes per RPC, doorbells",
                    double(pcie["null_doorbells"]), std::nullopt, ""});
    rows.push_back({"R." + std::to_string(id++), "null RPC: host device writes per RPC, CCIX",
                    double(ccix["null_doorbells"]), std::nullopt, ""});
    rows.push_back({"R." + std::to_string(id++),
                    "null RPC: snoops the request agent takes per RPC, CCIX",
                    double(ccix["null_snoops"]), std::nullopt, ""});
    return rows;
}

Experiment rpc_latency_experiment() {
    return {"rpc-latency",
            "Willow's RPCs through PCIe doorbells against coherent queues over CCIX (the bridge "
            "watches the submission queues through the device's request agent): round trip of a "
            "null RPC, Base-IO and Direct-IO 4 KiB reads and writes, one at a time, on PCIe 4.0 x8",
            rpc_latency,
            {},
            rpc_latency_machine,
            true};
}

}  // namespace canopy::experiments
