// The host client of the block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"):
// stripe splitting, the READ / WRITE RPCs with a window of them in flight, READ data taken from
// the HRE's receive buffer by cookie, and failures reported after the window has drained (so no
// SPU is left holding a handler for a host that has gone on).
#include "sw/host/block_io.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>

#include "core/trace.hpp"
#include "ssd/hre_queue.h"
#include "sw/firmware/apps/block_io_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/payload.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

namespace {

std::string hex(uint64_t v) { return core::TransactionTrace::hex(v); }

std::string result_name(uint32_t r) {
    if (r == BLOCK_IO_E_LENGTH) return hex(r) + " (BLOCK_IO_E_LENGTH)";
    return spu_os_result_name(r);
}

std::string status_name(uint32_t s) {
    switch (s) {
        case HRE_STATUS_NACK:
            return "HRE_STATUS_NACK";
        case HRE_STATUS_BAD_ENTRY:
            return "HRE_STATUS_BAD_ENTRY";
        case HRE_STATUS_BAD_ADDRESS:
            return "HRE_STATUS_BAD_ADDRESS";
        default:
            return "HRE status " + std::to_string(s);
    }
}

}  // namespace

BlockGeometry::Location BlockGeometry::locate(uint64_t offset) const {
    const uint64_t unit = offset / stripe_bytes;
    const uint32_t within = uint32_t(offset % stripe_bytes);
    Location l;
    l.spu = uint32_t(unit % spus);
    l.nvm = uint32_t(l.spu * bank_bytes + (unit / spus) * stripe_bytes + within);
    l.bytes = stripe_bytes - within;
    return l;
}

BlockIo::BlockIo(Hre& hre, uint32_t app, BlockGeometry geometry, BlockIoConfig cfg)
    : hre_(hre), app_(app), geo_(geometry), cfg_(cfg) {
    std::string bad;
    if (app_ == SPU_OS_KERNEL_APP || app_ > 0xff) bad = "app id " + std::to_string(app_);
    if (geo_.spus == 0 || geo_.bank_bytes == 0 || geo_.stripe_bytes == 0 ||
        geo_.stripe_bytes > BLOCK_IO_MAX_BYTES || geo_.device_bytes() > (uint64_t(1) << 32))
        bad = "geometry (" + std::to_string(geo_.spus) + " SPUs, " +
              std::to_string(geo_.bank_bytes) + " B banks, " + std::to_string(geo_.stripe_bytes) +
              " B stripes)";
    if (cfg_.max_outstanding == 0) bad = "window of 0 RPCs";
    if (cfg_.max_piece_bytes == 0 || cfg_.max_piece_bytes > BLOCK_IO_MAX_BYTES)
        bad = "piece size " + std::to_string(cfg_.max_piece_bytes);
    if (!bad.empty()) throw host::HostFault("block I/O: bad " + bad);
    spu_bytes_.assign(geo_.spus, 0);
}

uint64_t BlockIo::submit(Transfer t, const char* what) {
    if (t.offset > geo_.device_bytes() || t.bytes > geo_.device_bytes() - t.offset)
        throw host::HostFault("block I/O app " + std::to_string(app_) + ": " + what + " of " +
                              std::to_string(t.bytes) + " B at device offset " + hex(t.offset) +
                              " lies outside the " + std::to_string(geo_.device_bytes()) +
                              " B device");
    const uint64_t id = next_transfer_++;
    // A TRIM moves no data: the stripes an SPU holds of the range lie back to back in its NVM,
    // so each SPU gets one request for them all (up to kMaxTrimBytes).
    std::unordered_map<uint32_t, uint64_t> trim_piece;  // SPU -> its piece so far
    for (uint64_t done = 0; done < t.bytes;) {
        Piece p;
        p.transfer = id;
        p.offset = t.offset + done;
        p.done = done;
        p.at = geo_.locate(p.offset);
        p.at.bytes =
            uint32_t(std::min<uint64_t>({p.at.bytes, cfg_.max_piece_bytes, t.bytes - done}));
        done += p.at.bytes;
        if (t.op == BlockOp::Trim) {
            const auto open = trim_piece.find(p.at.spu);
            if (open != trim_piece.end()) {
                auto& at = pieces_[open->second].at;
                if (uint64_t(at.nvm) + at.bytes == p.at.nvm &&
                    uint64_t(at.bytes) + p.at.bytes <= kMaxTrimBytes) {
                    at.bytes += p.at.bytes;
                    continue;
                }
            }
            trim_piece[p.at.spu] = next_piece_;
        }
        pieces_[next_piece_] = p;
        todo_.push_back(next_piece_++);
        ++t.unsent;
    }
    Transfer& in = transfers_[id] = std::move(t);
    if (in.unsent == 0) settle(id, in);  // nothing to move
    return id;
}

const char* block_op_name(BlockOp op) {
    return op == BlockOp::Write ? "WRITE" : op == BlockOp::Trim ? "TRIM" : "READ";
}

std::string BlockIo::describe(const Piece& p, BlockOp op) const {
    return "block I/O app " + std::to_string(app_) + ": " + block_op_name(op) + " of " +
           std::to_string(p.at.bytes) + " B at device offset " + hex(p.offset) + " (SPU " +
           std::to_string(p.at.spu) + ", SSD memory " + hex(p.at.nvm) + ")";
}

uint16_t BlockIo::issue(const Piece& p, BlockOp op, const uint8_t* src, uint32_t cookie) {
    std::vector<uint8_t> payload;
    uint32_t handler = BLOCK_IO_READ;
    if (op == BlockOp::Write) {
        handler = BLOCK_IO_WRITE;
        payload.reserve(sizeof(block_io_write_args) + p.at.bytes);
        put(payload,
            block_io_write_args{p.at.nvm, p.at.bytes | (cfg_.fua_writes ? BLOCK_IO_FUA : 0)});
        payload.insert(payload.end(), src + p.done, src + p.done + p.at.bytes);
    } else if (op == BlockOp::Trim) {
        handler = BLOCK_IO_TRIM;
        put(payload, block_io_write_args{p.at.nvm, p.at.bytes});
    } else {
        put(payload, block_io_read_args{p.at.nvm, p.at.bytes, cookie});
    }
    return hre_.send(uint8_t(p.at.spu), SPU_OS_RPC_ID(app_, handler), payload.data(),
                     uint32_t(payload.size()));
}

void BlockIo::fail(Transfer& t, const std::string& why) {
    if (t.failure.empty()) t.failure = why;
}

void BlockIo::settle(uint64_t id, Transfer& t) {
    if (t.finished || t.unsent || t.flying) return;
    t.finished = true;
    done_.push_back({id, t.op, t.offset, t.bytes, t.failure});
}

bool BlockIo::progress() {
    bool moved = false;
    auto room = [&](const Piece& p, BlockOp op) {
        const uint32_t b = spu_bytes_[p.at.spu];
        return op != BlockOp::Write || b == 0 || b + p.at.bytes <= cfg_.spu_write_bytes;
    };
    // Fill the window in order; a piece whose SPU is busy holds the ones behind it. The pieces
    // of a transfer that failed are not sent.
    while (!todo_.empty()) {
        Piece& p = pieces_.at(todo_.front());
        Transfer& t = transfers_.at(p.transfer);
        if (!t.failure.empty()) {
            const uint64_t id = p.transfer;
            pieces_.erase(todo_.front());
            todo_.pop_front();
            --t.unsent;
            settle(id, t);
            moved = true;
            continue;
        }
        if (flights_.size() >= cfg_.max_outstanding || !room(p, t.op) ||
            hre_.now_ns() < p.not_before_ns)
            break;
        Flight f;
        f.piece = todo_.front();
        todo_.pop_front();
        const bool read = t.op == BlockOp::Read, write = t.op == BlockOp::Write;
        if (read) f.cookie = next_cookie_++;
        const uint16_t tag = issue(p, t.op, t.src, f.cookie);
        if (read) cookies_[f.cookie] = tag;
        flights_[tag] = f;
        ++p.attempts;
        --t.unsent, ++t.flying;
        if (write) spu_bytes_[p.at.spu] += p.at.bytes;
        moved = true;
    }
    // One pass over the completion queue, then the requests and responses it held.
    while (hre_.poll()) moved = true;
    moved |= take_data();
    moved |= take_responses();
    return moved;
}

bool BlockIo::take_data() {
    bool moved = false;
    // READ data: deliver, hand the space back, answer (the SPU then answers the READ).
    const uint16_t data_rpc = SPU_OS_RPC_ID(app_, BLOCK_IO_DATA);
    while (auto req = hre_.try_receive_in_place(data_rpc)) {
        moved = true;
        block_io_data d{};
        const bool whole = req->length >= sizeof d;
        if (whole) hre_.copy_payload(*req, 0, &d, sizeof d);
        const auto c = whole ? cookies_.find(d.cookie) : cookies_.end();
        Flight* f = c != cookies_.end() ? &flights_.at(c->second) : nullptr;
        const Piece* p = f ? &pieces_.at(f->piece) : nullptr;
        if (!p || f->delivered || d.addr != p->at.nvm || d.bytes != p->at.bytes ||
            req->length != sizeof d + d.bytes || req->node != p->at.spu) {
            hre_.release(*req);
            hre_.respond(*req, SPU_OS_E_BAD_ARG);
            const std::string why =
                "block I/O app " + std::to_string(app_) + ": a DATA request from SPU " +
                std::to_string(req->node) + " (" + std::to_string(req->length) + " B, cookie " +
                std::to_string(whole ? d.cookie : 0) + ") matches no READ in flight";
            // Not one transfer's fault: every transfer in flight reports it.
            for (auto& [id, t] : transfers_)
                if (!t.finished) fail(t, why);
            continue;
        }
        Transfer& t = transfers_.at(p->transfer);
        if (t.sink)
            t.sink(p->offset, req->payload_va + sizeof d, d.bytes);
        else
            hre_.copy_payload(*req, sizeof d, t.dst + p->done, d.bytes);
        f->delivered = true;
        hre_.release(*req);
        hre_.respond(*req, BLOCK_IO_OK);
    }
    return moved;
}

bool BlockIo::take_responses() {
    bool moved = false;
    // Responses, in no particular order.
    for (auto it = flights_.begin(); it != flights_.end();) {
        if (!hre_.has_response(it->first)) {
            ++it;
            continue;
        }
        moved = true;
        const Hre::Response r = *hre_.try_wait(it->first);
        const Flight f = it->second;
        it = flights_.erase(it);
        Piece& p = pieces_.at(f.piece);
        Transfer& t = transfers_.at(p.transfer);
        --t.flying;
        const bool read = t.op == BlockOp::Read;
        if (t.op == BlockOp::Write) spu_bytes_[p.at.spu] -= p.at.bytes;
        if (read) cookies_.erase(f.cookie);
        const bool dropped =
            r.status == HRE_STATUS_NACK || (r.ok() && r.result == SPU_OS_E_DROPPED && !f.delivered);
        if (dropped && p.attempts <= cfg_.retries && t.failure.empty()) {
            p.not_before_ns = hre_.now_ns() + backoff_ns(p.offset, p.attempts);
            todo_.push_front(f.piece);
            ++t.unsent;
            continue;
        }
        if (dropped && !t.failure.empty()) {
            // dropped after its transfer failed: not sent again
        } else if (!r.ok()) {
            fail(t, describe(p, t.op) + " failed: " + status_name(r.status));
        } else if (r.result != BLOCK_IO_OK) {
            fail(t, describe(p, t.op) + " failed: " + result_name(r.result));
        } else if (read && !f.delivered) {
            fail(t, describe(p, t.op) + " succeeded without its DATA request");
        }
        const uint64_t id = p.transfer;
        pieces_.erase(f.piece);
        settle(id, t);
    }
    return moved;
}

std::optional<BlockIo::Completion> BlockIo::reap() {
    if (done_.empty()) return std::nullopt;
    Completion c = std::move(done_.front());
    done_.pop_front();
    transfers_.erase(c.id);
    return c;
}

void BlockIo::wait(uint64_t id) {
    while (true) {
        for (auto it = done_.begin(); it != done_.end(); ++it)
            if (it->id == id) {
                const std::string error = it->error;
                transfers_.erase(id);
                done_.erase(it);
                if (!error.empty()) throw host::HostFault(error);
                return;
            }
        if (!transfers_.count(id))
            throw host::HostFault("block I/O app " + std::to_string(app_) + ": no transfer " +
                                  std::to_string(id) + " to wait for");
        if (!progress()) hre_.idle(next_attempt_ns());
    }
}

double BlockIo::next_attempt_ns() const {
    if (!todo_.empty()) {
        const double t = pieces_.at(todo_.front()).not_before_ns;
        if (t > hre_.now_ns()) return t;
    }
    return std::numeric_limits<double>::infinity();
}

double BlockIo::backoff_ns(uint64_t offset, uint32_t attempts) const {
    const double base =
        std::min(cfg_.retry_backoff_max_ns,
                 std::ldexp(cfg_.retry_backoff_ns, int(std::min(attempts, 40u)) - 1));
    // splitmix64 of (offset, attempts): the same stretch in every run.
    uint64_t z = offset * 0x9E3779B97F4A7C15ull + attempts + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return base * (1.0 + 0.5 * double(z >> 11) / double(1ull << 53));
}

uint64_t BlockIo::submit_write(uint64_t offset, const void* src, uint64_t bytes) {
    Transfer t;
    t.op = BlockOp::Write;
    t.offset = offset, t.bytes = bytes;
    t.src = static_cast<const uint8_t*>(src);
    return submit(std::move(t), "write");
}

uint64_t BlockIo::submit_trim(uint64_t offset, uint64_t bytes) {
    Transfer t;
    t.op = BlockOp::Trim;
    t.offset = offset, t.bytes = bytes;
    return submit(std::move(t), "trim");
}

void BlockIo::trim(uint64_t offset, uint64_t bytes) { wait(submit_trim(offset, bytes)); }

uint64_t BlockIo::submit_read(uint64_t offset, void* dst, uint64_t bytes) {
    Transfer t;
    t.offset = offset, t.bytes = bytes;
    t.dst = static_cast<uint8_t*>(dst);
    return submit(std::move(t), "read");
}

void BlockIo::write(uint64_t offset, const void* src, uint64_t bytes) {
    wait(submit_write(offset, src, bytes));
}

void BlockIo::read(uint64_t offset, void* dst, uint64_t bytes) {
    wait(submit_read(offset, dst, bytes));
}

void BlockIo::read_in_place(uint64_t offset, uint64_t bytes, const Sink& sink) {
    Transfer t;
    t.offset = offset, t.bytes = bytes;
    t.sink = sink;
    wait(submit(std::move(t), "read"));
}

}  // namespace canopy::sw
