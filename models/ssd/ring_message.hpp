// A message on Willow's ring (Willow Section 3.1 "RPC interface", 3.2 "ring"): an RPC request or
// its fixed-size response, between ring nodes (the SPUs and the PCIe bridge).
//
// On the wire a message is one 128-bit header flit followed by the payload in 128-bit flits
// (rounded up): a response is exactly one flit. The header carries the routing (src, dst), the
// RPC ID (which SSD App and which of its handlers), the originating HRE (stamped by the bridge
// for requests from the host, propagated by the SPU hardware for requests an SPU makes while
// serving one: it cannot be forged), a tag chosen by the sender to match a response to its
// request, and for responses the 32-bit result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canopy::ssd {

constexpr unsigned kFlitBytes = 16;  // the ring is 128 bits wide [Willow 3.2]

// Ring node numbers: SPU i is node i, the bridge is node spu_count (platform-wired).
using NodeId = uint8_t;

// HRE IDs whose high bits (above kHreIndexBits) are zero belong to the host kernel: kernel-only
// RPCs check this [Willow 3.1 "Limiting access to RPCs"]. The driver gives all HREs of one
// process the same high bits.
constexpr unsigned kHreIndexBits = 10;  // 1,024 queue pairs in the bridge [Willow 3.2]
inline bool is_kernel_hre(uint32_t hre) { return (hre >> kHreIndexBits) == 0; }

enum class MessageKind : uint8_t { Request, Response };

struct RingMessage {
    MessageKind kind = MessageKind::Request;
    NodeId src = 0, dst = 0;
    uint16_t rpc_id = 0;      // app << 8 | handler
    uint32_t origin_hre = 0;  // originating HRE
    uint16_t dst_hre = 0;     // requests to the bridge: the HRE (queue pair) they are for
    uint16_t tag = 0;         // sender's request tag, echoed by the response
    uint32_t result = 0;      // responses: the result code
    // Responses: a NACK made by the receiving interface (its buffer had no room, the request was
    // dropped), not an answer of software; a flag of its own, so that no result value is taken.
    bool nack = false;
    std::vector<uint8_t> payload;  // requests: the RPC's bytes (arguments, data)
    uint64_t flow = 0;  // transaction-trace flow linking this message's hops; not on the wire

    // Bytes on the ring: the header flit plus the payload rounded up to whole flits.
    uint64_t wire_bytes() const {
        return kFlitBytes + (payload.size() + kFlitBytes - 1) / kFlitBytes * kFlitBytes;
    }
    std::string describe() const;  // "request 3->1 rpc 0x0102 tag 7 origin 0x401, 4096 B"
};

}  // namespace canopy::ssd
