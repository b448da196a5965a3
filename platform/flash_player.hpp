// Sends FlashOps to the NAND array, one initiator socket per channel, the way a simple flash
// controller with one command queue per die would: each die's commands go out in script order,
// each once the die is ready (R/B#); the dies' queues run side by side, so dies overlap and
// channels interleave; `sync` is a barrier for all queues. Each queue is a thread that runs ahead
// of simulated time by at most a quantum (temporal decoupling, tlm_quantumkeeper).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <functional>
#include <ostream>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "platform/flash_op.hpp"

namespace canopy::platform {

class FlashPlayer : public sc_core::sc_module {
  public:
    sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<FlashPlayer>> channel;

    FlashPlayer(sc_core::sc_module_name name, uint32_t channels, uint32_t dies_per_channel,
                core::Services& services, sc_core::sc_time quantum);

    // The ops to run, in order. `on_done` (optional) runs after the last one.
    void load(std::vector<FlashOp> ops, std::string script_name = "");
    const std::vector<FlashResult>& results() const { return results_; }
    const std::vector<FlashOp>& ops() const { return ops_; }
    // Lines whose outcome differed from what the script expected (refused, or expect-fail passed).
    const std::vector<std::string>& failures() const { return failures_; }
    sc_core::sc_time finished_at() const { return finished_at_; }
    // Every die's queue has run its last op (true before elaboration only with no channels).
    bool finished() const { return running_ == 0; }
    // One line per op, in script order (after the run).
    void print_report(std::ostream& os) const;

  private:
    void before_end_of_elaboration() override;
    void queue(uint32_t channel, uint32_t die);
    void barrier(const sc_core::sc_time& finished);
    void send(FlashOp& op, FlashResult& r, tlm::tlm_generic_payload& gp, sc_core::sc_time& local);
    void report(std::ostream& os, const FlashOp& op, const FlashResult& r) const;

    uint32_t dies_per_channel_;
    core::Services& services_;
    sc_core::sc_time quantum_;
    std::string script_name_;
    std::vector<FlashOp> ops_;
    std::vector<FlashResult> results_;
    std::vector<std::string> failures_;
    std::vector<size_t> syncs_;  // indices of the sync ops, then ops_.size()
    sc_core::sc_time finished_at_;
    // The barrier: queues that reached the current sync, and the event that releases them.
    size_t arrived_ = 0;
    size_t running_ = 0;  // die queues not yet through their ops
    sc_core::sc_event released_;
    int track_;
};

// SHA-256 of bytes as lowercase hex (OpenSSL).
std::string sha256_hex(const uint8_t* data, size_t n);

}  // namespace canopy::platform
