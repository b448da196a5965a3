// How the SPU core reaches memory. Fetch: decode caches over DMI regions (at most 1 MiB windows),
// invalidated line by line by stores to decoded code, or one b_transport per instruction without
// DMI. Data: the DMI regions targets grant, fast paths over the last one used for loads and for
// stores (the run loop's inline accesses), b_transport otherwise. In user mode both stay inside
// the SPU's code and data segments.
#include "cpu/rv32_core.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/rv32_internal.hpp"

namespace canopy::cpu {

namespace {

constexpr uint32_t kWindowBytes = 1u << 20;  // most code one decode cache covers

}  // namespace

// ---------------------------------------------------------------------------------------------
// Fetch: decode caches over DMI regions, or one b_transport per instruction.
// (resolve is inline in rv32_internal.hpp.)

Insn* Rv32Core::resolve_slow(uint32_t pc) {
    if (pc & ialign_mask_) {
        fault_ = make(kFetchMisaligned);
        return &fault_;
    }
    auto activate = [&](CodeCache& c) {
        cur_base_ = c.base, cur_size_ = c.size, cur_insn_ = c.insn.data(), cur_cache_ = &c;
        set_costs(c.fetch_stall);
        return c.insn.data() + ((pc - c.base) >> 1);
    };
    // User mode executes only inside its code segment, from decode caches that end at the
    // segment's end (their end marker makes running off it come back here and fault).
    const bool user = priv_ != 3;
    const uint64_t seg_lo = seg_.code_base, seg_end = uint64_t(seg_.code_base) + seg_.code_size;
    if (user && (pc < seg_lo || uint64_t(pc) + 2 > seg_end)) {
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
            if (lo <= pc && pc + 2 <= end) {
                auto c = std::make_unique<CodeCache>();
                c->base = uint32_t(lo);
                c->size = uint32_t(end - lo);
                c->mem = r->mem + (lo - r->lo);
                c->fetch_stall = r->rlat;
                // Two End sentinels: a 4-byte step from the last halfword lands on the second.
                c->insn.assign(c->size / 2 + 2, Insn{kUndecoded, 0, 0, 0, 0});
                c->insn.end()[-1] = c->insn.end()[-2] = make(kEnd);
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
    if (!fetch_insn(pc, raw)) {
        fault_ = make(kFetchFault);
        return &fault_;
    }
    single_[0] = breakpoints_.count(pc) ? make(kBreakpoint) : decode(raw, pc, cfg_.compressed);
    return &single_[0];
}

// `n` (2 or 4) bytes of code at `addr`, from one decode cache's memory or by one b_transport; in
// user mode only inside the code segment.
bool Rv32Core::fetch_code(uint32_t addr, uint32_t n, uint32_t& v) {
    v = 0;
    if (priv_ != 3 &&
        (addr < seg_.code_base || uint64_t(addr) + n > uint64_t(seg_.code_base) + seg_.code_size))
        return false;
    for (auto& c : caches_)
        if (addr - c->base < c->size && addr - c->base + n <= c->size) {
            std::memcpy(&v, c->mem + (addr - c->base), n);
            return true;
        }
    uint8_t buf[4];
    if (!bus_transport(tlm::TLM_READ_COMMAND, addr, buf, n)) return false;
    ++n_bus_fetches_;
    std::memcpy(&v, buf, n);
    return true;
}

// The instruction at pc as memory holds it, ignoring breakpoints (to resume over one, or without
// a decode cache): 4 bytes in one piece where they are, else the first halfword, then the second
// unless the first is a whole (compressed) instruction: the halves may lie in different places,
// and a compressed instruction may end where its target or segment does.
bool Rv32Core::fetch_insn(uint32_t pc, uint32_t& raw) {
    if (fetch_code(pc, 4, raw)) return true;
    if (!cfg_.compressed) return false;
    uint32_t hi = 0;
    if (!fetch_code(pc, 2, raw)) return false;
    if (!is_compressed(raw) && !fetch_code(pc + 2, 2, hi)) return false;
    raw |= hi << 16;
    return true;
}

void Rv32Core::decode_at(Insn* ip, uint32_t pc) {
    CodeCache& c = *cur_cache_;
    const uint32_t off = pc - c.base;
    uint32_t raw = 0;
    Insn d;
    if (!breakpoints_.empty() && breakpoints_.count(pc)) {
        d = make(kBreakpoint);
    } else if (off + 4 <= c.size) {
        std::memcpy(&raw, c.mem + off, 4);
        d = decode(raw, pc, cfg_.compressed);
    } else {  // the cache's last halfword: a 4-byte instruction's second half lies beyond it
        d = fetch_insn(pc, raw) ? decode(raw, pc, cfg_.compressed) : make(kFetchFault);
    }
    *ip = d;
    // Mark the lines the instruction covers (a 4-byte one may straddle two), so that a store to
    // either drops it.
    const uint32_t len = cfg_.compressed && is_compressed(raw) ? 2 : 4;
    const uint32_t last = std::min(off + len, c.size) - 1;
    for (uint32_t l = off / kLineBytes; l <= last / kLineBytes; ++l)
        c.lines[l / 64] |= 1ull << (l % 64);
    const uint64_t line = pc & ~(kLineBytes - 1);
    const uint64_t line_end = ((uint64_t(c.base) + last) & ~uint64_t(kLineBytes - 1)) + kLineBytes;
    if (code_span_ == 0) {
        code_lo_ = uint32_t(line), code_span_ = uint32_t(line_end - line);
    } else {
        const uint64_t lo = std::min<uint64_t>(code_lo_, line);
        const uint64_t hi = std::max<uint64_t>(uint64_t(code_lo_) + code_span_, line_end);
        code_lo_ = uint32_t(lo), code_span_ = uint32_t(std::min<uint64_t>(hi - lo, 0xffffffffu));
    }
    ++decodes_;
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
            // The line's halfword slots, and the one before it: a 4-byte instruction starting
            // in the previous line's last halfword covers this line's first.
            const uint32_t s = line * (kLineBytes / 2),
                           e = std::min<uint32_t>(s + kLineBytes / 2, c->size / 2);
            std::fill(c->insn.begin() + (s ? s - 1 : 0), c->insn.begin() + e,
                      Insn{kUndecoded, 0, 0, 0, 0});
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

}  // namespace canopy::cpu
