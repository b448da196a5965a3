#include "core/coherence.hpp"

#include <stdexcept>
#include <string>

namespace canopy::core {

const char* to_string(LineState s) {
    static const char* names[] = {"I", "UC", "UD", "SC", "SD"};
    return names[int(s)];
}

const char* to_string(CohRequest r) {
    static const char* names[] = {"ReadShared",  "ReadUnique",  "CleanUnique",  "ReadOnce",
                                  "ReadNoSnoop", "WriteUnique", "WriteNoSnoop", "WriteBack",
                                  "Evict",       "Atomic"};
    return names[int(r)];
}

const char* to_string(SnoopKind k) {
    static const char* names[] = {"SnpShared", "SnpUnique", "SnpInvalidate", "SnpOnce"};
    return names[int(k)];
}

const char* to_string(AtomicKind k) {
    static const char* names[] = {"AtomicStore", "AtomicLoad", "AtomicSwap", "AtomicCompare"};
    return names[int(k)];
}

const char* to_string(AtomicOp o) {
    static const char* names[] = {"ADD", "CLR", "EOR", "SET", "SMAX", "SMIN", "UMAX", "UMIN"};
    return names[int(o)];
}

namespace {

// Sign-extends the low `bits` of v.
int64_t sign_extend(uint64_t v, unsigned bits) {
    const unsigned shift = 64 - bits;
    return int64_t(v << shift) >> shift;
}

}  // namespace

uint64_t apply_atomic(const AtomicRequest& a, uint8_t* bytes) {
    if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
        throw std::invalid_argument("atomic of " + std::to_string(a.size) +
                                    " bytes (1, 2, 4 or 8)");
    const unsigned bits = 8u * a.size;
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t old = 0;
    for (int i = a.size - 1; i >= 0; --i) old = (old << 8) | bytes[i];
    const uint64_t x = a.operand & mask;
    uint64_t result = old;
    switch (a.kind) {
        case AtomicKind::Swap:
            result = x;
            break;
        case AtomicKind::Compare:
            if (old == (a.compare & mask)) result = x;
            break;
        case AtomicKind::Store:
        case AtomicKind::Load:
            switch (a.op) {
                case AtomicOp::Add:
                    result = old + x;
                    break;
                case AtomicOp::Clr:
                    result = old & ~x;
                    break;
                case AtomicOp::Eor:
                    result = old ^ x;
                    break;
                case AtomicOp::Set:
                    result = old | x;
                    break;
                case AtomicOp::Smax:
                    result = sign_extend(old, bits) >= sign_extend(x, bits) ? old : x;
                    break;
                case AtomicOp::Smin:
                    result = sign_extend(old, bits) <= sign_extend(x, bits) ? old : x;
                    break;
                case AtomicOp::Umax:
                    result = old >= x ? old : x;
                    break;
                case AtomicOp::Umin:
                    result = old <= x ? old : x;
                    break;
            }
            break;
    }
    result &= mask;
    for (unsigned i = 0; i < a.size; ++i) bytes[i] = uint8_t(result >> (8 * i));
    return old;
}

}  // namespace canopy::core
