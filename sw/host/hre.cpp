#include "sw/host/hre.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ssd/hre_queue.h"

namespace canopy::sw {

Hre::Hre(host::HostCore& cpu, const HreEndpoint& endpoint, HreConfig cfg)
    : cpu_(cpu), ep_(endpoint), cfg_(cfg) {}

void Hre::doorbell(uint32_t offset, uint32_t value) {
    cpu_.store<uint32_t>(ep_.doorbell_va + offset, value);
}

void Hre::publish_head(uint32_t doorbell_offset, uint32_t doorbell_value, uint32_t shadow_offset,
                       uint32_t shadow_value) {
    // A coherent queue's heads are ordinary stores to the shadow line, which the bridge reads
    // only when it runs out of room.
    if (ep_.coherent)
        cpu_.store<uint32_t>(ep_.window_va + ep_.layout.shadow_offset() + shadow_offset,
                             shadow_value);
    else
        doorbell(doorbell_offset, doorbell_value);
}

void Hre::copy_in(uint64_t va, const uint8_t* src, uint32_t bytes) {
    for (uint32_t done = 0; done < bytes;) {
        const uint32_t n = std::min<uint32_t>(64 - uint32_t((va + done) % 64), bytes - done);
        cpu_.store(va + done, src + done, n);
        done += n;
    }
}

void Hre::copy_out(uint64_t va, uint8_t* dst, uint32_t bytes) {
    for (uint32_t done = 0; done < bytes;) {
        const uint32_t n = std::min<uint32_t>(64 - uint32_t((va + done) % 64), bytes - done);
        cpu_.load(va + done, dst + done, n);
        done += n;
    }
}

void Hre::submit(const void* entry) {
    // A full ring keeps one slot empty; ask the bridge how far it has fetched.
    const uint32_t n = ep_.layout.sq_entries;
    while ((sq_tail_ + 1) % n == sq_head_) {
        sq_head_ = cpu_.load<uint32_t>(ep_.doorbell_va + HRE_DOORBELL_SQ_HEAD) % n;
        if ((sq_tail_ + 1) % n == sq_head_ && !poll()) cpu_.compute_ns(cfg_.poll_gap_ns);
    }
    // One store of the whole entry (one line): a coherent queue's bridge never sees half of it.
    hre_sq_entry e;
    std::memcpy(&e, entry, sizeof e);
    if (ep_.coherent && sq_phase_) e.flags |= HRE_FLAG_PHASE;
    cpu_.store(ep_.window_va + ep_.layout.sq_offset() + uint64_t(sq_tail_) * HRE_SQ_ENTRY_BYTES, &e,
               HRE_SQ_ENTRY_BYTES);
    if (++sq_tail_ == n) sq_tail_ = 0, sq_phase_ = !sq_phase_;
    if (!ep_.coherent) doorbell(HRE_DOORBELL_SQ_TAIL, sq_tail_);
}

uint16_t Hre::send(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes) {
    if (bytes > ep_.layout.payload_bytes)
        throw host::HostFault("HRE " + std::to_string(ep_.hre) + ": a " + std::to_string(bytes) +
                              " B payload exceeds the " + std::to_string(ep_.layout.payload_bytes) +
                              " B payload buffer");
    hre_sq_entry e{};
    e.kind = HRE_KIND_REQUEST;
    e.node = node;
    e.rpc_id = rpc_id;
    e.tag = next_tag_++;
    e.length = bytes;
    if (bytes <= HRE_INLINE_BYTES) {
        e.flags = HRE_FLAG_INLINE;
        if (bytes) std::memcpy(e.inline_payload, payload, bytes);
    } else {
        // The payload buffer of the slot the entry goes to (sq_tail_: submit() waits for a full
        // ring before writing, and the bridge read this slot's last payload before moving its
        // head past it, which is what frees the slot).
        const uint64_t buf = ep_.layout.payload_offset(sq_tail_);
        copy_in(ep_.window_va + buf, static_cast<const uint8_t*>(payload), bytes);
        e.payload_addr = ep_.window_pa + buf;
    }
    submit(&e);
    return e.tag;
}

bool Hre::poll() {
    hre_cq_entry e;
    const uint64_t at =
        ep_.window_va + ep_.layout.cq_offset() + uint64_t(cq_head_) * HRE_CQ_ENTRY_BYTES;
    cpu_.load(at, &e, sizeof e);
    if ((e.phase & 1) != phase_) return false;
    if (++cq_head_ == ep_.layout.cq_entries) cq_head_ = 0, phase_ ^= 1;
    ++cq_consumed_;
    publish_head(HRE_DOORBELL_CQ_HEAD, cq_head_, HRE_SHADOW_CQ_HEAD, cq_consumed_);
    if (e.kind == HRE_KIND_RESPONSE) {
        responses_[e.tag] = {e.tag, e.node, e.result, e.status};
    } else {
        // The payload stays in the receive buffer until released. The bridge allocated its
        // piece contiguously from the running count, skipping the end of the buffer when the
        // piece did not fit there.
        Request r;
        r.node = e.node;
        r.tag = e.tag;
        r.rpc_id = e.rpc_id;
        r.origin = e.origin;
        r.length = e.length;
        r.payload_va = ep_.window_va + ep_.layout.rx_offset() + e.rx_offset;
        const uint32_t at_off = rx_allocated_ % ep_.layout.rx_bytes;
        if (e.rx_offset != at_off) rx_allocated_ += ep_.layout.rx_bytes - at_off;
        rx_allocated_ += e.length;
        r.piece = next_piece_++;
        pieces_.push_back({r.piece, rx_allocated_, false});
        requests_.push_back(std::move(r));
    }
    return true;
}

Hre::Response Hre::wait(uint16_t tag) {
    while (true) {
        if (auto r = try_wait(tag)) return *r;
        idle();
    }
}

std::optional<Hre::Response> Hre::try_wait(uint16_t tag) {
    while (!responses_.count(tag))
        if (!poll()) return std::nullopt;
    Response r = responses_.at(tag);
    responses_.erase(tag);
    return r;
}

Hre::Response Hre::call(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes) {
    return wait(send(node, rpc_id, payload, bytes));
}

std::optional<Hre::Request> Hre::take(std::optional<uint16_t> rpc_id) {
    auto match = [&](const Request& r) { return !rpc_id || r.rpc_id == *rpc_id; };
    auto it = std::find_if(requests_.begin(), requests_.end(), match);
    while (it == requests_.end()) {
        const size_t before = requests_.size();
        if (!poll()) return std::nullopt;
        if (requests_.size() > before && match(requests_.back())) it = std::prev(requests_.end());
    }
    Request r = std::move(*it);
    requests_.erase(it);
    return r;
}

std::optional<Hre::Request> Hre::try_receive() {
    std::optional<Request> r = take(std::nullopt);
    if (r) {
        r->payload.resize(r->length);
        copy_payload(*r, 0, r->payload.data(), r->length);
        release(*r);
        r->payload_va = r->piece = 0;
    }
    return r;
}

Hre::Request Hre::receive() {
    while (true) {
        if (auto r = try_receive()) return *r;
        idle();
    }
}

std::optional<Hre::Request> Hre::try_receive_in_place(std::optional<uint16_t> rpc_id) {
    return take(rpc_id);
}

Hre::Request Hre::receive_in_place(std::optional<uint16_t> rpc_id) {
    while (true) {
        if (auto r = take(rpc_id)) return *r;
        idle();
    }
}

void Hre::copy_payload(const Request& r, uint32_t offset, void* dst, uint32_t bytes) {
    const bool held = std::any_of(pieces_.begin(), pieces_.end(),
                                  [&](const Piece& p) { return p.id == r.piece && !p.released; });
    if (!held || offset > r.length || bytes > r.length - offset)
        throw host::HostFault(
            "HRE " + std::to_string(ep_.hre) + ": bytes " + std::to_string(offset) + ".." +
            std::to_string(offset + bytes) + " of a request payload " +
            (held ? "of " + std::to_string(r.length) + " B" : "no longer in the receive buffer"));
    if (bytes) copy_out(r.payload_va + offset, static_cast<uint8_t*>(dst), bytes);
}

void Hre::release(const Request& r) {
    if (r.piece == 0) return;  // copied out: its space went back when it was received
    auto it = std::find_if(pieces_.begin(), pieces_.end(),
                           [&](const Piece& p) { return p.id == r.piece; });
    if (it == pieces_.end() || it->released)
        throw host::HostFault("HRE " + std::to_string(ep_.hre) +
                              ": release of a receive-buffer piece it does not hold (tag " +
                              std::to_string(r.tag) + ", released twice?)");
    it->released = true;
    // The RX head is a running count: it passes only the leading released pieces.
    const uint32_t before = rx_consumed_;
    while (!pieces_.empty() && pieces_.front().released) {
        rx_consumed_ = pieces_.front().end;
        pieces_.pop_front();
    }
    if (rx_consumed_ != before)
        publish_head(HRE_DOORBELL_RX_HEAD, rx_consumed_, HRE_SHADOW_RX_HEAD, rx_consumed_);
}

void Hre::idle(double until_ns) {
    if (!ep_.interrupts) return wait_change(cfg_.poll_gap_ns, until_ns);
    host::MsiController& msi = *ep_.device.msi;
    if (msi.count(ep_.qp) == irqs_seen_) {
        cpu_.wait_for(msi.event(ep_.qp));
        cpu_.compute_ns(msi.config().wake_ns);
    }
    irqs_seen_ = msi.count(ep_.qp);
}

void Hre::wait_change(double period_ns, double until_ns) {
    const double t0 = cpu_.now_ns();
    // Within a period of the deadline a poll gap is all there is to wait.
    if (until_ns > t0 + period_ns)
        cpu_.wait_line(
            ep_.window_va + ep_.layout.cq_offset() + uint64_t(cq_head_) * HRE_CQ_ENTRY_BYTES,
            until_ns - t0);
    const double t = cpu_.now_ns();
    const double polls = std::max(1.0, std::ceil((t - t0) / period_ns));
    cpu_.compute_ns(t0 + polls * period_ns - t);
}

double Hre::now_ns() const { return cpu_.now_ns(); }

void Hre::respond(const Request& r, uint32_t result) {
    hre_sq_entry e{};
    e.kind = HRE_KIND_RESPONSE;
    e.node = r.node;
    e.tag = r.tag;
    e.result = result;
    submit(&e);
}

}  // namespace canopy::sw
