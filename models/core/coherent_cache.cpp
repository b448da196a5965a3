#include "core/coherent_cache.hpp"

#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace canopy::core {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using Line = CacheArray::Line;

void CoherentCacheConfig::describe(Params& p) {
    p("l1.size_bytes", l1.size_bytes, "B", "L1 data cache (N1: 64 KiB; 0: no L1)", 0, 1ull << 30);
    p("l1.ways", l1.ways, "ways", "L1 associativity (N1: 4)", 1, 64);
    p("l1.line_bytes", l1.line_bytes, "B", "line size (64 B)", 16, 4096);
    p("l1.hit_ns", l1_hit_ns, "ns", "L1 load-to-use, 4 cycles at 2.6 GHz (N1 TRM)", 0.0, 1e6);
    p("l2.size_bytes", l2.size_bytes, "B", "private L2 (N1-SDP: 1 MiB)", 1024, 1ull << 32);
    p("l2.ways", l2.ways, "ways", "L2 associativity (N1: 8)", 1, 64);
    p("l2.line_bytes", l2.line_bytes, "B", "line size (64 B)", 16, 4096);
    p("l2.hit_ns", l2_hit_ns, "ns", "L2 hit beyond the L1, 11 cycles at 2.6 GHz (N1 TRM)", 0.0,
      1e6);
}

void CoherentCacheConfig::validate(const std::string& scope) const {
    if (has_l1()) l1.validate(scope + ".l1");
    l2.validate(scope + ".l2");
    if (has_l1() && l1.line_bytes != l2.line_bytes)
        throw InputError("config", scope + ".l1.line_bytes", "must equal l2.line_bytes");
}

CoherentCache::CoherentCache(const std::string& name, const CoherentCacheConfig& cfg,
                             CoherentHome& home, Services& services, Sync sync)
    : name_(name),
      cfg_((cfg.validate(name), cfg)),
      home_(home),
      sync_(std::move(sync)),
      id_(home.attach(*this, name)),
      l1_(cfg.has_l1() ? cfg.l1 : CacheGeometry{cfg.l2.line_bytes, 1, cfg.l2.line_bytes}, false),
      l2_(cfg.l2),
      fill_(cfg.l2.line_bytes),
      l1_hit_(cfg.l1_hit_ns, SC_NS),
      l2_hit_(cfg.l2_hit_ns, SC_NS),
      l1_hits_(services.stats.counter(name, "l1.hits", "accesses hitting the L1")),
      l1_misses_(services.stats.counter(name, "l1.misses", "accesses missing the L1")),
      l2_hits_(services.stats.counter(name, "l2.hits", "L1 misses hitting the L2")),
      l2_misses_(services.stats.counter(name, "l2.misses", "L1 misses missing the L2", true)),
      upgrades_(services.stats.counter(name, "upgrades", "writes to shared lines (CleanUnique)")),
      writebacks_(services.stats.counter(name, "writebacks", "dirty lines evicted to the home")),
      evicts_(services.stats.counter(name, "evicts", "clean lines evicted")),
      snoops_(services.stats.counter(name, "snoops", "snoops received from the home")),
      snoop_invalidations_(
          services.stats.counter(name, "snoop_invalidations", "lines taken away by snoops", true)) {
    if (home.line_bytes() != cfg.l2.line_bytes)
        throw InputError(
            "config", name + ".l2.line_bytes",
            "must equal the home node's line size (" + std::to_string(home.line_bytes()) + " B)");
}

LineState CoherentCache::state(uint64_t address) const {
    const Line* l = l2_.peek(address);
    return l ? l->state : LineState::I;
}

Line* CoherentCache::lookup(uint64_t line, sc_time& delay) {
    if (!cfg_.has_l1()) {
        delay += l2_hit_;
        Line* l = l2_.find(line);
        (l ? l2_hits_ : l2_misses_).add();
        return l;
    }
    delay += l1_hit_;
    if (l1_.find(line)) {
        l1_hits_.add();
        return l2_.find(line);  // inclusive: the L2 holds it
    }
    l1_misses_.add();
    delay += l2_hit_;
    Line* l = l2_.find(line);
    if (l) {
        l2_hits_.add();
        l1_.fill(l1_.victim(line), line, l->state);
    } else {
        l2_misses_.add();
    }
    return l;
}

Line& CoherentCache::install(uint64_t line, LineState state, const uint8_t* data) {
    // Another caller of the same owner (a second device thread) may have filled the line while
    // this one waited for the home: its copy is at least as new; take the stronger permission.
    if (Line* e = l2_.find(line)) {
        if (is_unique(state) && !is_unique(e->state)) e->state = state;
        return *e;
    }
    Line& v = l2_.victim(line);
    if (is_valid(v.state)) {
        sc_time posted = SC_ZERO_TIME;  // the write buffer takes it off the core's path
        const bool dirty = is_dirty(v.state);
        (dirty ? writebacks_ : evicts_).add();
        home_.request(id_, dirty ? CohRequest::WriteBack : CohRequest::Evict, v.address,
                      l2_.data(v), posted);
        if (Line* l1 = l1_.probe(v.address)) l1_.invalidate(*l1);
    }
    l2_.fill(v, line, state, data);
    if (cfg_.has_l1() && !l1_.peek(line)) l1_.fill(l1_.victim(line), line, state);
    return v;
}

void CoherentCache::read(uint64_t address, uint8_t* bytes, unsigned length, sc_time& delay) {
    const uint64_t line = l2_.line_of(address);
    Line* l = lookup(line, delay);
    if (!l) {
        sync_(delay);
        auto r =
            home_.request(id_, cfg_.read_unique ? CohRequest::ReadUnique : CohRequest::ReadShared,
                          line, fill_.data(), delay);
        l = &install(line, r.granted, fill_.data());
    }
    std::memcpy(bytes, l2_.data(*l) + (address - line), length);
}

Line& CoherentCache::make_unique(uint64_t line, sc_time& delay) {
    Line* l = lookup(line, delay);
    if (l && is_unique(l->state)) return *l;
    sync_(delay);
    l = l2_.find(line);  // a snoop may have taken it while the core synchronised
    if (l) {
        upgrades_.add();
        home_.request(id_, CohRequest::CleanUnique, line, nullptr, delay);
        l->state = LineState::UC;
        return *l;
    }
    auto r = home_.request(id_, CohRequest::ReadUnique, line, fill_.data(), delay);
    return install(line, r.granted, fill_.data());
}

void CoherentCache::write(uint64_t address, const uint8_t* bytes, unsigned length, sc_time& delay) {
    const uint64_t line = l2_.line_of(address);
    Line& l = make_unique(line, delay);
    std::memcpy(l2_.data(l) + (address - line), bytes, length);
    l.state = LineState::UD;
}

uint64_t CoherentCache::atomic(uint64_t address, const AtomicRequest& a, bool far, sc_time& delay) {
    const uint64_t line = l2_.line_of(address);
    if (far) {
        delay += cfg_.has_l1() ? l1_hit_ : l2_hit_;  // issue
        sync_(delay);
        return home_
            .request(id_, CohRequest::Atomic, line, nullptr, delay, &a, unsigned(address - line))
            .atomic_old;
    }
    Line& l = make_unique(line, delay);
    l.state = LineState::UD;
    return apply_atomic(a, l2_.data(l) + (address - line));
}

void CoherentCache::read_once(uint64_t address, uint8_t* bytes, unsigned length, sc_time& delay) {
    const uint64_t line = l2_.line_of(address);
    sync_(delay);
    home_.request(id_, CohRequest::ReadOnce, line, fill_.data(), delay);
    std::memcpy(bytes, fill_.data() + (address - line), length);
}

SnoopResponse CoherentCache::snoop(SnoopKind kind, uint64_t line_address, uint8_t* line,
                                   sc_time& /*delay: the home's snoop_ns covers the L2*/) {
    snoops_.add();
    SnoopResponse r;
    Line* l = l2_.probe(line_address);
    if (!l) return r;
    r.was_valid = true;
    r.before = l->state;
    if (is_dirty(l->state)) {
        r.data = true;
        std::memcpy(line, l2_.data(*l), l2_.line_bytes());
    }
    switch (kind) {
        case SnoopKind::Once:
            break;
        case SnoopKind::Shared:
            l->state = LineState::SC;
            break;
        case SnoopKind::Unique:
        case SnoopKind::Invalidate:
            snoop_invalidations_.add();
            if (monitor_armed_ && line_address == monitor_line_) {
                monitor_armed_ = false;
                monitor_event_.notify(sc_core::SC_ZERO_TIME);
            }
            l2_.invalidate(*l);
            if (Line* l1 = l1_.probe(line_address)) l1_.invalidate(*l1);
            break;
    }
    return r;
}

void CoherentCache::monitor(uint64_t address) {
    monitor_line_ = address / l2_.line_bytes() * l2_.line_bytes();
    // A line this cache does not hold would never be snooped here: the watch is cleared at once
    // (the waiter polls again, which brings the line in).
    monitor_armed_ = l2_.peek(monitor_line_) != nullptr;
}

bool CoherentCache::peek_dirty(uint64_t line_address, uint8_t* line) const {
    const Line* l = l2_.peek(line_address);
    if (!l || !is_dirty(l->state)) return false;
    std::memcpy(line, l2_.data(*l), l2_.line_bytes());
    return true;
}

}  // namespace canopy::core
