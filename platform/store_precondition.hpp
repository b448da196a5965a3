// Preconditioning of the flash store (docs/storage.md "Preconditioning"): brings every SPU's
// FTL and its NAND channel to the state a sequence of 4 KiB writes would leave, without
// simulating them in time. The FTL itself (sw/firmware/ftl, the same C that SPU-OS runs) takes
// the writes on the host, against a flash that keeps each unit's bytes as a token (the device
// offset it was written for) and the pages' spare metadata; the pages it programmed are then
// encoded by the channel's flash controller (randomiser, BCH) and put into the NAND planes, and
// every block is erased as often as the FTL erased it (its P/E count). A functional plane keeps
// no bytes of these pages: it asks a nand::PageSource for them whenever it senses one, which
// keeps the units' tokens and the encoded spare area and makes the data area again (units'
// bytes, randomised), so memory grows with the pages programmed in time, not with the device. The
// FTL's tables and its saved state (ftl_save) go into each SPU's bank of SSD memory, where SPU-OS
// resumes from them at boot (STORE_ATTACH with SPU_OS_STORE_RESUME) without reading the flash; a
// mount after a power cycle rebuilds the same map from the pages. For the same write sequence the
// NAND holds exactly what the timed path (the host writing through Base-IO, SPU-OS's FTL, the flash
// controller) leaves after a flush, page for page and bit for bit; only the pages' program times
// differ. With a timing-only array (nand.functional=false) the pages are marked programmed and only
// their metadata is kept (ssd::FlashController), so a whole device costs little memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "sw/host/block_io.hpp"

namespace canopy::platform {

// With nand.compact_pages on a functional array whose store is on the flash: every plane of the
// store's channels keeps the pages the controller programs in time as their units' tokens and
// pooled bytes (KeptPlane, above), re-made when sensed; call it once the NAND is built. Changes
// no result: the simulator's memory then grows with the distinct units written, not the pages.
void compact_nand_pages(Platform& p);

// What `--precondition` asks for.
struct Precondition {
    enum class Fill { Sequential, Random };
    Fill fill = Fill::Sequential;
    // Sequential: the first `percent` of the device, unit by unit. Random: the whole device
    // sequentially, then as many 4 KiB writes as it has units, to uniformly random units.
    uint32_t percent = 100;
    // "seq", "rand" or a percentage "1".."100" (a trailing % allowed); throws InputError
    // naming `input` otherwise.
    static Precondition parse(const std::string& text, const std::string& input);
    std::string name() const;  // as parse takes it
    // The device units (of `unit_bytes`) written, in order; `seed` draws the random ones.
    std::vector<uint64_t> units(uint64_t device_units, uint64_t seed) const;
};

// The bytes preconditioning writes: each 8-byte word (little-endian) holds its own device byte
// offset. `n` bytes at device offset `offset` (both multiples of 8) into `out`.
void precondition_bytes(uint64_t offset, uint8_t* out, uint32_t n);

// The pages and erasures one channel's FTL leaves after a write sequence.
struct ChannelImage {
    struct Page {
        std::vector<uint32_t> meta;  // the spare metadata words the FTL gave the page
        // Per slot, the bytes the unit holds: 0 zeros (SSD memory never written), 1 0xFF (a
        // fill), 2 + u device unit u's (precondition_bytes).
        std::vector<uint64_t> tokens;
    };
    std::map<uint64_t, Page> pages;       // by physical page: block * pages_per_block + page
    std::map<uint32_t, uint32_t> erases;  // by FTL block number: times erased
    std::vector<uint32_t> tables;         // the FTL's tables after ftl_save (its memory)
    uint64_t host_writes = 0, programs = 0, gc_victims = 0, gc_copies = 0;
};

// Works out and applies preconditioning for a platform whose store is on the flash.
class StorePreconditioner {
  public:
    // `geo`: the device's striping (BlockGeometry with store_bytes), as the host kernel uses it.
    StorePreconditioner(Platform& p, const sw::BlockGeometry& geo);
    uint64_t device_units() const;
    uint32_t unit_bytes() const { return unit_bytes_; }
    // Every channel's image after writing device `units` in order (then a flush; another after
    // the first `flush_after` units, as a host's fsync).
    std::vector<ChannelImage> run(const std::vector<uint64_t>& units,
                                  size_t flush_after = SIZE_MAX) const;
    // Puts the images into the platform's NAND array (fresh: nothing programmed yet), and each
    // FTL's tables at the start of its SPU's bank of SSD memory.
    void apply(const std::vector<ChannelImage>& images) const;
    // The raw page (data and spare) the channel's controller would program for an image page,
    // the way apply() programs it: for comparing a NAND array against an image.
    std::vector<uint8_t> page_bytes(uint32_t channel, uint64_t page,
                                    const ChannelImage::Page& img) const;
    // The FTL's block number of (die, plane, block) and back.
    void locate(uint32_t ftl_block, uint32_t& die, uint32_t& plane, uint32_t& block) const;

  private:
    // The page before the controller: the units' bytes, and the metadata at its offset.
    std::vector<uint8_t> image_bytes(uint32_t channel, const ChannelImage::Page& img) const;

    Platform& platform_;
    sw::BlockGeometry geo_;
    uint32_t unit_bytes_, upp_, pages_per_block_;
};

}  // namespace canopy::platform
