// An RV32IM + Zicsr hart in machine mode: the core of one SPU (Willow Section 3: 125 MHz RISC
// cores, one instruction per cycle). Instruction-set simulator for SystemC/TLM-2.0: decodes each
// instruction once and caches it (invalidated by stores to code), fetches and accesses memory
// through DMI where the target grants it and through b_transport otherwise, accumulates time
// locally and synchronises with the kernel only when a quantum is used up and another process
// has something to do (temporal decoupling), and sleeps in `wfi` until an interrupt.
//
// THIS FILE IS THE AGREED INTERFACE; the implementation lives in rv32_*.cpp (listed in
// rv32_internal.hpp). Additions to the agreed API are marked "(added)".
//
// Time. The core counts cycles as an integer and converts to sc_time only where it meets the
// kernel (b_transport delays, syncs); its quantum keeper works in cycles too (rather than
// tlm_quantumkeeper, which adds sc_time per instruction). At the end of every quantum it asks the
// kernel whether any other process has something to do at or before the core's local time; only
// then does it wait() (LT temporal decoupling: nobody can observe the difference). So that
// sc_start(T) still returns, it never runs more than max_run_ahead() (default max(quantum, 100 us))
// ahead of the kernel. An interrupt raised by another process is taken at the core's next quantum
// boundary, so its latency is at most one quantum (wfi wakes exactly at the interrupt). A trap
// costs one cycle; memory latency (b_transport delay beyond the offset, or the DMI latency) is
// added as stall cycles, rounded up to whole cycles. mcycle does not count while the core is
// stopped by the debugger; it does count while it sleeps in wfi. A device that ends the simulation
// from inside b_transport should call notify_exit() (or halt()): sc_stop() alone does not suspend
// the calling thread, and the core would run on until its next sync.
//
// Observability. Statistics under the core's name ("spu0.core"): instructions (key), cycles,
// loads/stores through DMI and through b_transport, bus fetches, trap.<cause>,
// interrupts, wfi_sleep (ns). Each trap is a zero-length event on the core's track of the
// transaction trace (args mcause, mtval, epc). With waves on, "<name>.pc" is sampled at every
// quantum boundary and stop, checks the core makes anyway (no extra synchronisation), and
// "<name>.priv" shows the privilege; with waves off neither exists.
//
// Memory. The decode cache covers DMI regions readable by the core (windows of at most 1 MiB);
// any store that hits a decoded 64-byte line invalidates that line (so self-modifying code works
// even without fence.i), fence.i drops every decode. Writes to code by other initiators need
// fence.i on the core (as RISC-V requires) or invalidate(). Without DMI every fetch is a
// b_transport. Misaligned loads, stores and jumps trap; they are never emulated. The host must be
// little-endian (as RISC-V).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_set>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::cpu {

struct CoreConfig {
    double clock_mhz = 125.0;  // Willow: 125 MHz SPU cores
    uint32_t cpi_alu = 1;      // Willow: one instruction per cycle
    uint32_t cpi_load = 1;
    uint32_t cpi_store = 1;
    uint32_t cpi_branch_taken = 1;
    uint32_t cpi_mul = 1;
    uint32_t cpi_div = 1;
    double quantum_ns = 1000.0;  // temporal decoupling quantum
    bool dmi = true;             // use direct memory interfaces where targets grant them
    // Loads and stores at misaligned addresses are done by the hardware (as the RISC-V tests'
    // ma_data expects) rather than trapping.
    bool misaligned_access = true;
    // The C extension: 16-bit instructions, jump targets on any halfword (IALIGN 16), misa.C.
    // false: RV32IM only, a 16-bit encoding is illegal and a jump to a target not 4-byte
    // aligned traps.
    bool compressed = true;
    uint32_t reset_pc = 0;
    void describe(core::Params& p);  // keys relative to the caller's scope
};

enum class Privilege : uint8_t { User = 0, Machine = 3 };

// (added) The SPU's segment registers [Willow 3.1 "Code and Data Protection"]: while the core runs
// in user mode (an SSD App, entered by mret with mstatus.MPP = U) it may fetch only from
// [code_base, code_base + code_size) and load and store only in [data_base, data_base +
// data_size); anything else raises an instruction, load or store access fault (mtval = the
// address) and the trap returns to machine mode (SPU-OS), where segments do not apply.
struct Segments {
    uint32_t code_base = 0, code_size = 0, data_base = 0, data_size = 0;
};

// Why the core stopped running instructions.
enum class StopReason : uint8_t {
    None,
    Halted,
    Breakpoint,
    Watchpoint,
    Step,
    InstructionLimit,
    Exit,
    // An exception taken in machine mode whose handler is the trapping instruction itself (no
    // trap handler: mtvec points at it). Nothing the core does can end that loop.
    TrapLoop
};

// Exception and interrupt causes (mcause; interrupts have bit 31 set).
namespace cause {
constexpr uint32_t kInstrMisaligned = 0, kInstrAccessFault = 1, kIllegalInstr = 2, kBreakpoint = 3,
                   kLoadMisaligned = 4, kLoadAccessFault = 5, kStoreMisaligned = 6,
                   kStoreAccessFault = 7, kEcallU = 8, kEcallM = 11;
constexpr uint32_t kInterrupt = 0x80000000u;
constexpr uint32_t kMsi = 3, kMti = 7, kMei = 11;  // also the mip/mie bit numbers
}  // namespace cause

// A trap's name as the statistics name it ("illegal_instruction", "timer_interrupt", ...).
const char* trap_name(uint32_t mcause);

class Rv32Core : public sc_core::sc_module {
  public:
    tlm_utils::simple_initiator_socket<Rv32Core> bus;  // "<name>.bus": everything outside the core

    Rv32Core(sc_core::sc_module_name name, const CoreConfig& cfg, core::Services& services,
             uint32_t hart_id = 0);
    ~Rv32Core() override;

    // Interrupt inputs (mip bits): MSIP 3, MTIP 7, MEIP 11. Devices call these at the
    // simulated time the line changes (now + their annotated delay is fine).
    void set_irq(unsigned bit, bool level);

    // Architectural state, for loaders, tests and the debugger.
    uint32_t pc() const;
    void set_pc(uint32_t pc);  // while stopped, before the start, or in on_stop/on_trap
    uint32_t reg(unsigned i) const;
    void set_reg(unsigned i, uint32_t v);
    uint64_t instret() const;  // instructions retired (since construction; minstret writes aside)
    uint64_t cycles() const;   // cycles elapsed (since construction; mcycle writes aside)
    uint64_t trap_entries() const { return trap_entries_; }  // exceptions and interrupts taken
    uint32_t csr(uint16_t addr) const;                       // 0 for a CSR that does not exist
    // The debugger's writes (while stopped): a CSR as csrw would write it (false for one that
    // does not exist or is read-only), and the privilege mode.
    bool debug_set_csr(uint16_t addr, uint32_t value);
    void debug_set_privilege(Privilege p);

    // Debug access to memory through the bus (debug transport), for the GDB stub.
    bool debug_read(uint32_t addr, uint8_t* data, uint32_t len);
    bool debug_write(uint32_t addr, const uint8_t* data, uint32_t len);

    // Run control for the debugger and for `canopy iss`.
    // The core stops once when n instructions have retired or trapped (trap entries count, so a
    // program caught in a trap loop stops too; the limit is then cleared); 0: none.
    void set_instruction_limit(uint64_t n);
    void halt();  // stop before the next instruction
    void resume();
    void step();          // run one instruction, then stop
    bool halted() const;  // stopped, or will stop before the next instruction
    void add_breakpoint(uint32_t addr);
    void remove_breakpoint(uint32_t addr);
    enum class Watch : uint8_t { Write = 1, Read = 2, Access = 3 };
    // The core stops after the instruction whose access overlaps [addr, addr+len).
    void add_watchpoint(uint32_t addr, uint32_t len, Watch kind);
    void remove_watchpoint(uint32_t addr, uint32_t len, Watch kind);
    // Called (in the core's thread, simulated time frozen) whenever the core stops.
    void on_stop(std::function<void(Rv32Core&, StopReason)> cb);
    // Invalidate cached decodes of [addr, addr+len) after an outside write to code.
    void invalidate(uint32_t addr, uint32_t len);

    // Trap hook: cause, tval and pc of every trap taken, for tests and the trace.
    void on_trap(std::function<void(uint32_t mcause, uint32_t mtval, uint32_t epc)> cb);

    // (added) With a debugger attached, ebreak stops the core (StopReason::Breakpoint, pc at
    // the ebreak) instead of trapping.
    void set_debugger_attached(bool attached);
    // (added) The program ended (the exit device was written): the core stops before its next
    // instruction with StopReason::Exit. Call it from the exit device's callback.
    void notify_exit(uint32_t code);
    bool exited() const { return exited_; }
    bool sleeping() const { return sleeping_; }  // (added) in wfi, waiting for an interrupt
    // (added) Instructions decoded into the decode cache: how the simulator works, not what the
    // SPU did, so not a statistic (a debugger's breakpoints make it decode again).
    uint64_t decodes() const { return decodes_; }
    uint32_t exit_code() const { return exit_code_; }
    // (added) Why the core last stopped; the address whose access hit a watchpoint.
    StopReason stop_reason() const { return stop_reason_; }
    uint32_t watch_hit_address() const { return watch_hit_; }
    // (added) Source of the `time` CSR: mtime at a simulated time (wire it to the CLINT). Without
    // one, `time` counts microseconds of the core's local time (SPU_MTIME_HZ, as the CLINT does).
    void set_time_source(std::function<uint64_t(const sc_core::sc_time&)> source);
    // (added) The core's own simulated time: kernel time plus its local offset.
    sc_core::sc_time local_time() const;
    // (added) Bound on running ahead of the kernel when no other process has anything to do.
    void set_max_run_ahead(const sc_core::sc_time& t);
    sc_core::sc_time max_run_ahead() const;
    const CoreConfig& config() const { return cfg_; }
    // (added) User mode. The core starts in machine mode; mret enters mstatus.MPP, a trap returns
    // to machine mode. Segments may change at any time (the SPU's registers call this); they
    // apply from the next instruction.
    Privilege privilege() const { return Privilege(priv_); }
    void set_segments(const Segments& s);
    const Segments& segments() const { return seg_; }

    // Pre-decoded instruction (rv32_internal.hpp); public so that decode() can be a free function.
    struct Insn {
        uint8_t op;            // Op in rv32_internal.hpp; 0: not decoded yet
        uint8_t rd, rs1, rs2;  // rd 0 is decoded as the sink register 32
        int32_t imm;           // immediate, absolute target, CSR number or raw bits (illegal)
    };

  private:
    struct Region;
    struct CodeCache;

    void thread();
    void boundary();
    void park(StopReason r);
    void sleep_in_wfi();
    void quantum_check();
    void take_interrupt();
    void trap(uint32_t mcause, uint32_t mtval);
    inline Insn* resolve(uint32_t pc);
    Insn* resolve_slow(uint32_t pc);
    void decode_at(Insn* ip, uint32_t pc);
    bool fetch_insn(uint32_t pc, uint32_t& raw);
    inline void retire_and_step();
    bool fetch_code(uint32_t addr, uint32_t n, uint32_t& v);
    bool load_slow(uint32_t addr, uint32_t len, uint32_t& value);
    bool store_slow(uint32_t addr, uint32_t len, uint32_t value);
    bool bus_transport(tlm::tlm_command cmd, uint32_t addr, uint8_t* data, uint32_t len);
    Region* find_region(uint32_t addr);
    Region* acquire_dmi(uint32_t addr, tlm::tlm_command cmd);
    void check_watch(uint32_t addr, uint32_t len, bool write);
    void code_written(uint32_t addr, uint32_t len);
    void flush_decodes();
    inline void drop_fast_paths();
    void invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end);
    bool csr_insn(const Insn& d);
    bool csr_read(uint16_t addr, uint32_t& v) const;
    bool csr_write(uint16_t addr, uint32_t v);
    void system_insn(const Insn& d);
    inline void set_costs(uint32_t fetch_stall);
    void set_privilege(uint8_t p);
    bool in_data_segment(uint32_t addr, uint32_t len) const;
    void clip_to_data_segment(uint32_t& base, uint32_t& size, uint8_t*& ptr) const;
    void sync_to_kernel();
    inline void reanchor_if_behind();
    inline uint64_t local_ticks() const;
    void flush_stats();
    void update_limit();
    void end_of_simulation() override;

    CoreConfig cfg_;
    core::Services& services_;
    uint32_t hart_id_;

    // Architectural state. x_[32] is the sink for writes to x0.
    std::array<uint32_t, 33> x_{};
    uint32_t pc_ = 0;
    uint8_t priv_ = 3;  // Privilege
    Segments seg_;
    uint32_t mstatus_ = 3u << 11 /* MPP = M */, mie_ = 0, mip_ = 0, mtvec_ = 0, mscratch_ = 0,
             mepc_ = 0, mcause_ = 0, mtval_ = 0;
    uint64_t cycle_ = 0, instret_ = 0;
    int64_t mcycle_delta_ = 0, minstret_delta_ = 0;  // CSR view minus the internal counters

    // Time: ticks are the kernel's resolution (sc_time::value()).
    uint64_t period_ = 1;  // ticks per cycle
    uint64_t quantum_cycles_ = 1;
    uint64_t max_ahead_ticks_ = 0;
    uint64_t mtime_period_ = 1;  // ticks per mtime count, without a time source
    uint64_t anchor_ticks_ = 0,
             anchor_cycle_ = 0;  // local time = anchor + (cycle - anchor) * period
    uint64_t sync_cycle_ = 0;    // next quantum boundary
    uint64_t limit_ = 0;         // the run loop leaves its fast path when cycles reach this
    std::function<uint64_t(const sc_core::sc_time&)> time_source_;

    // Per-class cycle costs, fetch latency included.
    uint32_t c_alu_ = 1, c_load_ = 1, c_store_ = 1, c_branch_ = 1, c_mul_ = 1, c_div_ = 1;
    uint32_t fetch_stall_ = 0;
    // Low bits an instruction's address may not have: 3 for IALIGN 32, 1 with C (IALIGN 16).
    // One mask serves fetch, jump targets and mepc.
    uint32_t ialign_mask_ = 3;

    // Decode caches and DMI regions. `cur_*` is the cache the run loop is executing from.
    std::vector<std::unique_ptr<Region>> regions_;
    std::vector<std::pair<uint32_t, uint32_t>> no_dmi_;  // refused ranges [lo, hi]
    std::vector<std::unique_ptr<CodeCache>> caches_, retired_caches_;
    std::vector<std::unique_ptr<Region>> retired_regions_;
    uint32_t cur_base_ = 0, cur_size_ = 0;
    Insn* cur_insn_ = nullptr;
    CodeCache* cur_cache_ = nullptr;
    Insn* ip_ = nullptr;        // the next instruction to run (for pc_), valid unless need_resolve_
    bool need_resolve_ = true;  // pc_ changed or caches went away: look pc_ up again
    std::array<Insn, 3> single_{};  // an instruction fetched without a cache, then "refetch"
                                    // in the slots a 2- or 4-byte step reaches
    Insn fault_{};                  // a fetch that failed: raises its trap when executed
    uint32_t code_lo_ = 0, code_span_ = 0;  // bounding range of decoded lines (stores check it)
    // Fast data paths: the last DMI region used for loads and for stores (size 0: none).
    uint32_t ld_base_ = 0, ld_size_ = 0, ld_lat_ = 0, st_base_ = 0, st_size_ = 0, st_lat_ = 0;
    uint8_t* ld_mem_ = nullptr;
    uint8_t* st_mem_ = nullptr;
    tlm::tlm_generic_payload gp_;

    // Run control.
    bool debugger_ = false, halt_req_ = false, stopped_ = false, stepping_ = false;
    bool sleeping_ = false, exit_req_ = false, exited_ = false;
    StopReason pending_stop_ = StopReason::None, stop_reason_ = StopReason::None;
    uint64_t step_from_cycle_ = 0, instr_limit_ = 0;
    uint64_t trap_entries_ = 0;  // exceptions and interrupts taken, for the instruction limit
    uint32_t exit_code_ = 0, watch_hit_ = 0;
    static constexpr uint64_t kNoSkip = ~0ull;
    uint64_t skip_bp_pc_ = kNoSkip;  // resume over the breakpoint at this pc once
    std::unordered_set<uint32_t> breakpoints_;
    struct Watchpoint {
        uint32_t addr, len;
        Watch kind;
    };
    std::vector<Watchpoint> watchpoints_;
    std::vector<std::function<void(Rv32Core&, StopReason)>> stop_cbs_;
    std::vector<std::function<void(uint32_t, uint32_t, uint32_t)>> trap_cbs_;
    sc_core::sc_event run_event_, irq_event_;

    // Statistics: hot counters live here and are added to the registry at sync points.
    uint64_t n_dmi_loads_ = 0, n_dmi_stores_ = 0, n_bus_loads_ = 0, n_bus_stores_ = 0,
             n_bus_fetches_ = 0;
    struct Flushed {
        uint64_t instret, cycles, dmi_loads, dmi_stores, bus_loads, bus_stores, bus_fetches;
    } flushed_{};
    core::Counter &st_instret_, &st_cycles_, &st_dmi_loads_, &st_dmi_stores_, &st_bus_loads_,
        &st_bus_stores_, &st_bus_fetches_, &st_interrupts_;
    uint64_t decodes_ = 0;
    core::Sum& st_wfi_ns_;
    std::array<core::Counter*, 16> st_traps_{};
    std::array<core::Counter*, 12> st_irqs_{};
    int track_;
    core::Logger log_;  // debug: every trap taken
    std::unique_ptr<core::Probe<uint32_t>> pc_probe_;
    std::unique_ptr<core::Probe<uint8_t>> priv_probe_;
};

}  // namespace canopy::cpu
