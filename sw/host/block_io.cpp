// The host client of the block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"):
// stripe splitting, the READ / WRITE RPCs with a window of them in flight, READ data taken from
// the HRE's receive buffer by cookie, and failures reported after the window has drained (so no
// SPU is left holding a handler for a host that has gone on).
#include "sw/host/block_io.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

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

// Little-endian words (the ABI's structs are plain uint32_t fields on both sides).

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

struct BlockIo::Piece {
    uint64_t offset = 0;  // device offset
    uint64_t done = 0;    // bytes of the transfer before it (where it goes in the caller's buffer)
    BlockGeometry::Location at;
    uint32_t attempts = 0;
    double not_before_ns = 0;  // a dropped piece waits out its back-off
};

struct BlockIo::Flight {  // an RPC in flight
    size_t piece = 0;
    uint32_t cookie = 0;  // READs: the DATA request's cookie
    bool delivered = false;
};

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
}

std::vector<BlockIo::Piece> BlockIo::split(uint64_t offset, uint64_t bytes,
                                           const char* what) const {
    if (offset > geo_.device_bytes() || bytes > geo_.device_bytes() - offset)
        throw host::HostFault("block I/O app " + std::to_string(app_) + ": " + what + " of " +
                              std::to_string(bytes) + " B at device offset " + hex(offset) +
                              " lies outside the " + std::to_string(geo_.device_bytes()) +
                              " B device");
    std::vector<Piece> pieces;
    for (uint64_t done = 0; done < bytes;) {
        Piece p;
        p.offset = offset + done;
        p.done = done;
        p.at = geo_.locate(p.offset);
        p.at.bytes = uint32_t(std::min<uint64_t>({p.at.bytes, cfg_.max_piece_bytes, bytes - done}));
        done += p.at.bytes;
        pieces.push_back(p);
    }
    return pieces;
}

std::string BlockIo::describe(const Piece& p, bool write) const {
    return "block I/O app " + std::to_string(app_) + ": " + (write ? "WRITE" : "READ") + " of " +
           std::to_string(p.at.bytes) + " B at device offset " + hex(p.offset) + " (SPU " +
           std::to_string(p.at.spu) + ", SSD memory " + hex(p.at.nvm) + ")";
}

uint16_t BlockIo::issue(const Piece& p, bool write, const uint8_t* src, uint32_t cookie) {
    std::vector<uint8_t> payload;
    if (write) {
        payload.reserve(sizeof(block_io_write_args) + p.at.bytes);
        put(payload, block_io_write_args{p.at.nvm, p.at.bytes});
        payload.insert(payload.end(), src + p.done, src + p.done + p.at.bytes);
    } else {
        put(payload, block_io_read_args{p.at.nvm, p.at.bytes, cookie});
    }
    return hre_.send(uint8_t(p.at.spu), SPU_OS_RPC_ID(app_, write ? BLOCK_IO_WRITE : BLOCK_IO_READ),
                     payload.data(), uint32_t(payload.size()));
}

void BlockIo::run(std::vector<Piece>& pieces, bool write, const uint8_t* src, uint8_t* dst,
                  const Sink& sink) {
    const uint16_t data_rpc = SPU_OS_RPC_ID(app_, BLOCK_IO_DATA);
    std::map<uint16_t, Flight> flights;  // by tag
    std::map<uint32_t, uint16_t> cookies;
    std::vector<uint32_t> spu_bytes(geo_.spus, 0);  // WRITE data in flight to each SPU
    auto room = [&](const Piece& p) {
        const uint32_t b = spu_bytes[p.at.spu];
        return !write || b == 0 || b + p.at.bytes <= cfg_.spu_write_bytes;
    };
    std::deque<size_t> todo;  // pieces to send, in order (retries go first)
    for (size_t i = 0; i < pieces.size(); ++i) todo.push_back(i);
    std::string failure;  // the first one; later ones are consequences or alike
    auto fail = [&](const std::string& why) {
        if (failure.empty()) failure = why;
    };

    while ((!todo.empty() && failure.empty()) || !flights.empty()) {
        bool progress = false;
        // Fill the window in order; a piece whose SPU is busy holds the ones behind it.
        while (failure.empty() && !todo.empty() && flights.size() < cfg_.max_outstanding &&
               room(pieces[todo.front()]) && hre_.now_ns() >= pieces[todo.front()].not_before_ns) {
            const size_t i = todo.front();
            todo.pop_front();
            Flight f;
            f.piece = i;
            if (!write) f.cookie = next_cookie_++;
            const uint16_t tag = issue(pieces[i], write, src, f.cookie);
            if (!write) cookies[f.cookie] = tag;
            flights[tag] = f;
            ++pieces[i].attempts;
            if (write) spu_bytes[pieces[i].at.spu] += pieces[i].at.bytes;
            progress = true;
        }
        // One pass over the completion queue, then the requests and responses it held.
        while (hre_.poll()) progress = true;
        // READ data: deliver, hand the space back, answer (the SPU then answers the READ).
        while (auto req = hre_.try_receive_in_place(data_rpc)) {
            progress = true;
            block_io_data d{};
            const bool whole = req->length >= sizeof d;
            if (whole) hre_.copy_payload(*req, 0, &d, sizeof d);
            const auto c = whole ? cookies.find(d.cookie) : cookies.end();
            Flight* f = c != cookies.end() ? &flights.at(c->second) : nullptr;
            const Piece* p = f ? &pieces[f->piece] : nullptr;
            if (!p || f->delivered || d.addr != p->at.nvm || d.bytes != p->at.bytes ||
                req->length != sizeof d + d.bytes || req->node != p->at.spu) {
                hre_.release(*req);
                hre_.respond(*req, SPU_OS_E_BAD_ARG);
                fail("block I/O app " + std::to_string(app_) + ": a DATA request from SPU " +
                     std::to_string(req->node) + " (" + std::to_string(req->length) +
                     " B, cookie " + std::to_string(whole ? d.cookie : 0) +
                     ") matches no READ in flight");
                continue;
            }
            if (sink)
                sink(p->offset, req->payload_va + sizeof d, d.bytes);
            else
                hre_.copy_payload(*req, sizeof d, dst + p->done, d.bytes);
            f->delivered = true;
            hre_.release(*req);
            hre_.respond(*req, BLOCK_IO_OK);
        }
        // Responses, in no particular order.
        for (auto it = flights.begin(); it != flights.end();) {
            if (!hre_.has_response(it->first)) {
                ++it;
                continue;
            }
            const Hre::Response r = *hre_.try_wait(it->first);
            const Flight f = it->second;
            Piece& p = pieces[f.piece];
            it = flights.erase(it);
            if (write) spu_bytes[p.at.spu] -= p.at.bytes;
            if (!write) cookies.erase(f.cookie);
            const bool dropped = r.status == HRE_STATUS_NACK ||
                                 (r.ok() && r.result == SPU_OS_E_DROPPED && !f.delivered);
            if (dropped && p.attempts <= cfg_.retries) {
                p.not_before_ns = hre_.now_ns() + backoff_ns(p.offset, p.attempts);
                todo.push_front(f.piece);
            } else if (!r.ok()) {
                fail(describe(p, write) + " failed: " + status_name(r.status));
            } else if (r.result != BLOCK_IO_OK) {
                fail(describe(p, write) + " failed: " + result_name(r.result));
            } else if (!write && !f.delivered) {
                fail(describe(p, write) + " succeeded without its DATA request");
            }
        }
        if (!progress) hre_.idle();
    }
    if (!failure.empty()) throw host::HostFault(failure);
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

void BlockIo::write(uint64_t offset, const void* src, uint64_t bytes) {
    std::vector<Piece> pieces = split(offset, bytes, "write");
    run(pieces, true, static_cast<const uint8_t*>(src), nullptr, nullptr);
}

void BlockIo::read(uint64_t offset, void* dst, uint64_t bytes) {
    std::vector<Piece> pieces = split(offset, bytes, "read");
    run(pieces, false, nullptr, static_cast<uint8_t*>(dst), nullptr);
}

void BlockIo::read_in_place(uint64_t offset, uint64_t bytes, const Sink& sink) {
    std::vector<Piece> pieces = split(offset, bytes, "read");
    run(pieces, false, nullptr, nullptr, sink);
}

}  // namespace canopy::sw
