// Builders of the command sequences a flash controller sends (the die decodes them in
// die.cpp). Each builder clears the extension, sets the chip enable from the address and adds
// the cycles of one ONFI or Flash-Cosmos command; the payload's data array must hold the data
// phases' bytes in order.
#pragma once

#include <cstdint>
#include <vector>

#include "nand/address.hpp"
#include "nand/command.hpp"
#include "nand/reliability.hpp"

namespace canopy::nand::seq {

void reset(CommandExt& c, uint32_t die);
void read_status(CommandExt& c, uint32_t die);
void read(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes);
void cache_read(CommandExt& c, const RowCodec& rc, const PageAddress& a);
void cache_read_end(CommandExt& c, uint32_t die);
void data_out(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane, uint32_t column,
              uint32_t bytes);
// One page per plane; `bytes` of data in per page from column 0.
void program(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes,
             CellMode mode, Scramble scramble, uint32_t bytes);
// The same with the die's own randomiser on or off.
inline void program(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes,
                    CellMode mode, bool on_die_randomise, uint32_t bytes) {
    program(c, rc, planes, mode, on_die_randomise ? Scramble::OnDie : Scramble::None, bytes);
}
void erase(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes);
void set_features(CommandExt& c, uint32_t die, uint8_t feature);
void get_features(CommandExt& c, uint32_t die, uint8_t feature);

struct MwsOperand {
    uint32_t block;
    uint64_t pbm;  // bit i: apply VREF to wordline i
};
// ISCM(flags), then per operand block its row and page bitmap, joined by CONT, ended by CONF.
void mws(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane, uint8_t flags,
         const std::vector<MwsOperand>& blocks);
void xor_latches(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane);

}  // namespace canopy::nand::seq
