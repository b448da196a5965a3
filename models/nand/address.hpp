// Physical addresses and their encoding on the bus: 2 column cycles then 3 row cycles; the row
// packs page (wordline), plane and block bits, low to high, as ONFI parts do. The die on a
// channel is chosen by chip enable; the row's top bits name it too (LUN), and a die refuses a
// row of another die.
#pragma once

#include <cstdint>
#include <string>

#include "nand/config.hpp"

namespace canopy::nand {

struct PageAddress {
    uint32_t channel = 0, die = 0, plane = 0, block = 0, page = 0;
};

class RowCodec {
  public:
    explicit RowCodec(const Geometry& g);
    uint32_t encode(uint32_t plane, uint32_t block, uint32_t page, uint32_t lun = 0) const;
    // The die (LUN) a row names; a die refuses rows of another.
    uint32_t lun(uint32_t row) const { return row >> (page_bits_ + plane_bits_ + block_bits_); }
    void decode(uint32_t row, uint32_t& plane, uint32_t& block, uint32_t& page) const;
    // Non-empty when the row's fields are out of range for the geometry.
    std::string check(uint32_t row) const;
    uint32_t pbm_bytes() const { return (wordlines_ + 7) / 8; }

  private:
    uint32_t page_bits_, plane_bits_, block_bits_, lun_bits_;
    uint32_t wordlines_, planes_, blocks_;
};

std::string to_string(const PageAddress& a);

}  // namespace canopy::nand
