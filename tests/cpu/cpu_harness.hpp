// Shared helpers of the ISS tests: RV32IM instruction encoders, a tiny assembler with labels
// (so that tests read like assembly without a cross compiler), and a machine with the SPU memory
// map (core, router, IMEM, DMEM, CLINT, console, exit device) owned by a fixture.
//
// Each TEST runs in its own process (gtest_discover_tests), so a test builds one machine, runs
// sc_start as often as it likes (halted cores let the kernel run dry and sc_start return) and,
// when the program writes the exit device, the fixture stops the core and calls sc_stop().
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "cpu/clint.hpp"
#include "cpu/console.hpp"
#include "cpu/exit_device.hpp"
#include "cpu/memory.hpp"
#include "cpu/router.hpp"
#include "cpu/rv32_core.hpp"
#include "cpu/spu_map.h"

namespace canopy::cpu::test {

// ABI register names.
enum Reg : uint32_t {
    zero,
    ra,
    sp,
    gp,
    tp,
    t0,
    t1,
    t2,
    s0,
    s1,
    a0,
    a1,
    a2,
    a3,
    a4,
    a5,
    a6,
    a7,
    s2,
    s3,
    s4,
    s5,
    s6,
    s7,
    s8,
    s9,
    s10,
    s11,
    t3,
    t4,
    t5,
    t6
};

// CSR numbers used by the tests.
namespace csrn {
constexpr uint32_t mstatus = 0x300, misa = 0x301, mie = 0x304, mtvec = 0x305, mstatush = 0x310,
                   mscratch = 0x340, mepc = 0x341, mcause = 0x342, mtval = 0x343, mip = 0x344,
                   mcycle = 0xB00, minstret = 0xB02, mcycleh = 0xB80, minstreth = 0xB82,
                   cycle = 0xC00, time = 0xC01, instret = 0xC02, cycleh = 0xC80, timeh = 0xC81,
                   instreth = 0xC82, mvendorid = 0xF11, marchid = 0xF12, mimpid = 0xF13,
                   mhartid = 0xF14;
}

// --- encoders --------------------------------------------------------------------------------
namespace enc {
inline uint32_t r(uint32_t f7, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
    return (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
inline uint32_t i(int32_t imm, uint32_t rs1, uint32_t f3, uint32_t rd, uint32_t op) {
    return (uint32_t(imm & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op;
}
inline uint32_t s(int32_t imm, uint32_t rs2, uint32_t rs1, uint32_t f3, uint32_t op) {
    const uint32_t u = uint32_t(imm);
    return (((u >> 5) & 0x7f) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((u & 31) << 7) |
           op;
}
inline uint32_t b(int32_t off, uint32_t rs2, uint32_t rs1, uint32_t f3) {
    const uint32_t u = uint32_t(off);
    return (((u >> 12) & 1) << 31) | (((u >> 5) & 0x3f) << 25) | (rs2 << 20) | (rs1 << 15) |
           (f3 << 12) | (((u >> 1) & 0xf) << 8) | (((u >> 11) & 1) << 7) | 0x63;
}
inline uint32_t u(uint32_t imm20, uint32_t rd, uint32_t op) {
    return (imm20 << 12) | (rd << 7) | op;
}
inline uint32_t j(int32_t off, uint32_t rd) {
    const uint32_t u = uint32_t(off);
    return (((u >> 20) & 1) << 31) | (((u >> 1) & 0x3ff) << 21) | (((u >> 11) & 1) << 20) |
           (((u >> 12) & 0xff) << 12) | (rd << 7) | 0x6f;
}
}  // namespace enc

inline uint32_t lui(uint32_t rd, uint32_t imm20) { return enc::u(imm20 & 0xfffff, rd, 0x37); }
inline uint32_t auipc(uint32_t rd, uint32_t imm20) { return enc::u(imm20 & 0xfffff, rd, 0x17); }
inline uint32_t jal(uint32_t rd, int32_t off) { return enc::j(off, rd); }
inline uint32_t jalr(uint32_t rd, uint32_t rs1, int32_t off) {
    return enc::i(off, rs1, 0, rd, 0x67);
}
inline uint32_t beq(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 0); }
inline uint32_t bne(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 1); }
inline uint32_t blt(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 4); }
inline uint32_t bge(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 5); }
inline uint32_t bltu(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 6); }
inline uint32_t bgeu(uint32_t a, uint32_t b, int32_t off) { return enc::b(off, b, a, 7); }
inline uint32_t lb(uint32_t rd, uint32_t rs1, int32_t off) { return enc::i(off, rs1, 0, rd, 0x03); }
inline uint32_t lh(uint32_t rd, uint32_t rs1, int32_t off) { return enc::i(off, rs1, 1, rd, 0x03); }
inline uint32_t lw(uint32_t rd, uint32_t rs1, int32_t off) { return enc::i(off, rs1, 2, rd, 0x03); }
inline uint32_t lbu(uint32_t rd, uint32_t rs1, int32_t off) {
    return enc::i(off, rs1, 4, rd, 0x03);
}
inline uint32_t lhu(uint32_t rd, uint32_t rs1, int32_t off) {
    return enc::i(off, rs1, 5, rd, 0x03);
}
inline uint32_t sb(uint32_t rs2, uint32_t rs1, int32_t off) {
    return enc::s(off, rs2, rs1, 0, 0x23);
}
inline uint32_t sh(uint32_t rs2, uint32_t rs1, int32_t off) {
    return enc::s(off, rs2, rs1, 1, 0x23);
}
inline uint32_t sw(uint32_t rs2, uint32_t rs1, int32_t off) {
    return enc::s(off, rs2, rs1, 2, 0x23);
}
inline uint32_t addi(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 0, rd, 0x13);
}
inline uint32_t slti(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 2, rd, 0x13);
}
inline uint32_t sltiu(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 3, rd, 0x13);
}
inline uint32_t xori(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 4, rd, 0x13);
}
inline uint32_t ori(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 6, rd, 0x13);
}
inline uint32_t andi(uint32_t rd, uint32_t rs1, int32_t imm) {
    return enc::i(imm, rs1, 7, rd, 0x13);
}
inline uint32_t slli(uint32_t rd, uint32_t rs1, uint32_t sh) {
    return enc::r(0, sh, rs1, 1, rd, 0x13);
}
inline uint32_t srli(uint32_t rd, uint32_t rs1, uint32_t sh) {
    return enc::r(0, sh, rs1, 5, rd, 0x13);
}
inline uint32_t srai(uint32_t rd, uint32_t rs1, uint32_t sh) {
    return enc::r(0x20, sh, rs1, 5, rd, 0x13);
}
#define CANOPY_R(name, f7, f3)                                      \
    inline uint32_t name(uint32_t rd, uint32_t rs1, uint32_t rs2) { \
        return enc::r(f7, rs2, rs1, f3, rd, 0x33);                  \
    }
CANOPY_R(add, 0, 0)
CANOPY_R(sub, 0x20, 0)
CANOPY_R(sll, 0, 1)
CANOPY_R(slt, 0, 2)
CANOPY_R(sltu, 0, 3)
CANOPY_R(xor_, 0, 4)
CANOPY_R(srl, 0, 5)
CANOPY_R(sra, 0x20, 5)
CANOPY_R(or_, 0, 6)
CANOPY_R(and_, 0, 7)
CANOPY_R(mul, 1, 0)
CANOPY_R(mulh, 1, 1)
CANOPY_R(mulhsu, 1, 2)
CANOPY_R(mulhu, 1, 3)
CANOPY_R(div, 1, 4)
CANOPY_R(divu, 1, 5)
CANOPY_R(rem, 1, 6)
CANOPY_R(remu, 1, 7)
#undef CANOPY_R
inline uint32_t fence() { return 0x0ff0000f; }
inline uint32_t fence_i() { return 0x0000100f; }
inline uint32_t ecall() { return 0x00000073; }
inline uint32_t ebreak() { return 0x00100073; }
inline uint32_t mret() { return 0x30200073; }
inline uint32_t wfi() { return 0x10500073; }
inline uint32_t csrrw(uint32_t rd, uint32_t csr, uint32_t rs1) {
    return enc::i(int32_t(csr), rs1, 1, rd, 0x73);
}
inline uint32_t csrrs(uint32_t rd, uint32_t csr, uint32_t rs1) {
    return enc::i(int32_t(csr), rs1, 2, rd, 0x73);
}
inline uint32_t csrrc(uint32_t rd, uint32_t csr, uint32_t rs1) {
    return enc::i(int32_t(csr), rs1, 3, rd, 0x73);
}
inline uint32_t csrrwi(uint32_t rd, uint32_t csr, uint32_t uimm) {
    return enc::i(int32_t(csr), uimm, 5, rd, 0x73);
}
inline uint32_t csrrsi(uint32_t rd, uint32_t csr, uint32_t uimm) {
    return enc::i(int32_t(csr), uimm, 6, rd, 0x73);
}
inline uint32_t csrrci(uint32_t rd, uint32_t csr, uint32_t uimm) {
    return enc::i(int32_t(csr), uimm, 7, rd, 0x73);
}
inline uint32_t nop() { return addi(zero, zero, 0); }

// --- assembler -------------------------------------------------------------------------------
// Emits words from `base`; branches and jumps may name labels defined before or after.
class Asm {
  public:
    explicit Asm(uint32_t base = SPU_IMEM_BASE) : base_(base) {}

    uint32_t base() const { return base_; }
    uint32_t pc() const { return base_ + 4 * uint32_t(words_.size()); }
    Asm& operator()(uint32_t word) {
        words_.push_back(word);
        return *this;
    }
    Asm& label(const std::string& name);
    uint32_t addr(const std::string& name) const;

    Asm& beq(uint32_t a, uint32_t b, const std::string& l) { return branch(0, a, b, l); }
    Asm& bne(uint32_t a, uint32_t b, const std::string& l) { return branch(1, a, b, l); }
    Asm& blt(uint32_t a, uint32_t b, const std::string& l) { return branch(4, a, b, l); }
    Asm& bge(uint32_t a, uint32_t b, const std::string& l) { return branch(5, a, b, l); }
    Asm& bltu(uint32_t a, uint32_t b, const std::string& l) { return branch(6, a, b, l); }
    Asm& bgeu(uint32_t a, uint32_t b, const std::string& l) { return branch(7, a, b, l); }
    Asm& jal(uint32_t rd, const std::string& l);
    Asm& j(const std::string& l) { return jal(zero, l); }
    // rd = value (always two words: lui + addi).
    Asm& li(uint32_t rd, uint32_t value);
    // rd = address of label (two words: lui + addi, absolute).
    Asm& la(uint32_t rd, const std::string& l);
    Asm& csrw(uint32_t csr, uint32_t rs) { return (*this)(csrrw(zero, csr, rs)); }
    Asm& csrr(uint32_t rd, uint32_t csr) { return (*this)(csrrs(rd, csr, zero)); }
    // mtvec = label (clobbers t6).
    Asm& set_mtvec(const std::string& l, uint32_t mode = 0);
    // Writes register `r` to the exit device (clobbers t6).
    Asm& exit(uint32_t r);
    Asm& exit_code(uint32_t code) { return li(a0, code).exit(a0); }
    // Writes the bytes of `text` to the console (clobbers t4, t5).
    Asm& puts(const std::string& text);
    Asm& nops(int n) {
        for (int k = 0; k < n; ++k) (*this)(nop());
        return *this;
    }

    // The program with every label resolved (fails the test on an unknown label).
    std::vector<uint32_t> words() const;

  private:
    enum class Fix { Branch, Jal, Hi, Lo };
    struct Fixup {
        size_t index;
        std::string label;
        Fix kind;
    };
    Asm& branch(uint32_t f3, uint32_t a, uint32_t b, const std::string& l);

    uint32_t base_;
    std::vector<uint32_t> words_;
    std::map<std::string, uint32_t> labels_;
    std::vector<Fixup> fixups_;
};

// --- machine ---------------------------------------------------------------------------------
// The SPU memory map around one core: "<name>.core", "<name>.bus", "<name>.imem", ...
class Machine : public sc_core::sc_module {
  public:
    Machine(sc_core::sc_module_name name, const CoreConfig& cfg, core::Services& services,
            std::ostream& console_out, const MemoryConfig& imem_cfg, const MemoryConfig& dmem_cfg);

    Rv32Core core;
    Router bus;
    Memory imem, dmem;
    Clint clint;
    Console console;
    ExitDevice exit;
};

// Runs actions at given simulated times from a process of its own (another process than the
// core's): raising interrupt lines, halting, revoking DMI. Plan before sc_start, in time order.
class Timeline : public sc_core::sc_module {
  public:
    explicit Timeline(sc_core::sc_module_name name);
    void at(const sc_core::sc_time& t, std::function<void()> action) {
        plan_.push_back({t, std::move(action)});
    }

  private:
    SC_HAS_PROCESS(Timeline);
    void run();
    struct Step {
        sc_core::sc_time t;
        std::function<void()> action;
    };
    std::vector<Step> plan_;
};

MemoryConfig sized(uint64_t bytes, double latency_ns = 0.0, bool read_only = false);

struct Trap {
    uint32_t mcause, mtval, epc;
};

class CpuTest : public ::testing::Test {
  protected:
    // Builds the machine (once per test); the core's traps are recorded in `traps`.
    Machine& build(const CoreConfig& cfg = CoreConfig(), const std::string& name = "spu0",
                   const MemoryConfig& imem = sized(SPU_IMEM_SIZE),
                   const MemoryConfig& dmem = sized(SPU_DMEM_SIZE));
    // Writes the program into IMEM (or DMEM, by its base).
    void load(const Asm& a);
    void load_words(uint32_t addr, const std::vector<uint32_t>& words);
    // Runs for at most `limit` of simulated time: until the program exits, or every process
    // waits for nothing (a halted core: time stays where it is), or the limit.
    void run(const sc_core::sc_time& limit = sc_core::sc_time(10, sc_core::SC_MS));
    // Builds with `cfg`, loads, runs; true when the program wrote the exit device.
    bool run_program(const Asm& a, const CoreConfig& cfg = CoreConfig());

    Rv32Core& core() { return m->core; }
    uint32_t x(uint32_t r) { return m->core.reg(r); }
    bool exited() const { return m && m->exit.exited(); }
    uint32_t exit_code() const { return m->exit.code(); }
    uint32_t dmem_word(uint32_t addr) const;
    uint64_t stat(const std::string& module, const std::string& name) const;
    std::string trap_log() const;

    // A timeline beside the machine (build first).
    Timeline& timeline();

    core::Services services;
    std::ostringstream console_out;
    std::unique_ptr<Machine> m;
    std::unique_ptr<Timeline> timeline_;
    std::vector<Trap> traps;
};

}  // namespace canopy::cpu::test
