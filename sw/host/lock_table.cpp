#include "sw/host/lock_table.hpp"

#include "core/rng.hpp"

namespace canopy::sw {

uint32_t LockTableLayout::bucket_of(uint64_t record_version) const {
    return uint32_t(core::splitmix64(record_version) % buckets);
}

LockClient::LockClient(LockPort& port, const LockTableLayout& table, uint32_t tag,
                       const LockClientConfig& cfg)
    : port_(port), table_(table), tag_(tag), cfg_(cfg) {}

LockClient::Lock LockClient::lock(uint64_t record_version) {
    Lock l;
    const double t0 = port_.now_ns();
    port_.compute_ns(cfg_.software_ns);
    l.bucket = table_.bucket_address(record_version);
    uint64_t w = port_.fetch_add(l.bucket, uint64_t(1) << 32);  // take the tail's ticket
    l.ticket = tail(w);
    const double ticketed = port_.now_ns();
    l.request_ns = ticketed - t0;
    l.queued = head(w) != l.ticket;
    if (l.queued) port_.swap(slot(l), tag_);
    while (head(w) != l.ticket) {
        port_.compute_ns(cfg_.poll_ns);
        w = port_.load64(l.bucket);
    }
    l.wait_ns = port_.now_ns() - ticketed;
    return l;
}

void LockClient::unlock(const Lock& l) {
    if (l.queued) port_.swap(slot(l), 0);
    port_.fetch_add(l.bucket, 1);  // the head: the next ticket holds the lock
}

}  // namespace canopy::sw
