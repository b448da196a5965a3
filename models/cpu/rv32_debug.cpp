// Debug access and run control of the SPU core, for the GDB stub, `canopy iss` and tests: memory
// through the debug transport, halt, resume and step, breakpoints (decoded as Breakpoint
// operations, so they cost nothing while not hit), watchpoints (they turn the data fast paths
// off), stop and trap callbacks, and the program's exit.
#include "cpu/rv32_core.hpp"

#include <algorithm>

#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

// ---------------------------------------------------------------------------------------------
// Debug access and run control

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

bool Rv32Core::debug_set_csr(uint16_t addr, uint32_t value) {
    uint32_t old;
    if (!csr_read(addr, old) || (addr >> 10) == 3) return false;  // absent, or read-only
    csr_write(addr, value);
    limit_ = 0;  // counters and interrupt enables: the next boundary looks again
    return true;
}

void Rv32Core::debug_set_privilege(Privilege p) { set_privilege(uint8_t(p)); }

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

}  // namespace canopy::cpu
