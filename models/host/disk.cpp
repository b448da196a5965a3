#include "host/disk.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "host/host_core.hpp"

namespace canopy::host {

double DiskConfig::full_stroke_ms() const {
    // mean(t2t + (full - t2t) sqrt(d)) over d = |x - y|, x, y uniform: t2t + (full - t2t) 8/15.
    return track_to_track_ms + (average_seek_ms - track_to_track_ms) * 15.0 / 8.0;
}

uint32_t DiskConfig::sectors_per_track(uint32_t zone) const {
    if (zones <= 1) return outer_sectors_per_track;
    const double f = double(zone) / double(zones - 1);
    return uint32_t(std::lround(outer_sectors_per_track -
                                f * (double(outer_sectors_per_track) - inner_sectors_per_track)));
}

uint64_t DiskConfig::capacity_bytes() const {
    uint64_t sectors = 0;
    const uint32_t per_zone = cylinders / zones;
    for (uint32_t z = 0; z < zones; ++z) {
        const uint32_t cyls = z + 1 < zones ? per_zone : cylinders - per_zone * (zones - 1);
        sectors += uint64_t(cyls) * heads * sectors_per_track(z);
    }
    return sectors * sector_bytes;
}

void DiskConfig::validate(const std::string& scope) const {
    auto bad = [&](const char* key, const std::string& why) {
        throw InputError("config", scope + key, why);
    };
    if (!(rpm > 0)) bad("rpm", "must be positive");
    if (!(track_to_track_ms >= 0)) bad("track_to_track_ms", "must not be negative");
    if (!(average_seek_ms >= track_to_track_ms))
        bad("average_seek_ms", "must be at least track_to_track_ms");
    if (!(overhead_us >= 0)) bad("overhead_us", "must not be negative");
    if (heads == 0) bad("heads", "must be positive");
    if (zones == 0 || cylinders < zones) bad("zones", "1 .. cylinders");
    if (sector_bytes == 0 || Disk::kBlockBytes % sector_bytes)
        bad("sector_bytes", "must divide " + std::to_string(Disk::kBlockBytes));
    if (inner_sectors_per_track == 0 || inner_sectors_per_track > outer_sectors_per_track)
        bad("inner_sectors_per_track", "1 .. outer_sectors_per_track");
}

Disk::Disk(DiskConfig cfg) : cfg_(cfg) {
    cfg_.validate("disk.");
    capacity_ = cfg_.capacity_bytes();
    cylinders_per_zone_ = cfg_.cylinders / cfg_.zones;
    uint64_t first = 0;
    for (uint32_t z = 0; z < cfg_.zones; ++z) {
        zone_first_sector_.push_back(first);
        const uint32_t cyls =
            z + 1 < cfg_.zones ? cylinders_per_zone_ : cfg_.cylinders - cylinders_per_zone_ * z;
        first += uint64_t(cyls) * cfg_.heads * cfg_.sectors_per_track(z);
    }
    zone_first_sector_.push_back(first);
}

Disk::Place Disk::place(uint64_t offset) const {
    const uint64_t s = offset / cfg_.sector_bytes;
    const auto it = std::upper_bound(zone_first_sector_.begin(), zone_first_sector_.end(), s);
    Place p;
    p.zone = uint32_t(std::min<ptrdiff_t>(it - zone_first_sector_.begin() - 1, cfg_.zones - 1));
    p.sectors_per_track = cfg_.sectors_per_track(p.zone);
    const uint64_t rel = s - zone_first_sector_[p.zone];
    const uint64_t per_cylinder = uint64_t(cfg_.heads) * p.sectors_per_track;
    p.cylinder = p.zone * cylinders_per_zone_ + uint32_t(rel / per_cylinder);
    p.head = uint32_t(rel % per_cylinder / p.sectors_per_track);
    p.sector = uint32_t(rel % p.sectors_per_track);
    return p;
}

uint64_t Disk::offset_of(uint32_t cylinder, uint32_t head, uint32_t sector) const {
    const uint32_t zone = std::min(cylinder / cylinders_per_zone_, cfg_.zones - 1);
    const uint32_t spt = cfg_.sectors_per_track(zone);
    if (cylinder >= cfg_.cylinders || head >= cfg_.heads || sector >= spt)
        throw HostFault("disk: no sector " + std::to_string(sector) + " of track " +
                        std::to_string(head) + " of cylinder " + std::to_string(cylinder));
    const uint64_t s = zone_first_sector_[zone] +
                       (uint64_t(cylinder - zone * cylinders_per_zone_) * cfg_.heads + head) * spt +
                       sector;
    return s * cfg_.sector_bytes;
}

double Disk::seek_ns(uint32_t from, uint32_t to) const {
    const uint32_t d = from > to ? from - to : to - from;
    if (d == 0) return 0;
    const double t2t = cfg_.track_to_track_ms, full = cfg_.full_stroke_ms();
    return (t2t + (full - t2t) * std::sqrt(double(d) / cfg_.cylinders)) * 1e6;
}

Disk::Timing Disk::time_access(double start_ns, uint64_t offset, uint32_t bytes) const {
    check(offset, bytes, "access");
    Timing t;
    const Place p = place(offset);
    t.from_cylinder = arm_;
    t.cylinder = p.cylinder;
    t.overhead_ns = cfg_.overhead_us * 1e3;
    t.seek_ns = seek_ns(arm_, p.cylinder);
    const double rev = cfg_.revolution_ns();
    const double under_head = std::fmod(start_ns + t.overhead_ns + t.seek_ns, rev) / rev;
    double wait = double(p.sector) / p.sectors_per_track - under_head;
    if (wait < 0) wait += 1.0;
    t.rotation_ns = wait * rev;
    // The sectors it touches, track by track at each track's rate.
    uint64_t s = offset / cfg_.sector_bytes;
    const uint64_t end = (offset + bytes + cfg_.sector_bytes - 1) / cfg_.sector_bytes;
    while (s < end) {
        const Place q = place(s * cfg_.sector_bytes);
        const uint64_t n = std::min<uint64_t>(end - s, q.sectors_per_track - q.sector);
        t.transfer_ns += double(n) / q.sectors_per_track * rev;
        s += n;
    }
    return t;
}

void Disk::check(uint64_t offset, uint64_t bytes, const char* what) const {
    if (bytes == 0 || offset >= capacity_ || bytes > capacity_ - offset)
        throw HostFault("disk: " + std::string(what) + " of " + std::to_string(bytes) +
                        " B at byte " + std::to_string(offset) + " (the disk holds " +
                        std::to_string(capacity_) + " B)");
}

Disk::Timing Disk::access(HostCore& cpu, uint64_t offset, uint32_t bytes, bool write) {
    const Timing t = take(cpu, offset, bytes, write);
    cpu.compute_ns(t.queued_ns + t.service_ns());
    return t;
}

Disk::Timing Disk::take(HostCore& cpu, uint64_t offset, uint32_t bytes, bool write) {
    check(offset, bytes, write ? "write" : "read");
    cpu.sync();  // requests reach the disk in simulated-time order
    const double now = cpu.now_ns();
    const double start = std::max(now, busy_until_ns_);
    Timing t = time_access(start, offset, bytes);
    t.queued_ns = start - now;
    busy_until_ns_ = start + t.service_ns();
    arm_ = place(offset + bytes - 1).cylinder;
    ++(write ? stats_.writes : stats_.reads);
    stats_.bytes += bytes;
    stats_.busy_ns += t.service_ns();
    stats_.queued_ns += t.queued_ns;
    stats_.seek_ns += t.seek_ns;
    stats_.rotation_ns += t.rotation_ns;
    stats_.transfer_ns += t.transfer_ns;
    return t;
}

Disk::Timing Disk::read(HostCore& cpu, uint64_t offset, void* buf, uint32_t bytes) {
    const Timing t = access(cpu, offset, bytes, false);
    peek(offset, buf, bytes);
    return t;
}

Disk::Timing Disk::write(HostCore& cpu, uint64_t offset, const void* buf, uint32_t bytes) {
    const Timing t = access(cpu, offset, bytes, true);
    poke(offset, buf, bytes);
    return t;
}

Disk::Timing Disk::write_behind(HostCore& cpu, uint64_t offset, const void* buf, uint32_t bytes) {
    const Timing t = take(cpu, offset, bytes, true);
    poke(offset, buf, bytes);
    return t;
}

void Disk::peek(uint64_t offset, void* buf, uint64_t bytes) const {
    check(offset, bytes, "peek");
    auto* out = static_cast<uint8_t*>(buf);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t at = offset + done, in = at % kBlockBytes;
        const uint64_t n = std::min<uint64_t>(bytes - done, kBlockBytes - in);
        const auto it = blocks_.find(at / kBlockBytes);
        if (it == blocks_.end())
            std::memset(out + done, 0, n);
        else
            std::memcpy(out + done, it->second.data() + in, n);
        done += n;
    }
}

void Disk::poke(uint64_t offset, const void* buf, uint64_t bytes) {
    check(offset, bytes, "poke");
    const auto* in = static_cast<const uint8_t*>(buf);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t at = offset + done, off = at % kBlockBytes;
        const uint64_t n = std::min<uint64_t>(bytes - done, kBlockBytes - off);
        auto [it, fresh] = blocks_.try_emplace(at / kBlockBytes);
        if (fresh) it->second.fill(0);
        std::memcpy(it->second.data() + off, in + done, n);
        done += n;
    }
}

}  // namespace canopy::host
