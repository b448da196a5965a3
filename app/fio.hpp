// `canopy fio`: an fio job file (sw/host/fio_job) run on the whole platform
// (scenarios/fio_run), reported as fio reports it (normal or JSON output) and written to
// OUT/fio.json beside the run's stats.json.
#pragma once

#include <string>

#include "app/session.hpp"

namespace canopy::app {

struct FioOptions {
    RunOptions run;
    std::string job_file;
    std::string output_format = "normal";  // or "json": fio's --output-format
};

// Returns the exit status: 0, or 1 when a job failed (an I/O error, a host fault). Input errors
// (the job file, the options) throw InputError before anything is built.
int run_fio(const FioOptions& opt);

}  // namespace canopy::app
