// The CCIX Traffic Generator (CTG) of the CCIX-vs-PCIe paper (seeds/003 Section III: "accepts
// requests (type, virtual address, length) from a software API's startTrans call, issues them
// and captures the time until the response arrives"; a transaction counts as complete only when
// all its data has arrived), used for the latency experiments of Section IV.
//
// Each request is a read or write of `bytes` at `address`, issued one of two ways:
//   Dma     a descriptor on the device's DMA engine (read: host -> device into the CTG's device
//           buffer; write: device -> host from it) - the paper's PCIe-DMA path
//   Direct  one load/store transaction on `direct_initiator` (towards the link now, the CCIX
//           request agent later) - the paper's CCIX path
// A run issues `count` requests one after another, request i+1 starting `gap` after request i
// completed, at addresses advancing by `stride_bytes`. Every latency goes into a
// core::Distribution per type and direction and into latencies_ns() for experiments.
//
// Loosely timed like the link: run() never calls wait(). It starts at sc_time_stamp() + the
// given delay and returns with the delay advanced to the end of the last request.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "link/dma_engine.hpp"

namespace canopy::link {

enum class CtgAccess : uint8_t { Dma, Direct };

struct CtgConfig {
    // Device-memory address of the CTG's buffer (DMA requests read into / write from it).
    uint64_t device_buffer_address = 0;
    double issue_ns = 0.0;           // assumed 0: the CTG's own time from startTrans to the request
    void describe(core::Params& p);  // under "link.ctg."
};

struct CtgRequest {
    CtgAccess access = CtgAccess::Direct;
    bool write = false;
    uint64_t address = 0;  // host address (virtual or physical, as the path expects)
    uint64_t bytes = 64;
    uint32_t count = 1;
    sc_core::sc_time gap = sc_core::SC_ZERO_TIME;  // after each request completes
    uint64_t stride_bytes = 0;                     // address step between requests
};

struct CtgSample {
    CtgAccess access;
    bool write, ok;
    uint64_t address, bytes;
    double start_ns, latency_ns;
};

class TrafficGenerator : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<TrafficGenerator> direct_initiator;

    // `dma` may be null when only Direct requests are issued.
    TrafficGenerator(sc_core::sc_module_name name, const CtgConfig& cfg, core::Services& services,
                     DmaEngine* dma = nullptr);

    // Issues the requests; returns how many completed without error.
    uint32_t run(const CtgRequest& req, sc_core::sc_time& delay);

    const std::vector<CtgSample>& samples() const { return samples_; }
    std::vector<double> latencies_ns() const;  // of every sample, in issue order
    void clear() { samples_.clear(); }

  private:
    bool issue_direct(bool write, uint64_t address, uint64_t bytes, sc_core::sc_time& delay);

    CtgConfig cfg_;
    DmaEngine* dma_;
    const sc_core::sc_time issue_;
    std::vector<uint8_t> data_;
    std::vector<CtgSample> samples_;
    core::Counter &requests_, &errors_;
    core::Distribution* latency_[2][2];  // [access][write]
};

}  // namespace canopy::link
