// A hard disk behind the host, the backing store of an SSD cache (Willow Section 4.4: the Caching
// app and FlashCache in front of a disk). It holds real data, sparse in 4 KiB blocks (never
// written bytes read as zero), and times each access from the mechanism:
//
// - the controller's command overhead;
// - the seek from the arm's cylinder to the target's: none on the same cylinder, else
//   track-to-track + (full stroke - track-to-track) x sqrt(distance / cylinders) (the arm
//   accelerates over the first half of a long seek and coasts: Ruemmler and Wilkes, "An
//   introduction to disk drive modeling", 1994). The full stroke is set so that the mean over
//   uniformly random pairs of cylinders is the datasheet's average seek: that mean of
//   sqrt(|x - y|) for x, y uniform in [0, 1] is 8/15;
// - the rotational wait from the platter's angle when the seek ends (angle = time mod one
//   revolution, so it is deterministic) to the first sector's (its index in the track / the
//   track's sectors): less than one revolution;
// - the media transfer at the track's rate: zoned recording, the outer zones hold more sectors
//   per track. Track and cylinder switches inside a transfer are hidden by the track skew
//   (assumed), so a transfer crossing tracks runs at each track's rate without a pause.
//
// No read-ahead or write cache (a cache's backing store must hold what it acknowledged): back-to-
// back sequential requests miss the next sector by the command overhead and wait most of a
// revolution, as an uncached disk does. One request at a time: a caller arriving while the disk
// is busy waits until it is free, so concurrent callers queue in the order they arrive.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace canopy::host {

class HostCore;

struct DiskConfig {
    // A 7,200 rpm SATA disk of 1 TB (assumed; the figures are a datasheet's typical ones for
    // that class, e.g. Seagate Barracuda 7200 and WD Blue 1 TB):
    double rpm = 7200.0;
    double average_seek_ms = 8.5;    // "average read seek"
    double track_to_track_ms = 1.0;  // "track-to-track seek"
    uint32_t cylinders = 265000;     // with the zones below, 977 GB
    uint32_t heads = 4;              // two platters
    uint32_t sector_bytes = 512;
    // Zoned recording: `zones` bands of equal cylinder counts, sectors per track falling linearly
    // from the outer band to the inner one: 147 MB/s outer, 74 MB/s inner at 7,200 rpm
    // (datasheets give ~150 MB/s sustained, the inner diameter about half).
    uint32_t zones = 16;
    uint32_t outer_sectors_per_track = 2400;
    uint32_t inner_sectors_per_track = 1200;
    double overhead_us = 100.0;  // command decode and set-up (assumed; Ruemmler and Wilkes)

    double revolution_ns() const { return 60e9 / rpm; }
    // The full-stroke seek whose formula gives the average seek over random pairs.
    double full_stroke_ms() const;
    uint32_t sectors_per_track(uint32_t zone) const;
    uint64_t capacity_bytes() const;
    // Throws InputError naming the field for a disk that cannot be (`scope`: the key prefix).
    void validate(const std::string& scope) const;
};

class Disk {
  public:
    static constexpr uint32_t kBlockBytes = 4096;  // the granule the data is kept in

    // One access's time, in parts (ns).
    struct Timing {
        double queued_ns = 0;  // waiting for an earlier request (only read/write set it)
        double overhead_ns = 0, seek_ns = 0, rotation_ns = 0, transfer_ns = 0;
        uint32_t from_cylinder = 0, cylinder = 0;  // the arm before and at the first sector
        double service_ns() const { return overhead_ns + seek_ns + rotation_ns + transfer_ns; }
    };
    struct Stats {
        uint64_t reads = 0, writes = 0, bytes = 0;
        double busy_ns = 0;  // service time, summed
        double queued_ns = 0, seek_ns = 0, rotation_ns = 0, transfer_ns = 0;
        uint64_t accesses() const { return reads + writes; }
    };
    // Where byte `offset` lies.
    struct Place {
        uint32_t zone = 0, cylinder = 0, head = 0;
        uint32_t sector = 0;  // in the track
        uint32_t sectors_per_track = 0;
    };

    explicit Disk(DiskConfig cfg = DiskConfig());

    // The calling program waits for the disk (if busy), then for the access: its core's time
    // advances to the access's end. Throws HostFault for a range outside the disk.
    Timing read(HostCore& cpu, uint64_t offset, void* buf, uint32_t bytes);
    Timing write(HostCore& cpu, uint64_t offset, const void* buf, uint32_t bytes);
    // A write the caller does not wait for (a kernel's background write-back): the disk takes it
    // at the caller's time, after what it has queued, and is busy until it ends; the data is
    // the disk's at once (nothing reads the block meanwhile).
    Timing write_behind(HostCore& cpu, uint64_t offset, const void* buf, uint32_t bytes);

    // The time an access starting at `start_ns` would take from where the arm is now (nothing
    // changes): what read and write charge.
    Timing time_access(double start_ns, uint64_t offset, uint32_t bytes) const;
    Place place(uint64_t offset) const;
    // The first byte of sector `sector` of track `head` of `cylinder`.
    uint64_t offset_of(uint32_t cylinder, uint32_t head, uint32_t sector) const;
    // The data without time passing (tests, and preloading a data set).
    void peek(uint64_t offset, void* buf, uint64_t bytes) const;
    void poke(uint64_t offset, const void* buf, uint64_t bytes);

    const DiskConfig& config() const { return cfg_; }
    uint64_t capacity_bytes() const { return capacity_; }
    const Stats& stats() const { return stats_; }
    uint32_t arm_cylinder() const { return arm_; }
    double busy_until_ns() const { return busy_until_ns_; }

  private:
    Timing access(HostCore& cpu, uint64_t offset, uint32_t bytes, bool write);
    Timing take(HostCore& cpu, uint64_t offset, uint32_t bytes, bool write);  // access, no wait
    void check(uint64_t offset, uint64_t bytes, const char* what) const;
    double seek_ns(uint32_t from, uint32_t to) const;

    DiskConfig cfg_;
    uint64_t capacity_;
    std::vector<uint64_t> zone_first_sector_;  // per zone, and the total at the end
    uint32_t cylinders_per_zone_;
    uint32_t arm_ = 0;  // the cylinder the arm is over
    double busy_until_ns_ = 0;
    Stats stats_;
    std::map<uint64_t, std::array<uint8_t, kBlockBytes>> blocks_;  // by block number
};

}  // namespace canopy::host
