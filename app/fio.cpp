#include "app/fio.hpp"

#include <fstream>
#include <iostream>

#include "app/willow_run.hpp"
#include "core/error.hpp"
#include "scenarios/fio_run.hpp"
#include "sw/host/fio_job.hpp"

namespace canopy::app {

int run_fio(const FioOptions& opt) {
    if (opt.output_format != "normal" && opt.output_format != "json")
        throw InputError("canopy fio", "--output-format " + opt.output_format,
                         "unknown format; it is normal or json");
    // The job file first: a bad line costs nothing.
    const sw::FioJobFile jobs = sw::read_fio_job_file(opt.job_file);
    WillowRun w(opt.run, "canopy fio");
    w.load();
    w.build();
    scenarios::FioRun run(*w.platform, *w.stack, jobs, w.cfg.sim.seed);
    if (!w.simulate()) return 1;

    const nlohmann::json r = run.report();
    run.write_logs(opt.run.out_dir);
    {
        std::ofstream f(opt.run.out_dir + "/fio.json");
        f << r.dump(2) << "\n";
    }
    if (opt.output_format == "json")
        std::cout << r.dump(2) << "\n";
    else
        run.print(std::cout, r);
    bool ok = run.finished();
    for (const auto& j : r["jobs"]) ok = ok && j["error"].get<int>() == 0;
    return w.finish("fio " + jobs.source, ok);
}

}  // namespace canopy::app
