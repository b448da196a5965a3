// One storage processing unit of the Willow SSD (Willow Section 3.1 "SPU architecture", 3.2): an
// RV32 core at 125 MHz with 64 KiB instruction and 48 KiB data memory (Willow's 32 KiB each, plus
// room for the FTL and six app slots: docs/spu_os.md), its timer (CLINT),
// console and exit device (models/cpu/spu_map.h), and the Willow devices of models/ssd: the
// control block (identity, segment registers, interrupts, counters), the network interface on
// the ring with its register block, and the DMA controller between data memory, the SSD's
// memory and the network interface. The core and the DMA controller share the SPU's bus (a
// fan-in in front of the address decoder), so the DMA reaches data memory at SPU addresses.
#pragma once

#include <cstdint>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "cpu/clint.hpp"
#include "cpu/console.hpp"
#include "cpu/elf_loader.hpp"
#include "cpu/exit_device.hpp"
#include "cpu/memory.hpp"
#include "cpu/router.hpp"
#include "cpu/rv32_core.hpp"
#include "platform/fabric.hpp"
#include "ssd/network_interface.hpp"
#include "ssd/ni_registers.hpp"
#include "ssd/spu_control.hpp"
#include "ssd/spu_dma.hpp"

namespace canopy::platform {

// Every SPU's settings ("ssd.spu.").
struct SpuConfig {
    cpu::CoreConfig core;
    ssd::SpuControlConfig ctl;
    ssd::SpuDmaConfig dma;
    core::RegisterBankConfig ni_regs;
    void describe(core::Params& p);  // relative to the caller's scope
};

class Spu : public sc_core::sc_module {
  private:
    std::vector<cpu::Router::Mapping> map_;  // before `bus`, which is built from it

  public:
    // SPU `index` of `spu_count`; `dram_size` bounds the DMA's dram port, `store` is the SPU's
    // bank of it. With `flash`, the bus has the flash controller window, whose port
    // (flash_port()) the SSD binds.
    Spu(sc_core::sc_module_name name, unsigned index, unsigned spu_count, const SpuConfig& cfg,
        const ssd::NiConfig& ni_cfg, uint64_t dram_size, ssd::LocalStore store,
        core::Services& services, std::ostream& console_transcript = core::no_stream(),
        bool flash = false);

    static std::vector<cpu::Router::Mapping> memory_map(bool flash = false);
    tlm_utils::simple_initiator_socket_tagged<cpu::Router>& flash_port();

    // Loads a checked ELF into IMEM and DMEM (InputError for a segment outside them) and points
    // the core at its entry.
    void load(cpu::ElfImage& image);

    unsigned index() const { return index_; }
    bool exited() const { return exit.exited(); }

    cpu::Rv32Core core;
    FanIn port;  // the core's and the DMA controller's way onto the bus
    cpu::Router bus;
    cpu::Memory imem, dmem;
    cpu::Clint clint;
    cpu::Console console;
    cpu::ExitDevice exit;
    ssd::SpuControl ctl;
    ssd::NetworkInterface ni;
    ssd::NiRegisters ni_regs;
    ssd::SpuDma dma;

  private:
    unsigned index_;
};

}  // namespace canopy::platform
