#include "nand/address.hpp"

#include <stdexcept>

#include "core/error.hpp"

namespace canopy::nand {

static uint32_t bits_for(uint32_t n) {
    uint32_t b = 0;
    while ((1u << b) < n) ++b;
    return b;
}

RowCodec::RowCodec(const Geometry& g)
    : page_bits_(bits_for(g.wordlines_per_block)),
      plane_bits_(bits_for(g.planes_per_die)),
      block_bits_(bits_for(g.blocks_per_plane)),
      lun_bits_(bits_for(g.dies_per_channel)),
      wordlines_(g.wordlines_per_block),
      planes_(g.planes_per_die),
      blocks_(g.blocks_per_plane) {
    if (page_bits_ + plane_bits_ + block_bits_ + lun_bits_ > 24)
        throw InputError(
            "config", "nand.geometry",
            "wordlines x planes x blocks x dies need more than the 24 bits of 3 row cycles");
}

uint32_t RowCodec::encode(uint32_t plane, uint32_t block, uint32_t page, uint32_t lun) const {
    return page | (plane << page_bits_) | (block << (page_bits_ + plane_bits_)) |
           (lun << (page_bits_ + plane_bits_ + block_bits_));
}

void RowCodec::decode(uint32_t row, uint32_t& plane, uint32_t& block, uint32_t& page) const {
    page = row & ((1u << page_bits_) - 1);
    plane = (row >> page_bits_) & ((1u << plane_bits_) - 1);
    block = (row >> (page_bits_ + plane_bits_)) & ((1u << block_bits_) - 1);
}

std::string RowCodec::check(uint32_t row) const {
    uint32_t plane, block, page;
    decode(row, plane, block, page);
    if (block >= blocks_)
        return "block " + std::to_string(block) + " out of range (0.." +
               std::to_string(blocks_ - 1) + ")";
    if (plane >= planes_)
        return "plane " + std::to_string(plane) + " out of range (0.." +
               std::to_string(planes_ - 1) + ")";
    if (page >= wordlines_)
        return "wordline " + std::to_string(page) + " out of range (0.." +
               std::to_string(wordlines_ - 1) + ")";
    return {};
}

std::string to_string(const PageAddress& a) {
    return "ch" + std::to_string(a.channel) + ".die" + std::to_string(a.die) + ".plane" +
           std::to_string(a.plane) + ".block" + std::to_string(a.block) + ".wl" +
           std::to_string(a.page);
}

}  // namespace canopy::nand
