#include "sw/host/atomic_writes.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>

#include "sw/firmware/apps/atomic_writes_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/data_rpc.hpp"
#include "sw/host/payload.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

namespace {

// A batch's records to one SPU go in RPCs of at most this payload: two of them fit the SPU's
// 32 KiB receive buffer beside other clients' requests.
constexpr size_t kMaxPayload = 16 * 1024;
// Requests are retried as rpc_retryable says (sw/host/data_rpc.hpp: NACKs, and refusals for a
// permission entry SPU-OS evicted); a COMMIT whose applying met such a refusal after the commit
// point is sent again as COMMIT, which finishes it, as often as a NACK.

const char* handler_name(uint16_t h) {
    switch (h) {
        case AW_LOGWRITE:
            return "LOGWRITE";
        case AW_VECTORLOGWRITE:
            return "VECTORLOGWRITE";
        case AW_COMMIT:
            return "COMMIT";
        case AW_LOGWRITECOMMIT:
            return "LOGWRITECOMMIT";
        default:
            return "ABORT";
    }
}

}  // namespace

std::string atomic_writes_result_name(uint32_t r) {
    switch (r) {
        case AW_E_ARGS:
            return "AW_E_ARGS (malformed, or a write outside the store or into the log region)";
        case AW_E_UNKNOWN:
            return "AW_E_UNKNOWN (no such transaction on the SPU)";
        case AW_E_BUSY:
            return "AW_E_BUSY (every log slot of the SPU is in use)";
        case AW_E_FULL:
            return "AW_E_FULL (the transaction's log on the SPU is full)";
        case AW_E_STATE:
            return "AW_E_STATE (not set up, or the transaction is committing)";
        case AW_E_PEER:
            return "AW_E_PEER (PREPARE or APPLY not from an SPU)";
        case AW_E_ABORTED:
            return "AW_E_ABORTED (a participant could not prepare)";
        case AW_E_INCOMPLETE:
            return "AW_E_INCOMPLETE (committed, but not yet applied everywhere: the kernel's "
                   "RECOVER at the next boot finishes it)";
        default:
            return spu_os_result_name(r);
    }
}

AtomicWrites::AtomicWrites(DirectIo& dio, uint32_t app) : dio_(dio), hre_(dio.hre()), app_(app) {
    if (app_ == SPU_OS_KERNEL_APP || app_ > 0xFF)
        throw host::HostFault("Atomic-Writes library: bad app id " + std::to_string(app));
}

uint32_t AtomicWrites::begin() {
    const uint32_t tx = next_++;
    open_[tx] = 0;
    return tx;
}

uint32_t& AtomicWrites::participants(uint32_t tx) {
    const auto it = open_.find(tx);
    if (it == open_.end())
        throw host::HostFault("Atomic-Writes: transaction " + std::to_string(tx) +
                              " is not open (never begun, or committed or aborted)");
    return it->second;
}

std::vector<AtomicWrites::Rpc> AtomicWrites::log_records(uint32_t tx,
                                                         const std::vector<Update>& updates) {
    uint32_t& mask = participants(tx);
    std::map<uint32_t, std::vector<Rpc>> per_spu;
    for (const Update& u : updates)
        for (const DirectIo::Piece& p : dio_.locate(u.fd, u.offset, u.bytes, SPU_OS_PERM_WRITE)) {
            std::vector<Rpc>& rpcs = per_spu[p.spu];
            if (rpcs.empty() ||
                rpcs.back().payload.size() + sizeof(aw_write_args) + p.bytes > kMaxPayload)
                rpcs.push_back(Rpc{p.spu, {}, 0});
            put(rpcs.back().payload, aw_write_args{tx, p.nvm, p.bytes});
            ++rpcs.back().records;
            const auto* d = static_cast<const uint8_t*>(u.data) + p.at;
            rpcs.back().payload.insert(rpcs.back().payload.end(), d, d + p.bytes);
            mask |= 1u << p.spu;
        }
    std::vector<Rpc> out;
    for (auto& [spu, rpcs] : per_spu)
        for (Rpc& r : rpcs) out.push_back(std::move(r));
    return out;
}

void AtomicWrites::run(uint32_t tx, uint16_t handler, const std::vector<Rpc>& rpcs) {
    // One RPC in flight per SPU, the SPUs in parallel.
    struct Queue {
        std::deque<const Rpc*> todo;
        uint16_t tag = 0;
        bool busy = false, finishing = false;  // finishing: the front is sent as a plain COMMIT
        uint32_t tries = 0;
        double not_before_ns = 0;
    };
    std::optional<Rpc> finish;  // the COMMIT that finishes a committed transaction, when needed
    std::map<uint32_t, Queue> queues;
    for (const Rpc& r : rpcs) queues[r.spu].todo.push_back(&r);
    uint32_t bad = AW_OK, bad_spu = 0;
    for (;;) {
        bool progress = false, pending = false;
        for (auto& [spu, q] : queues) {
            if (q.busy) {
                const auto r = hre_.try_wait(q.tag);
                if (!r) {
                    pending = true;
                    continue;
                }
                progress = true;
                q.busy = false;
                const uint32_t result = r->ok() ? r->result : SPU_OS_E_DROPPED;
                const bool committed = result == AW_E_INCOMPLETE;
                if (committed ? q.tries < kNackRetries : rpc_retryable(*r, q.tries)) {
                    if (committed && !finish) finish = commit_rpc(tx);
                    q.not_before_ns = hre_.now_ns() + rpc_retry_pause_ns(q.tries);
                    ++q.tries;
                    q.finishing = q.finishing || committed;
                    ++(committed ? stats_.finishes : stats_.retries);
                    pending = true;
                    continue;
                }
                if (result != AW_OK && bad == AW_OK) {
                    bad = result;
                    bad_spu = spu;
                }
                q.todo.pop_front();
                q.tries = 0;
                q.finishing = false;
            }
            if (q.todo.empty() || bad != AW_OK) continue;
            pending = true;
            if (hre_.now_ns() < q.not_before_ns) continue;
            const Rpc& rpc = q.finishing ? *finish : *q.todo.front();
            q.tag = hre_.send(uint8_t(spu), SPU_OS_RPC_ID(app_, q.finishing ? AW_COMMIT : handler),
                              rpc.payload.data(), uint32_t(rpc.payload.size()));
            q.busy = true;
            ++stats_.rpcs;
            progress = true;
        }
        if (!pending) break;
        if (!progress) {
            // Asleep until a response, or until the first queue's retry pause is over.
            double until = std::numeric_limits<double>::infinity();
            for (const auto& [spu, q] : queues)
                if (!q.busy && !q.todo.empty() && q.not_before_ns > hre_.now_ns())
                    until = std::min(until, q.not_before_ns);
            hre_.idle(until);
        }
    }
    if (bad != AW_OK) fail(tx, bad_spu, handler_name(handler), bad);
}

void AtomicWrites::fail(uint32_t tx, uint32_t spu, const char* what, uint32_t result) {
    // What was logged elsewhere goes (a COMMIT that failed has aborted everywhere already).
    const uint32_t mask = open_.count(tx) ? open_[tx] : 0;
    open_.erase(tx);
    if (mask) ++stats_.aborts;
    for (uint32_t s = 0; s < 32; ++s)
        if (mask >> s & 1) {
            const aw_tx_args a{tx, 0};
            hre_.call(uint8_t(s), SPU_OS_RPC_ID(app_, AW_ABORT), &a, sizeof a);
        }
    throw host::HostFault("Atomic-Writes: " + std::string(what) + " of transaction " +
                          std::to_string(tx) + " failed on SPU " + std::to_string(spu) + ": " +
                          atomic_writes_result_name(result));
}

void AtomicWrites::write(uint32_t tx, int fd, uint64_t offset, const void* data, uint64_t bytes) {
    write(tx, {Update{fd, offset, data, bytes}});
}

void AtomicWrites::write(uint32_t tx, const std::vector<Update>& updates) {
    std::vector<Rpc> rpcs = log_records(tx, updates);
    // A single record goes as LOGWRITE; a batch as VECTORLOGWRITE with its count in front.
    if (rpcs.size() == 1 && rpcs[0].records == 1) return run(tx, AW_LOGWRITE, rpcs);
    for (Rpc& r : rpcs) {
        std::vector<uint8_t> p;
        put(p, aw_vector_args{r.records});
        p.insert(p.end(), r.payload.begin(), r.payload.end());
        r.payload = std::move(p);
    }
    run(tx, AW_VECTORLOGWRITE, rpcs);
}

AtomicWrites::Rpc AtomicWrites::commit_rpc(uint32_t tx) {
    const uint32_t mask = participants(tx);
    std::vector<uint8_t> p;
    put(p, aw_commit_args{tx, mask});
    return Rpc{uint32_t(__builtin_ctz(mask)), std::move(p), 0};
}

void AtomicWrites::commit(uint32_t tx) {
    const uint32_t mask = participants(tx);
    if (mask) {
        run(tx, AW_COMMIT, {commit_rpc(tx)});
        ++stats_.commits;
    }
    open_.erase(tx);
}

void AtomicWrites::write_commit(uint32_t tx, int fd, uint64_t offset, const void* data,
                                uint64_t bytes) {
    const std::vector<DirectIo::Piece> pieces = dio_.locate(fd, offset, bytes, SPU_OS_PERM_WRITE);
    const uint32_t mask = participants(tx) | (pieces.size() == 1 ? 1u << pieces[0].spu : 0);
    // One RPC when the write is one piece on what will be the coordinator.
    if (pieces.size() != 1 || pieces[0].spu != uint32_t(__builtin_ctz(mask))) {
        write(tx, fd, offset, data, bytes);
        return commit(tx);
    }
    participants(tx) = mask;
    std::vector<uint8_t> p;
    put(p, aw_commit_args{tx, mask});
    put(p, aw_write_args{tx, pieces[0].nvm, pieces[0].bytes});
    const auto* d = static_cast<const uint8_t*>(data);
    p.insert(p.end(), d, d + bytes);
    run(tx, AW_LOGWRITECOMMIT, {Rpc{pieces[0].spu, std::move(p), 1}});
    ++stats_.commits;
    open_.erase(tx);
}

void AtomicWrites::abort(uint32_t tx) {
    const uint32_t mask = participants(tx);
    std::vector<Rpc> rpcs;
    for (uint32_t s = 0; s < 32; ++s)
        if (mask >> s & 1) {
            std::vector<uint8_t> p;
            put(p, aw_tx_args{tx, 0});
            rpcs.push_back(Rpc{s, std::move(p), 0});
        }
    open_.erase(tx);
    ++stats_.aborts;
    run(tx, AW_ABORT, rpcs);
}

}  // namespace canopy::sw
