// The host's controller of message-signalled interrupts (PCIe MSI/MSI-X, as an APIC or a GIC ITS
// receives them): each vector counts the interrupts it took and wakes the program that waits on
// it. A device raises vector v with the posted write of its MSI; the write's flight over the link
// is msi_latency_ns after the completion it signals, which the device has written before.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <systemc>

#include "core/config.hpp"

namespace canopy::host {

struct MsiConfig {
    double msi_latency_ns = 500.0;  // assumed: a posted write's flight over the link
    // Interrupt entry, the handler and waking the waiting thread (assumed: a few microseconds on
    // Linux, interrupt to a woken thread running).
    double wake_ns = 4000.0;
    void describe(core::Params& p);  // relative to the caller's scope ("host.msi.")
};

class MsiController {
  public:
    explicit MsiController(const MsiConfig& cfg) : cfg_(cfg) {}

    // The device's MSI for `vector`, sent at `at` (the device's local time).
    void raise(uint32_t vector, const sc_core::sc_time& at);
    // Interrupts `vector` has taken so far (counted when raised: a waiter that saw the count
    // change since it last looked must not sleep).
    uint64_t count(uint32_t vector) const;
    // Notified when an interrupt for `vector` arrives.
    const sc_core::sc_event& event(uint32_t vector);
    const MsiConfig& config() const { return cfg_; }

  private:
    struct Vector {
        uint64_t count = 0;
        sc_core::sc_event event;
    };
    Vector& vector(uint32_t v);

    MsiConfig cfg_;
    std::map<uint32_t, std::unique_ptr<Vector>> vectors_;
};

}  // namespace canopy::host
