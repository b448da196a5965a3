// Text form of a ring message (models/ssd/ring_message.hpp) for traces, logs and test failures.
#include "ssd/ring_message.hpp"

#include <cstdio>

namespace canopy::ssd {

std::string RingMessage::describe() const {
    char text[160];
    if (kind == MessageKind::Request) {
        std::snprintf(text, sizeof text, "request %u->%u rpc 0x%04x tag %u origin 0x%x%s, %zu B",
                      unsigned(src), unsigned(dst), unsigned(rpc_id), unsigned(tag),
                      unsigned(origin_hre),
                      dst_hre ? (" hre " + std::to_string(dst_hre)).c_str() : "", payload.size());
    } else {
        std::snprintf(text, sizeof text, "response %u->%u tag %u result 0x%x%s", unsigned(src),
                      unsigned(dst), unsigned(tag), unsigned(result), nack ? " (nack)" : "");
    }
    return text;
}

}  // namespace canopy::ssd
