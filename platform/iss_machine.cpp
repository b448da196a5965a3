#include "platform/iss_machine.hpp"

#include <iostream>

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "cpu/spu_map.h"

namespace canopy::platform {

namespace {

// The bus's ports, in the order of the map.
enum Port : unsigned { kImem, kDmem, kClint, kConsole, kExit, kRam };

constexpr uint64_t kMiB = 1024 * 1024;

std::string hex(uint64_t v) {
    char s[24];
    std::snprintf(s, sizeof s, "0x%08llx", static_cast<unsigned long long>(v));
    return s;
}

std::string range(uint64_t base, uint64_t size) {
    return "[" + hex(base) + ", " + hex(base + size) + ")";
}

}  // namespace

std::vector<cpu::Router::Mapping> IssHarness::memory_map(const IssConfig& cfg) {
    std::vector<cpu::Router::Mapping> map = {{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE},
                                             {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE},
                                             {"clint", SPU_CLINT_BASE, SPU_CLINT_SIZE},
                                             {"console", SPU_CONSOLE_BASE, SPU_CONSOLE_SIZE},
                                             {"exit", SPU_EXIT_BASE, SPU_EXIT_SIZE}};
    const uint64_t base = cfg.ram_base, size = uint64_t(cfg.ram_size_mib) * kMiB;
    if (size == 0) return map;
    const std::string place =
        "iss.ram_base " + hex(base) + ", iss.ram_size_mib " + std::to_string(cfg.ram_size_mib);
    if (base + size > (uint64_t(1) << 32))
        throw InputError("canopy iss", place,
                         "the RAM " + range(base, size) + " does not fit 32-bit addresses");
    for (const auto& m : map)
        if (base < m.base + m.size && m.base < base + size)
            throw InputError("canopy iss", place,
                             "the RAM " + range(base, size) + " overlaps " + m.name + " " +
                                 range(m.base, m.size));
    map.push_back({"ram", base, size});
    return map;
}

void IssConfig::describe(core::Params& p) {
    core::Params iss = p.scope("iss");
    core::Params c = iss.scope("core");
    core.describe(c);
    iss("ram_base", ram_base, "", "base address of the flat RAM beside the SPU memories")(
        "ram_size_mib", ram_size_mib, "MiB", "size of the flat RAM (0: none)", 0, 2048)(
        "max_instructions", max_instructions, "",
        "end the run after this many instructions with exit status 3 (0: no limit)")(
        "user_reaches_ram", user_reaches_ram,
        "user mode may fetch, load and store in the RAM (the segment registers opened over it "
        "at load, as no SPU control block is here to do it; the riscv-tests' p environment runs "
        "its tests in user mode); false: closed, as an SPU's at reset");
}

IssHarness::IssHarness(const IssConfig& cfg, core::Services& services)
    : map_(memory_map(cfg)),
      cpu("cpu", cfg.core, services),
      tap("tap"),
      bus("bus", map_),
      imem("imem", SPU_IMEM_SIZE, services),
      dmem("dmem", SPU_DMEM_SIZE, services),
      ram(map_.size() > kRam ? std::make_unique<cpu::Memory>("ram", map_[kRam].size, services)
                             : nullptr),
      clint("clint", services),
      console("console", services, "cpu", std::cout),  // the program's output
      exit("exit", services),
      user_reaches_ram_(cfg.user_reaches_ram) {
    cpu.bus.bind(tap.target);
    tap.initiator.bind(bus.target);
    bus.port[kImem].bind(imem.socket);
    bus.port[kDmem].bind(dmem.socket);
    bus.port[kClint].bind(clint.socket);
    bus.port[kConsole].bind(console.socket);
    bus.port[kExit].bind(exit.socket);
    if (ram) bus.port[kRam].bind(ram->socket);

    clint.connect(cpu);
    exit.on_exit([this](uint32_t code) {
        cpu.notify_exit(code);
        finish(IssEnd::Exit, code);
    });
    cpu.on_stop([this](cpu::Rv32Core&, cpu::StopReason why) {
        if (why == cpu::StopReason::InstructionLimit) finish(IssEnd::InstructionLimit, 0);
        if (why == cpu::StopReason::TrapLoop) finish(IssEnd::TrapLoop, 0);
    });
    cpu.on_trap([this](uint32_t mcause, uint32_t mtval, uint32_t epc) {
        last_traps_[1] = last_traps_[0];
        last_traps_[0] = Trap{mcause, mtval, epc};
    });
}

void IssHarness::finish(IssEnd how, uint32_t code) {
    if (finished()) return;
    end_ = how;
    exit_code_ = code;
}

void IssHarness::load(cpu::ElfImage image) {
    std::vector<cpu::LoadRegion> regions;
    for (cpu::Memory* m : {&imem, &dmem, ram.get()}) {
        if (!m) continue;
        const auto& where = map_[m == &imem ? kImem : m == &dmem ? kDmem : kRam];
        regions.push_back({where.name, uint32_t(where.base), where.size, m->data(), nullptr});
    }
    image.load(regions);
    image_ = std::move(image);
    cpu.set_pc(image_->entry());
    // No SPU control block here to program the segment registers: open them over the RAM so
    // that user mode (riscv-tests' p env enters it with mret) can fetch, load and store.
    if (ram && user_reaches_ram_) {
        const auto& r = map_[kRam];
        cpu.set_segments({uint32_t(r.base), uint32_t(r.size), uint32_t(r.base), uint32_t(r.size)});
    }

    // riscv-tests end by writing (result << 1) | 1 to `tohost` (a 64-bit word; the low half
    // holds the result on RV32) and then loop.
    if (auto tohost = image_->symbol("tohost"))
        tap.watch_writes(*tohost, 4, [this, at = *tohost](uint64_t, const uint8_t*, unsigned) {
            uint8_t b[4] = {};
            if (!cpu.debug_read(at, b, 4)) return;
            const uint32_t v =
                uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
            if (!(v & 1)) return;
            finish(IssEnd::ToHost, v >> 1);
            cpu.notify_exit(v >> 1);  // an exit, as a debugger should hear it
        });
}

}  // namespace canopy::platform
