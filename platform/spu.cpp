#include "platform/spu.hpp"

#include "core/error.hpp"
#include "core/trace.hpp"
#include "cpu/spu_map.h"

namespace canopy::platform {

namespace {
// The bus's ports, in the order of the map.
enum Port : unsigned { kImem, kDmem, kClint, kConsole, kExit, kCtl, kNi, kDma, kFlash };
}  // namespace

void SpuConfig::describe(core::Params& p) {
    core::Params c = p.scope("core");
    core.describe(c);
    core::Params ctl_p = p.scope("ctl");
    ctl.describe(ctl_p);
    core::Params dma_p = p.scope("dma");
    dma.describe(dma_p);
    core::Params ni_p = p.scope("ni_regs");
    ni_regs.describe(ni_p);
}

std::vector<cpu::Router::Mapping> Spu::memory_map(bool flash) {
    std::vector<cpu::Router::Mapping> m = {
        {"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE},    {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE},
        {"clint", SPU_CLINT_BASE, SPU_CLINT_SIZE}, {"console", SPU_CONSOLE_BASE, SPU_CONSOLE_SIZE},
        {"exit", SPU_EXIT_BASE, SPU_EXIT_SIZE},    {"ctl", SPU_CTL_BASE, SPU_DEV_SIZE},
        {"ni", SPU_NI_BASE, SPU_DEV_SIZE},         {"dma", SPU_DMA_BASE, SPU_DEV_SIZE}};
    if (flash) m.push_back({"flash", SPU_FLASH_BASE, SPU_FLASH_SIZE});
    return m;
}

tlm_utils::simple_initiator_socket_tagged<cpu::Router>& Spu::flash_port() {
    return bus.port.at(kFlash);
}

Spu::Spu(sc_core::sc_module_name name, unsigned index, unsigned spu_count, const SpuConfig& cfg,
         const ssd::NiConfig& ni_cfg, uint64_t dram_size, ssd::LocalStore store,
         core::Services& services, std::ostream& console_transcript, bool flash)
    : sc_module(name),
      map_(memory_map(flash)),
      core("core", cfg.core, services, index),
      port("port"),
      bus("bus", map_),
      imem("imem", SPU_IMEM_SIZE, services),
      dmem("dmem", SPU_DMEM_SIZE, services),
      clint("clint", services),
      console("console", services, "", console_transcript),
      exit("exit", services),
      ctl("ctl", core, index, spu_count, flash, store, services, cfg.ctl),
      ni("ni", ni_cfg, services),
      ni_regs("ni_regs", ni, services, cfg.ni_regs),
      dma("dma", SPU_DMEM_BASE, SPU_DMEM_SIZE, dram_size, services, cfg.dma),
      index_(index) {
    core.bus.bind(port.in);
    dma.dmem.bind(port.in);
    port.out.bind(bus.target);
    bus.port[kImem].bind(imem.socket);
    bus.port[kDmem].bind(dmem.socket);
    bus.port[kClint].bind(clint.socket);
    bus.port[kConsole].bind(console.socket);
    bus.port[kExit].bind(exit.socket);
    bus.port[kCtl].bind(ctl.socket);
    bus.port[kNi].bind(ni_regs.socket);
    bus.port[kDma].bind(dma.socket);
    clint.connect(core);
    dma.attach(ni);
    dma.on_irq([this](bool level, const sc_core::sc_time& at) {
        ctl.set_irq(ssd::SpuIrq::DmaDone, level, at);
    });
    ni_regs.on_levels([this](bool request, bool response, const sc_core::sc_time& at) {
        ctl.set_irq(ssd::SpuIrq::NiRequest, request, at);
        ctl.set_irq(ssd::SpuIrq::NiResponse, response, at);
    });
    ctl.counter_source("perf_dma_bytes", [this] { return dma.bytes_moved(); });
    exit.on_exit([this](uint32_t code) { core.notify_exit(code); });
}

void Spu::load(cpu::ElfImage& image) {
    // An SPU leaves reset at its reset vector: firmware linked to begin elsewhere never runs.
    const uint32_t reset_pc = core.config().reset_pc;
    if (image.entry() != reset_pc)
        throw InputError(image.path(), "ELF header",
                         "entry point " + core::TransactionTrace::hex(image.entry()) +
                             " is not the SPU's reset pc " + core::TransactionTrace::hex(reset_pc) +
                             " (ssd.spu.core.reset_pc)");
    image.load({{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE, imem.data(), nullptr},
                {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE, dmem.data(), nullptr}});
    core.set_pc(image.entry());
}

}  // namespace canopy::platform
