// The asynchronous block I/O engine (fio's libaio / io_uring engines over Willow's HREs); see
// io_engine.hpp.
#include "sw/host/io_engine.hpp"

#include <algorithm>
#include <cmath>

namespace canopy::sw {

IoEngine::IoEngine(host::HostCore& cpu, WillowDriver& driver, bool kernel, uint32_t app,
                   BlockGeometry geometry, IoEngineConfig cfg)
    : cpu_(cpu), driver_(driver), cfg_(cfg) {
    if (cfg_.iodepth == 0 || cfg_.iodepth > IoEngineConfig::kMaxIodepth || cfg_.per_queue == 0)
        throw host::HostFault("I/O engine: iodepth " + std::to_string(cfg_.iodepth) + " (1 to " +
                              std::to_string(IoEngineConfig::kMaxIodepth) + "), per_queue " +
                              std::to_string(cfg_.per_queue));
    cfg_.block.max_outstanding = cfg_.per_queue;
    const uint32_t n = (cfg_.iodepth + cfg_.per_queue - 1) / cfg_.per_queue;
    queues_.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
        Queue q;
        q.endpoint = driver_.open(cpu_, kernel);
        q.hre = std::make_unique<Hre>(cpu_, q.endpoint);
        q.io = std::make_unique<BlockIo>(*q.hre, app, geometry, cfg_.block);
        queues_.push_back(std::move(q));
    }
}

IoEngine::~IoEngine() = default;

uint64_t IoEngine::submit(BlockOp op, const std::vector<DeviceRange>& ranges, uint8_t* buf) {
    if (in_flight_ >= cfg_.iodepth)
        throw host::HostFault("I/O engine: a submission beyond iodepth " +
                              std::to_string(cfg_.iodepth));
    cpu_.compute_ns(cfg_.submit_ns);
    const auto q =
        size_t(std::min_element(queues_.begin(), queues_.end(),
                                [](const Queue& a, const Queue& b) { return a.ios < b.ios; }) -
               queues_.begin());
    const uint64_t id = next_id_++;
    Io io;
    io.op = op;
    io.queue = q;
    io.submit_ns = cpu_.now_ns();
    io.ranges = ranges;
    io.attempts.assign(ranges.size(), 0);
    io.buf = buf;
    for (const DeviceRange& r : ranges) io.bytes += r.bytes;
    if (ranges.empty()) {  // nothing to move: done at once
        done_.push_back({id, op, 0, io.submit_ns, io.submit_ns, ""});
        return id;
    }
    // All or nothing: a range outside the device throws before any is sent.
    const uint64_t device = queues_[q].io->geometry().device_bytes();
    for (const DeviceRange& r : ranges)
        if (r.device > device || r.bytes > device - r.device)
            throw host::HostFault("I/O engine: " + std::to_string(r.bytes) +
                                  " B at device offset " + std::to_string(r.device) +
                                  " lie outside the " + std::to_string(device) + " B device");
    for (size_t i = 0; i < ranges.size(); ++i)
        transfer_io_[{q, send(q, op, ranges[i], buf)}] = {id, i};
    io.transfers = uint32_t(ranges.size());
    ++queues_[q].ios, ++in_flight_;
    ios_[id] = std::move(io);
    return id;
}

uint64_t IoEngine::send(size_t q, BlockOp op, const DeviceRange& r, uint8_t* buf) {
    BlockIo& io = *queues_[q].io;
    return op == BlockOp::Write  ? io.submit_write(r.device, buf + r.at, r.bytes)
           : op == BlockOp::Trim ? io.submit_trim(r.device, r.bytes)
                                 : io.submit_read(r.device, buf + r.at, r.bytes);
}

std::vector<IoEngine::Done> IoEngine::reap(size_t min) {
    min = std::min(min, done_.size() + in_flight_);  // never wait for I/Os not submitted
    while (true) {
        bool moved = false;
        for (size_t q = 0; q < queues_.size(); ++q) {
            BlockIo& io = *queues_[q].io;
            moved |= io.progress();
            while (auto c = io.reap()) {
                moved = true;
                const auto t = transfer_io_.find({q, c->id});
                const auto [id, range] = t->second;
                transfer_io_.erase(t);
                Io& i = ios_.at(id);
                const bool refused = c->error.find("SPU_OS_E_PERMISSION") != std::string::npos;
                if (refused && i.attempts[range] < cfg_.permission_retries) {
                    // The kernel's notice thread grants it again meanwhile.
                    cpu_.compute_ns(std::ldexp(cfg_.retry_pause_ns, int(i.attempts[range]++)));
                    ++retried_;
                    transfer_io_[{q, send(q, i.op, i.ranges[range], i.buf)}] = {id, range};
                    continue;
                }
                if (i.error.empty()) i.error = c->error;
                if (--i.transfers) continue;
                done_.push_back({id, i.op, i.bytes, i.submit_ns, cpu_.now_ns(), i.error});
                --queues_[q].ios, --in_flight_;
                ios_.erase(id);
            }
        }
        if (done_.size() >= min) break;
        // Nothing moved on any queue: pause as an empty poll does (one queue: or sleep for its
        // MSI; with several, an MSI of one would not wake the wait on another).
        if (moved) continue;
        if (queues_.size() == 1)
            queues_.front().hre->idle(queues_.front().io->next_attempt_ns());
        else
            cpu_.compute_ns(HreConfig().poll_gap_ns);
    }
    std::vector<Done> out;
    out.swap(done_);
    return out;
}

void IoEngine::close() {
    if (closed_) return;
    closed_ = true;
    for (Queue& q : queues_) driver_.close(cpu_, q.endpoint);
}

}  // namespace canopy::sw
