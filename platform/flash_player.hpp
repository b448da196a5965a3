// Sends FlashOps to the NAND array, one initiator socket per channel, the way a simple flash
// controller would: a command to a die goes out once that die is ready (R/B#), commands to other
// dies go out meanwhile, so dies overlap and channels interleave; `sync` waits for all dies.
// Runs ahead of simulated time (temporal decoupling) and yields every quantum.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "core/services.hpp"
#include "platform/flash_op.hpp"

namespace canopy::platform {

class FlashPlayer : public sc_core::sc_module {
public:
    sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<FlashPlayer>> channel;

    FlashPlayer(sc_core::sc_module_name name, uint32_t channels, uint32_t page_bytes,
                core::Services& services, sc_core::sc_time quantum, std::ostream* log);

    // The ops to run, in order. `on_done` (optional) runs after the last one.
    void load(std::vector<FlashOp> ops, std::string script_name = "");
    const std::vector<FlashResult>& results() const { return results_; }
    const std::vector<FlashOp>& ops() const { return ops_; }
    // Lines whose outcome differed from what the script expected (refused, or expect-fail passed).
    const std::vector<std::string>& failures() const { return failures_; }
    sc_core::sc_time finished_at() const { return finished_at_; }

private:
    void run();
    void report(const FlashOp& op, const FlashResult& r) const;

    uint32_t page_bytes_;
    core::Services& services_;
    sc_core::sc_time quantum_;
    std::ostream* log_;
    std::string script_name_;
    std::vector<FlashOp> ops_;
    std::vector<FlashResult> results_;
    std::vector<std::string> failures_;
    sc_core::sc_time finished_at_;
    int track_;
};

// SHA-256 of bytes as lowercase hex (OpenSSL).
std::string sha256_hex(const uint8_t* data, size_t n);

}  // namespace canopy::platform
