#include "platform/willow_stack.hpp"

#include "sw/firmware/apps/block_io_abi.h"

namespace canopy::platform {

namespace {
sw::BlockGeometry geometry(Platform& p) {
    sw::BlockGeometry g;
    g.spus = uint32_t(p.device.ssd.spus.size());
    g.bank_bytes = p.device.ssd.dram.bank_bytes();
    g.stripe_bytes = BLOCK_IO_STRIPE_BYTES;
    return g;
}
}  // namespace

WillowStack::WillowStack(Platform& p, WillowStackConfig c)
    : platform(p),
      cfg(std::move(c)),
      driver(p.device.willow_device()),
      kernel(driver, cfg.base_io_app, geometry(p)),
      fs(kernel, cfg.fs),
      module(fs, cfg.module) {}

void WillowStack::start_kernel(unsigned core) {
    auto& proc = platform.host.kernel.create_process("kernel");
    platform.host.cores.at(core)->run(proc, [this](host::HostCore& cpu) {
        sw::WillowApps& apps = kernel.boot(cpu);
        apps.install(cfg.firmware_dir + "/app_base_io.elf", cfg.base_io_app, kBaseIoSlot);
        apps.install(cfg.firmware_dir + "/app_direct_io.elf", cfg.direct_io_app, kDirectIoSlot);
        fs.format(cpu, 0, cfg.fs_inodes);
        ready_ = true;
        module.serve_notices(cpu, stop_);
    });
}

void WillowStack::wait_ready(host::HostCore& cpu) const {
    while (!ready_) cpu.compute_ns(1000);
}

std::unique_ptr<sw::DirectIo> WillowStack::direct_io(host::HostCore& cpu, sw::DirectIoConfig c) {
    return std::make_unique<sw::DirectIo>(cpu, driver, module, cfg.direct_io_app, c);
}

}  // namespace canopy::platform
