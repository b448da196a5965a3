#include "sw/host/lock_table.hpp"

namespace canopy::sw {

uint32_t LockTableLayout::bucket_of(uint64_t record_version) const {
    uint64_t x = record_version + 0x9e3779b97f4a7c15ull;  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return uint32_t((x ^ (x >> 31)) % buckets);
}

LockClient::LockClient(LockPort& port, const LockTableLayout& table, uint32_t tag,
                       const LockClientConfig& cfg)
    : port_(port), table_(table), tag_(tag), cfg_(cfg) {}

LockClient::Lock LockClient::lock(uint64_t record_version) {
    Lock l;
    const double t0 = port_.now_ns();
    port_.compute_ns(cfg_.software_ns);
    l.bucket = table_.bucket_address(record_version);
    uint64_t expected = last_seen_[l.bucket];
    for (;;) {
        // A full queue: wait for its head to move before taking a ticket.
        if (tail(expected) - head(expected) >= LockTableLayout::kSlots) {
            port_.compute_ns(cfg_.poll_ns);
            expected = port_.load64(l.bucket);
            continue;
        }
        const uint64_t desired = word(head(expected), tail(expected) + 1);
        ++l.attempts;
        const uint64_t old = port_.compare_and_swap(l.bucket, expected, desired);
        if (old == expected) {
            last_seen_[l.bucket] = desired;
            break;
        }
        expected = old;
    }
    l.ticket = tail(expected);
    const double queued = port_.now_ns();
    l.request_ns = queued - t0;
    uint64_t w = expected;
    l.queued = head(w) != l.ticket;
    if (l.queued) port_.swap(l.bucket + 8 * (1 + l.ticket % LockTableLayout::kSlots), tag_);
    while (head(w) != l.ticket) {
        port_.compute_ns(cfg_.poll_ns);
        w = port_.load64(l.bucket);
    }
    l.wait_ns = port_.now_ns() - queued;
    return l;
}

void LockClient::unlock(const Lock& l) {
    if (l.queued) port_.swap(l.bucket + 8 * (1 + l.ticket % LockTableLayout::kSlots), 0);
    uint64_t expected = word(l.ticket, tail(last_seen_[l.bucket]));
    for (;;) {  // the tail may have grown meanwhile: retry with what the CAS saw
        const uint64_t old =
            port_.compare_and_swap(l.bucket, expected, word(l.ticket + 1, tail(expected)));
        if (old == expected) break;
        expected = word(l.ticket, tail(old));
    }
    last_seen_[l.bucket] = word(l.ticket + 1, tail(expected));
}

}  // namespace canopy::sw
