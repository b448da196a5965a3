#include "host/home_node.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/sim_time.hpp"

namespace canopy::host {

using core::CohRequest;
using core::LineState;
using core::SnoopKind;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

void HomeNodeConfig::describe(core::Params& p) {
    p("slc.size_bytes", slc.size_bytes, "B", "system-level cache (N1-SDP: 8 MiB in the CMN-600)",
      4096, 1ull << 32);
    p("slc.ways", slc.ways, "ways", "SLC associativity (assumed)", 1, 64);
    p("slc.line_bytes", slc.line_bytes, "B", "coherence granule (64 B, as CCIX)", 16, 4096);
    p("request_ns", request_ns, "ns",
      "mesh round trip and home pipeline per request (assumed; + slc_hit_ns = the ~50 ns host "
      "AtomicCompare of seeds/003 Exp. 5)",
      0.0, 1e6);
    p("slc_hit_ns", slc_hit_ns, "ns", "SLC data access (assumed, see request_ns)", 0.0, 1e6);
    p("snoop_ns", snoop_ns, "ns", "one snoop to a core's cache and back across the mesh (assumed)",
      0.0, 1e6);
}

void HomeNodeConfig::validate() const { slc.validate("host.home.slc"); }

HomeNode::HomeNode(sc_core::sc_module_name name, const HomeNodeConfig& cfg,
                   core::Services& services)
    : sc_module(name),
      memory_initiator("memory_initiator"),
      io_target("io_target"),
      cfg_((cfg.validate(), cfg)),
      t_request_(cfg_.request_ns, SC_NS),
      t_snoop_(cfg_.snoop_ns, SC_NS),
      t_slc_hit_(cfg_.slc_hit_ns, SC_NS),
      slc_(cfg.slc),
      snoop_buf_(cfg.slc.line_bytes),
      atomic_buf_(cfg.slc.line_bytes),
      snoops_(services.stats.counter(this->name(), "snoops", "snoops sent to requesters")),
      snoop_data_(
          services.stats.counter(this->name(), "snoop_data", "snoops that returned dirty data")),
      slc_hits_(services.stats.counter(this->name(), "slc.hits", "data found in the SLC")),
      slc_misses_(services.stats.counter(this->name(), "slc.misses", "data fetched from DRAM")),
      dram_reads_(services.stats.counter(this->name(), "dram.reads", "DRAM reads")),
      dram_writes_(services.stats.counter(this->name(), "dram.writes",
                                          "DRAM writes (SLC evictions, I/O writes)")),
      io_reads_(
          services.stats.counter(this->name(), "io.reads", "I/O-coherent reads (DMA, walks)")),
      io_writes_(services.stats.counter(this->name(), "io.writes", "I/O-coherent writes (DMA)")),
      errors_(services.stats.counter(this->name(), "io.errors",
                                     "I/O requests refused (address, command)", true)),
      latency_(services.stats.distribution(this->name(), "latency.request", "ns",
                                           "coherent request to response at the home", true)),
      hazard_wait_(services.stats.distribution(
          this->name(), "hazard_wait", "ns",
          "time a request waited for an earlier request to the same line")),
      services_(services),
      track_(services.trace.track(this->name())) {
    for (int i = 0; i < core::kCohRequests; ++i)
        requests_[i] = &services.stats.counter(
            this->name(), std::string("requests.") + core::to_string(CohRequest(i)),
            "coherent requests of this type");
    io_target.register_b_transport(this, &HomeNode::io_b_transport);
    io_target.register_transport_dbg(this, &HomeNode::io_dbg);
}

unsigned HomeNode::attach(core::Snoopable& cache, const std::string& name) {
    if (requesters_.size() >= kMaxRequesters)
        throw std::logic_error(std::string(this->name()) + ": more than " +
                               std::to_string(kMaxRequesters) + " requesters");
    requesters_.push_back({&cache, name});
    return unsigned(requesters_.size() - 1);
}

HomeNode::Holders HomeNode::holders(uint64_t address) const {
    auto it = lines_.find(slc_.line_of(address));
    return it == lines_.end() ? Holders{} : it->second.holders;
}

void HomeNode::forget_if_idle(uint64_t line_address) {
    auto it = lines_.find(line_address);
    if (it != lines_.end() && it->second.idle(sc_core::sc_time_stamp())) lines_.erase(it);
}

void HomeNode::memory_access(bool write, uint64_t address, uint8_t* bytes, uint64_t length,
                             sc_time& delay, bool debug) {
    tlm::tlm_generic_payload& gp = dram_gp_;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(bytes);
    gp.set_data_length(unsigned(length));
    gp.set_streaming_width(unsigned(length));
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (debug) {
        memory_initiator->transport_dbg(gp);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    } else {
        memory_initiator->b_transport(gp, delay);
        (write ? dram_writes_ : dram_reads_).add();
    }
    if (!gp.is_response_ok())
        throw std::out_of_range(std::string(name()) + ": DRAM refused " + std::to_string(length) +
                                " B at " + std::to_string(address));
}

sc_time HomeNode::snoop(uint64_t line_address, LineEntry& e, uint32_t mask, SnoopKind kind,
                        uint8_t* line, bool& got_data, const sc_time& at) {
    sc_time slowest = SC_ZERO_TIME;
    uint8_t* buf = snoop_buf_.data();
    Holders& h = e.holders;
    for (unsigned r = 0; r < requesters_.size(); ++r) {
        if (!(mask & (1u << r))) continue;
        snoops_.add();
        // The snooper sees the absolute offset (a snoop over the link occupies it then).
        sc_time t = at + t_snoop_;
        core::SnoopResponse resp = requesters_[r].cache->snoop(kind, line_address, buf, t);
        slowest = std::max(slowest, t - at);
        if (resp.data) {
            snoop_data_.add();
            got_data = true;
            std::memcpy(line, buf, line_bytes());
            if (kind != SnoopKind::Once) slc_write(line_address, buf);
        }
        if (kind == SnoopKind::Shared) {
            if (h.owner == int(r)) h.owner = -1;
        } else if (kind != SnoopKind::Once) {
            h.sharers &= ~(1u << r);
            if (h.owner == int(r)) h.owner = -1;
        }
    }
    return slowest;
}

sc_time HomeNode::fetch(uint64_t line_address, uint8_t* line) {
    if (auto* l = slc_.find(line_address)) {
        slc_hits_.add();
        std::memcpy(line, slc_.data(*l), line_bytes());
        return t_slc_hit_;
    }
    slc_misses_.add();
    // Assumed: the SLC lookup overlaps the DRAM request, so a miss costs DRAM's latency alone.
    sc_time t = SC_ZERO_TIME;
    memory_access(false, line_address, line, line_bytes(), t);
    return t;
}

void HomeNode::slc_write(uint64_t line_address, const uint8_t* line) {
    auto* l = slc_.find(line_address);
    if (!l) {
        auto& v = slc_.victim(line_address);
        if (core::is_dirty(v.state)) {
            sc_time posted = SC_ZERO_TIME;  // off every requester's path
            memory_access(true, v.address, slc_.data(v), line_bytes(), posted);
        }
        slc_.fill(v, line_address, LineState::UD, line);
        return;
    }
    std::memcpy(slc_.data(*l), line, line_bytes());
    l->state = LineState::UD;
}

HomeNode::Result HomeNode::request(unsigned requester, CohRequest req, uint64_t line_address,
                                   uint8_t* line, sc_time& delay, const core::AtomicRequest* atomic,
                                   unsigned offset) {
    const sc_time start = delay;
    requests_[int(req)]->add();
    const sc_time now = sc_core::sc_time_stamp();
    if (++requests_since_prune_ >= 4096) {  // forget lines nobody holds or can wait for
        requests_since_prune_ = 0;
        for (auto it = lines_.begin(); it != lines_.end();)
            it = it->second.idle(now) ? lines_.erase(it) : std::next(it);
    }
    LineEntry& e = lines_[line_address];
    sc_time& busy = e.busy_until;
    if (busy > now + delay) {
        hazard_wait_.sample(core::ns_of(busy - now - delay));
        delay = busy - now;
    }
    delay += t_request_;
    const uint32_t me = 1u << requester;
    Holders& h = e.holders;
    const uint32_t others = h.sharers & ~me;
    Result res;
    bool got = false;
    sc_time t_snoop = SC_ZERO_TIME, t_data = SC_ZERO_TIME;
    switch (req) {
        case CohRequest::ReadShared:
            if (h.owner >= 0 && h.owner != int(requester))
                t_snoop =
                    snoop(line_address, e, 1u << h.owner, SnoopKind::Shared, line, got, delay);
            if (!got) t_data = fetch(line_address, line);
            res.granted = (h.sharers & ~me) ? LineState::SC : LineState::UC;
            h.sharers |= me;
            if (res.granted == LineState::UC) h.owner = int(requester);
            break;
        case CohRequest::CleanUnique:
            if (h.sharers & me) {  // still holds its shared copy: no data needed
                if (others)
                    t_snoop =
                        snoop(line_address, e, others, SnoopKind::Invalidate, line, got, delay);
                res.granted = LineState::UC;
                h.sharers = me;
                h.owner = int(requester);
                break;
            }
            [[fallthrough]];  // lost it meanwhile: a read-unique
        case CohRequest::ReadUnique:
            if (others)
                t_snoop = snoop(line_address, e, others, SnoopKind::Unique, line, got, delay);
            if (!got) t_data = fetch(line_address, line);
            res.granted = LineState::UC;
            h.sharers = me;
            h.owner = int(requester);
            break;
        case CohRequest::ReadOnce:
            if (h.owner >= 0)
                t_snoop = snoop(line_address, e, 1u << h.owner, SnoopKind::Once, line, got, delay);
            if (!got) t_data = fetch(line_address, line);
            break;
        case CohRequest::ReadNoSnoop:
            t_data = fetch(line_address, line);
            break;
        case CohRequest::WriteUnique:
            if (h.sharers)
                t_snoop =
                    snoop(line_address, e, h.sharers, SnoopKind::Invalidate, line, got, delay);
            [[fallthrough]];
        case CohRequest::WriteNoSnoop:
            if (slc_.peek(line_address)) {
                slc_write(line_address, line);
            } else {
                memory_access(true, line_address, line, line_bytes(), t_data);
            }
            break;
        case CohRequest::WriteBack:
            slc_write(line_address, line);
            [[fallthrough]];
        case CohRequest::Evict:
            h.sharers &= ~me;
            if (h.owner == int(requester)) h.owner = -1;
            break;
        case CohRequest::Atomic: {
            if (!atomic) throw std::logic_error("HomeNode::request: Atomic without its operands");
            uint8_t* data = atomic_buf_.data();
            if (h.sharers)
                t_snoop = snoop(line_address, e, h.sharers, SnoopKind::Unique, data, got, delay);
            if (!got) t_data = fetch(line_address, data);
            if (offset + atomic->size > line_bytes())
                throw std::logic_error("HomeNode::request: atomic crosses a line");
            res.atomic_old = core::apply_atomic(*atomic, data + offset);
            slc_write(line_address, data);
            if (line) std::memcpy(line, data, line_bytes());
            break;
        }
    }
    delay += t_snoop + t_data;
    // Write-backs and evictions leave the line at once (the write buffer's data is taken).
    if (req != CohRequest::WriteBack && req != CohRequest::Evict) busy = now + delay;
    if (e.idle(now)) lines_.erase(line_address);
    latency_.sample(core::ns_of(delay - start));
    if (services_.trace.enabled())
        services_.trace.complete(track_, core::to_string(req), "host", now + start, delay - start,
                                 services_.trace.current_flow(),
                                 {{"line", core::TransactionTrace::hex(line_address)},
                                  {"requester", requesters_[requester].name}});
    return res;
}

sc_time HomeNode::newest(uint64_t line_address, uint8_t* line, bool invalidate, bool& got,
                         const sc_time& at) {
    auto it = lines_.find(line_address);
    if (it == lines_.end()) return SC_ZERO_TIME;
    LineEntry& e = it->second;
    const Holders h = e.holders;
    sc_time t = SC_ZERO_TIME;
    if (invalidate)
        t = snoop(line_address, e, h.sharers, SnoopKind::Unique, line, got, at);  // dirty -> SLC
    else if (h.owner >= 0)
        t = snoop(line_address, e, 1u << h.owner, SnoopKind::Once, line, got, at);
    forget_if_idle(line_address);
    return t;
}

void HomeNode::io_b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    const uint64_t a = gp.get_address(), n = gp.get_data_length();
    const bool write = gp.is_write();
    if ((!write && !gp.is_read()) || n == 0 || !gp.get_data_ptr() || gp.get_byte_enable_ptr() ||
        gp.get_streaming_width() < n) {
        errors_.add();
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    (write ? io_writes_ : io_reads_).add();
    const sc_time start = sc_core::sc_time_stamp() + delay;
    const uint64_t lb = line_bytes();
    const uint64_t first = a & ~(lb - 1), end = a + n;
    sc_time t_snoop = SC_ZERO_TIME;
    bool all_in_slc = true;
    // Dirty copies held unique elsewhere: a write takes them home (to the SLC) and every copy
    // away; a read gets them with a Once snoop and overlays them below.
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> dirty;
    std::vector<uint8_t> line(lb);
    for (uint64_t l = first; l < end; l += lb) {
        bool got = false;
        t_snoop = std::max(t_snoop, newest(l, line.data(), write, got, delay));
        if (got && !write) dirty.emplace_back(l, line);
        all_in_slc = all_in_slc && slc_.peek(l);
    }
    sc_time t_data = SC_ZERO_TIME;
    uint8_t* p = gp.get_data_ptr();
    try {
        if (write) {
            memory_access(true, a, p, n, t_data);
        } else if (!all_in_slc) {
            memory_access(false, a, p, n, t_data);
        } else {
            t_data = t_slc_hit_;
        }
    } catch (const std::out_of_range&) {
        errors_.add();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    auto overlay = [&](uint64_t l, uint8_t* data) {
        const uint64_t lo = std::max(l, a), hi = std::min(l + lb, end);
        if (write)
            std::memcpy(data + (lo - l), p + (lo - a), hi - lo);
        else
            std::memcpy(p + (lo - a), data + (lo - l), hi - lo);
    };
    // The SLC's lines (newer than DRAM when dirty) overlay reads and take writes.
    for (uint64_t l = first; l < end; l += lb)
        if (auto* s = slc_.find(l)) overlay(l, slc_.data(*s));
    for (auto& [l, data] : dirty) overlay(l, data.data());
    delay += t_snoop + t_data;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    if (services_.trace.enabled()) {
        services_.trace.complete(
            track_, write ? "io write" : "io read", "host", start, t_snoop + t_data,
            core::flow_of(gp),
            {{"address", core::TransactionTrace::hex(a)}, {"bytes", std::to_string(n)}});
    }
}

void HomeNode::read_coherent(uint64_t address, uint8_t* bytes, uint64_t length) {
    sc_time unused = SC_ZERO_TIME;
    memory_access(false, address, bytes, length, unused, true);
    const uint64_t lb = line_bytes(), end = address + length;
    std::vector<uint8_t> line(lb);
    for (uint64_t l = address & ~(lb - 1); l < end; l += lb) {
        const uint64_t lo = std::max(l, address), hi = std::min(l + lb, end);
        const uint8_t* src = nullptr;
        auto it = lines_.find(l);
        if (it != lines_.end() && it->second.holders.owner >= 0 &&
            requesters_[it->second.holders.owner].cache->peek_dirty(l, line.data()))
            src = line.data();
        else if (const auto* s = slc_.peek(l))
            src = slc_.data(*s);
        if (src) std::memcpy(bytes + (lo - address), src + (lo - l), hi - lo);
    }
}

void HomeNode::write_coherent(uint64_t address, const uint8_t* bytes, uint64_t length) {
    const uint64_t lb = line_bytes(), end = address + length;
    std::vector<uint8_t> line(lb);
    for (uint64_t l = address & ~(lb - 1); l < end; l += lb) {
        bool got = false;
        newest(l, line.data(), true, got);
        if (auto* s = slc_.find(l)) {
            const uint64_t lo = std::max(l, address), hi = std::min(l + lb, end);
            std::memcpy(slc_.data(*s) + (lo - l), bytes + (lo - address), hi - lo);
        }
    }
    sc_time unused = SC_ZERO_TIME;
    memory_access(true, address, const_cast<uint8_t*>(bytes), length, unused, true);
}

void HomeNode::discard(uint64_t address, uint64_t length) {
    const uint64_t lb = line_bytes(), first = address & ~(lb - 1), end = address + length;
    auto in_range = [&](uint64_t l) { return l >= first && l < end; };
    std::vector<uint8_t> scratch(lb);
    std::vector<uint64_t> lines;
    for (const auto& [l, e] : lines_)
        if (in_range(l)) lines.push_back(l);
    for (uint64_t l : lines) {
        bool got = false;
        LineEntry& e = lines_.at(l);
        snoop(l, e, e.holders.sharers, SnoopKind::Invalidate, scratch.data(), got);
        e.holders = Holders{};
        forget_if_idle(l);
    }
    // The SLC may hold the snooped dirty data now too: drop it with the rest.
    slc_.for_each_valid([&](core::CacheArray::Line& l) {
        if (in_range(l.address)) slc_.invalidate(l);
    });
}

unsigned HomeNode::io_dbg(tlm::tlm_generic_payload& gp) {
    const unsigned n = gp.get_data_length();
    try {
        if (gp.is_write())
            write_coherent(gp.get_address(), gp.get_data_ptr(), n);
        else
            read_coherent(gp.get_address(), gp.get_data_ptr(), n);
    } catch (const std::out_of_range&) {
        return 0;
    }
    return n;
}

}  // namespace canopy::host
