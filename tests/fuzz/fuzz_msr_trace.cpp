// An MSR Cambridge block trace (sw/host/block_trace.cpp, `canopy replay --trace`), read whole
// and then with a disk filter and a request limit.
#include <sstream>

#include "fuzz.hpp"
#include "sw/host/block_trace.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text = fuzz::text(data, size);
    fuzz::refused_only_as_input_error([&] {
        std::istringstream in(text);
        sw::parse_msr_trace(in, "fuzz.csv");
    });
    fuzz::refused_only_as_input_error([&] {
        std::istringstream in(text);
        sw::MsrOptions opt;
        opt.disk = 1;
        opt.max_requests = 3;
        sw::parse_msr_trace(in, "fuzz.csv", opt);
    });
    return 0;
}
