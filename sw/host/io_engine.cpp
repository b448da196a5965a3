// The asynchronous block I/O engine (fio's libaio / io_uring engines over Willow's HREs); see
// io_engine.hpp.
#include "sw/host/io_engine.hpp"

#include <algorithm>

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

uint64_t IoEngine::submit(bool write, const std::vector<DeviceRange>& ranges, uint8_t* buf) {
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
    io.write = write;
    io.queue = q;
    io.submit_ns = cpu_.now_ns();
    std::vector<uint64_t> transfers;
    for (const DeviceRange& r : ranges) {
        transfers.push_back(write ? queues_[q].io->submit_write(r.device, buf + r.at, r.bytes)
                                  : queues_[q].io->submit_read(r.device, buf + r.at, r.bytes));
        io.bytes += r.bytes;
    }
    io.transfers = uint32_t(transfers.size());
    if (transfers.empty()) {  // nothing to move: done at once
        done_.push_back({id, write, 0, io.submit_ns, io.submit_ns, ""});
        return id;
    }
    for (uint64_t t : transfers) transfer_io_[{q, t}] = id;
    ++queues_[q].ios, ++in_flight_;
    ios_[id] = io;
    return id;
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
                const uint64_t id = t->second;
                transfer_io_.erase(t);
                Io& i = ios_.at(id);
                if (i.error.empty()) i.error = c->error;
                if (--i.transfers) continue;
                done_.push_back({id, i.write, i.bytes, i.submit_ns, cpu_.now_ns(), i.error});
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
