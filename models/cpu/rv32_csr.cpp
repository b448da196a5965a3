// The SPU core's privileged side (machine and user mode): what happens between instructions
// (stops, wfi sleep, interrupts, the quantum), traps, the CSRs and the system instructions
// (fence.i, ecall, ebreak, mret, wfi). The run loop calls in here only off its fast path.
#include "cpu/rv32_core.hpp"

#include <algorithm>

#include "core/sim_time.hpp"
#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

namespace {

constexpr uint32_t kMisa = (1u << 30) | (1u << 8) | (1u << 12) | (1u << 20);  // MXL=32, I, M, U
constexpr uint32_t kMisaC = 1u << 2;

// The bits of a CSR instruction, rebuilt from its decode (mtval of an illegal CSR access).
uint32_t csr_raw(const Insn& d) {
    static constexpr uint32_t f3[] = {1, 2, 3, 5, 6, 7};
    const uint32_t rd = d.rd == kSink ? 0 : d.rd;
    return (uint32_t(d.imm) << 20) | (uint32_t(d.rs1) << 15) | (f3[d.op - kCsrrw] << 12) |
           (rd << 7) | 0x73;
}

}  // namespace

const char* trap_name(uint32_t c) {
    if (c & cause::kInterrupt) {
        switch (c & ~cause::kInterrupt) {
            case cause::kMsi:
                return "interrupt_msi";
            case cause::kMti:
                return "interrupt_mti";
            case cause::kMei:
                return "interrupt_mei";
        }
        return "interrupt";
    }
    switch (c) {
        case cause::kInstrMisaligned:
            return "instruction_address_misaligned";
        case cause::kInstrAccessFault:
            return "instruction_access_fault";
        case cause::kIllegalInstr:
            return "illegal_instruction";
        case cause::kBreakpoint:
            return "breakpoint";
        case cause::kLoadMisaligned:
            return "load_address_misaligned";
        case cause::kLoadAccessFault:
            return "load_access_fault";
        case cause::kStoreMisaligned:
            return "store_address_misaligned";
        case cause::kStoreAccessFault:
            return "store_access_fault";
        case cause::kEcallU:
            return "ecall_u";
        case cause::kEcallM:
            return "ecall_m";
    }
    return "exception";
}

// ---------------------------------------------------------------------------------------------
// Instruction boundaries that need attention: run control, wfi, interrupts, the quantum.

void Rv32Core::boundary() {
    for (;;) {
        StopReason r = StopReason::None;
        if (exit_req_)
            exit_req_ = false, r = StopReason::Exit;
        else if (halt_req_)
            r = StopReason::Halted;
        else if (pending_stop_ != StopReason::None)
            r = pending_stop_;
        else if (stepping_ && cycle_ > step_from_cycle_)
            r = StopReason::Step;
        else if (instr_limit_ && instret_ + trap_entries_ >= instr_limit_)
            instr_limit_ = 0, r = StopReason::InstructionLimit;
        if (r != StopReason::None) {
            pending_stop_ = StopReason::None;
            park(r);
            continue;
        }
        if (sleeping_) {
            sleep_in_wfi();
            continue;
        }
        // Interrupts stay masked while single-stepping (the debug spec's dcsr.stepie = 0).
        // Machine interrupts are enabled by mstatus.MIE in machine mode and always in user mode.
        const bool enabled = priv_ != 3 || (mstatus_ & kMie);
        if (!stepping_ && enabled && (mie_ & mip_)) take_interrupt();
        if (cycle_ >= sync_cycle_) {
            quantum_check();
            if (halt_req_ || exit_req_ || pending_stop_ != StopReason::None) continue;
            if (!stepping_ && (priv_ != 3 || (mstatus_ & kMie)) && (mie_ & mip_))
                continue;  // raised meanwhile
        }
        break;
    }
    update_limit();
    if (need_resolve_ || !ip_) {
        need_resolve_ = false;
        ip_ = resolve(pc_);
        retired_caches_.clear();  // nothing points into them any more
    }
}

void Rv32Core::park(StopReason r) {
    stopped_ = true;
    stop_reason_ = r;
    sleeping_ = halt_req_ = stepping_ = false;
    flush_stats();
    if (pc_probe_) pc_probe_->set(pc_, sc_time::from_value(local_ticks()));
    const auto callbacks = stop_cbs_;  // a callback may register another
    for (const auto& cb : callbacks) cb(*this, r);
    // A stop the debugger resumed at once (it looked, then continued or stepped) took no
    // simulated time: the core keeps its quantum grid, so the run goes on exactly as it would
    // have without the stop.
    if (stopped_) {
        sync_to_kernel();
        while (stopped_) wait(run_event_);
        reanchor_if_behind();
        sync_cycle_ = cycle_ + quantum_cycles_;
    }
    need_resolve_ = true;  // the debugger may have changed code, pc or breakpoints
    skip_bp_pc_ = breakpoints_.count(pc_) ? pc_ : kNoSkip;
}

void Rv32Core::sleep_in_wfi() {
    sync_to_kernel();
    const uint64_t t0 = local_ticks();
    while (!(mie_ & mip_) && !halt_req_ && !exit_req_) wait(irq_event_ | run_event_);
    sleeping_ = false;
    // Wake at the next clock edge at or after the kernel's time.
    const uint64_t now = sc_core::sc_time_stamp().value(), local = local_ticks();
    if (now > local) cycle_ += ceil_div(now - local, period_);
    st_wfi_ns_.add(core::ns_of(sc_time::from_value(local_ticks() - t0)));
    sync_cycle_ = cycle_ + quantum_cycles_;
}

void Rv32Core::take_interrupt() {
    const uint32_t pending = mie_ & mip_;
    const uint32_t code = (pending & kMeip)   ? cause::kMei
                          : (pending & kMsip) ? cause::kMsi
                                              : cause::kMti;
    st_interrupts_.add();
    trap(cause::kInterrupt | code, 0);
}

void Rv32Core::trap(uint32_t mcause, uint32_t mtval) {
    const uint32_t epc = pc_;
    const bool from_machine = priv_ == 3;
    mepc_ = epc;
    mcause_ = mcause;
    mtval_ = mtval;
    mstatus_ = (mstatus_ & ~(kMie | kMpie | kMpp)) | ((mstatus_ & kMie) ? kMpie : 0) |
               (uint32_t(priv_) << 11);
    set_privilege(3);
    const uint32_t base = mtvec_ & ~3u;
    const bool vectored = (mtvec_ & 1) && (mcause & cause::kInterrupt);
    pc_ = vectored ? base + 4 * (mcause & ~cause::kInterrupt) : base;
    cycle_ +=
        1;  // a trap takes one cycle (pipeline redirect); the trapping instruction does not retire
    need_resolve_ = true;
    skip_bp_pc_ = kNoSkip;
    limit_ = 0;
    ++trap_entries_;
    // Same instruction, same privilege, same memory: it would trap again, for ever.
    if (from_machine && pc_ == epc && !(mcause & cause::kInterrupt))
        pending_stop_ = StopReason::TrapLoop;
    const uint32_t index = mcause & ~cause::kInterrupt;
    if (mcause & cause::kInterrupt) {
        if (index < st_irqs_.size() && st_irqs_[index]) st_irqs_[index]->add();
    } else if (index < st_traps_.size() && st_traps_[index]) {
        st_traps_[index]->add();
    }
    if (services_.trace.enabled())
        services_.trace.complete(track_, trap_name(mcause), "spu",
                                 sc_time::from_value(local_ticks()), SC_ZERO_TIME, 0,
                                 {{"mcause", core::TransactionTrace::hex(mcause)},
                                  {"mtval", core::TransactionTrace::hex(mtval)},
                                  {"epc", core::TransactionTrace::hex(epc)}});
    if (log_.on(core::LogLevel::Debug))
        log_(core::LogLevel::Debug,
             std::string(trap_name(mcause)) + " at pc " + core::TransactionTrace::hex(epc) +
                 ", mtval " + core::TransactionTrace::hex(mtval) + " (from " +
                 (from_machine ? "machine" : "user") + " mode)",
             sc_time::from_value(local_ticks()));
    for (const auto& cb : trap_cbs_) cb(mcause, mtval, epc);
}

// ---------------------------------------------------------------------------------------------
// CSRs and system instructions

bool Rv32Core::csr_read(uint16_t a, uint32_t& v) const {
    const uint64_t mcycle = cycle_ + uint64_t(mcycle_delta_),
                   minstret = instret_ + uint64_t(minstret_delta_);
    auto mtime = [&]() -> uint64_t {
        const uint64_t t = std::max<uint64_t>(local_ticks(), sc_core::sc_time_stamp().value());
        return time_source_ ? time_source_(sc_time::from_value(t)) : t / mtime_period_;
    };
    switch (a) {
        case 0x300:
            v = mstatus_ & (kMie | kMpie | kMpp);
            return true;  // mstatus
        case 0x301:
            v = kMisa | (cfg_.compressed ? kMisaC : 0);
            return true;
        case 0x304:
            v = mie_;
            return true;
        case 0x305:
            v = mtvec_;
            return true;
        case 0x310:
            v = 0;
            return true;  // mstatush: little-endian, nothing else
        case 0x306:       // mcounteren: must exist with U-mode (WARL); read-only: U-mode may read
            v = ~0u;      //      every counter, as csr_insn already lets it
            return true;
        case 0x7A0:  // tselect, tdata1, tdata2: no triggers (Sdtrig: tselect WARL, tdata1.type
        case 0x7A1:  //      0 = "no trigger at this tselect"); writes ignored
        case 0x7A2:
            v = 0;
            return true;
        case 0x320:
            v = 0;
            return true;  // mcountinhibit: counters always count
        case 0x340:
            v = mscratch_;
            return true;
        case 0x341:
            v = mepc_;
            return true;
        case 0x342:
            v = mcause_;
            return true;
        case 0x343:
            v = mtval_;
            return true;
        case 0x344:
            v = mip_;
            return true;
        case 0xB00:
        case 0xC00:
            v = uint32_t(mcycle);
            return true;
        case 0xB80:
        case 0xC80:
            v = uint32_t(mcycle >> 32);
            return true;
        case 0xB02:
        case 0xC02:
            v = uint32_t(minstret);
            return true;
        case 0xB82:
        case 0xC82:
            v = uint32_t(minstret >> 32);
            return true;
        case 0xC01:
            v = uint32_t(mtime());
            return true;
        case 0xC81:
            v = uint32_t(mtime() >> 32);
            return true;
        case 0xF11:
        case 0xF12:
        case 0xF13:
        case 0xF15:
            v = 0;
            return true;  // vendor, arch, impl, configptr
        case 0xF14:
            v = hart_id_;
            return true;
    }
    // Performance counters and their events exist and read as zero.
    if ((a >= 0xB03 && a <= 0xB1F) || (a >= 0xB83 && a <= 0xB9F) || (a >= 0x323 && a <= 0x33F) ||
        (a >= 0xC03 && a <= 0xC1F) || (a >= 0xC83 && a <= 0xC9F)) {
        v = 0;
        return true;
    }
    return false;
}

// Writes a writable CSR (the caller has checked it exists and is not read-only).
bool Rv32Core::csr_write(uint16_t a, uint32_t v) {
    auto set_low = [](uint64_t cur, uint32_t lo) { return (cur & ~0xffffffffull) | lo; };
    auto set_high = [](uint64_t cur, uint32_t hi) {
        return (cur & 0xffffffffull) | (uint64_t(hi) << 32);
    };
    const uint64_t mcycle = cycle_ + uint64_t(mcycle_delta_),
                   minstret = instret_ + uint64_t(minstret_delta_);
    switch (a) {
        case 0x300:
            // MPP is WARL: M or U (no S mode); anything else reads back as U.
            mstatus_ = (v & (kMie | kMpie)) | ((v & kMpp) == kMpp ? kMpp : 0);
            return true;  // may enable interrupts
        case 0x304:
            mie_ = v & kIrqMask;
            return true;
        case 0x305:
            mtvec_ = v & ~2u;
            return false;  // modes 0 (direct) and 1 (vectored) only
        case 0x340:
            mscratch_ = v;
            return false;
        case 0x341:
            mepc_ = v & ~ialign_mask_;
            return false;  // IALIGN 16 with C, else 32
        case 0x342:
            mcause_ = v;
            return false;
        case 0x343:
            mtval_ = v;
            return false;
        case 0xB00:
            mcycle_delta_ = int64_t(set_low(mcycle, v) - cycle_);
            return true;
        case 0xB80:
            mcycle_delta_ = int64_t(set_high(mcycle, v) - cycle_);
            return true;
        case 0xB02:
            minstret_delta_ = int64_t(set_low(minstret, v) - instret_);
            return true;
        case 0xB82:
            minstret_delta_ = int64_t(set_high(minstret, v) - instret_);
            return true;
    }
    return false;  // misa, mip, mstatush, counters, events: WARL, writes ignored
}

// Returns false when the instruction trapped.
bool Rv32Core::csr_insn(const Insn& d) {
    const uint16_t a = uint16_t(d.imm & 0xfff);
    const bool imm_form = d.op >= kCsrrwi;
    const uint32_t src = imm_form ? d.rs1 : x_[d.rs1];
    const bool rw = d.op == kCsrrw || d.op == kCsrrwi;
    const bool writes = rw || d.rs1 != 0;  // CSRRS/C with x0 or uimm 0 do not write
    uint32_t old = 0;
    // User mode reaches only the user counters (cycle, time, instret: bits 9:8 of the number 0).
    const bool denied = priv_ != 3 && ((a >> 8) & 3) != 0;
    if (denied || !csr_read(a, old) || (writes && (a >> 10) == 3)) {
        trap(cause::kIllegalInstr, csr_raw(d));
        return false;
    }
    retire_and_step();
    if (writes) {
        const uint32_t v = rw                                    ? src
                           : (d.op == kCsrrs || d.op == kCsrrsi) ? (old | src)
                                                                 : (old & ~src);
        // Zicsr: the explicit write is done instead of this instruction's increment, so
        // the half not written keeps its value from before the instruction (no carry into it).
        if (a == 0xB02 || a == 0xB82) minstret_delta_ -= 1;
        if (csr_write(a, v)) limit_ = 0;
    }
    x_[d.rd] = old;
    return true;
}

void Rv32Core::system_insn(const Insn& d) {
    switch (d.op) {
        case kFenceI:
            flush_decodes();
            retire_and_step();
            return;
        case kEcall:
            trap(priv_ == 3 ? cause::kEcallM : cause::kEcallU, 0);
            return;
        case kEbreak:
            if (debugger_) {
                pending_stop_ = StopReason::Breakpoint;  // stop at the ebreak, not retired
                limit_ = 0;
            } else {
                trap(cause::kBreakpoint, pc_);
            }
            return;
        case kMret: {
            if (priv_ != 3) {
                trap(cause::kIllegalInstr, 0x30200073u);
                return;
            }
            const uint8_t to = uint8_t((mstatus_ & kMpp) >> 11);
            mstatus_ = (mstatus_ & ~(kMie | kMpp)) | ((mstatus_ & kMpie) ? kMie : 0) | kMpie;
            set_privilege(to);  // MPP becomes U, the least-privileged mode
            pc_ = mepc_;
            ++instret_, cycle_ += c_branch_;
            need_resolve_ = true;
            limit_ = 0;
            return;
        }
        case kWfi:
            if (priv_ != 3) {  // no S mode, TW unimplemented: user code may not sleep the core
                trap(cause::kIllegalInstr, 0x10500073u);
                return;
            }
            retire_and_step();
            if (!(mie_ & mip_)) {
                sleeping_ = true;
                limit_ = 0;
            }
            return;
    }
}

}  // namespace canopy::cpu
