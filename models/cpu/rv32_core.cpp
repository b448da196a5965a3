#include "cpu/rv32_core.hpp"

#include <algorithm>
#include <cstring>

#include "core/sim_time.hpp"
#include "cpu/spu_map.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error \
    "the RV32 ISS reads and writes guest memory in host byte order: it needs a little-endian host"
#endif

namespace canopy::cpu {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using Insn = Rv32Core::Insn;

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
}

// ---------------------------------------------------------------------------------------------
// Instructions

// Every operation the run loop dispatches on. The first ones are not instructions: a cache slot
// not decoded yet, the end of a cache (refetch), fetch faults and a breakpoint.
// clang-format off
#define CANOPY_RV32_OPS(X)                                                                      \
    X(Undecoded) X(End) X(FetchFault) X(FetchMisaligned) X(Breakpoint) X(Illegal)              \
    X(Lui) X(Jal) X(Jalr) X(Beq) X(Bne) X(Blt) X(Bge) X(Bltu) X(Bgeu)                          \
    X(Lb) X(Lh) X(Lw) X(Lbu) X(Lhu) X(Sb) X(Sh) X(Sw)                                          \
    X(Addi) X(Slti) X(Sltiu) X(Xori) X(Ori) X(Andi) X(Slli) X(Srli) X(Srai)                    \
    X(Add) X(Sub) X(Sll) X(Slt) X(Sltu) X(Xor) X(Srl) X(Sra) X(Or) X(And)                      \
    X(Mul) X(Mulh) X(Mulhsu) X(Mulhu) X(Div) X(Divu) X(Rem) X(Remu)                            \
    X(Fence) X(FenceI) X(Ecall) X(Ebreak) X(Mret) X(Wfi)                                       \
    X(Csrrw) X(Csrrs) X(Csrrc) X(Csrrwi) X(Csrrsi) X(Csrrci)
// clang-format on

namespace {

enum Op : uint8_t {
#define CANOPY_ENUM(n) k##n,
    CANOPY_RV32_OPS(CANOPY_ENUM)
#undef CANOPY_ENUM
        kOpCount
};

constexpr uint8_t kSink = 32;  // writes to x0 land here; nothing reads it

// mstatus / mie / mip bits.
constexpr uint32_t kMie = 1u << 3, kMpie = 1u << 7, kMpp = 3u << 11;
constexpr uint32_t kMsip = 1u << cause::kMsi, kMtip = 1u << cause::kMti, kMeip = 1u << cause::kMei;
constexpr uint32_t kIrqMask = kMsip | kMtip | kMeip;
constexpr uint32_t kMisa = (1u << 30) | (1u << 8) | (1u << 12) | (1u << 20);  // MXL=32, I, M, U

constexpr uint32_t kLineBytes = 64;          // invalidation granule of the decode cache
constexpr uint32_t kWindowBytes = 1u << 20;  // most code one decode cache covers

inline Insn make(uint8_t op, uint32_t rd = 0, uint32_t rs1 = 0, uint32_t rs2 = 0, int32_t imm = 0) {
    return Insn{op, uint8_t(rd == 0 ? kSink : rd), uint8_t(rs1), uint8_t(rs2), imm};
}
inline Insn illegal(uint32_t raw) { return Insn{kIllegal, kSink, 0, 0, int32_t(raw)}; }

// The low `bits` of `v` as a signed number (no shifts of negative values: those are UB in C++17).
inline int32_t sext(uint32_t v, unsigned bits) {
    const uint32_t sign = 1u << (bits - 1);
    return int32_t(((v & ((sign << 1) - 1)) ^ sign) - sign);
}

// Decodes one instruction at `pc`. PC-relative results (AUIPC, branch and jump targets) are
// computed here once, so AUIPC becomes a LUI of the final value.
Insn decode(uint32_t raw, uint32_t pc) {
    const uint32_t opcode = raw & 0x7f, rd = (raw >> 7) & 31, f3 = (raw >> 12) & 7,
                   rs1 = (raw >> 15) & 31, rs2 = (raw >> 20) & 31, f7 = raw >> 25;
    const int32_t i_imm = sext(raw >> 20, 12);
    const int32_t s_imm = sext(((raw >> 25) << 5) | ((raw >> 7) & 31), 12);
    const int32_t b_imm = sext(((raw >> 31) << 12) | (((raw >> 7) & 1) << 11) |
                                   (((raw >> 25) & 0x3f) << 5) | (((raw >> 8) & 0xf) << 1),
                               13);
    const int32_t j_imm = sext(((raw >> 31) << 20) | (raw & 0xff000) | (((raw >> 20) & 1) << 11) |
                                   (((raw >> 21) & 0x3ff) << 1),
                               21);
    switch (opcode) {
        case 0x37:
            return make(kLui, rd, 0, 0, int32_t(raw & 0xfffff000u));
        case 0x17:
            return make(kLui, rd, 0, 0, int32_t(pc + (raw & 0xfffff000u)));  // AUIPC
        case 0x6f:
            return make(kJal, rd, 0, 0, int32_t(pc + uint32_t(j_imm)));
        case 0x67:
            if (f3 != 0) break;
            return make(kJalr, rd, rs1, 0, i_imm);
        case 0x63: {
            static constexpr uint8_t ops[8] = {kBeq, kBne, kIllegal, kIllegal,
                                               kBlt, kBge, kBltu,    kBgeu};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], 0, rs1, rs2, int32_t(pc + uint32_t(b_imm)));
        }
        case 0x03: {
            static constexpr uint8_t ops[8] = {kLb,  kLh,  kLw,      kIllegal,
                                               kLbu, kLhu, kIllegal, kIllegal};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], rd, rs1, 0, i_imm);
        }
        case 0x23: {
            static constexpr uint8_t ops[8] = {kSb,      kSh,      kSw,      kIllegal,
                                               kIllegal, kIllegal, kIllegal, kIllegal};
            if (ops[f3] == kIllegal) break;
            return make(ops[f3], 0, rs1, rs2, s_imm);
        }
        case 0x13:
            switch (f3) {
                case 0:
                    return make(kAddi, rd, rs1, 0, i_imm);
                case 2:
                    return make(kSlti, rd, rs1, 0, i_imm);
                case 3:
                    return make(kSltiu, rd, rs1, 0, i_imm);
                case 4:
                    return make(kXori, rd, rs1, 0, i_imm);
                case 6:
                    return make(kOri, rd, rs1, 0, i_imm);
                case 7:
                    return make(kAndi, rd, rs1, 0, i_imm);
                case 1:  // RV32: shamt[5] (bit 25) must be zero
                    if (f7 != 0) break;
                    return make(kSlli, rd, rs1, 0, int32_t(rs2));
                case 5:
                    if (f7 == 0) return make(kSrli, rd, rs1, 0, int32_t(rs2));
                    if (f7 == 0x20) return make(kSrai, rd, rs1, 0, int32_t(rs2));
                    break;
            }
            break;
        case 0x33:
            if (f7 == 0) {
                static constexpr uint8_t ops[8] = {kAdd, kSll, kSlt, kSltu, kXor, kSrl, kOr, kAnd};
                return make(ops[f3], rd, rs1, rs2);
            }
            if (f7 == 1) {
                static constexpr uint8_t ops[8] = {kMul, kMulh, kMulhsu, kMulhu,
                                                   kDiv, kDivu, kRem,    kRemu};
                return make(ops[f3], rd, rs1, rs2);
            }
            if (f7 == 0x20 && f3 == 0) return make(kSub, rd, rs1, rs2);
            if (f7 == 0x20 && f3 == 5) return make(kSra, rd, rs1, rs2);
            break;
        case 0x0f:  // MISC-MEM: reserved fields are ignored, as the spec asks of base
                    // implementations
            if (f3 == 0) return make(kFence);
            if (f3 == 1) return make(kFenceI);
            break;
        case 0x73:
            if (f3 == 0) {
                if (rd != 0 || rs1 != 0) break;
                switch (raw >> 20) {
                    case 0x000:
                        return make(kEcall);
                    case 0x001:
                        return make(kEbreak);
                    case 0x302:
                        return make(kMret);
                    case 0x105:
                        return make(kWfi);
                }
                break;
            }
            if (f3 == 4) break;
            {
                static constexpr uint8_t ops[8] = {kIllegal, kCsrrw,  kCsrrs,  kCsrrc,
                                                   kIllegal, kCsrrwi, kCsrrsi, kCsrrci};
                return make(ops[f3], rd, rs1, 0, int32_t(raw >> 20));
            }
    }
    return illegal(raw);
}

// The bits of a CSR instruction, rebuilt from its decode (mtval of an illegal CSR access).
uint32_t csr_raw(const Insn& d) {
    static constexpr uint32_t f3[] = {1, 2, 3, 5, 6, 7};
    const uint32_t rd = d.rd == kSink ? 0 : d.rd;
    return (uint32_t(d.imm) << 20) | (uint32_t(d.rs1) << 15) | (f3[d.op - kCsrrw] << 12) |
           (rd << 7) | 0x73;
}

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
        case cause::kEcallM:
            return "ecall_m";
    }
    return "exception";
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

// A region of the address space a target granted DMI for.
struct Rv32Core::Region {
    uint64_t lo, hi;  // inclusive, within 32 bits
    uint8_t* mem;     // host address of `lo`
    bool rd, wr;
    uint32_t rlat, wlat;  // cycles per access
};

// Decoded instructions of (part of) one DMI region, one slot per word plus an End sentinel.
struct Rv32Core::CodeCache {
    uint32_t base, size;  // bytes, multiples of 4
    uint8_t* mem;
    uint32_t fetch_stall;
    std::vector<Insn> insn;
    std::vector<uint64_t> lines;  // which 64-byte lines hold decoded slots
};

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
      st_decodes_(services.stats.counter(this->name(), "decodes",
                                         "instructions decoded into the decode cache")),
      st_wfi_ns_(services.stats.sum(this->name(), "wfi_sleep", "ns", "time asleep in wfi")),
      track_(services.trace.track(this->name())) {
    for (uint32_t c : {cause::kInstrMisaligned, cause::kInstrAccessFault, cause::kIllegalInstr,
                       cause::kBreakpoint, cause::kLoadMisaligned, cause::kLoadAccessFault,
                       cause::kStoreMisaligned, cause::kStoreAccessFault, cause::kEcallM})
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
    single_[1] = make(kEnd);

    bus.register_invalidate_direct_mem_ptr(this, &Rv32Core::invalidate_dmi);
    if (services.waves.enabled()) {
        pc_probe_ = std::make_unique<core::Probe<uint32_t>>("pc_probe", services.waves,
                                                            std::string(this->name()) + ".pc", pc_);
        priv_probe_ = std::make_unique<core::Probe<uint8_t>>("priv_probe", services.waves,
                                                             std::string(this->name()) + ".priv",
                                                             uint8_t(Privilege::Machine));
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

bool Rv32Core::debug_read(uint32_t addr, uint8_t* data, uint32_t len) {
    while (len > 0) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        const unsigned n = bus->transport_dbg(gp);
        if (n == 0 || n > len) return false;
        addr += n, data += n, len -= n;
    }
    return true;
}

bool Rv32Core::debug_write(uint32_t addr, const uint8_t* data, uint32_t len) {
    const uint32_t start = addr, total = len;
    bool ok = true;
    while (len > 0) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(const_cast<uint8_t*>(data));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        const unsigned n = bus->transport_dbg(gp);
        if (n == 0 || n > len) {
            ok = false;
            break;
        }
        addr += n, data += n, len -= n;
    }
    invalidate(start, total);
    return ok;
}

void Rv32Core::set_instruction_limit(uint64_t n) {
    instr_limit_ = n;
    limit_ = 0;
}

void Rv32Core::halt() {
    halt_req_ = true;
    limit_ = 0;
    if (sleeping_) run_event_.notify(SC_ZERO_TIME);
}

void Rv32Core::resume() {
    halt_req_ = false;
    stepping_ = false;
    limit_ = 0;
    if (stopped_) {
        stopped_ = false;
        run_event_.notify(SC_ZERO_TIME);
    }
}

void Rv32Core::step() {
    halt_req_ = false;
    stepping_ = true;
    step_from_cycle_ = cycle_;
    limit_ = 0;
    if (stopped_) {
        stopped_ = false;
        run_event_.notify(SC_ZERO_TIME);
    }
}

bool Rv32Core::halted() const { return stopped_ || halt_req_; }

void Rv32Core::add_breakpoint(uint32_t addr) {
    breakpoints_.insert(addr);
    invalidate(addr, 4);
}

void Rv32Core::remove_breakpoint(uint32_t addr) {
    if (breakpoints_.erase(addr)) invalidate(addr, 4);
}

void Rv32Core::add_watchpoint(uint32_t addr, uint32_t len, Watch kind) {
    watchpoints_.push_back({addr, std::max<uint32_t>(len, 1), kind});
    drop_fast_paths();  // every access now goes through the checking path
}

void Rv32Core::remove_watchpoint(uint32_t addr, uint32_t len, Watch kind) {
    len = std::max<uint32_t>(len, 1);
    auto it = std::find_if(watchpoints_.begin(), watchpoints_.end(), [&](const Watchpoint& w) {
        return w.addr == addr && w.len == len && w.kind == kind;
    });
    if (it != watchpoints_.end()) watchpoints_.erase(it);
}

void Rv32Core::on_stop(std::function<void(Rv32Core&, StopReason)> cb) {
    stop_cbs_.push_back(std::move(cb));
}

void Rv32Core::on_trap(std::function<void(uint32_t, uint32_t, uint32_t)> cb) {
    trap_cbs_.push_back(std::move(cb));
}

void Rv32Core::invalidate(uint32_t addr, uint32_t len) {
    if (len == 0) return;
    const uint64_t end = uint64_t(addr) + len;  // exclusive
    for (auto& c : caches_) {
        const uint64_t lo = std::max<uint64_t>(addr, c->base),
                       hi = std::min<uint64_t>(end, uint64_t(c->base) + c->size);
        for (uint64_t a = lo & ~uint64_t(kLineBytes - 1); a < hi; a += kLineBytes)
            code_written(uint32_t(a), 1);
    }
    // An instruction fetched without a cache (or a fault) may be the one that changed.
    need_resolve_ = true;
    limit_ = 0;
}

void Rv32Core::set_debugger_attached(bool attached) { debugger_ = attached; }

void Rv32Core::notify_exit(uint32_t code) {
    exited_ = true;
    exit_code_ = code;
    exit_req_ = true;
    limit_ = 0;
    if (sleeping_) run_event_.notify(SC_ZERO_TIME);
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
// Time

uint64_t Rv32Core::local_ticks() const {
    return anchor_ticks_ + (cycle_ - anchor_cycle_) * period_;
}

// The kernel may have moved past the core while it was stopped: stopped time is not counted.
void Rv32Core::reanchor_if_behind() {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now > local_ticks()) anchor_ticks_ = now, anchor_cycle_ = cycle_;
}

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
    // With waves on the pc is sampled here; the probe's event then makes the next check wait.
    if (pc_probe_) pc_probe_->set(pc_, sc_time::from_value(local_ticks()));
    sync_cycle_ = cycle_ + quantum_cycles_;
}

void Rv32Core::update_limit() {
    uint64_t l = sync_cycle_;
    if (instr_limit_)
        l = std::min(l, cycle_ + (instr_limit_ > instret_ ? instr_limit_ - instret_ : 0));
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

void Rv32Core::set_costs(uint32_t fetch_stall) {
    fetch_stall_ = fetch_stall;
    c_alu_ = cfg_.cpi_alu + fetch_stall;
    c_load_ = cfg_.cpi_load + fetch_stall;
    c_store_ = cfg_.cpi_store + fetch_stall;
    c_branch_ = cfg_.cpi_branch_taken + fetch_stall;
    c_mul_ = cfg_.cpi_mul + fetch_stall;
    c_div_ = cfg_.cpi_div + fetch_stall;
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
        else if (instr_limit_ && instret_ >= instr_limit_)
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
    if (stopped_) {
        sync_to_kernel();
        while (stopped_) wait(run_event_);
    }
    reanchor_if_behind();
    sync_cycle_ = cycle_ + quantum_cycles_;
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
    const uint32_t index = mcause & ~cause::kInterrupt;
    if (mcause & cause::kInterrupt) {
        if (index < st_irqs_.size() && st_irqs_[index]) st_irqs_[index]->add();
    } else if (index < st_traps_.size() && st_traps_[index]) {
        st_traps_[index]->add();
    }
    if (services_.trace.enabled())
        services_.trace.complete(track_, trap_name(mcause), "cpu",
                                 sc_time::from_value(local_ticks()), SC_ZERO_TIME, 0,
                                 {{"mcause", core::TransactionTrace::hex(mcause)},
                                  {"mtval", core::TransactionTrace::hex(mtval)},
                                  {"epc", core::TransactionTrace::hex(epc)}});
    for (const auto& cb : trap_cbs_) cb(mcause, mtval, epc);
}

// ---------------------------------------------------------------------------------------------
// Fetch: decode caches over DMI regions, or one b_transport per instruction.

Insn* Rv32Core::resolve(uint32_t pc) {
    const uint32_t off = pc - cur_base_;
    if (off < cur_size_) return cur_insn_ + (off >> 2);
    return resolve_slow(pc);
}

Insn* Rv32Core::resolve_slow(uint32_t pc) {
    if (pc & 3) {
        fault_ = make(kFetchMisaligned);
        return &fault_;
    }
    auto activate = [&](CodeCache& c) {
        cur_base_ = c.base, cur_size_ = c.size, cur_insn_ = c.insn.data(), cur_cache_ = &c;
        set_costs(c.fetch_stall);
        return c.insn.data() + ((pc - c.base) >> 2);
    };
    // User mode executes only inside its code segment, from decode caches that end at the
    // segment's end (their end marker makes running off it come back here and fault).
    const bool user = priv_ != 3;
    const uint64_t seg_lo = seg_.code_base, seg_end = uint64_t(seg_.code_base) + seg_.code_size;
    if (user && (pc < seg_lo || uint64_t(pc) + 4 > seg_end)) {
        fault_ = make(kFetchFault);
        return &fault_;
    }
    for (auto& c : caches_)
        if (pc - c->base < c->size &&
            (!user || (c->base >= seg_lo && c->base + uint64_t(c->size) <= seg_end)))
            return activate(*c);
    if (cfg_.dmi) {
        Region* r = find_region(pc);
        if (!r) r = acquire_dmi(pc, tlm::TLM_READ_COMMAND);
        if (r && r->rd) {
            const uint64_t wbase = pc & ~uint64_t(kWindowBytes - 1);
            uint64_t lo = std::max(r->lo, wbase), end = std::min(r->hi + 1, wbase + kWindowBytes);
            if (user) lo = std::max(lo, seg_lo), end = std::min(end, seg_end);
            lo = (lo + 3) & ~uint64_t(3), end &= ~uint64_t(3);
            if (lo <= pc && pc + 4 <= end) {
                auto c = std::make_unique<CodeCache>();
                c->base = uint32_t(lo);
                c->size = uint32_t(end - lo);
                c->mem = r->mem + (lo - r->lo);
                c->fetch_stall = r->rlat;
                c->insn.assign(c->size / 4 + 1, Insn{kUndecoded, 0, 0, 0, 0});
                c->insn.back() = make(kEnd);
                c->lines.assign(ceil_div(c->size, kLineBytes * 64), 0);
                caches_.push_back(std::move(c));
                return activate(*caches_.back());
            }
        }
    }
    // No decode cache: fetch and decode this one instruction; its successor slot refetches.
    cur_base_ = cur_size_ = 0;
    cur_insn_ = nullptr;
    cur_cache_ = nullptr;
    set_costs(0);
    uint32_t raw;
    if (!fetch_word(pc, raw)) {
        fault_ = make(kFetchFault);
        return &fault_;
    }
    single_[0] = breakpoints_.count(pc) ? make(kBreakpoint) : decode(raw, pc);
    return &single_[0];
}

// The instruction at pc as memory holds it, ignoring breakpoints (to resume over one).
bool Rv32Core::fetch_word(uint32_t pc, uint32_t& raw) {
    for (auto& c : caches_)
        if (pc - c->base < c->size) {
            std::memcpy(&raw, c->mem + (pc - c->base), 4);
            return true;
        }
    uint8_t buf[4];
    if (!bus_transport(tlm::TLM_READ_COMMAND, pc, buf, 4)) return false;
    ++n_bus_fetches_;
    std::memcpy(&raw, buf, 4);
    return true;
}

void Rv32Core::decode_at(Insn* ip, uint32_t pc) {
    CodeCache& c = *cur_cache_;
    const uint32_t off = pc - c.base;
    uint32_t raw;
    std::memcpy(&raw, c.mem + off, 4);
    *ip = (!breakpoints_.empty() && breakpoints_.count(pc)) ? make(kBreakpoint) : decode(raw, pc);
    c.lines[off / (kLineBytes * 64)] |= 1ull << ((off / kLineBytes) % 64);
    const uint64_t line = pc & ~(kLineBytes - 1);
    if (code_span_ == 0) {
        code_lo_ = uint32_t(line), code_span_ = kLineBytes;
    } else {
        const uint64_t lo = std::min<uint64_t>(code_lo_, line);
        const uint64_t hi = std::max<uint64_t>(uint64_t(code_lo_) + code_span_, line + kLineBytes);
        code_lo_ = uint32_t(lo), code_span_ = uint32_t(std::min<uint64_t>(hi - lo, 0xffffffffu));
    }
    st_decodes_.add();
}

// A store hit the decoded range: drop the decodes of the line it wrote, if any.
void Rv32Core::code_written(uint32_t addr, uint32_t len) {
    for (auto& c : caches_) {
        const uint32_t off = addr - c->base;
        if (off >= c->size) continue;
        const uint32_t first = off / kLineBytes,
                       last = std::min<uint32_t>(off + len - 1, c->size - 1) / kLineBytes;
        for (uint32_t line = first; line <= last; ++line) {
            uint64_t& bits = c->lines[line / 64];
            const uint64_t bit = 1ull << (line % 64);
            if (!(bits & bit)) continue;
            bits &= ~bit;
            const uint32_t s = line * (kLineBytes / 4),
                           e = std::min<uint32_t>(s + kLineBytes / 4, c->size / 4);
            std::fill(c->insn.begin() + s, c->insn.begin() + e, Insn{kUndecoded, 0, 0, 0, 0});
        }
    }
}

void Rv32Core::flush_decodes() {
    for (auto& c : caches_)
        for (size_t w = 0; w < c->lines.size(); ++w)
            while (c->lines[w]) {
                const uint32_t line = uint32_t(w * 64 + __builtin_ctzll(c->lines[w]));
                code_written(c->base + line * kLineBytes, 1);
            }
    code_lo_ = code_span_ = 0;
}

// ---------------------------------------------------------------------------------------------
// Data: DMI regions, the fast paths over the last one used, b_transport otherwise.

Rv32Core::Region* Rv32Core::find_region(uint32_t addr) {
    for (auto& r : regions_)
        if (addr >= r->lo && addr <= r->hi) return r.get();
    return nullptr;
}

Rv32Core::Region* Rv32Core::acquire_dmi(uint32_t addr, tlm::tlm_command cmd) {
    if (!cfg_.dmi) return nullptr;
    for (const auto& [lo, hi] : no_dmi_)
        if (addr >= lo && addr <= hi) return nullptr;
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    tlm::tlm_dmi dmi;
    const bool granted = bus->get_direct_mem_ptr(gp, dmi);
    const uint64_t start = dmi.get_start_address(),
                   end = std::min<uint64_t>(dmi.get_end_address(), 0xffffffffu);
    const bool covers = start <= addr && addr <= end;
    if (!granted || !covers || !dmi.get_dmi_ptr()) {
        // Remember the refusal for the range the target named (or just this word).
        if (covers)
            no_dmi_.emplace_back(uint32_t(start), uint32_t(end));
        else
            no_dmi_.emplace_back(addr & ~3u, addr | 3u);
        return nullptr;
    }
    auto r = std::make_unique<Region>();
    r->lo = start, r->hi = end;
    r->mem = dmi.get_dmi_ptr();
    r->rd = dmi.is_read_allowed(), r->wr = dmi.is_write_allowed();
    r->rlat = uint32_t(ceil_div(dmi.get_read_latency().value(), period_));
    r->wlat = uint32_t(ceil_div(dmi.get_write_latency().value(), period_));
    regions_.push_back(std::move(r));
    return regions_.back().get();
}

void Rv32Core::drop_fast_paths() { ld_size_ = st_size_ = 0; }

// The backward path: a target withdrew DMI for [start, end].
void Rv32Core::invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end) {
    auto overlaps = [&](uint64_t lo, uint64_t hi) { return lo <= end && start <= hi; };
    regions_.erase(std::remove_if(regions_.begin(), regions_.end(),
                                  [&](const auto& r) { return overlaps(r->lo, r->hi); }),
                   regions_.end());
    for (auto it = caches_.begin(); it != caches_.end();) {
        if (overlaps((*it)->base, uint64_t((*it)->base) + (*it)->size - 1)) {
            retired_caches_.push_back(std::move(*it));  // the run loop may still point into it
            it = caches_.erase(it);
        } else {
            ++it;
        }
    }
    no_dmi_.clear();
    drop_fast_paths();
    cur_base_ = cur_size_ = 0;
    cur_insn_ = nullptr;
    cur_cache_ = nullptr;
    need_resolve_ = true;
    limit_ = 0;
}

void Rv32Core::check_watch(uint32_t addr, uint32_t len, bool write) {
    const uint8_t want = uint8_t(write ? Watch::Write : Watch::Read);
    for (const auto& w : watchpoints_)
        if ((uint8_t(w.kind) & want) && addr < uint64_t(w.addr) + w.len &&
            w.addr < uint64_t(addr) + len) {
            pending_stop_ = StopReason::Watchpoint;
            watch_hit_ = addr;
            limit_ = 0;
            return;
        }
}

// The fast path of region `r` for aligned accesses: word-aligned bounds inside it.
static void fast_window(uint64_t lo, uint64_t hi, uint8_t* mem, uint32_t& base, uint32_t& size,
                        uint8_t*& ptr) {
    const uint64_t b = (lo + 3) & ~uint64_t(3),
                   e = std::min<uint64_t>((hi + 1) & ~uint64_t(3), 0xfffffffcu);
    if (e <= b) {
        size = 0;
        return;
    }
    base = uint32_t(b), size = uint32_t(e - b), ptr = mem + (b - lo);
}

bool Rv32Core::in_data_segment(uint32_t addr, uint32_t len) const {
    return addr >= seg_.data_base &&
           uint64_t(addr) + len <= uint64_t(seg_.data_base) + seg_.data_size;
}

// In user mode the fast paths cover only the data segment.
void Rv32Core::clip_to_data_segment(uint32_t& base, uint32_t& size, uint8_t*& ptr) const {
    if (priv_ == 3 || size == 0) return;
    const uint64_t lo = std::max<uint64_t>(base, seg_.data_base),
                   end = std::min<uint64_t>(uint64_t(base) + size,
                                            uint64_t(seg_.data_base) + seg_.data_size);
    if (end <= lo + 3) {
        size = 0;
        return;
    }
    const uint64_t b = (lo + 3) & ~uint64_t(3), e = end & ~uint64_t(3);
    ptr += b - base, base = uint32_t(b), size = e > b ? uint32_t(e - b) : 0;
}

void Rv32Core::set_privilege(uint8_t p) {
    if (p == priv_) return;
    priv_ = p;
    // Fetch windows and fast paths were sized for the old mode's reach.
    drop_fast_paths();
    cur_base_ = cur_size_ = 0;
    need_resolve_ = true;
    limit_ = 0;
    if (priv_probe_) priv_probe_->set(p, sc_time::from_value(local_ticks()));
}

void Rv32Core::set_segments(const Segments& s) {
    seg_ = s;
    if (priv_ == 3) return;
    drop_fast_paths();
    cur_base_ = cur_size_ = 0;
    need_resolve_ = true;
    limit_ = 0;
}

bool Rv32Core::load_slow(uint32_t addr, uint32_t len, uint32_t& value) {
    if (priv_ != 3 && !in_data_segment(addr, len)) {
        value = 0;
        trap(cause::kLoadAccessFault, addr);
        return false;
    }
    Region* r = find_region(addr);
    if (!r) r = acquire_dmi(addr, tlm::TLM_READ_COMMAND);
    value = 0;
    if (r && r->rd && uint64_t(addr) + len - 1 <= r->hi) {
        std::memcpy(&value, r->mem + (addr - r->lo), len);
        cycle_ += r->rlat;
        ++n_dmi_loads_;
        if (watchpoints_.empty()) {
            fast_window(r->lo, r->hi, r->mem, ld_base_, ld_size_, ld_mem_);
            clip_to_data_segment(ld_base_, ld_size_, ld_mem_);
            ld_lat_ = r->rlat;
        }
    } else {
        uint8_t buf[4] = {};
        if (!bus_transport(tlm::TLM_READ_COMMAND, addr, buf, len)) {
            trap(cause::kLoadAccessFault, addr);
            return false;
        }
        std::memcpy(&value, buf, len);
        ++n_bus_loads_;
        limit_ = 0;  // the target may have raised an interrupt or made another process runnable
    }
    if (!watchpoints_.empty()) check_watch(addr, len, false);
    return true;
}

bool Rv32Core::store_slow(uint32_t addr, uint32_t len, uint32_t value) {
    if (priv_ != 3 && !in_data_segment(addr, len)) {
        trap(cause::kStoreAccessFault, addr);
        return false;
    }
    Region* r = find_region(addr);
    if (!r) r = acquire_dmi(addr, tlm::TLM_WRITE_COMMAND);
    if (r && r->wr && uint64_t(addr) + len - 1 <= r->hi) {
        std::memcpy(r->mem + (addr - r->lo), &value, len);
        cycle_ += r->wlat;
        ++n_dmi_stores_;
        if (watchpoints_.empty()) {
            fast_window(r->lo, r->hi, r->mem, st_base_, st_size_, st_mem_);
            clip_to_data_segment(st_base_, st_size_, st_mem_);
            st_lat_ = r->wlat;
        }
    } else {
        uint8_t buf[4];
        std::memcpy(buf, &value, 4);
        if (!bus_transport(tlm::TLM_WRITE_COMMAND, addr, buf, len)) {
            trap(cause::kStoreAccessFault, addr);
            return false;
        }
        ++n_bus_stores_;
        limit_ = 0;  // the target may have raised an interrupt, ended the program, ...
    }
    if (addr - code_lo_ < code_span_) code_written(addr, len);
    if (!watchpoints_.empty()) check_watch(addr, len, true);
    return true;
}

// One access through the socket at the core's local time (LT: the offset is the annotated
// delay); whatever delay the target adds beyond it becomes stall cycles.
bool Rv32Core::bus_transport(tlm::tlm_command cmd, uint32_t addr, uint8_t* data, uint32_t len) {
    gp_.set_command(cmd);
    gp_.set_address(addr);
    gp_.set_data_ptr(data);
    gp_.set_data_length(len);
    gp_.set_streaming_width(len);
    gp_.set_byte_enable_ptr(nullptr);
    gp_.set_byte_enable_length(0);
    gp_.set_dmi_allowed(false);
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    reanchor_if_behind();
    // The access comes after the instruction's fetch (whose latency its cost includes when it
    // came from a decode cache), as it does when every fetch is a b_transport.
    const uint64_t local = local_ticks() + uint64_t(fetch_stall_) * period_;
    sc_time delay = sc_time::from_value(local - sc_core::sc_time_stamp().value());
    bus->b_transport(gp_, delay);
    const uint64_t after = sc_core::sc_time_stamp().value() + delay.value();
    if (after > local) cycle_ += ceil_div(after - local, period_);
    return gp_.is_response_ok();
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
            v = kMisa;
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
            mepc_ = v & ~3u;
            return false;  // IALIGN = 32
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
    ++instret_, cycle_ += c_alu_, pc_ += 4, ++ip_;
    if (writes) {
        const uint32_t v = rw                                    ? src
                           : (d.op == kCsrrs || d.op == kCsrrsi) ? (old | src)
                                                                 : (old & ~src);
        if (csr_write(a, v)) limit_ = 0;
    }
    x_[d.rd] = old;
    return true;
}

void Rv32Core::system_insn(const Insn& d) {
    switch (d.op) {
        case kFenceI:
            flush_decodes();
            ++instret_, cycle_ += c_alu_, pc_ += 4, ++ip_;
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
            ++instret_, cycle_ += c_alu_, pc_ += 4, ++ip_;
            if (!(mie_ & mip_)) {
                sleeping_ = true;
                limit_ = 0;
            }
            return;
    }
}

// ---------------------------------------------------------------------------------------------
// The run loop. Threaded dispatch (GCC's labels as values) over pre-decoded instructions; the
// hot state lives in locals, and every call out of the loop saves it to the members and
// reloads it after. One comparison per instruction (cycles against limit_) covers the quantum,
// run control, the instruction limit and pending interrupts: whatever needs attention sets
// limit_ to 0.

void Rv32Core::thread() {
    anchor_ticks_ = sc_core::sc_time_stamp().value();
    anchor_cycle_ = cycle_;
    sync_cycle_ = cycle_ + quantum_cycles_;
    need_resolve_ = true;

    static const void* const kDispatch[kOpCount] = {
#define CANOPY_LABEL(n) &&op_##n,
        CANOPY_RV32_OPS(CANOPY_LABEL)
#undef CANOPY_LABEL
    };
    uint32_t* const x = x_.data();
    uint32_t pc, cbase, csize;
    Insn *ip, *cinsn;
    uint64_t cyc, ret, limit;
    uint32_t ca, cl, cs, cb, cm, cd;

#define SAVE() (pc_ = pc, ip_ = ip, cycle_ = cyc, instret_ = ret)
#define LOAD()                                                                            \
    (pc = pc_, ip = ip_, cyc = cycle_, ret = instret_, limit = limit_, cbase = cur_base_, \
     csize = cur_size_, cinsn = cur_insn_, ca = c_alu_, cl = c_load_, cs = c_store_,      \
     cb = c_branch_, cm = c_mul_, cd = c_div_)
#define DISPATCH() goto* kDispatch[ip->op]
#define NEXT()                                            \
    do {                                                  \
        if (__builtin_expect(cyc >= limit, 0)) goto slow; \
        DISPATCH();                                       \
    } while (0)
#define STEP(cost)                           \
    do {                                     \
        ++ret, cyc += (cost), pc += 4, ++ip; \
        NEXT();                              \
    } while (0)
#define TRAP(c, tval)      \
    do {                   \
        SAVE();            \
        trap((c), (tval)); \
        LOAD();            \
        goto slow;         \
    } while (0)
    // A jump to `t`: misaligned targets trap on the jump (rd unwritten).
#define CHECK_TARGET(t) \
    if (__builtin_expect((t)&3, 0)) TRAP(cause::kInstrMisaligned, (t))
#define GO(t)                                  \
    do {                                       \
        ++ret, cyc += cb, pc = (t);            \
        const uint32_t o_ = pc - cbase;        \
        if (__builtin_expect(o_ < csize, 1)) { \
            ip = cinsn + (o_ >> 2);            \
        } else {                               \
            SAVE();                            \
            ip_ = resolve_slow(pc);            \
            LOAD();                            \
        }                                      \
        NEXT();                                \
    } while (0)
#define BRANCH(cond)                               \
    do {                                           \
        if (cond) {                                \
            const uint32_t t_ = uint32_t(ip->imm); \
            CHECK_TARGET(t_);                      \
            GO(t_);                                \
        }                                          \
        STEP(ca);                                  \
    } while (0)
    // Loads and stores: alignment, then the last DMI region used, then the slow path.
#define LOAD_OP(T, bytes, extend)                                               \
    do {                                                                        \
        const uint32_t a_ = x[ip->rs1] + uint32_t(ip->imm);                     \
        const bool mis_ = (bytes) > 1 && __builtin_expect(a_ & ((bytes)-1), 0); \
        if (mis_ && !cfg_.misaligned_access) TRAP(cause::kLoadMisaligned, a_);  \
        const uint32_t o_ = a_ - ld_base_;                                      \
        uint32_t v_;                                                            \
        if (__builtin_expect(o_ < ld_size_ && !mis_, 1)) {                      \
            T t_;                                                               \
            std::memcpy(&t_, ld_mem_ + o_, sizeof t_);                          \
            v_ = extend(t_);                                                    \
            cyc += ld_lat_;                                                     \
            ++n_dmi_loads_;                                                     \
        } else {                                                                \
            SAVE();                                                             \
            const bool ok_ = load_slow(a_, (bytes), v_);                        \
            LOAD();                                                             \
            if (!ok_) goto slow;                                                \
            v_ = extend(T(v_));                                                 \
        }                                                                       \
        x[ip->rd] = v_;                                                         \
        STEP(cl);                                                               \
    } while (0)
#define STORE_OP(T, bytes)                                                                  \
    do {                                                                                    \
        const uint32_t a_ = x[ip->rs1] + uint32_t(ip->imm);                                 \
        const bool mis_ = (bytes) > 1 && __builtin_expect(a_ & ((bytes)-1), 0);             \
        if (mis_ && !cfg_.misaligned_access) TRAP(cause::kStoreMisaligned, a_);             \
        const T v_ = T(x[ip->rs2]);                                                         \
        const uint32_t o_ = a_ - st_base_;                                                  \
        if (__builtin_expect(o_ < st_size_ && !mis_, 1)) {                                  \
            std::memcpy(st_mem_ + o_, &v_, sizeof v_);                                      \
            cyc += st_lat_;                                                                 \
            ++n_dmi_stores_;                                                                \
            if (__builtin_expect(a_ - code_lo_ < code_span_, 0)) code_written(a_, (bytes)); \
        } else {                                                                            \
            SAVE();                                                                         \
            const bool ok_ = store_slow(a_, (bytes), v_);                                   \
            LOAD();                                                                         \
            if (!ok_) goto slow;                                                            \
        }                                                                                   \
        STEP(cs);                                                                           \
    } while (0)
#define SEXT8(v) uint32_t(int32_t(int8_t(v)))
#define SEXT16(v) uint32_t(int32_t(int16_t(v)))
#define ZEXT(v) uint32_t(v)
#define SYSTEM(call) \
    do {             \
        SAVE();      \
        call;        \
        LOAD();      \
        NEXT();      \
    } while (0)

    limit_ = 0;
    LOAD();
slow:
    SAVE();
    boundary();
    LOAD();
    DISPATCH();

op_Undecoded:
    decode_at(ip, pc);
    DISPATCH();
op_End:
    SAVE();
    ip_ = resolve_slow(pc);
    LOAD();
    NEXT();
op_FetchFault:
    TRAP(cause::kInstrAccessFault, pc);
op_FetchMisaligned:
    TRAP(cause::kInstrMisaligned, pc);
op_Breakpoint:
    SAVE();
    if (pc == skip_bp_pc_) {
        // Resuming over this breakpoint: run the instruction memory holds, once.
        skip_bp_pc_ = kNoSkip;
        uint32_t raw;
        if (!fetch_word(pc, raw)) {
            trap(cause::kInstrAccessFault, pc);
            LOAD();
            goto slow;
        }
        single_[0] = decode(raw, pc);
        ip_ = &single_[0];
        LOAD();
        DISPATCH();
    }
    pending_stop_ = StopReason::Breakpoint;
    limit_ = 0;
    LOAD();
    goto slow;
op_Illegal:
    TRAP(cause::kIllegalInstr, uint32_t(ip->imm));

op_Lui:
    x[ip->rd] = uint32_t(ip->imm);
    STEP(ca);
op_Jal : {
    const uint32_t t = uint32_t(ip->imm);
    CHECK_TARGET(t);
    x[ip->rd] = pc + 4;
    GO(t);
}
op_Jalr : {
    const uint32_t t = (x[ip->rs1] + uint32_t(ip->imm)) & ~1u;
    CHECK_TARGET(t);
    x[ip->rd] = pc + 4;
    GO(t);
}
op_Beq:
    BRANCH(x[ip->rs1] == x[ip->rs2]);
op_Bne:
    BRANCH(x[ip->rs1] != x[ip->rs2]);
op_Blt:
    BRANCH(int32_t(x[ip->rs1]) < int32_t(x[ip->rs2]));
op_Bge:
    BRANCH(int32_t(x[ip->rs1]) >= int32_t(x[ip->rs2]));
op_Bltu:
    BRANCH(x[ip->rs1] < x[ip->rs2]);
op_Bgeu:
    BRANCH(x[ip->rs1] >= x[ip->rs2]);

op_Lb:
    LOAD_OP(uint8_t, 1, SEXT8);
op_Lh:
    LOAD_OP(uint16_t, 2, SEXT16);
op_Lw:
    LOAD_OP(uint32_t, 4, ZEXT);
op_Lbu:
    LOAD_OP(uint8_t, 1, ZEXT);
op_Lhu:
    LOAD_OP(uint16_t, 2, ZEXT);
op_Sb:
    STORE_OP(uint8_t, 1);
op_Sh:
    STORE_OP(uint16_t, 2);
op_Sw:
    STORE_OP(uint32_t, 4);

op_Addi:
    x[ip->rd] = x[ip->rs1] + uint32_t(ip->imm);
    STEP(ca);
op_Slti:
    x[ip->rd] = int32_t(x[ip->rs1]) < ip->imm;
    STEP(ca);
op_Sltiu:
    x[ip->rd] = x[ip->rs1] < uint32_t(ip->imm);
    STEP(ca);
op_Xori:
    x[ip->rd] = x[ip->rs1] ^ uint32_t(ip->imm);
    STEP(ca);
op_Ori:
    x[ip->rd] = x[ip->rs1] | uint32_t(ip->imm);
    STEP(ca);
op_Andi:
    x[ip->rd] = x[ip->rs1] & uint32_t(ip->imm);
    STEP(ca);
op_Slli:
    x[ip->rd] = x[ip->rs1] << ip->imm;
    STEP(ca);
op_Srli:
    x[ip->rd] = x[ip->rs1] >> ip->imm;
    STEP(ca);
op_Srai:
    x[ip->rd] = uint32_t(int32_t(x[ip->rs1]) >> ip->imm);
    STEP(ca);

op_Add:
    x[ip->rd] = x[ip->rs1] + x[ip->rs2];
    STEP(ca);
op_Sub:
    x[ip->rd] = x[ip->rs1] - x[ip->rs2];
    STEP(ca);
op_Sll:
    x[ip->rd] = x[ip->rs1] << (x[ip->rs2] & 31);
    STEP(ca);
op_Slt:
    x[ip->rd] = int32_t(x[ip->rs1]) < int32_t(x[ip->rs2]);
    STEP(ca);
op_Sltu:
    x[ip->rd] = x[ip->rs1] < x[ip->rs2];
    STEP(ca);
op_Xor:
    x[ip->rd] = x[ip->rs1] ^ x[ip->rs2];
    STEP(ca);
op_Srl:
    x[ip->rd] = x[ip->rs1] >> (x[ip->rs2] & 31);
    STEP(ca);
op_Sra:
    x[ip->rd] = uint32_t(int32_t(x[ip->rs1]) >> (x[ip->rs2] & 31));
    STEP(ca);
op_Or:
    x[ip->rd] = x[ip->rs1] | x[ip->rs2];
    STEP(ca);
op_And:
    x[ip->rd] = x[ip->rs1] & x[ip->rs2];
    STEP(ca);

op_Mul:
    x[ip->rd] = x[ip->rs1] * x[ip->rs2];
    STEP(cm);
op_Mulh:
    x[ip->rd] =
        uint32_t(uint64_t(int64_t(int32_t(x[ip->rs1])) * int64_t(int32_t(x[ip->rs2]))) >> 32);
    STEP(cm);
op_Mulhsu:  // |signed x unsigned| < 2^63: fits in int64
    x[ip->rd] = uint32_t(uint64_t(int64_t(int32_t(x[ip->rs1])) * int64_t(x[ip->rs2])) >> 32);
    STEP(cm);
op_Mulhu:
    x[ip->rd] = uint32_t((uint64_t(x[ip->rs1]) * x[ip->rs2]) >> 32);
    STEP(cm);
op_Div : {
    const int32_t a = int32_t(x[ip->rs1]), b = int32_t(x[ip->rs2]);
    x[ip->rd] = b == 0 ? ~0u : (a == INT32_MIN && b == -1) ? uint32_t(a) : uint32_t(a / b);
    STEP(cd);
}
op_Divu : {
    const uint32_t a = x[ip->rs1], b = x[ip->rs2];
    x[ip->rd] = b == 0 ? ~0u : a / b;
    STEP(cd);
}
op_Rem : {
    const int32_t a = int32_t(x[ip->rs1]), b = int32_t(x[ip->rs2]);
    x[ip->rd] = b == 0 ? uint32_t(a) : (a == INT32_MIN && b == -1) ? 0u : uint32_t(a % b);
    STEP(cd);
}
op_Remu : {
    const uint32_t a = x[ip->rs1], b = x[ip->rs2];
    x[ip->rd] = b == 0 ? a : a % b;
    STEP(cd);
}

op_Fence:  // one hart, memory accesses in program order: nothing to order
    STEP(ca);
op_FenceI:
op_Ecall:
op_Ebreak:
op_Mret:
op_Wfi:
    SYSTEM(system_insn(*ip));
op_Csrrw:
op_Csrrs:
op_Csrrc:
op_Csrrwi:
op_Csrrsi:
op_Csrrci:
    SYSTEM(csr_insn(*ip));

#undef SAVE
#undef LOAD
#undef DISPATCH
#undef NEXT
#undef STEP
#undef TRAP
#undef CHECK_TARGET
#undef GO
#undef BRANCH
#undef LOAD_OP
#undef STORE_OP
#undef SEXT8
#undef SEXT16
#undef ZEXT
#undef SYSTEM
}

}  // namespace canopy::cpu
