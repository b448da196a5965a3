// What a debugger sends the GDB stub (models/cpu/rsp_framing.cpp): bytes framed into packets,
// acks and interrupts, fed in pieces of every size the first byte picks, as a socket delivers
// them. Checks what framing promises: a packet is never longer than PacketSize, and its checksum
// matched.
#include <cstdlib>

#include "cpu/rsp_framing.hpp"
#include "fuzz.hpp"

using canopy::cpu::RspFramer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t piece = 1 + data[0] % 64;
    const char* p = reinterpret_cast<const char*>(data + 1);
    size_t left = size - 1;
    RspFramer framer;
    while (left > 0) {
        const size_t n = left < piece ? left : piece;
        size_t used = 0;
        while (used < n) {
            RspFramer::Event e;
            const size_t k = framer.feed(p + used, n - used, e);
            if (k == 0 || k > n - used) std::abort();  // must make progress, within the piece
            used += k;
            if (e == RspFramer::Event::Packet) {
                const std::string& packet = framer.packet();
                if (packet.size() > RspFramer::kMaxPacketBytes) std::abort();
                unsigned sum = 0;
                for (char c : packet) sum = (sum + uint8_t(c)) & 0xFF;
                // The two characters before the event's end are the checksum's hex digits.
                const std::string hex(p + used - 2, 2);
                if (std::strtoul(hex.c_str(), nullptr, 16) != sum) std::abort();
            }
        }
        p += n, left -= n;
    }
    return 0;
}
