// The machine of `canopy iss`: one SPU core running an RV32 program on its own, for firmware
// bring-up, the RISC-V ISA tests and debugging. The machine: an Rv32Core "cpu" whose bus ("bus")
// holds the SPU memory map of models/cpu/spu_map.h (IMEM, DMEM, CLINT, console, exit device) plus a
// flat RAM (by default 64 MiB at 0x80000000, where the RISC-V tests are linked; its pages cost host
// memory only once touched). The run ends when the program writes the exit device, or, for a
// program with a `tohost` symbol (riscv-tests), when it writes a value v with bit 0 set there
// (exit code v >> 1: 0 is a pass), or when the instruction limit is reached. With no SPU control
// block to program them, the segment registers are opened over the RAM at load
// (iss.user_reaches_ram), so user mode runs there: the unmodified riscv-tests' p environment
// enters its tests with mret to user mode (docs/iss.md lists what the SPU lacks on purpose).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
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
#include "platform/write_tap.hpp"

namespace canopy::platform {

// The harness's settings ("iss."), with the core's under "iss.core.".
struct IssConfig {
    cpu::CoreConfig core;
    uint32_t ram_base = 0x80000000u;  // riscv-tests: env/p/link.ld
    uint32_t ram_size_mib = 64;
    uint64_t max_instructions = 0;  // 0: no limit
    bool user_reaches_ram = true;   // the segment registers opened over the RAM at load
    void describe(core::Params& p);
};

// How a run ended.
enum class IssEnd : uint8_t {
    Running,           // not yet
    Exit,              // the program wrote the exit device
    ToHost,            // the program wrote its tohost word (riscv-tests)
    InstructionLimit,  // the limit came first
    TrapLoop,          // an exception whose handler is the trapping instruction (no handler)
};

class IssHarness {
  private:
    std::vector<cpu::Router::Mapping> map_;  // before `bus`, which is built from it

  public:
    // Throws InputError as memory_map() does.
    IssHarness(const IssConfig& cfg, core::Services& services);

    // The bus's map: the SPU map of spu_map.h, then the RAM where the config puts it. Throws
    // InputError when the RAM does not fit beside the SPU map.
    static std::vector<cpu::Router::Mapping> memory_map(const IssConfig& cfg);

    // Loads a checked program (InputError for a segment outside memory), points the core at its
    // entry and, when it has a `tohost` symbol, watches that word.
    void load(cpu::ElfImage image);

    IssEnd end() const { return end_; }
    bool finished() const { return end_ != IssEnd::Running; }
    uint32_t exit_code() const { return exit_code_; }
    const cpu::ElfImage& image() const { return *image_; }
    // The last two traps taken (newest first): after a trap loop, the loop's trap and the one
    // that led into it.
    struct Trap {
        uint32_t mcause = 0, mtval = 0, epc = 0;
    };
    const std::array<std::optional<Trap>, 2>& last_traps() const { return last_traps_; }

    cpu::Rv32Core cpu;
    WriteTap tap;  // between the core and the bus: sees the writes to tohost
    cpu::Router bus;
    cpu::Memory imem, dmem;
    std::unique_ptr<cpu::Memory> ram;  // none when iss.ram_size_mib is 0
    cpu::Clint clint;
    cpu::Console console;
    cpu::ExitDevice exit;

  private:
    void finish(IssEnd how, uint32_t code);

    bool user_reaches_ram_;
    IssEnd end_ = IssEnd::Running;
    uint32_t exit_code_ = 0;
    std::optional<cpu::ElfImage> image_;
    std::array<std::optional<Trap>, 2> last_traps_;
};

}  // namespace canopy::platform
