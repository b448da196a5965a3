#include "app/replay.hpp"

#include <fstream>
#include <iostream>

#include "app/willow_run.hpp"
#include "core/error.hpp"
#include "scenarios/block_replay.hpp"
#include "sw/host/block_trace.hpp"
#include "sw/host/io_engine.hpp"

namespace canopy::app {

using scenarios::BlockReplay;

int run_replay(const ReplayOptions& opt) {
    if (opt.path != "base-io" && opt.path != "direct-io")
        throw InputError("canopy replay", "--path " + opt.path,
                         "unknown path; it is base-io or direct-io");
    if (opt.iodepth == 0 || opt.iodepth > sw::IoEngineConfig::kMaxIodepth)
        throw InputError("canopy replay", "--iodepth " + std::to_string(opt.iodepth),
                         "needs 1 to " + std::to_string(sw::IoEngineConfig::kMaxIodepth) +
                             " requests in flight per thread");
    // The trace first: a bad line costs nothing.
    sw::MsrOptions mo;
    mo.disk = opt.disk;
    mo.max_requests = opt.max_requests;
    const sw::BlockTrace trace = sw::read_msr_trace(opt.trace, mo);

    WillowRun w(opt.run, "canopy replay");
    w.load();
    if (opt.threads == 0 || opt.threads >= w.cfg.host.cores)
        throw InputError("canopy replay", "--threads " + std::to_string(opt.threads),
                         "needs 1 to " + std::to_string(w.cfg.host.cores - 1) +
                             " threads: host.core" + std::to_string(BlockReplay::kKernelCore) +
                             " runs the kernel, host.cores is " + std::to_string(w.cfg.host.cores));
    w.build();
    BlockReplay replay(*w.platform, *w.stack, trace,
                       {opt.path, opt.threads, opt.timed, opt.iodepth});
    if (!w.simulate()) return 1;

    const nlohmann::json r = replay.report();
    {
        std::ofstream f(opt.run.out_dir + "/replay.json");
        f << r.dump(2) << "\n";
    }
    replay.print(std::cout, r);
    std::cout << "wrote " << opt.run.out_dir << "/replay.json\n";
    return w.finish("replay " + trace.source, replay.finished());
}

}  // namespace canopy::app
