#include "nand/sequence.hpp"

namespace canopy::nand::seq {

static void addr_bytes(CommandExt& c, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) c.addr(uint8_t(v >> (8 * i)));
}
static void begin(CommandExt& c, uint32_t die) {
    c.clear();
    c.chip_enable = uint8_t(die);
}
static void column_row(CommandExt& c, const RowCodec& rc, const PageAddress& a, uint32_t column) {
    addr_bytes(c, column, 2);
    addr_bytes(c, rc.encode(a.plane, a.block, a.page, a.die), 3);
}

void reset(CommandExt& c, uint32_t die) { begin(c, die), c.cmd(op::kReset); }
void read_status(CommandExt& c, uint32_t die) { begin(c, die), c.cmd(op::kReadStatus).data_out(1); }

void read(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes) {
    begin(c, planes.at(0).die);
    for (size_t i = 0; i < planes.size(); ++i) {
        c.cmd(op::kRead1);
        column_row(c, rc, planes[i], 0);
        c.cmd(i + 1 < planes.size() ? op::kReadMultiPlane : op::kRead2);
    }
}

void cache_read(CommandExt& c, const RowCodec& rc, const PageAddress& a) {
    begin(c, a.die);
    c.cmd(op::kRead1);
    column_row(c, rc, a, 0);
    c.cmd(op::kReadCacheRandom);
}

void cache_read_end(CommandExt& c, uint32_t die) { begin(c, die), c.cmd(op::kReadCacheEnd); }

void data_out(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane, uint32_t column,
              uint32_t bytes) {
    begin(c, die);
    c.cmd(op::kChangeReadColumnEnh);
    column_row(c, rc, PageAddress{0, die, plane, 0, 0}, column);
    c.cmd(op::kChangeReadColumn2).data_out(bytes);
}

void program(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes,
             CellMode mode, Scramble scramble, uint32_t bytes) {
    begin(c, planes.at(0).die);
    if (scramble == Scramble::OnDie) c.cmd(op::kPrefixRandomise);
    if (scramble == Scramble::Controller) c.cmd(op::kPrefixRandomised);
    if (mode == CellMode::Slc) c.cmd(op::kPrefixSlc);
    if (mode == CellMode::Mlc) c.cmd(op::kPrefixMlc);
    if (mode == CellMode::Esp) c.cmd(op::kPrefixEsp);
    for (size_t i = 0; i < planes.size(); ++i) {
        c.cmd(op::kProgram1);
        column_row(c, rc, planes[i], 0);
        if (bytes) c.data_in(bytes);
        c.cmd(i + 1 < planes.size() ? op::kProgramMultiPlane : op::kProgram2);
    }
}

void erase(CommandExt& c, const RowCodec& rc, const std::vector<PageAddress>& planes) {
    begin(c, planes.at(0).die);
    for (size_t i = 0; i < planes.size(); ++i) {
        c.cmd(op::kErase1);
        addr_bytes(c, rc.encode(planes[i].plane, planes[i].block, 0, planes[i].die), 3);
        c.cmd(i + 1 < planes.size() ? op::kEraseMultiPlane : op::kErase2);
    }
}

void set_features(CommandExt& c, uint32_t die, uint8_t feature) {
    begin(c, die);
    c.cmd(op::kSetFeatures).addr(feature).data_in(4);
}

void get_features(CommandExt& c, uint32_t die, uint8_t feature) {
    begin(c, die);
    c.cmd(op::kGetFeatures).addr(feature).data_out(4);
}

void mws(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane, uint8_t flags,
         const std::vector<MwsOperand>& blocks) {
    begin(c, die);
    c.cmd(uint8_t(op::kIscm | (flags & 0x0F)));
    for (size_t i = 0; i < blocks.size(); ++i) {
        if (i) c.cmd(op::kCont);
        addr_bytes(c, rc.encode(plane, blocks[i].block, 0, die), 3);
        addr_bytes(c, blocks[i].pbm, int(rc.pbm_bytes()));
    }
    c.cmd(op::kConf);
}

void xor_latches(CommandExt& c, const RowCodec& rc, uint32_t die, uint32_t plane) {
    begin(c, die);
    c.cmd(op::kXor);
    addr_bytes(c, rc.encode(plane, 0, 0, die), 3);
}

}  // namespace canopy::nand::seq
