#include "nand/command.hpp"

#include <stdexcept>

namespace canopy::nand {

const char* op_name(OpKind k) {
    switch (k) {
        case OpKind::None:
            return "NONE";
        case OpKind::Reset:
            return "RESET";
        case OpKind::ReadStatus:
            return "READ_STATUS";
        case OpKind::Read:
            return "READ";
        case OpKind::CacheRead:
            return "CACHE_READ";
        case OpKind::CacheReadEnd:
            return "CACHE_READ_END";
        case OpKind::DataOut:
            return "DATA_OUT";
        case OpKind::Program:
            return "PROGRAM";
        case OpKind::Erase:
            return "ERASE";
        case OpKind::SetFeatures:
            return "SET_FEATURES";
        case OpKind::GetFeatures:
            return "GET_FEATURES";
        case OpKind::Mws:
            return "MWS";
        case OpKind::Xor:
            return "XOR";
        case OpKind::Count:
            break;
    }
    return "?";
}

static CommandExt& push(CommandExt& c, Cycle::Kind k, uint8_t v, uint32_t len) {
    if (c.n_cycles >= CommandExt::kMaxCycles)
        throw std::length_error("NAND command sequence longer than " +
                                std::to_string(CommandExt::kMaxCycles) + " cycles");
    c.cycles[c.n_cycles++] = Cycle{k, v, len};
    return c;
}

CommandExt& CommandExt::cmd(uint8_t v) { return push(*this, Cycle::Cmd, v, 0); }
CommandExt& CommandExt::addr(uint8_t v) { return push(*this, Cycle::Addr, v, 0); }
CommandExt& CommandExt::data_in(uint32_t n) { return push(*this, Cycle::DataIn, 0, n); }
CommandExt& CommandExt::data_out(uint32_t n) { return push(*this, Cycle::DataOut, 0, n); }

uint32_t CommandExt::data_bytes() const {
    uint32_t n = 0;
    for (uint16_t i = 0; i < n_cycles; ++i)
        if (cycles[i].kind == Cycle::DataIn || cycles[i].kind == Cycle::DataOut)
            n += cycles[i].length;
    return n;
}

void CommandExt::clear() {
    n_cycles = 0;
    op = OpKind::None;
    status = 0;
    error.clear();
    energy_pj = 0;
    issue_ps = done_ps = 0;
    array_start_ps = array_end_ps = 0;
    flips_known = false;
    flips.clear();
}

}  // namespace canopy::nand
