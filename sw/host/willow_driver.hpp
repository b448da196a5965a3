// The host kernel's Willow driver (Willow Section 3.1 "Willow components", "Tracking
// responsibility"): it hands out host RPC endpoints (HREs), one queue pair of the SSD's PCIe
// bridge each. An HRE's ID carries its process in the high bits (the process's PID; 0 for the
// kernel's own HREs, which is what makes kernel-only RPCs possible) and its queue pair in the
// low 10 bits, so all HREs of a process share their high bits. For each HRE the driver
// allocates one pinned, physically contiguous DMA window (a 2 MiB page) holding the submission
// queue, the completion queue, the receive buffer and one payload buffer per submission slot
// (models/ssd/hre_queue.h), programs the bridge's queue-pair registers (the BAR's control
// window, declared in models/ssd/pcie_bridge.cpp) and maps the HRE's doorbell page into the
// process. The driver runs in the calling program's context as a system call would, paying
// syscall_ns on entry.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "host/host_core.hpp"
#include "host/msi_controller.hpp"

namespace canopy::sw {

// Where the SSD's bridge sits in host physical memory, and its size.
struct WillowDevice {
    uint64_t ctl_pa = 0;        // the bridge's control block
    uint64_t doorbells_pa = 0;  // doorbell page of queue pair 0; qp i is i pages above
    uint32_t queue_pairs = 0;
    uint32_t spus = 0;  // SPU i is ring node i; the bridge is node spus
    // The host's MSI controller, where the bridge's completion interrupts arrive (vector = queue
    // pair); null: completions are polled for only.
    host::MsiController* msi = nullptr;
};

// An HRE's queue sizes (all inside one 2 MiB window).
struct HreLayout {
    uint32_t sq_entries = 32;
    uint32_t cq_entries = 64;  // room for every outstanding request plus SPU requests
    uint32_t rx_bytes = 256 * 1024;
    uint32_t payload_bytes = 32 * 1024;  // per submission slot: the longest request payload
    uint64_t sq_offset() const { return 0; }
    uint64_t cq_offset() const { return uint64_t(sq_entries) * 64; }
    uint64_t rx_offset() const { return cq_offset() + uint64_t(cq_entries) * 32; }
    uint64_t payload_offset(uint32_t slot) const {
        return rx_offset() + rx_bytes + uint64_t(slot) * payload_bytes;
    }
    // Coherent queues: the line where the host publishes its CQ and RX heads (hre_queue.h).
    uint64_t shadow_offset() const { return (payload_offset(sq_entries) + 63) / 64 * 64; }
    uint64_t window_bytes() const { return shadow_offset() + 64; }
};

struct HreEndpoint {
    uint32_t hre = 0;        // the ID the bridge stamps on its requests
    uint32_t qp = 0;         // its queue pair
    uint64_t window_va = 0;  // the DMA window in the process
    uint64_t window_pa = 0;
    uint64_t doorbell_va = 0;  // its doorbell page, mapped into the process
    HreLayout layout;
    WillowDevice device;
    bool interrupts = false;  // the bridge raises the queue pair's MSI for each completion
    bool coherent = false;    // served over CCIX: no doorbells (hre_queue.h "Coherent queues")
};

struct WillowDriverConfig {
    // Entering and leaving the driver (a system call): assumed 1 us on the host.
    double syscall_ns = 1000.0;
    // Completions by interrupt [Willow 3.2: "interrupts or polling"]: an HRE with nothing to do
    // sleeps until its queue pair's MSI (host.msi) instead of polling its completion queue.
    // Needs WillowDevice::msi.
    bool interrupts = false;
    // Coherent queues: the bridge watches each HRE's submission queue over CCIX instead of
    // waiting for doorbells (models/ssd/pcie_bridge.hpp).
    bool coherent_queues = false;
    static WillowDriverConfig with_interrupts(bool on) {
        WillowDriverConfig c;
        c.interrupts = on;
        return c;
    }
};

class WillowDriver {
  public:
    explicit WillowDriver(WillowDevice device, HreLayout layout = HreLayout(),
                          WillowDriverConfig cfg = WillowDriverConfig());

    // A new HRE for the calling program's process, or one of the kernel's own (high bits 0)
    // when `kernel`. Throws HostFault when every queue pair is taken or the bridge refuses the
    // set-up.
    HreEndpoint open(host::HostCore& cpu, bool kernel = false);
    // Stops the queue pair and frees it.
    void close(host::HostCore& cpu, const HreEndpoint& hre);

    const WillowDevice& device() const { return device_; }
    const WillowDriverConfig& config() const { return cfg_; }

  private:
    struct Held {  // the driver's mutex, released when this goes
        bool& locked;
        ~Held() { locked = false; }
    };
    Held lock(host::HostCore& cpu);
    uint64_t ctl(host::HostCore& cpu);  // the control block, mapped into the caller's process
    void reg(host::HostCore& cpu, const char* name, uint64_t value);
    uint64_t reg(host::HostCore& cpu, const char* name);

    WillowDevice device_;
    HreLayout layout_;
    WillowDriverConfig cfg_;
    std::vector<bool> used_;
    bool locked_ = false;
    std::map<uint32_t, uint64_t> ctl_va_;  // per process (pid): where the control block is mapped
};

}  // namespace canopy::sw
