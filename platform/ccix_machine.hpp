// The whole platform as the CCIX experiments use it: a small flash array (they do not touch it),
// one host process whose address space the device works in (PASID Device::kPasid), and the
// accelerator's timed operations on the request agent (the paper's CTG or lock module).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <systemc>

#include "core/services.hpp"
#include "core/sim_time.hpp"
#include "link/request_agent.hpp"
#include "platform/platform.hpp"

namespace canopy::platform {

using core::ns_of;
double now_ns();

struct Machine {
    PlatformConfig cfg;
    core::Services services;
    std::unique_ptr<Platform> platform;
    host::HostKernel::Process* proc = nullptr;
    unsigned threads = 0;

    // `base`'s flash array is made small (the CCIX experiments do not touch it).
    explicit Machine(const PlatformConfig& base = PlatformConfig());
    // Pinned huge-page memory shared by host and device (as neoDBMS allocates its lock table).
    uint64_t shared(uint64_t bytes);
    link::RequestAgent& ra() { return platform->device.ra; }
    // Runs `body` as the accelerator: a device-side thread issuing through the request agent.
    void device(std::function<void()> body);
    void host(unsigned core, host::HostProgram program);
    // Throws the first host program fault, if any.
    void check_host() const;
};

// The accelerator's operations, each waiting out its own latency; they return it in ns.
void check(const link::RaResult& r);
double dev_load(link::RequestAgent& ra, uint64_t va, uint64_t* value = nullptr);
double dev_store(link::RequestAgent& ra, uint64_t va, uint64_t v);
double dev_cas(link::RequestAgent& ra, uint64_t va, uint64_t expected, uint64_t desired);

}  // namespace canopy::platform
