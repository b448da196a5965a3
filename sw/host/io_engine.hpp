// An asynchronous block I/O engine, as fio's libaio and io_uring engines drive a block device: one
// host program keeps up to `iodepth` I/Os in flight, whatever the number of host cores. The
// engine opens HREs of its own, ceil(iodepth / per_queue) of them (hardware queues, as blk-mq
// gives submitters NVMe queue pairs of their own), with a BlockIo client on each whose window is
// per_queue RPCs; an I/O goes whole to the queue with the fewest I/Os in flight. Through Base-IO
// (`kernel`) the HREs are the kernel's, the block layer's queues, and each submission costs a
// system call (io_submit, io_uring_enter); through Direct-IO they are the process's own and a
// submission costs nothing beyond the stores to the queue (OS bypass). Completions are reaped
// from the queues in user space, as from io_uring's completion ring.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sw/host/block_io.hpp"
#include "sw/host/hre.hpp"
#include "sw/host/lib_direct_io.hpp"
#include "sw/host/willow_driver.hpp"

namespace canopy::sw {

struct IoEngineConfig {
    uint32_t iodepth = 1;  // 1 ... kMaxIodepth
    // RPCs in flight per HRE: a READ in flight holds two of the default layout's 64 CQ entries
    // (its DATA request and its response), and 32 8 KiB READs fill its 256 KiB receive buffer.
    uint32_t per_queue = 32;
    double submit_ns = 0;  // per submission: a system call (WillowDriverConfig::syscall_ns) or 0
    BlockIoConfig block;   // max_outstanding is per_queue
    // Direct-IO: a range SPU-OS refuses with SPU_OS_E_PERMISSION (an evicted permission entry)
    // is sent again after a pause, doubling, up to this many times, while the kernel's notice
    // thread grants it again (as libDirectIO's DirectIoConfig::retries; the engine's core
    // pauses, as the library's does).
    uint32_t permission_retries = 0;
    double retry_pause_ns = 2000;
    // The engine on each path: Base-IO's kernel HREs (a system call per submission), or the
    // process's own HREs with libDirectIO's permission-miss retries.
    static IoEngineConfig base_io(uint32_t iodepth, const WillowDriverConfig& driver) {
        IoEngineConfig c;
        c.iodepth = iodepth;
        c.submit_ns = driver.syscall_ns;
        return c;
    }
    static IoEngineConfig direct_io(uint32_t iodepth, const DirectIoConfig& dio = {}) {
        IoEngineConfig c;
        c.iodepth = iodepth;
        c.permission_retries = dio.retries;
        c.retry_pause_ns = dio.retry_pause_ns;
        return c;
    }
    static constexpr uint32_t kMaxIodepth = 1024;
};

class IoEngine {
  public:
    struct Done {
        uint64_t id = 0;
        BlockOp op = BlockOp::Read;
        uint64_t bytes = 0;
        double submit_ns = 0, complete_ns = 0;  // simulated, on the engine's core
        std::string error;                      // empty: done
    };

    // On the calling program's core; `app` is the block I/O app (Base-IO or Direct-IO) the
    // I/Os go to, `kernel` whether the HREs are the kernel's. Throws HostFault when the driver
    // has too few queue pairs left.
    IoEngine(host::HostCore& cpu, WillowDriver& driver, bool kernel, uint32_t app,
             BlockGeometry geometry, IoEngineConfig cfg);
    ~IoEngine();
    IoEngine(const IoEngine&) = delete;
    IoEngine& operator=(const IoEngine&) = delete;

    // Queues an I/O over device ranges (DeviceRange::at: where each lies in `buf`, which stays
    // until the I/O is reaped; a TRIM moves no data and may pass none). Throws HostFault when
    // iodepth I/Os are in flight already, or a range lies outside the device.
    uint64_t submit(BlockOp op, const std::vector<DeviceRange>& ranges, uint8_t* buf);
    // Progresses until at least `min` I/Os have finished since the last reap (min 0: none
    // waited for), then hands over every finished one (io_getevents).
    std::vector<Done> reap(size_t min);
    size_t in_flight() const { return in_flight_; }
    size_t queues() const { return queues_.size(); }
    uint64_t retried() const { return retried_; }  // ranges sent again after a permission miss
    // Closes the engine's HREs (before the program ends; the destructor cannot, it has no core).
    void close();

  private:
    struct Queue {
        HreEndpoint endpoint;
        std::unique_ptr<Hre> hre;
        std::unique_ptr<BlockIo> io;
        size_t ios = 0;  // I/Os in flight on it
    };
    struct Io {
        BlockOp op = BlockOp::Read;
        uint64_t bytes = 0;
        size_t queue = 0;
        uint32_t transfers = 0;  // not yet finished
        double submit_ns = 0;
        std::string error;
        std::vector<DeviceRange> ranges;
        std::vector<uint32_t> attempts;  // per range: permission retries so far
        uint8_t* buf = nullptr;
    };
    uint64_t send(size_t queue, BlockOp op, const DeviceRange& r, uint8_t* buf);

    host::HostCore& cpu_;
    WillowDriver& driver_;
    IoEngineConfig cfg_;
    std::vector<Queue> queues_;
    std::map<uint64_t, Io> ios_;  // in flight, by id
    // (queue, transfer) -> (I/O, its range)
    std::map<std::pair<size_t, uint64_t>, std::pair<uint64_t, size_t>> transfer_io_;
    uint64_t retried_ = 0;
    std::vector<Done> done_;
    uint64_t next_id_ = 1;
    size_t in_flight_ = 0;
    bool closed_ = false;
};

}  // namespace canopy::sw
