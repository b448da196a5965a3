// The willow-apps experiment (Willow Sections 4.3-4.5, Figure 6; CALIBRATION.md "Willow"). Each
// configuration runs in a child process (run_isolated): SystemC elaborates once per process. The
// store is SSD memory, the prototype's emulated PCM.
//  - TPC-B-like transactions (Willow 4.3 ran Shore-MT on TPC-B): each updates four random 64-byte
//    records of a 512 KiB table spread over the 8 SPUs; every thread is a process of its own
//    on its own host core. With Atomic-Writes a transaction is one VECTORLOGWRITE per SPU it
//    touches and one COMMIT (two-phase commit among the SPUs, which apply the updates). With
//    the host write-ahead log (ARIES without group commit) a thread takes the log's mutex,
//    appends its redo records and a commit record at the log's tail through libDirectIO (the
//    write is durable when it returns), releases the mutex, then writes the four records' pages
//    (4 KiB: a buffer pool writes pages back, where Atomic-Writes applies the logged bytes)
//    through libDirectIO. Throughput as threads grow; Willow reports MARS up to 1.5x ARIES.
//  - Key-Value (Willow 4.5): 1 KiB values under 128 keys through the Key-Value app from a user
//    process, and the same through a host store of the same layout (kv_abi.h) in a file, walked
//    with the file system's pread/pwrite (system calls, Base-IO): mean GET and PUT.
#include "core/error.hpp"
#include "experiments/experiment.hpp"

#include <fcntl.h>

#include <cstddef>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/rng.hpp"
#include "experiments/isolated.hpp"
#include "platform/willow_prototype.hpp"
#include "sw/firmware/apps/caching_abi.h"
#include "sw/firmware/apps/kv_abi.h"
#include "sw/host/zipf.hpp"

namespace canopy::experiments {

using namespace platform;

using nlohmann::json;

namespace {

constexpr uint64_t kTable = 512 * 1024, kRecord = 64, kPage = 4096;
constexpr unsigned kUpdates = 4;
constexpr unsigned kMaxThreads = 6;  // Atomic-Writes keeps 6 transactions per SPU in flight
constexpr uint64_t kLog = 1024 * 1024;

// A host mutex: host programs are cooperative threads, so test-and-set needs no atomics; a
// waiter looks again every 100 ns.
struct HostMutex {
    bool held = false;
    void lock(host::HostCore& cpu) {
        while (held) cpu.compute_ns(100);
        held = true;
    }
    void unlock() { held = false; }
};

// Transactions per second of `threads` threads running `per_thread` TPC-B-like transactions
// each, with Atomic-Writes or (`wal`) the host log.
json tpcb_run(PlatformConfig cfg, bool wal, unsigned threads, unsigned per_thread) {
    cfg.host.cores = std::max(cfg.host.cores, 1 + kMaxThreads);  // a core per thread
    PrototypeMachine m(cfg, "willow-apps");
    Barrier barrier{threads, m.platform->host};
    Span span;
    HostMutex log_mutex;
    uint64_t log_tail = 0;
    bool created = false;
    unsigned finished = 0, running = 0;
    for (unsigned t = 0; t < threads; ++t) {
        auto& proc = m.platform->host.kernel.create_process("tpcb" + std::to_string(t));
        m.platform->host.cores[1 + t]->run(proc, [&, t](host::HostCore& cpu) {
            const WillowStack::User user(*m.stack, running);
            m.stack->wait_ready(cpu);
            auto& fs = m.stack->fs;
            if (t == 0) {
                fs.create(cpu, "/tpcb", kTable, proc.pid, 0666);
                fs.create(cpu, "/wal", kLog, proc.pid, 0666);
                created = true;
            }
            while (!created) cpu.compute_ns(1000);
            auto dio = m.stack->direct_io(cpu);
            const int db = dio->open("/tpcb", O_RDWR);
            const int log = dio->open("/wal", O_RDWR);
            std::unique_ptr<sw::AtomicWrites> aw;
            if (!wal) aw = m.stack->atomic_writes(cpu, *dio);
            core::Rng rng(core::derive_seed(m.cfg.sim.seed, "tpcb" + std::to_string(t)));
            std::vector<uint8_t> data(kUpdates * kRecord), redo, page(kPage);
            barrier.wait(cpu);
            const double t0 = now_ns(cpu);
            for (unsigned n = 0; n < per_thread; ++n) {
                uint64_t at[kUpdates];
                for (unsigned u = 0; u < kUpdates; ++u)
                    at[u] = rng() % (kTable / kRecord) * kRecord;
                for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(rng());
                if (!wal) {
                    const uint32_t tx = aw->begin();
                    std::vector<sw::AtomicWrites::Update> ups;
                    for (unsigned u = 0; u < kUpdates; ++u)
                        ups.push_back({db, at[u], &data[u * kRecord], kRecord});
                    aw->write(tx, ups);
                    aw->commit(tx);
                    continue;
                }
                // Redo records {offset, length} + data, then a commit record.
                redo.clear();
                for (unsigned u = 0; u < kUpdates; ++u) {
                    const uint64_t head[2] = {at[u], kRecord};
                    redo.insert(redo.end(), reinterpret_cast<const uint8_t*>(head),
                                reinterpret_cast<const uint8_t*>(head) + sizeof head);
                    redo.insert(redo.end(), &data[u * kRecord], &data[(u + 1) * kRecord]);
                }
                redo.resize(redo.size() + 16, 0xC0);
                log_mutex.lock(cpu);
                if (log_tail + redo.size() > kLog) log_tail = 0;
                const uint64_t where = log_tail;
                log_tail += redo.size();
                dio->pwrite(log, redo.data(), redo.size(), where);
                log_mutex.unlock();
                // The buffer pool writes back the page each record lies in (no-force: later, but
                // every update costs one page write in the long run).
                for (unsigned u = 0; u < kUpdates; ++u) {
                    const uint64_t first = at[u] / kPage * kPage;
                    std::copy(&data[u * kRecord], &data[(u + 1) * kRecord],
                              page.begin() + (at[u] - first));
                    dio->pwrite(db, page.data(), kPage, first);
                }
            }
            span.add(t0, now_ns(cpu));
            ++finished;
        });
    }
    m.platform->simulate();  // GDB's Ctrl-C is heard between slices
    if (finished != threads)
        throw SimulationError("willow-apps: " + m.platform->host.first_fault());
    return {{"tps", double(threads * per_thread) / span.ns() * 1e9}};
}

// A host key-value store in a file, in the app's layout (kv_abi.h): a header, the bucket heads,
// records appended at the heap's end. Every step is a pread or pwrite system call (Base-IO).
class FsKv {
  public:
    FsKv(WillowStack& stack, host::HostCore& cpu, uint32_t buckets, uint64_t bytes)
        : fs_(stack.fs), cpu_(cpu), buckets_(buckets) {
        stack.fs.create(cpu, "/kv", bytes, cpu.process().pid, 0600);
        fd_ = fs_.open(cpu, "/kv", O_RDWR);
        std::vector<uint8_t> zero(4 * buckets, 0);
        fs_.pwrite(cpu_, fd_, zero.data(), zero.size(), sizeof(kv_header));
        heap_ = sizeof(kv_header) + 4 * buckets;
        const kv_header h{KV_MAGIC, buckets, uint32_t(heap_), uint32_t(bytes)};
        fs_.pwrite(cpu_, fd_, &h, sizeof h, 0);
    }
    void put(const std::string& key, const std::vector<uint8_t>& value) {
        const uint64_t hash = sw::KvStore::hash(key);
        const uint32_t head = head_of(hash);
        uint32_t first = 0;
        fs_.pread(cpu_, fd_, &first, 4, head);
        walk(first, hash, key);  // a replacement would unlink the old record (not needed here)
        std::vector<uint8_t> rec(sizeof(kv_record) + key.size() + value.size());
        const kv_record r{first, uint32_t(hash), uint32_t(hash >> 32), uint16_t(key.size()),
                          uint16_t(value.size())};
        std::memcpy(rec.data(), &r, sizeof r);
        std::memcpy(rec.data() + sizeof r, key.data(), key.size());
        std::memcpy(rec.data() + sizeof r + key.size(), value.data(), value.size());
        const uint32_t at = uint32_t(heap_);
        fs_.pwrite(cpu_, fd_, rec.data(), rec.size(), at);
        heap_ += (rec.size() + 3) & ~size_t(3);
        const uint32_t heap = uint32_t(heap_);
        fs_.pwrite(cpu_, fd_, &heap, 4, offsetof(kv_header, heap));
        fs_.pwrite(cpu_, fd_, &at, 4, head);
    }
    std::optional<std::vector<uint8_t>> get(const std::string& key) {
        const uint64_t hash = sw::KvStore::hash(key);
        uint32_t first = 0;
        fs_.pread(cpu_, fd_, &first, 4, head_of(hash));
        const uint32_t at = walk(first, hash, key);
        if (!at) return std::nullopt;
        std::vector<uint8_t> v(found_.value_bytes);
        fs_.pread(cpu_, fd_, v.data(), v.size(), at + sizeof(kv_record) + key.size());
        return v;
    }

  private:
    uint32_t head_of(uint64_t hash) const {
        return uint32_t(sizeof(kv_header) + 4 * (hash % buckets_));
    }
    // The record of `key` in the chain from `at` (0: none); one read of header and key a step.
    uint32_t walk(uint32_t at, uint64_t hash, const std::string& key) {
        std::vector<uint8_t> b(sizeof(kv_record) + key.size());
        for (; at; at = found_.next) {
            fs_.pread(cpu_, fd_, b.data(), b.size(), at);
            std::memcpy(&found_, b.data(), sizeof found_);
            if (found_.hash_lo == uint32_t(hash) && found_.hash_hi == uint32_t(hash >> 32) &&
                found_.key_bytes == key.size() &&
                std::memcmp(b.data() + sizeof found_, key.data(), key.size()) == 0)
                return at;
        }
        return 0;
    }
    sw::WillowFs& fs_;
    host::HostCore& cpu_;
    uint32_t buckets_;
    int fd_ = -1;
    uint64_t heap_ = 0;
    kv_record found_{};
};

// Mean GET and PUT of 1 KiB values through the Key-Value app and through the host store.
json kv_run(const PlatformConfig& cfg, unsigned pairs) {
    PrototypeMachine m(cfg, "willow-apps");
    json out;
    m.run_user("willow-apps", [&](host::HostCore& cpu) {
        auto value = [](unsigned i) {
            std::vector<uint8_t> v(1024);
            for (size_t k = 0; k < v.size(); ++k) v[k] = uint8_t(k * 7 + i);
            return v;
        };
        auto key = [](unsigned i) { return "user:" + std::to_string(i * 7919); };
        auto measure = [&](const char* name, auto& store) {
            double t0 = now_ns(cpu);
            for (unsigned i = 0; i < pairs; ++i) store.put(key(i), value(i));
            out[name]["put_ns"] = (now_ns(cpu) - t0) / pairs;
            t0 = now_ns(cpu);
            for (unsigned i = 0; i < pairs; ++i)
                if (store.get(key(i)) != value(i))
                    throw host::HostFault(std::string("willow-apps: ") + name + " lost " + key(i));
            out[name]["get_ns"] = (now_ns(cpu) - t0) / pairs;
        };
        auto kv = m.stack->key_value(cpu);
        measure("willow", *kv);
        FsKv host(*m.stack, cpu, m.stack->cfg.kv_buckets, 4 << 20);
        measure("host", host);
    });
    return out;
}

// Caching against FlashCache (Willow 4.4): 4 KiB reads and writes (one in five) of a disk's
// blocks, Zipf 90/10 over ten times as many blocks as the cache holds, the same sequence on each;
// hit ratio, mean read and write after a warm-up, and the hit latencies of a hot block.
json caching_run(const PlatformConfig& cfg, unsigned accesses) {
    constexpr uint32_t kFramesPerSpu = 63;
    constexpr uint64_t kBlock = CACHE_BLOCK_BYTES;
    PrototypeMachine m(cfg, "willow-apps", [](WillowStackConfig& w) {
        w.cache_bytes = (CACHE_REGION_BYTES(kFramesPerSpu) + 8191) / 8192 * 8192;
    });
    json out;
    m.run_user("willow-apps", [&](host::HostCore& cpu) {
        const uint64_t frames = uint64_t(m.stack->cache_frames()) * m.cfg.ssd.spus;
        const uint64_t n = 10 * frames;
        const sw::ZipfSampler rank(sw::zipf(n, sw::theta_90_10(n)));
        std::vector<uint8_t> buf(kBlock, 0x5a);
        // Runs the sequence on one system; blocks from `base` (disjoint: they share the disk).
        auto run = [&](const char* name, uint64_t base, auto&& io, auto&& hits) {
            core::Rng rng(core::derive_seed(m.cfg.sim.seed, "fio"));
            double read_ns = 0, write_ns = 0;
            unsigned reads = 0, writes = 0;
            uint64_t hits0 = 0;
            for (unsigned i = 0; i < 2 * accesses; ++i) {
                if (i == accesses) hits0 = hits();
                const uint64_t b = base + rank(rng);
                const bool write = rng() % 5 == 0;
                const double t0 = now_ns(cpu);
                io(write, b);
                if (i < accesses) continue;
                (write ? write_ns : read_ns) += now_ns(cpu) - t0;
                ++(write ? writes : reads);
            }
            out[name]["hits"] = double(hits() - hits0) / accesses;
            out[name]["read_ns"] = read_ns / reads;
            out[name]["write_ns"] = write_ns / writes;
            // Rank 0 is cached by now: its hit latencies.
            for (const bool write : {false, true}) {
                const double t0 = now_ns(cpu);
                for (int k = 0; k < 16; ++k) io(write, base);
                out[name][write ? "write_hit_ns" : "read_hit_ns"] = (now_ns(cpu) - t0) / 16;
            }
        };
        auto cache = m.stack->caching(cpu);
        run(
            "caching", 0,
            [&](bool w, uint64_t b) {
                w ? cache->write(b * kBlock, buf.data(), kBlock)
                  : cache->read(b * kBlock, buf.data(), kBlock);
            },
            [&] { return cache->stats().hits; });
        auto fc = m.stack->flash_cache(cpu, frames);
        run(
            "flashcache", n,
            [&](bool w, uint64_t b) {
                w ? fc->write(cpu, b * kBlock, buf.data(), kBlock)
                  : fc->read(cpu, b * kBlock, buf.data(), kBlock);
            },
            [&] { return fc->stats().hits; });
    });
    return out;
}

}  // namespace

std::vector<ExpRow> willow_apps(const ExpOptions& o) {
    const bool quick = o.quick;
    const PlatformConfig cfg = o.platform();
    const unsigned per_thread = quick ? 8 : 32;
    std::vector<ExpRow> rows;
    int id = 1;
    double aw_max = 0, wal_max = 0;
    for (const bool wal : {false, true})
        for (const unsigned threads : {1u, 2u, 4u, 6u}) {
            const json r =
                run_isolated([&] { return tpcb_run(cfg, wal, threads, per_thread); },
                             std::string(wal ? "host log" : "Atomic-Writes") + ", " +
                                 std::to_string(threads) + " thread" + (threads > 1 ? "s" : ""));
            const double tps = r["tps"];
            (wal ? wal_max : aw_max) = tps;
            rows.push_back({"A." + std::to_string(id++),
                            std::string(wal ? "host write-ahead log" : "Atomic-Writes") +
                                ", TPC-B-like, " + std::to_string(threads) + " thread" +
                                (threads > 1 ? "s" : ""),
                            tps / 1e3, std::nullopt, "K tx/s"});
        }
    rows.push_back({"A." + std::to_string(id++), "Atomic-Writes / host log at 6 threads",
                    aw_max / wal_max, 1.5, "x"});
    const json kv = run_isolated([&] { return kv_run(cfg, quick ? 32 : 128); }, "Key-Value");
    auto us = [&](const char* who, const char* what) { return double(kv[who][what]) * 1e-3; };
    rows.push_back({"K.1", "Key-Value app GET, 1 KiB", us("willow", "get_ns"), std::nullopt, "us"});
    rows.push_back({"K.2", "host key-value store over the file system GET, 1 KiB",
                    us("host", "get_ns"), std::nullopt, "us"});
    rows.push_back({"K.3", "host store / Key-Value app GET latency",
                    us("host", "get_ns") / us("willow", "get_ns"), std::nullopt, "x"});
    rows.push_back({"K.4", "Key-Value app PUT, 1 KiB", us("willow", "put_ns"), std::nullopt, "us"});
    rows.push_back({"K.5", "host key-value store over the file system PUT, 1 KiB",
                    us("host", "put_ns"), std::nullopt, "us"});
    rows.push_back({"K.6", "host store / Key-Value app PUT latency",
                    us("host", "put_ns") / us("willow", "put_ns"), std::nullopt, "x"});
    const json c = run_isolated([&] { return caching_run(cfg, quick ? 1500 : 6000); },
                                "Caching and FlashCache");
    auto cv = [&](const char* who, const char* what) { return double(c[who][what]); };
    auto less = [&](const char* what) { return 1 - cv("caching", what) / cv("flashcache", what); };
    rows.push_back({"C.1", "Caching hit ratio, Zipf 90/10, 504 frames, 5,040 blocks",
                    cv("caching", "hits"), std::nullopt, ""});
    rows.push_back(
        {"C.2", "FlashCache hit ratio, the same", cv("flashcache", "hits"), std::nullopt, ""});
    rows.push_back({"C.3", "Caching's miss rate below FlashCache's",
                    1 - (1 - cv("caching", "hits")) / (1 - cv("flashcache", "hits")), 0.145, "",
                    0.06, 0.23});
    rows.push_back({"C.4", "Caching / FlashCache 4 KiB read hit latency",
                    cv("caching", "read_hit_ns") / cv("flashcache", "read_hit_ns"), std::nullopt,
                    "x"});
    rows.push_back({"C.5", "read hit latency saved by Caching", less("read_hit_ns"), 0.363, ""});
    rows.push_back({"C.6", "write hit latency saved by Caching", less("write_hit_ns"), 0.618, ""});
    rows.push_back({"C.7", "FlashCache / Caching mean 4 KiB read",
                    cv("flashcache", "read_ns") / cv("caching", "read_ns"), 2.25, "x", 1.7, 2.8});
    rows.push_back({"C.8", "FlashCache / Caching mean 4 KiB write",
                    cv("flashcache", "write_ns") / cv("caching", "write_ns"), 1.8, "x"});
    rows.push_back(
        {"C.9", "Caching mean 4 KiB read", cv("caching", "read_ns") * 1e-3, std::nullopt, "us"});
    rows.push_back({"C.10", "FlashCache mean 4 KiB read", cv("flashcache", "read_ns") * 1e-3,
                    std::nullopt, "us"});
    return rows;
}

Experiment willow_apps_experiment() {
    return {"willow-apps",
            "Willow Sec. 4.3-4.5 (Figure 6): Atomic-Writes against a host write-ahead log "
            "(TPC-B-like transactions per second, 1..6 threads; MARS up to 1.5x ARIES), and the "
            "Key-Value app against a host key-value store over the file system (GET and PUT of "
            "1 KiB), and Caching against FlashCache in front of a disk (Zipf 90/10), on the "
            "prototype's machine",
            willow_apps,
            {},
            prototype_config,
            true};
}

}  // namespace canopy::experiments
