#include "ssd/pcie_bridge.hpp"

#include <algorithm>
#include <cstring>

namespace canopy::ssd {

using core::Access;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
constexpr uint64_t kEnable = 1u << 0, kIrqEnable = 1u << 1, kCoherent = 1u << 2;
constexpr uint64_t kStatusEnabled = 1u << 0, kStatusConfigError = 1u << 1;
// The queue-pair registers a write stores into the selected queue pair.
const char* const kQueueRegs[] = {
    "qp_hre",     "qp_window_base", "qp_window_bytes", "qp_sq_base",  "qp_cq_base",
    "qp_rx_base", "qp_sq_entries",  "qp_cq_entries",   "qp_rx_bytes", "qp_shadow_base"};
}  // namespace

void BridgeConfig::describe(core::Params& p) {
    p("queue_pairs", queue_pairs, "", "HRE queue pairs [Willow 3.2: 1,024]", 1, 1u << 16)(
        "entry_ns", entry_ns, "ns",
        "engine time per entry or message besides its DMA [assumed: 8 cycles at 250 MHz]", 0.0,
        1e6)("posted_flight_ns", posted_flight_ns, "ns",
             "the part of a posted write's latency after it left the bridge, which the deliver "
             "engine does not wait for [assumed: the link's one-way layer latency]",
             0.0, 1e6)("fetch_burst", fetch_burst, "",
                       "submission entries read at once from one queue (1: one at a time)", 1, 64);
    bank.describe(p);
}

core::RegisterMap PcieBridge::register_map() {
    auto addr64 = [](const char* n, uint64_t off, const char* d) {
        return core::Register(n, off, 64, Access::RW, 0, d);
    };
    auto rw32 = [](const char* n, uint64_t off, const char* d) {
        return core::Register(n, off, 32, Access::RW, 0, d);
    };
    auto ro32 = [](const char* n, uint64_t off, const char* d) {
        return core::Register(n, off, 32, Access::RO, 0, d);
    };
    return core::RegisterMap(
        "bridge",
        "Willow's PCIe bridge: HRE queue-pair set-up (host kernel only) and counters; the "
        "doorbell pages are a window of their own (hre_queue.h)",
        {
            ro32("queues", 0x00, "queue pairs the bridge holds"),
            rw32("qp_select", 0x04,
                 "queue pair the qp_* registers show and set (values >= queues are ignored)"),
            {"qp_control",
             0x08,
             32,
             Access::RW,
             0,
             "the selected queue pair's switches",
             {{"enable", 0, 1,
               "1: check the set-up and start serving the queue pair (heads and tails from 0); "
               "0: stop"},
              {"irq_enable", 1, 1, "raise the queue pair's MSI for every completion written"},
              {"coherent", 2, 1,
               "serve the queue over CCIX: watch the submission queue's lines instead of the SQ "
               "tail doorbell, read the CQ and RX heads from the shadow line (needs the CCIX "
               "request agent)"}}},
            rw32("qp_hre", 0x0C,
                 "the HRE ID stamped as originating HRE on every request the queue sends (high "
                 "bits: the process's prefix, 0 for the kernel; low 10 bits: the queue pair)"),
            addr64("qp_window_base", 0x10,
                   "host address of the HRE's DMA window: everything it names must lie inside"),
            addr64("qp_window_bytes", 0x18, "bytes of the DMA window"),
            addr64("qp_sq_base", 0x20, "host address of the submission queue"),
            addr64("qp_cq_base", 0x28, "host address of the completion queue"),
            addr64("qp_rx_base", 0x30, "host address of the receive buffer"),
            rw32("qp_sq_entries", 0x38, "submission queue entries (64 B each)"),
            rw32("qp_cq_entries", 0x3C, "completion queue entries (32 B each)"),
            rw32("qp_rx_bytes", 0x40, "receive buffer bytes"),
            {"qp_status",
             0x44,
             32,
             Access::RO,
             0,
             "the selected queue pair's state",
             {{"enabled", 0, 1, "being served"},
              {"config_error", 1, 1,
               "the last enable was refused (empty queue, a queue or buffer outside the window, "
               "coherent without a request agent), a set-up register was written while enabled, "
               "or a coherent queue's memory could not be read (the queue stopped)"}}},
            ro32("fetched", 0x48, "submission entries fetched (wraps)"),
            ro32("completions", 0x4C, "completion entries written (wraps)"),
            ro32("nacked", 0x50, "SPU requests to HREs answered with a NACK (wraps)"),
            ro32("refused", 0x54, "host entries failed as malformed or outside the window (wraps)"),
            addr64("qp_shadow_base", 0x58,
                   "coherent queues: host address of the shadow line holding the host's CQ and RX "
                   "heads (hre_queue.h)"),
        });
}

PcieBridge::PcieBridge(sc_core::sc_module_name name, NetworkInterface& ni, core::Services& services,
                       const BridgeConfig& cfg)
    : sc_module(name),
      ctl("ctl"),
      doorbells("doorbells"),
      host("host"),
      cfg_(cfg),
      ni_(ni),
      bank_("bank", register_map(), services, cfg.bank),
      qps_(cfg.queue_pairs),
      outstanding_(1u << 16),
      queued_(cfg.queue_pairs, false),
      fetched_(services.stats.counter(this->name(), "fetched", "submission entries fetched", true)),
      completions_(
          services.stats.counter(this->name(), "completions", "completion entries written")),
      requests_up_(
          services.stats.counter(this->name(), "requests_up", "SPU requests delivered to HREs")),
      nacked_(services.stats.counter(this->name(), "nacked", "SPU requests to HREs NACKed")),
      refused_(services.stats.counter(this->name(), "refused",
                                      "host entries failed (malformed, outside the window)")),
      bad_doorbells_(services.stats.counter(this->name(), "bad_doorbells",
                                            "doorbell accesses and shadow heads refused")),
      in_flight_(services.stats.distribution(
          this->name(), "in_flight", "requests",
          "host requests sent to SPUs and not yet answered, as each one is sent (itself "
          "included): the device's queue depth")) {
    ctl.bind(bank_.socket);
    bank_.write("queues", cfg.queue_pairs);
    bank_.on_write("qp_select", [this](const core::RegisterAccess&) {
        select_queue(uint32_t(bank_.read("qp_select")));
    });
    for (const char* r : kQueueRegs)
        bank_.on_write(r, [this](const core::RegisterAccess&) { queue_written(); });
    bank_.on_write("qp_control", [this](const core::RegisterAccess&) { enable_written(); });
    auto counter = [this](const char* reg, core::Counter& c) {
        bank_.on_read(reg, [&c](core::RegisterAccess& a) { a.value = c.value() & 0xffffffffu; });
    };
    counter("fetched", fetched_);
    counter("completions", completions_);
    counter("nacked", nacked_);
    counter("refused", refused_);
    doorbells.register_b_transport(this, &PcieBridge::doorbell);
    select_queue(0);
    SC_THREAD(fetch_engine);
    SC_THREAD(deliver_engine);
}

// ---- set-up --------------------------------------------------------------------------------

void PcieBridge::select_queue(uint32_t qp) {
    if (qp >= cfg_.queue_pairs) return;
    selected_ = qp;
    const QueuePair& q = qps_[qp];
    bank_.write("qp_control", (q.enabled ? kEnable : 0) | (q.irq ? kIrqEnable : 0) |
                                  (q.coherent ? kCoherent : 0));
    bank_.write("qp_hre", q.hre);
    bank_.write("qp_window_base", q.window_base);
    bank_.write("qp_window_bytes", q.window_bytes);
    bank_.write("qp_sq_base", q.sq_base);
    bank_.write("qp_cq_base", q.cq_base);
    bank_.write("qp_rx_base", q.rx_base);
    bank_.write("qp_sq_entries", q.sq_entries);
    bank_.write("qp_cq_entries", q.cq_entries);
    bank_.write("qp_rx_bytes", q.rx_bytes);
    bank_.write("qp_shadow_base", q.shadow_base);
    bank_.write("qp_status", q.enabled ? kStatusEnabled : 0);
}

void PcieBridge::queue_written() {
    QueuePair& q = qps_[selected_];
    if (q.enabled) {  // a live queue's set-up does not change under it
        bank_.write("qp_status", kStatusEnabled | kStatusConfigError);
        select_queue(selected_);
        return;
    }
    q.hre = uint32_t(bank_.read("qp_hre"));
    q.window_base = bank_.read("qp_window_base");
    q.window_bytes = bank_.read("qp_window_bytes");
    q.sq_base = bank_.read("qp_sq_base");
    q.cq_base = bank_.read("qp_cq_base");
    q.rx_base = bank_.read("qp_rx_base");
    q.sq_entries = uint32_t(bank_.read("qp_sq_entries"));
    q.cq_entries = uint32_t(bank_.read("qp_cq_entries"));
    q.rx_bytes = uint32_t(bank_.read("qp_rx_bytes"));
    q.shadow_base = bank_.read("qp_shadow_base");
}

bool PcieBridge::in_window(const QueuePair& q, uint64_t addr, uint64_t bytes) const {
    return addr >= q.window_base && bytes <= q.window_bytes &&
           addr - q.window_base <= q.window_bytes - bytes;
}

void PcieBridge::enable_written() {
    QueuePair& q = qps_[selected_];
    const uint64_t control = bank_.read("qp_control");
    q.irq = (control & kIrqEnable) != 0;
    const bool want = (control & kEnable) != 0, coherent = (control & kCoherent) != 0;
    if (want && !q.enabled) {
        // Coherent queues watch whole lines: their entries and the shadow line are line-aligned.
        const bool ok = q.sq_entries > 0 && q.cq_entries > 0 &&
                        in_window(q, q.sq_base, uint64_t(q.sq_entries) * HRE_SQ_ENTRY_BYTES) &&
                        in_window(q, q.cq_base, uint64_t(q.cq_entries) * HRE_CQ_ENTRY_BYTES) &&
                        in_window(q, q.rx_base, q.rx_bytes) &&
                        (!coherent || (ra_ && q.sq_base % HRE_SHADOW_BYTES == 0 &&
                                       q.shadow_base % HRE_SHADOW_BYTES == 0 &&
                                       in_window(q, q.shadow_base, HRE_SHADOW_BYTES)));
        if (!ok) {
            bank_.write("qp_control", control & ~kEnable);
            bank_.write("qp_status", kStatusConfigError);
            return;
        }
        q.sq_head = q.sq_tail = 0;
        q.sq_phase = true;
        q.wake_at = SC_ZERO_TIME;
        q.cq_written = q.cq_consumed = 0;
        q.rx_tail = q.rx_head = 0;
        q.pending.clear();
        q.coherent = coherent;
        // A coherent queue starts watching its first slot.
        if (coherent && !queued_[selected_]) queued_[selected_] = true, ready_.push_back(selected_);
        work_.notify(SC_ZERO_TIME);
    }
    if (!want) unwatch_all(q);
    q.enabled = want;
    bank_.write("qp_status", q.enabled ? kStatusEnabled : 0);
}

void PcieBridge::unwatch_all(QueuePair& q) {
    for (uint64_t* line : {&q.watched_sq, &q.watched_shadow})
        if (*line) ra_->unwatch(*line), *line = 0;
}

// ---- doorbells -----------------------------------------------------------------------------

void PcieBridge::doorbell(tlm::tlm_generic_payload& gp, sc_time& delay) {
    const uint64_t off = gp.get_address();
    const uint32_t qp = uint32_t(off / HRE_DOORBELL_PAGE_BYTES),
                   reg = uint32_t(off % HRE_DOORBELL_PAGE_BYTES);
    delay += sc_time(cfg_.bank.access_ns, SC_NS);
    if (gp.is_read() && gp.get_data_length() == 4 && qp < cfg_.queue_pairs && !(reg & 3)) {
        // The SQ head reads back; the doorbells themselves are write-only (read 0).
        const uint32_t v = reg == HRE_DOORBELL_SQ_HEAD ? qps_[qp].sq_head : 0;
        std::memcpy(gp.get_data_ptr(), &v, 4);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (!gp.is_write() || gp.get_data_length() != 4 || (reg & 3) || qp >= cfg_.queue_pairs ||
        reg > HRE_DOORBELL_RX_HEAD) {
        bad_doorbells_.add();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    uint32_t v;
    std::memcpy(&v, gp.get_data_ptr(), 4);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    QueuePair& q = qps_[qp];
    if (!q.enabled) {
        bad_doorbells_.add();
        return;
    }
    bool ok;
    if (reg == HRE_DOORBELL_SQ_TAIL) {
        // A coherent queue has no tail doorbell: the bridge watches the queue itself.
        ok = v < q.sq_entries && !q.coherent;
        if (ok) {
            q.sq_tail = v;
            if (!queued_[qp]) queued_[qp] = true, ready_.push_back(qp);
        }
    } else {
        ok = reg == HRE_DOORBELL_CQ_HEAD ? set_cq_head(q, v) : set_rx_head(q, v);
    }
    if (!ok) return bad_doorbells_.add();
    work_.notify(delay);
}

bool PcieBridge::set_cq_head(QueuePair& q, uint32_t slot) {
    if (slot >= q.cq_entries) return false;
    // The head is a slot; the running count moves forward to it, never past what was written.
    const uint64_t step = (slot + q.cq_entries - q.cq_consumed % q.cq_entries) % q.cq_entries;
    q.cq_consumed = std::min(q.cq_consumed + step, q.cq_written);
    return true;
}

bool PcieBridge::set_rx_head(QueuePair& q, uint32_t count) {
    // A running byte count (32-bit, wrapping), never beyond what was handed out.
    if (uint32_t(q.rx_tail - count) > q.rx_bytes) return false;
    q.rx_head = count;
    return true;
}

// ---- the engine ------------------------------------------------------------------------------

bool PcieBridge::dma(bool write, uint64_t addr, void* data, uint32_t bytes) {
    tlm::tlm_generic_payload gp;
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(bytes);
    gp.set_streaming_width(bytes);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = SC_ZERO_TIME;
    host->b_transport(gp, d);
    // A read waits for its completion; a posted write only until it has left (the link keeps
    // later writes behind it, in order).
    const sc_time flight(write ? cfg_.posted_flight_ns : 0.0, SC_NS);
    wait(d > flight ? d - flight : SC_ZERO_TIME);
    return gp.is_response_ok();
}

uint16_t PcieBridge::new_tag(uint32_t qp, uint16_t host_tag) {
    // Round robin from the last tag given: a tag is not reused soon after its response.
    for (size_t i = 0; i < outstanding_.size(); ++i) {
        next_tag_ = uint16_t(next_tag_ + 1);
        if (!outstanding_[next_tag_].used) break;
    }
    outstanding_[next_tag_] = {true, qp, host_tag};
    in_flight_.sample(double(++outstanding_count_));
    return next_tag_;  // the network interface has fewer response slots than tags: always free
}

void PcieBridge::release_tag(uint16_t tag) {
    outstanding_[tag].used = false;
    --outstanding_count_;
}

void PcieBridge::fetch_engine() {
    while (true) {
        if (ready_.empty() || ni_.response_slots_free() == 0) {
            wait(work_);
            continue;
        }
        const uint32_t qp = ready_.front();
        ready_.pop_front();
        queued_[qp] = false;
        const QueuePair& q = qps_[qp];
        // A coherent queue that had an entry looks at its next slot (and watches it).
        const bool more = q.coherent ? fetch_coherent(qp) : (fetch(qp), q.sq_head != q.sq_tail);
        if (q.enabled && more && !queued_[qp]) queued_[qp] = true, ready_.push_back(qp);
    }
}

void PcieBridge::deliver_engine() {
    while (true) {
        bool did = false;
        while (ni_.has_response()) deliver_response(), did = true;
        while (ni_.has_request()) deliver_request(), did = true;
        // The queue pairs with completions to write, in ascending order; one that gets some
        // while an earlier one's are written (the DMA waits) is taken in this pass if it comes
        // later, in the next otherwise.
        for (auto it = with_pending_.begin(); it != with_pending_.end();) {
            const uint32_t qp = *it;
            if (!qps_[qp].pending.empty()) flush_completions(qp);
            if (qps_[qp].pending.empty()) with_pending_.erase(qp);
            it = with_pending_.upper_bound(qp);
        }
        if (did) work_.notify(SC_ZERO_TIME);  // responses freed slots for the fetch engine
        if (!did) wait(work_ | ni_.arrival_event());
    }
}

void PcieBridge::fetch(uint32_t qp) {
    QueuePair& q = qps_[qp];
    if (!q.enabled || q.sq_head == q.sq_tail) return;
    // The entries up to the tail (not past the ring's end) in one read, as NVMe controllers
    // fetch, at most fetch_burst and no more than the free response slots.
    const uint32_t ahead = q.sq_tail > q.sq_head ? q.sq_tail - q.sq_head : q.sq_entries - q.sq_head;
    const uint32_t n = std::max(1u, std::min({ahead, cfg_.fetch_burst, ni_.response_slots_free()}));
    std::vector<hre_sq_entry> es(n);
    const bool read_ok = dma(false, q.sq_base + uint64_t(q.sq_head) * HRE_SQ_ENTRY_BYTES, es.data(),
                             n * HRE_SQ_ENTRY_BYTES);
    const sc_time entry(cfg_.entry_ns, SC_NS);
    for (const hre_sq_entry& e : es) {
        process(qp, e, read_ok);
        wait(entry);
    }
}

bool PcieBridge::fetch_coherent(uint32_t qp) {
    QueuePair& q = qps_[qp];
    // The snoop that woke the queue reached the bridge at wake_at.
    if (q.wake_at > sc_core::sc_time_stamp()) wait(q.wake_at - sc_core::sc_time_stamp());
    if (!q.enabled || !q.coherent) return false;
    // Watched before the read: a host write racing the read still wakes the queue.
    const uint64_t line = q.sq_base + uint64_t(q.sq_head) * HRE_SQ_ENTRY_BYTES;
    ra_->watch(line, [this, qp](const sc_time& at) { wake(qp, at); });
    q.watched_sq = line;
    hre_sq_entry e;
    sc_time d = SC_ZERO_TIME;
    const bool ok = ra_->read_physical(line, &e, sizeof e, d).ok;
    wait(d);
    if (!q.enabled) return false;  // stopped meanwhile (which dropped the watch)
    if (!ok) {  // the queue's own memory failed: stop it rather than fail every slot after it
        refused_.add();
        unwatch_all(q);
        q.enabled = false;
        if (selected_ == qp) bank_.write("qp_status", kStatusConfigError);
        return false;
    }
    if (((e.flags & HRE_FLAG_PHASE) != 0) != q.sq_phase) return false;  // the watch wakes it
    ra_->unwatch(line);
    q.watched_sq = 0;
    process(qp, e, true);
    wait(sc_time(cfg_.entry_ns, SC_NS));
    return true;
}

void PcieBridge::wake(uint32_t qp, const sc_time& at) {
    QueuePair& q = qps_[qp];
    q.watched_sq = 0;
    q.wake_at = at;
    if (!queued_[qp]) queued_[qp] = true, ready_.push_back(qp);
    notify_at(at);
}

void PcieBridge::notify_at(const sc_time& at) {
    const sc_time now = sc_core::sc_time_stamp();
    work_.notify(at > now ? at - now : SC_ZERO_TIME);
}

void PcieBridge::refresh_heads(uint32_t qp) {
    QueuePair& q = qps_[qp];
    if (!q.coherent || !q.enabled) return;
    // Watched before the read, as the SQ lines: the host's next head store wakes the engines.
    ra_->watch(q.shadow_base, [this, qp](const sc_time& at) {
        qps_[qp].watched_shadow = 0;
        notify_at(at);
    });
    q.watched_shadow = q.shadow_base;
    uint32_t heads[2];
    sc_time d = SC_ZERO_TIME;
    const bool ok = ra_->read_physical(q.shadow_base, heads, sizeof heads, d).ok;
    wait(d);
    if (!ok || !q.enabled) return;
    // The CQ head is a running count here, never beyond what was written.
    const uint32_t consumed = heads[HRE_SHADOW_CQ_HEAD / 4] - uint32_t(q.cq_consumed);
    if (consumed <= q.cq_written - q.cq_consumed)
        q.cq_consumed += consumed;
    else
        bad_doorbells_.add();
    if (!set_rx_head(q, heads[HRE_SHADOW_RX_HEAD / 4])) bad_doorbells_.add();
}

bool PcieBridge::read_host(const QueuePair& q, uint64_t addr, void* data, uint32_t bytes) {
    if (!q.coherent) return dma(false, addr, data, bytes);
    sc_time d = SC_ZERO_TIME;
    const bool ok = ra_->read_physical(addr, data, bytes, d, false).ok;
    wait(d);
    return ok;
}

void PcieBridge::process(uint32_t qp, const hre_sq_entry& e, bool read_ok) {
    QueuePair& q = qps_[qp];
    // The slot is free for the host again only once its payload has been read.
    struct Advance {
        QueuePair& q;
        ~Advance() {
            q.sq_head = (q.sq_head + 1) % q.sq_entries;
            if (q.sq_head == 0) q.sq_phase = !q.sq_phase;
        }
    } advance{q};
    fetched_.add();
    hre_cq_entry fail{};
    fail.kind = HRE_KIND_RESPONSE;
    fail.node = e.node;
    fail.tag = e.tag;
    auto refuse = [&](uint32_t status) {
        refused_.add();
        fail.status = status;
        complete(qp, fail);
    };
    if (!read_ok) return refuse(HRE_STATUS_BAD_ADDRESS);
    sc_time delay = SC_ZERO_TIME;
    if (e.kind == HRE_KIND_RESPONSE) {
        if (ni_.send_response(e.node, e.tag, e.result, delay) != NiStatus::Ok)
            return refuse(HRE_STATUS_BAD_ENTRY);
        return;
    }
    const bool inline_payload = (e.flags & HRE_FLAG_INLINE) != 0;
    if (e.kind != HRE_KIND_REQUEST || (inline_payload && e.length > HRE_INLINE_BYTES) ||
        e.length > ni_.config().max_request_bytes)
        return refuse(HRE_STATUS_BAD_ENTRY);
    std::vector<uint8_t> payload(e.length);
    if (e.length == 0) {
        // nothing to carry
    } else if (inline_payload) {
        std::memcpy(payload.data(), e.inline_payload, e.length);
    } else {
        if (!in_window(q, e.payload_addr, e.length)) return refuse(HRE_STATUS_BAD_ADDRESS);
        if (!read_host(q, e.payload_addr, payload.data(), e.length))
            return refuse(HRE_STATUS_BAD_ADDRESS);
    }
    const uint16_t tag = new_tag(qp, e.tag);
    ni_.set_origin(q.hre);  // the queue's HRE, whatever the entry says: not forgeable
    NiStatus s = ni_.begin_request(e.node, e.rpc_id, tag, e.length);
    if (s == NiStatus::Ok && e.length) s = ni_.append(payload.data(), payload.size());
    if (s == NiStatus::Ok) s = ni_.finish_request(delay);
    if (s != NiStatus::Ok) {
        ni_.abort_request();
        release_tag(tag);
        return refuse(HRE_STATUS_BAD_ENTRY);
    }
}

void PcieBridge::deliver_response() {
    const MessageHeader h = *ni_.response_head();
    ni_.pop_response();
    Outstanding& o = outstanding_[h.tag];
    if (!o.used) return;  // not ours (the network interface counts unexpected responses)
    release_tag(h.tag);
    hre_cq_entry e{};
    e.kind = HRE_KIND_RESPONSE;
    e.node = h.src;
    e.tag = o.host_tag;
    e.result = h.result;
    e.status = h.nack ? HRE_STATUS_NACK : HRE_STATUS_OK;
    complete(o.qp, e);
}

void PcieBridge::deliver_request() {
    const MessageHeader h = *ni_.request_head();
    const uint32_t qp = h.dst_hre & ((1u << kHreIndexBits) - 1);
    sc_time delay = SC_ZERO_TIME;
    auto nack = [&] {
        nacked_.add();
        ni_.pop_request();
        ni_.send_nack(h.src, h.tag, delay);
    };
    if (qp >= cfg_.queue_pairs || !qps_[qp].enabled) return nack();
    QueuePair& q = qps_[qp];
    // A contiguous piece of the receive buffer: skip the tail end when it does not fit.
    uint32_t off = uint32_t(q.rx_tail % std::max<uint32_t>(q.rx_bytes, 1));
    const uint32_t skip = off + h.length > q.rx_bytes ? q.rx_bytes - off : 0;
    if (skip) off = 0;
    auto no_room = [&] {
        return cq_full(q) || h.length > q.rx_bytes ||
               uint32_t(q.rx_tail - q.rx_head) + skip + h.length > q.rx_bytes;
    };
    // A coherent queue's heads are in host memory: read them before giving up.
    if (no_room() && q.coherent) refresh_heads(qp);
    if (!q.enabled || no_room()) return nack();
    std::vector<uint8_t> payload(h.length);
    ni_.read_request(payload.data(), payload.size());
    ni_.pop_request();
    if (h.length && !dma(true, q.rx_base + off, payload.data(), h.length)) return;
    q.rx_tail += skip + h.length;
    hre_cq_entry e{};
    e.kind = HRE_KIND_REQUEST;
    e.node = h.src;
    e.tag = h.tag;
    e.rpc_id = h.rpc_id;
    e.length = h.length;
    e.rx_offset = off;
    e.origin = h.origin_hre;
    requests_up_.add();
    complete(qp, e);
}

void PcieBridge::complete(uint32_t qp, const hre_cq_entry& e) {
    qps_[qp].pending.push_back(e);
    with_pending_.insert(qp);
    work_.notify(SC_ZERO_TIME);  // the deliver engine writes it
}

void PcieBridge::flush_completions(uint32_t qp) {
    QueuePair& q = qps_[qp];
    // A coherent queue's CQ head is in host memory: read it when the queue looks full (and, while
    // it stays full, the watch on the shadow line wakes the engine when the host moves it).
    if (q.coherent && q.enabled && q.cq_written - q.cq_consumed >= q.cq_entries &&
        !q.watched_shadow)
        refresh_heads(qp);
    while (!q.pending.empty() && q.enabled && q.cq_written - q.cq_consumed < q.cq_entries) {
        hre_cq_entry e = q.pending.front();
        q.pending.pop_front();
        const uint64_t pass = q.cq_written / q.cq_entries;
        e.phase = (pass % 2 == 0) ? 1 : 0;
        const uint64_t slot = q.cq_written % q.cq_entries;
        ++q.cq_written;
        dma(true, q.cq_base + slot * HRE_CQ_ENTRY_BYTES, &e, HRE_CQ_ENTRY_BYTES);
        completions_.add();
        if (q.irq && irq_) irq_(qp, sc_core::sc_time_stamp());
    }
}

}  // namespace canopy::ssd
