// The host kernel's own HREs (Willow Section 3.1 "Willow components", "Protection and sharing"):
// an Hre is bound to the host core it was opened on, so kernel code entered from a program on
// some core (a system call: the file system, the Direct-IO kernel module) needs a kernel HRE of
// its own on that core. This keeps one per core, opened on first use, with the Base-IO block
// client the file system stores through and a WillowApps for the permission RPCs. Queue pair 0
// is different: SPU-OS sends its notices (permission misses, app faults) to HRE 0, so `boot`
// opens it first, on the core whose kernel thread serves them, and keeps it for notices and
// their permission RPCs only (a Base-IO read there would find notices among its DATA requests).
#pragma once

#include <map>
#include <memory>

#include "sw/host/block_io.hpp"
#include "sw/host/willow_apps.hpp"
#include "sw/host/willow_driver.hpp"

namespace canopy::sw {

class KernelHres {
  public:
    struct PerCore {
        HreEndpoint endpoint;
        std::unique_ptr<Hre> hre;
        std::unique_ptr<WillowApps> apps;  // PERM_ADD / PERM_REMOVE from this core
        std::unique_ptr<BlockIo> base_io;  // the block device, through the Base-IO app
    };

    // `base_io_app`: the app id Base-IO is installed as; `geometry`: the device's striping.
    KernelHres(WillowDriver& driver, uint32_t base_io_app, BlockGeometry geometry);

    // Opens the kernel's HRE on queue pair 0 (call it before any other HRE is opened) on the
    // core that will serve SPU-OS's notices; throws HostFault if queue pair 0 is taken.
    WillowApps& boot(host::HostCore& cpu);
    // The notice HRE's apps: only on the core `boot` ran on.
    WillowApps& notices(host::HostCore& cpu);
    // The calling core's kernel HRE, opened on first use.
    PerCore& on(host::HostCore& cpu);

    const BlockGeometry& geometry() const { return geometry_; }
    uint32_t spus() const { return geometry_.spus; }

  private:
    WillowDriver& driver_;
    uint32_t base_io_app_;
    BlockGeometry geometry_;
    host::HostCore* boot_cpu_ = nullptr;
    std::unique_ptr<Hre> boot_hre_;
    std::unique_ptr<WillowApps> boot_apps_;
    std::map<const host::HostCore*, PerCore> cores_;
};

}  // namespace canopy::sw
