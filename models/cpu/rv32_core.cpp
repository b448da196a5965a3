// The RV32IM + Zicsr core of a Willow SPU (125 MHz): configuration, construction, the public API
// and time (local cycles against the kernel's time, quantum checks, statistics flushes). The rest
// of the core is in the other rv32_*.cpp files (rv32_internal.hpp lists them).
#include "cpu/rv32_core.hpp"

#include <algorithm>

#include "cpu/rv32_internal.hpp"
#include "cpu/spu_map.h"

namespace canopy::cpu {

// ---------------------------------------------------------------------------------------------
// Configuration

void CoreConfig::describe(core::Params& p) {
    p("clock_mhz", clock_mhz, "MHz", "core clock [Willow Sec. 3: 125 MHz]", 0.001, 100000.0);
    p("cpi_alu", cpi_alu, "cycles",
      "ALU, CSR, system and fence instructions, branches not taken [Willow Sec. 3: 1 IPC]", 1,
      1000);
    p("cpi_load", cpi_load, "cycles", "loads, before memory latency [Willow Sec. 3: 1 IPC]", 1,
      1000);
    p("cpi_store", cpi_store, "cycles", "stores, before memory latency [Willow Sec. 3: 1 IPC]", 1,
      1000);
    p("cpi_branch_taken", cpi_branch_taken, "cycles",
      "taken branches, jumps, mret [Willow Sec. 3: 1 IPC]", 1, 1000);
    p("cpi_mul", cpi_mul, "cycles", "MUL, MULH, MULHSU, MULHU [Willow Sec. 3: 1 IPC]", 1, 1000);
    p("cpi_div", cpi_div, "cycles", "DIV, DIVU, REM, REMU [Willow Sec. 3: 1 IPC]", 1, 1000);
    p("quantum_ns", quantum_ns, "ns",
      "temporal decoupling quantum: how often the core checks for other activity [assumed: 1 us]",
      0.001, 1e9);
    p("dmi", dmi,
      "fetch, load and store through direct memory interfaces where targets grant them");
    p("reset_pc", reset_pc, "", "pc after reset [SPU map: IMEM base]");
    p("misaligned_access", misaligned_access,
      "do misaligned loads and stores in hardware (false: they trap) [RISC-V tests: ma_data]");
    p("compressed", compressed,
      "the C extension: 16-bit instructions, jump targets on halfwords [RISC-V unprivileged "
      "spec, ch. C; RISC-V toolchains' default rv32imac]");
}

// ---------------------------------------------------------------------------------------------
// Construction and the public API

Rv32Core::Rv32Core(sc_core::sc_module_name name, const CoreConfig& cfg, core::Services& services,
                   uint32_t hart_id)
    : sc_module(name),
      bus("bus"),
      cfg_(cfg),
      services_(services),
      hart_id_(hart_id),
      st_instret_(
          services.stats.counter(this->name(), "instructions", "instructions retired", true)),
      st_cycles_(services.stats.counter(this->name(), "cycles",
                                        "core cycles elapsed (wfi sleep included)")),
      st_dmi_loads_(services.stats.counter(this->name(), "loads.dmi", "loads through DMI")),
      st_dmi_stores_(services.stats.counter(this->name(), "stores.dmi", "stores through DMI")),
      st_bus_loads_(services.stats.counter(this->name(), "loads.bus", "loads through b_transport")),
      st_bus_stores_(
          services.stats.counter(this->name(), "stores.bus", "stores through b_transport")),
      st_bus_fetches_(services.stats.counter(this->name(), "fetches.bus",
                                             "instruction fetches through b_transport (no DMI)")),
      st_interrupts_(services.stats.counter(this->name(), "interrupts", "interrupts taken")),
      st_wfi_ns_(services.stats.sum(this->name(), "wfi_sleep", "ns", "time asleep in wfi")),
      track_(services.trace.track(this->name())),
      log_(services.log, this->name()) {
    for (uint32_t c :
         {cause::kInstrMisaligned, cause::kInstrAccessFault, cause::kIllegalInstr,
          cause::kBreakpoint, cause::kLoadMisaligned, cause::kLoadAccessFault,
          cause::kStoreMisaligned, cause::kStoreAccessFault, cause::kEcallU, cause::kEcallM})
        st_traps_[c] = &services.stats.counter(this->name(), std::string("trap.") + trap_name(c),
                                               "exceptions taken");
    for (uint32_t c : {cause::kMsi, cause::kMti, cause::kMei})
        st_irqs_[c] = &services.stats.counter(
            this->name(), std::string("trap.") + trap_name(cause::kInterrupt | c),
            "interrupts taken");
    // Per-cycle costs of at least one cycle: a zero would let a loop run without time passing.
    for (uint32_t* c : {&cfg_.cpi_alu, &cfg_.cpi_load, &cfg_.cpi_store, &cfg_.cpi_branch_taken,
                        &cfg_.cpi_mul, &cfg_.cpi_div})
        *c = std::max<uint32_t>(*c, 1);
    const double clock_mhz = cfg_.clock_mhz > 0 ? cfg_.clock_mhz : 125.0;
    period_ = std::max<uint64_t>(1, sc_time(1e3 / clock_mhz, sc_core::SC_NS).value());
    const uint64_t quantum = sc_time(std::max(cfg_.quantum_ns, 0.0), sc_core::SC_NS).value();
    quantum_cycles_ = std::max<uint64_t>(1, quantum / period_);
    max_ahead_ticks_ = std::max<uint64_t>(quantum, sc_time(100, sc_core::SC_US).value());
    mtime_period_ = std::max<uint64_t>(1, sc_time(1.0 / SPU_MTIME_HZ, sc_core::SC_SEC).value());
    set_costs(0);
    pc_ = cfg_.reset_pc;
    single_[1] = single_[2] = make(kEnd);
    ialign_mask_ = cfg_.compressed ? 1 : 3;

    bus.register_invalidate_direct_mem_ptr(this, &Rv32Core::invalidate_dmi);
    if (services.waves.enabled()) {
        pc_probe_ = std::make_unique<core::Probe<uint32_t>>("pc_probe", services.waves,
                                                            std::string(this->name()) + ".pc", pc_);
        static const core::Waves::ValueNames priv_names{"priv", {{0, "USER"}, {3, "MACHINE"}}};
        priv_probe_ = std::make_unique<core::Probe<uint8_t>>(
            "priv_probe", services.waves, std::string(this->name()) + ".priv",
            uint8_t(Privilege::Machine), &priv_names);
    }
    SC_HAS_PROCESS(Rv32Core);
    SC_THREAD(thread);
    set_stack_size(1 << 20);  // on_stop callbacks (the GDB stub) run on this stack
}

Rv32Core::~Rv32Core() = default;

void Rv32Core::set_irq(unsigned bit, bool level) {
    if (bit >= 32 || !((1u << bit) & kIrqMask)) return;
    const uint32_t before = mip_;
    mip_ = level ? (mip_ | (1u << bit)) : (mip_ & ~(1u << bit));
    limit_ = 0;
    if (mip_ != before && level && sleeping_) irq_event_.notify(SC_ZERO_TIME);
}

uint32_t Rv32Core::pc() const { return pc_; }
void Rv32Core::set_pc(uint32_t pc) {
    pc_ = pc;
    need_resolve_ = true;
    skip_bp_pc_ = kNoSkip;
    limit_ = 0;
}
uint32_t Rv32Core::reg(unsigned i) const { return i > 0 && i < 32 ? x_[i] : 0; }
void Rv32Core::set_reg(unsigned i, uint32_t v) {
    if (i > 0 && i < 32) x_[i] = v;
}
uint64_t Rv32Core::instret() const { return instret_; }
uint64_t Rv32Core::cycles() const { return cycle_; }
uint32_t Rv32Core::csr(uint16_t addr) const {
    uint32_t v = 0;
    return csr_read(addr, v) ? v : 0;
}

void Rv32Core::set_time_source(std::function<uint64_t(const sc_time&)> source) {
    time_source_ = std::move(source);
}

sc_time Rv32Core::local_time() const {
    return sc_time::from_value(std::max<uint64_t>(local_ticks(), sc_core::sc_time_stamp().value()));
}

void Rv32Core::set_max_run_ahead(const sc_time& t) { max_ahead_ticks_ = t.value(); }
sc_time Rv32Core::max_run_ahead() const { return sc_time::from_value(max_ahead_ticks_); }

// ---------------------------------------------------------------------------------------------
// Time (local_ticks, reanchor_if_behind and set_costs are inline in rv32_internal.hpp)

void Rv32Core::sync_to_kernel() {
    flush_stats();
    const uint64_t now = sc_core::sc_time_stamp().value(), local = local_ticks();
    if (local > now) wait(sc_time::from_value(local - now));
    reanchor_if_behind();
}

// At the end of a quantum: wait only if another process has something to do before the core's
// local time (or the core is too far ahead); otherwise nobody can tell, so run on.
void Rv32Core::quantum_check() {
    const uint64_t now = sc_core::sc_time_stamp().value();
    reanchor_if_behind();
    const uint64_t local = local_ticks(), offset = local - now;
    if (offset >= max_ahead_ticks_ || sc_core::sc_time_to_pending_activity().value() <= offset) {
        flush_stats();
        wait(sc_time::from_value(offset));
        reanchor_if_behind();
    }
    // With waves on, the pc is sampled here, at a check the core makes anyway.
    if (pc_probe_) pc_probe_->set(pc_, sc_time::from_value(local_ticks()));
    sync_cycle_ = cycle_ + quantum_cycles_;
}

void Rv32Core::update_limit() {
    uint64_t l = sync_cycle_;
    if (instr_limit_) {
        const uint64_t done = instret_ + trap_entries_;
        l = std::min(l, cycle_ + (instr_limit_ > done ? instr_limit_ - done : 0));
    }
    if (stepping_) l = std::min(l, std::max(cycle_, step_from_cycle_) + 1);
    if (halt_req_ || exit_req_ || sleeping_ || pending_stop_ != StopReason::None) l = 0;
    limit_ = l;
}

void Rv32Core::flush_stats() {
    st_instret_.add(instret_ - flushed_.instret);
    st_cycles_.add(cycle_ - flushed_.cycles);
    st_dmi_loads_.add(n_dmi_loads_ - flushed_.dmi_loads);
    st_dmi_stores_.add(n_dmi_stores_ - flushed_.dmi_stores);
    st_bus_loads_.add(n_bus_loads_ - flushed_.bus_loads);
    st_bus_stores_.add(n_bus_stores_ - flushed_.bus_stores);
    st_bus_fetches_.add(n_bus_fetches_ - flushed_.bus_fetches);
    flushed_ = {instret_,     cycle_,        n_dmi_loads_,  n_dmi_stores_,
                n_bus_loads_, n_bus_stores_, n_bus_fetches_};
}

void Rv32Core::end_of_simulation() { flush_stats(); }

}  // namespace canopy::cpu
