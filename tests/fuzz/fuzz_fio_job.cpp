// An fio job file (sw/host/fio_job.cpp, `canopy fio`): any text is read or refused as an
// InputError, never a crash, a hang or another exception; what is read keeps the reader's bounds.
#include <sstream>

#include "fuzz.hpp"
#include "sw/host/fio_job.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text = fuzz::text(data, size);
    fuzz::refused_only_as_input_error([&] {
        std::istringstream in(text);
        const sw::FioJobFile f = sw::parse_fio_job_file(in, "fuzz.fio");
        for (const sw::FioJob& j : f.jobs) {
            uint32_t total = 0;
            for (const auto& [bs, pct] : j.bssplit) {
                if (bs < sw::kFioMinBlockBytes || bs > sw::kFioMaxBlockBytes) __builtin_trap();
                total += pct;
            }
            if (total != 100 || j.iodepth < 1 || j.iodepth > 1024 || j.numjobs < 1 ||
                j.numjobs > sw::kFioMaxNumjobs || j.rwmixread > 100)
                __builtin_trap();
        }
    });
    return 0;
}
