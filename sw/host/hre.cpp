#include "sw/host/hre.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "ssd/hre_queue.h"

namespace canopy::sw {

Hre::Hre(host::HostCore& cpu, const HreEndpoint& endpoint, HreConfig cfg)
    : cpu_(cpu), ep_(endpoint), cfg_(cfg) {}

void Hre::doorbell(uint32_t offset, uint32_t value) {
    cpu_.store<uint32_t>(ep_.doorbell_va + offset, value);
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
    cpu_.store(ep_.window_va + ep_.layout.sq_offset() + uint64_t(sq_tail_) * HRE_SQ_ENTRY_BYTES,
               entry, HRE_SQ_ENTRY_BYTES);
    sq_tail_ = (sq_tail_ + 1) % ep_.layout.sq_entries;
    doorbell(HRE_DOORBELL_SQ_TAIL, sq_tail_);
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
    doorbell(HRE_DOORBELL_CQ_HEAD, cq_head_);
    if (e.kind == HRE_KIND_RESPONSE) {
        responses_[e.tag] = {e.tag, e.node, e.result, e.status};
    } else {
        Request r;
        r.node = e.node;
        r.tag = e.tag;
        r.rpc_id = e.rpc_id;
        r.origin = e.origin;
        r.payload.resize(e.length);
        copy_out(ep_.window_va + ep_.layout.rx_offset() + e.rx_offset, r.payload.data(), e.length);
        // Hand the space back: the bridge allocated it contiguously from the running count,
        // skipping the end of the buffer when the piece did not fit there.
        const uint32_t at_off = rx_consumed_ % ep_.layout.rx_bytes;
        if (e.rx_offset != at_off) rx_consumed_ += ep_.layout.rx_bytes - at_off;
        rx_consumed_ += e.length;
        doorbell(HRE_DOORBELL_RX_HEAD, rx_consumed_);
        requests_.push_back(std::move(r));
    }
    return true;
}

Hre::Response Hre::wait(uint16_t tag) {
    while (!responses_.count(tag))
        if (!poll()) cpu_.compute_ns(cfg_.poll_gap_ns);
    Response r = responses_.at(tag);
    responses_.erase(tag);
    return r;
}

Hre::Response Hre::call(uint8_t node, uint16_t rpc_id, const void* payload, uint32_t bytes) {
    return wait(send(node, rpc_id, payload, bytes));
}

std::optional<Hre::Request> Hre::try_receive() {
    while (requests_.empty())
        if (!poll()) return std::nullopt;
    Request r = std::move(requests_.front());
    requests_.pop_front();
    return r;
}

Hre::Request Hre::receive() {
    while (true) {
        if (auto r = try_receive()) return *r;
        cpu_.compute_ns(cfg_.poll_gap_ns);
    }
}

void Hre::respond(const Request& r, uint32_t result) {
    hre_sq_entry e{};
    e.kind = HRE_KIND_RESPONSE;
    e.node = r.node;
    e.tag = r.tag;
    e.result = result;
    submit(&e);
}

}  // namespace canopy::sw
