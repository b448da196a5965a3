#include "sw/host/flash_cache.hpp"

#include <algorithm>
#include <cstring>

namespace canopy::sw {

namespace {
constexpr uint64_t align(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }
}  // namespace

uint64_t FlashCache::region_bytes(uint64_t frames) {
    return align(frames * kMetadataBytes, kBlockBytes) + frames * kBlockBytes;
}

FlashCache::FlashCache(WillowFs& fs, host::Disk& disk, std::vector<FileExtent> extents,
                       uint64_t frames, uint64_t disk_blocks, FlashCacheConfig cfg)
    : fs_(fs),
      disk_(disk),
      extents_(std::move(extents)),
      disk_blocks_(disk_blocks),
      metadata_bytes_(align(frames * kMetadataBytes, kBlockBytes)),
      cfg_(cfg),
      sets_(uint32_t(std::max<uint64_t>(1, frames / std::max(1u, cfg.associativity)))),
      ways_(uint32_t(frames / sets_)),
      frames_(uint64_t(sets_) * ways_),
      fifo_(sets_, 0),
      locks_(sets_, fs.config().lock_poll_ns) {
    clean_next_.assign(sets_, 0);
    if (cfg_.background_cleaning) shadow_.assign(frames_.size() * kBlockBytes, 0);
    const uint64_t need = region_bytes(frames);
    if (frames == 0 || cfg_.associativity == 0 || disk_blocks_ == 0 ||
        cfg_.dirty_thresh_pct > 100 || cfg_.max_clean_ios_set == 0 ||
        cfg_.max_clean_ios_total == 0 || disk_blocks_ > disk.capacity_bytes() / kBlockBytes ||
        for_each_piece(extents_, 0, need, [](uint64_t, uint64_t, uint64_t) {}) != need)
        throw host::HostFault("FlashCache: bad set-up (" + std::to_string(frames) +
                              " frames need a region of " + std::to_string(need) + " B; " +
                              std::to_string(disk_blocks) + " disk blocks, associativity " +
                              std::to_string(cfg_.associativity) + ", dirty threshold " +
                              std::to_string(cfg_.dirty_thresh_pct) + " %, cleanings " +
                              std::to_string(cfg_.max_clean_ios_set) + " a set, " +
                              std::to_string(cfg_.max_clean_ios_total) + " in all)");
}

void FlashCache::ssd(host::HostCore& cpu, bool write, uint64_t at, void* buf, uint64_t bytes) {
    auto* b = static_cast<uint8_t*>(buf);
    if (write && at >= metadata_bytes_ && !shadow_.empty())
        std::memcpy(&shadow_[at - metadata_bytes_], b, bytes);
    for_each_piece(extents_, at, bytes, [&](uint64_t dev, uint64_t off, uint64_t n) {
        if (write)
            fs_.device_write(cpu, dev, b + off, n);
        else
            fs_.device_read(cpu, dev, b + off, n);
    });
}

void FlashCache::set_dirty(host::HostCore& cpu, uint32_t frame, bool dirty) {
    frames_[frame].dirty = dirty;
    // The metadata block holding the frame's entry, as the kernel keeps it: {block, state}.
    constexpr uint32_t per_block = kMdBlockBytes / kMetadataBytes;
    const uint32_t first = frame / per_block * per_block;
    std::vector<uint8_t> md(kMdBlockBytes);
    for (uint32_t i = 0; i < per_block && first + i < frames_.size(); ++i) {
        const Frame& f = frames_[first + i];
        const uint64_t state = uint64_t(f.valid) | uint64_t(f.dirty) << 1;
        std::memcpy(&md[i * kMetadataBytes], &f.block, 8);
        std::memcpy(&md[i * kMetadataBytes + 8], &state, 8);
    }
    ssd(cpu, true, uint64_t(first) * kMetadataBytes, md.data(), kMdBlockBytes);
    ++stats_.metadata_writes;
}

void FlashCache::write_back(host::HostCore& cpu, uint32_t frame) {
    std::vector<uint8_t> data(kBlockBytes);
    ssd(cpu, false, frame_at(frame), data.data(), kBlockBytes);
    disk_request(cpu, fs_.config(), disk_, true, frames_[frame].block * kBlockBytes, data.data(),
                 kBlockBytes);
    set_dirty(cpu, frame, false);
    ++stats_.writebacks;
}

uint32_t FlashCache::allocate(host::HostCore& cpu, uint64_t block) {
    const uint32_t set = uint32_t(block / cfg_.associativity % sets_), first = set * ways_;
    for (uint32_t w = 0; w < ways_; ++w)
        if (!frames_[first + w].valid) return first + w;
    auto clean = [&](uint32_t f) {
        return !cfg_.background_cleaning || (!frames_[f].dirty && !frames_[f].cleaning);
    };
    uint32_t victim = UINT32_MAX;
    if (cfg_.lru) {
        for (uint32_t w = 0; w < ways_; ++w)
            if (clean(first + w) &&
                (victim == UINT32_MAX || frames_[first + w].stamp < frames_[victim].stamp))
                victim = first + w;
    } else {  // flashcache_reclaim_fifo_get_old_block: the first one it may take from its place
        uint32_t w = fifo_[set];
        for (uint32_t n = 0; n < ways_; ++n, w = (w + 1) % ways_)
            if (clean(first + w)) {
                victim = first + w;
                break;
            }
        fifo_[set] = (w + 1) % ways_;
    }
    if (victim == UINT32_MAX) return victim;
    if (frames_[victim].dirty) write_back(cpu, victim);
    index_.erase(frames_[victim].block);
    frames_[victim].valid = false;
    return victim;
}

void FlashCache::reap(double now_ns) {
    for (size_t i = 0; i < cleaning_.size();) {
        Frame& f = frames_[cleaning_[i]];
        if (f.cleaned_ns > now_ns) {
            ++i;
            continue;
        }
        // The kernel then writes the metadata block in the background (not timed here).
        f.cleaning = false;
        f.dirty = false;
        ++stats_.writebacks;
        ++stats_.metadata_writes;
        cleaning_[i] = cleaning_.back();
        cleaning_.pop_back();
    }
}

void FlashCache::clean_set(host::HostCore& cpu, uint32_t set) {
    if (!cfg_.background_cleaning) return;
    reap(cpu.now_ns());
    const uint32_t first = set * ways_, thresh = ways_ * cfg_.dirty_thresh_pct / 100;
    uint32_t dirty = 0, busy = 0;
    for (uint32_t w = 0; w < ways_; ++w) {
        dirty += frames_[first + w].dirty;
        busy += frames_[first + w].cleaning;
    }
    if (dirty < thresh) return;
    uint32_t w = clean_next_[set];
    for (uint32_t n = 0, started = 0;
         n < ways_ && started < dirty - thresh && busy < cfg_.max_clean_ios_set &&
         cleaning_.size() < cfg_.max_clean_ios_total;
         ++n, w = (w + 1) % ways_) {
        Frame& f = frames_[first + w];
        if (!f.dirty || f.cleaning) continue;
        const host::Disk::Timing t = disk_.write_behind(
            cpu, f.block * kBlockBytes, &shadow_[uint64_t(first + w) * kBlockBytes], kBlockBytes);
        f.cleaning = true;
        f.cleaned_ns = cpu.now_ns() + t.queued_ns + t.service_ns();
        cleaning_.push_back(first + w);
        ++stats_.cleanings;
        ++busy;
        ++started;
    }
    clean_next_[set] = w;
}

void FlashCache::piece(host::HostCore& cpu, bool write, uint64_t block, uint32_t offset,
                       uint8_t* buf, uint32_t bytes) {
    cpu.compute_ns(fs_.config().syscall_ns + cfg_.lookup_ns);
    ++stats_.pieces;
    const uint32_t set = uint32_t(block / cfg_.associativity % sets_);
    const KernelLocks::Held held = locks_.take(cpu, set);
    reap(cpu.now_ns());
    serve(cpu, write, block, offset, buf, bytes);
    if (write) clean_set(cpu, set);
}

void FlashCache::serve(host::HostCore& cpu, bool write, uint64_t block, uint32_t offset,
                       uint8_t* buf, uint32_t bytes) {
    const auto it = index_.find(block);
    if (it != index_.end()) {
        ++stats_.hits;
        const uint32_t f = it->second;
        if (frames_[f].cleaning) {  // the request waits for the block's write-back
            const double until = frames_[f].cleaned_ns;
            cpu.compute_ns(std::max(0.0, until - cpu.now_ns()));
            reap(std::max(cpu.now_ns(), until));  // the clock's rounding must not keep it
        }
        frames_[f].stamp = ++clock_;
        ssd(cpu, write, frame_at(f) + offset, buf, bytes);
        if (write && !frames_[f].dirty) set_dirty(cpu, f, true);
        return;
    }
    ++stats_.misses;
    const uint32_t f = allocate(cpu, block);
    std::vector<uint8_t> data(kBlockBytes);
    const bool whole = write && bytes == kBlockBytes;
    if (!whole)
        disk_request(cpu, fs_.config(), disk_, false, block * kBlockBytes, data.data(),
                     kBlockBytes);
    if (write) std::memcpy(data.data() + offset, buf, bytes);
    if (f == UINT32_MAX) {  // no clean frame: the request goes to the disk, uncached
        ++stats_.uncached;
        if (write)
            disk_request(cpu, fs_.config(), disk_, true, block * kBlockBytes, data.data(),
                         kBlockBytes);
        else
            std::memcpy(buf, data.data() + offset, bytes);
        return;
    }
    ssd(cpu, true, frame_at(f), data.data(), kBlockBytes);
    frames_[f].block = block;
    frames_[f].valid = true;
    frames_[f].stamp = ++clock_;
    index_[block] = f;
    if (write)
        set_dirty(cpu, f, true);
    else
        std::memcpy(buf, data.data() + offset, bytes);
}

void FlashCache::read(host::HostCore& cpu, uint64_t offset, void* dst, uint64_t bytes) {
    if (cfg_.under_file_system) cpu.compute_ns(fs_.config().read_ns);
    for_each_block(offset, bytes, disk_blocks_, "FlashCache: a read",
                   [&](uint64_t block, uint32_t in, uint64_t done, uint32_t n) {
                       piece(cpu, false, block, in, static_cast<uint8_t*>(dst) + done, n);
                   });
    reap(cpu.now_ns());  // the cleanings that ended meanwhile
}

void FlashCache::write(host::HostCore& cpu, uint64_t offset, const void* src, uint64_t bytes) {
    if (cfg_.under_file_system) cpu.compute_ns(fs_.config().write_ns);
    for_each_block(offset, bytes, disk_blocks_, "FlashCache: a write",
                   [&](uint64_t block, uint32_t in, uint64_t done, uint32_t n) {
                       // Only read from.
                       auto* b = const_cast<uint8_t*>(static_cast<const uint8_t*>(src));
                       piece(cpu, true, block, in, b + done, n);
                   });
    reap(cpu.now_ns());
}

uint64_t FlashCache::flush(host::HostCore& cpu) {
    double last = cpu.now_ns();  // the background write-backs end first
    for (uint32_t f : cleaning_) last = std::max(last, frames_[f].cleaned_ns);
    cpu.compute_ns(last - cpu.now_ns());
    reap(last);
    uint64_t n = 0;
    for (uint32_t f = 0; f < frames_.size(); ++f) {
        const KernelLocks::Held held = locks_.take(cpu, f / ways_);
        if (frames_[f].valid && frames_[f].dirty) {
            write_back(cpu, f);
            ++n;
        }
    }
    return n;
}

uint64_t FlashCache::dirty() const {
    return uint64_t(std::count_if(frames_.begin(), frames_.end(),
                                  [](const Frame& f) { return f.valid && f.dirty; }));
}

}  // namespace canopy::sw
