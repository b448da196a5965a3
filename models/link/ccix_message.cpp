#include "link/ccix_message.hpp"

namespace canopy::link {

const char* to_string(CcixOp op) {
    switch (op) {
        case CcixOp::ReadShared:
            return "ReadShared";
        case CcixOp::ReadUnique:
            return "ReadUnique";
        case CcixOp::CleanUnique:
            return "CleanUnique";
        case CcixOp::ReadOnce:
            return "ReadOnce";
        case CcixOp::ReadNoSnoop:
            return "ReadNoSnoop";
        case CcixOp::WriteUnique:
            return "WriteUnique";
        case CcixOp::WriteNoSnoop:
            return "WriteNoSnoop";
        case CcixOp::WriteBack:
            return "WriteBack";
        case CcixOp::Evict:
            return "Evict";
        case CcixOp::Atomic:
            return "Atomic";
        case CcixOp::SnpShared:
            return "SnpShared";
        case CcixOp::SnpUnique:
            return "SnpUnique";
        case CcixOp::SnpInvalidate:
            return "SnpInvalidate";
        case CcixOp::SnpOnce:
            return "SnpOnce";
        case CcixOp::Comp:
            return "Comp";
        case CcixOp::CompData:
            return "CompData";
        case CcixOp::CompAtomic:
            return "CompAtomic";
        case CcixOp::SnpResp:
            return "SnpResp";
        case CcixOp::SnpRespData:
            return "SnpRespData";
    }
    return "unknown";
}

bool known(uint8_t opcode) {
    return (opcode >= 0x01 && opcode <= 0x0A) || (opcode >= 0x11 && opcode <= 0x14) ||
           (opcode >= 0x21 && opcode <= 0x25);
}

uint32_t expected_length(CcixOp op, core::AtomicKind kind) {
    switch (op) {
        case CcixOp::WriteBack:
        case CcixOp::WriteUnique:
        case CcixOp::WriteNoSnoop:
        case CcixOp::CompData:
        case CcixOp::SnpRespData:
            return kCcixLineBytes;
        case CcixOp::Atomic:
            return kind == core::AtomicKind::Compare ? 16 : 8;
        default:
            return 0;
    }
}

namespace {
unsigned log2_size(uint8_t size) {
    switch (size) {
        case 1:
            return 0;
        case 2:
            return 1;
        case 4:
            return 2;
        default:
            return 3;
    }
}
}  // namespace

void CcixHeader::encode(uint8_t* out) const {
    out[0] = uint8_t(op);
    out[1] = length;
    out[2] = uint8_t(state);
    out[3] = op == CcixOp::Atomic ? uint8_t(uint8_t(atomic_kind) | (uint8_t(atomic_op) << 2) |
                                            (log2_size(atomic_size) << 5))
                                  : 0;
    out[4] = offset;
    out[5] = agent;
    out[6] = uint8_t(tag);
    out[7] = uint8_t(tag >> 8);
    for (int i = 0; i < 8; ++i) out[8 + i] = uint8_t(address >> (8 * i));
}

std::string CcixHeader::decode(const uint8_t* b, uint32_t n, CcixHeader& h) {
    if (!b || n < kCcixHeaderBytes)
        return "a CCIX message needs a " + std::to_string(kCcixHeaderBytes) + "-byte header, got " +
               std::to_string(n) + " B";
    if (!known(b[0])) return "unknown CCIX opcode " + std::to_string(b[0]);
    h.op = CcixOp(b[0]);
    h.length = b[1];
    if (h.length != 0 && h.length != 8 && h.length != 16 && h.length != kCcixLineBytes)
        return std::string(to_string(h.op)) + " with " + std::to_string(h.length) +
               " data bytes (0, 8, 16 or 64)";
    if (kCcixHeaderBytes + h.length > n)
        return std::string(to_string(h.op)) + " announces " + std::to_string(h.length) +
               " data bytes but the buffer holds " + std::to_string(n - kCcixHeaderBytes);
    if (b[2] > uint8_t(core::LineState::SD))
        return "line state " + std::to_string(b[2]) + " does not exist";
    h.state = core::LineState(b[2]);
    if (h.op != CcixOp::Atomic && b[3] != 0)
        return std::string(to_string(h.op)) + " with atomic attributes";
    h.atomic_kind = core::AtomicKind(b[3] & 3);
    h.atomic_op = core::AtomicOp((b[3] >> 2) & 7);
    h.atomic_size = h.op == CcixOp::Atomic ? uint8_t(1u << ((b[3] >> 5) & 3)) : 0;
    if (b[3] & 0x80) return "atomic attribute bit 7 is reserved";
    h.offset = b[4];
    if (h.offset >= kCcixLineBytes) return "offset " + std::to_string(h.offset) + " beyond a line";
    h.agent = b[5];
    h.tag = uint16_t(b[6] | (b[7] << 8));
    h.address = 0;
    for (int i = 7; i >= 0; --i) h.address = (h.address << 8) | b[8 + i];
    return "";
}

}  // namespace canopy::link
