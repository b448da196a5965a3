#include "link/command_status.hpp"

#include <cmath>

namespace canopy::link::command_status {

core::Register status_register(uint64_t offset, const std::string& what) {
    using core::Access;
    return {"status",
            offset,
            32,
            Access::RW,
            0,
            "engine state; start clears done and error",
            {
                {"busy",
                 0,
                 1,
                 "a " + what + " is running: set by start, cleared at completion",
                 {},
                 Access::RO},
                {"done",
                 1,
                 1,
                 "the last " + what + " completed (with or without error)",
                 {},
                 Access::W1C},
                {"error", 2, 1, "the last " + what + " failed: see error_code", {}, Access::W1C},
                {"overrun", 3, 1, "start was written while busy and ignored", {}, Access::W1C},
            }};
}

bool begin(core::RegisterBank& bank, core::Counter& overruns) {
    const uint64_t status = bank.read("status");
    if (status & kBusy) {
        overruns.add();
        bank.write("status", status | kOverrun);
        return false;
    }
    bank.write("status", (status & ~(kDone | kError)) | kBusy);
    return true;
}

void finish(core::RegisterBank& bank, bool failed, double latency_ns) {
    bank.write("completed", bank.read("completed") + 1);  // wraps at 32 bits
    bank.write("last_latency_ns", uint64_t(std::llround(latency_ns)));
    uint64_t status = (bank.read("status") & ~kBusy) | kDone;
    if (failed) status |= kError;
    bank.write("status", status);
}

}  // namespace canopy::link::command_status
