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
    const uint64_t need = region_bytes(frames);
    if (frames == 0 || cfg_.associativity == 0 || disk_blocks_ == 0 ||
        disk_blocks_ > disk.capacity_bytes() / kBlockBytes ||
        for_each_piece(extents_, 0, need, [](uint64_t, uint64_t, uint64_t) {}) != need)
        throw host::HostFault("FlashCache: bad set-up (" + std::to_string(frames) +
                              " frames need a region of " + std::to_string(need) + " B; " +
                              std::to_string(disk_blocks) + " disk blocks, associativity " +
                              std::to_string(cfg_.associativity) + ")");
}

void FlashCache::ssd(host::HostCore& cpu, bool write, uint64_t at, void* buf, uint64_t bytes) {
    auto* b = static_cast<uint8_t*>(buf);
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
    uint32_t victim = first + fifo_[set];
    if (cfg_.lru) {
        for (uint32_t w = 0; w < ways_; ++w)
            if (frames_[first + w].stamp < frames_[victim].stamp) victim = first + w;
    } else {
        fifo_[set] = (fifo_[set] + 1) % ways_;
    }
    if (frames_[victim].dirty) write_back(cpu, victim);
    index_.erase(frames_[victim].block);
    frames_[victim].valid = false;
    return victim;
}

void FlashCache::piece(host::HostCore& cpu, bool write, uint64_t block, uint32_t offset,
                       uint8_t* buf, uint32_t bytes) {
    cpu.compute_ns(fs_.config().syscall_ns + cfg_.lookup_ns);
    ++stats_.pieces;
    const KernelLocks::Held held = locks_.take(cpu, uint32_t(block / cfg_.associativity % sets_));
    const auto it = index_.find(block);
    if (it != index_.end()) {
        ++stats_.hits;
        const uint32_t f = it->second;
        frames_[f].stamp = ++clock_;
        ssd(cpu, write, frame_at(f) + offset, buf, bytes);
        if (write && !frames_[f].dirty) set_dirty(cpu, f, true);
        return;
    }
    ++stats_.misses;
    const uint32_t f = allocate(cpu, block);
    std::vector<uint8_t> data(kBlockBytes);
    if (!write || bytes < kBlockBytes)
        disk_request(cpu, fs_.config(), disk_, false, block * kBlockBytes, data.data(),
                     kBlockBytes);
    if (write) std::memcpy(data.data() + offset, buf, bytes);
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
}

void FlashCache::write(host::HostCore& cpu, uint64_t offset, const void* src, uint64_t bytes) {
    if (cfg_.under_file_system) cpu.compute_ns(fs_.config().write_ns);
    for_each_block(offset, bytes, disk_blocks_, "FlashCache: a write",
                   [&](uint64_t block, uint32_t in, uint64_t done, uint32_t n) {
                       // Only read from.
                       auto* b = const_cast<uint8_t*>(static_cast<const uint8_t*>(src));
                       piece(cpu, true, block, in, b + done, n);
                   });
}

uint64_t FlashCache::flush(host::HostCore& cpu) {
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
