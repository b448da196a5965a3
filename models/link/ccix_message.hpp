// The CCIX protocol messages the request agent (link/request_agent.hpp) and the home agent
// (link/home_agent.hpp) exchange on VC1 of the PCIe link (CCIX-vs-PCIe paper, seeds/003 Section
// III-A: CCIX packets on VC1 share the physical and data-link layers with PCIe's VC0). The
// opcodes follow CHI / CCIX 1.0 (core/coherence.hpp); the byte layout is ours (CCIX 1.0's own
// layout is not in the paper), sized like CCIX's: one 16-byte header, then 0..64 bytes of data.
//
// Header, 16 bytes, little-endian:
//   byte  0     opcode (CcixOp)
//   byte  1     length: data bytes following the header (0, 8, 16 or 64)
//   byte  2     state: responses: the line state granted (Comp/CompData) or held before the
//               snoop (SnpResp*), core::LineState; 0 (I) otherwise
//   byte  3     atomic: bits 1:0 AtomicKind, bits 4:2 AtomicOp, bits 6:5 log2 of the operand
//               size (1, 2, 4, 8 B); 0 for other messages
//   byte  4     offset: the atomic operand's byte offset in the line (0..63)
//   byte  5     agent: the requesting agent's CCIX id (the home agent echoes it)
//   bytes 6-7   tag: transaction id chosen by the sender, echoed by the response
//   bytes 8-15  address: the line address (requests, snoops); the old value (CompAtomic)
// Data after the header: the 64-byte line (write-backs, writes, read and snoop data), or an
// atomic's operands (8 B operand, then 8 B compare value for AtomicCompare).
//
// How messages ride the link (only memory reads and posted writes exist there):
//   posted requests (WriteBack, WriteUnique, WriteNoSnoop, Evict): one MemWr whose payload is
//     the message (header + data);
//   non-posted requests (reads, CleanUnique, Atomic) and snoops: one MemRd; the request message
//     travels in a CcixMessageExt (a MemRd has no payload: the CCIX header takes the place of
//     the TLP header's fields), the completion data is the response message. The completion's
//     size is fixed when the request is made, so a snoop response always carries 64 data bytes
//     on the wire even when it has no data (about 4 ns at Gen4 x8), and an atomic's 8-16
//     operand bytes are not charged upstream (the link has no non-posted request with data).
// Every CCIX transaction is addressed to kCcixMessageAddress, a 4 KiB-aligned address at 4 GiB:
// the link then charges the 16-byte (4DW) header of the vendor-defined messages CCIX's
// PCIe-compatible TLP format uses, and no message ever crosses a 4 KiB boundary or is split.
// The line address lives in the CCIX header. Transactions carry core::TlpExt vc = 1 (type
// CcixRequest or CcixSnoop; the link rewrites the type to MemRead/MemWrite on the far side, so
// receivers go by the opcode) and LinkTlpExt::single_tlp.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/coherence.hpp"
#include "core/payload.hpp"

namespace canopy::link {

enum class CcixOp : uint8_t {
    // Requests, request agent -> home agent: 0x01 + core::CohRequest.
    ReadShared = 0x01,
    ReadUnique,
    CleanUnique,
    ReadOnce,
    ReadNoSnoop,
    WriteUnique,
    WriteNoSnoop,
    WriteBack,
    Evict,
    Atomic,  // 0x0A
    // Snoops, home agent -> request agent: 0x11 + core::SnoopKind.
    SnpShared = 0x11,
    SnpUnique,
    SnpInvalidate,
    SnpOnce,  // 0x14
    // Responses (completion data).
    Comp = 0x21,        // done, no data (CleanUnique): state = granted
    CompData = 0x22,    // 64 B of line data follow: state = granted
    CompAtomic = 0x23,  // address field = the value before the atomic
    SnpResp = 0x24,     // snoop done, no data: state = the snooper's state before
    SnpRespData = 0x25  // snoop done, the dirty line follows
};
const char* to_string(CcixOp op);
bool known(uint8_t opcode);

constexpr CcixOp request_op(core::CohRequest r) { return CcixOp(0x01 + uint8_t(r)); }
constexpr CcixOp snoop_op(core::SnoopKind k) { return CcixOp(0x11 + uint8_t(k)); }
constexpr bool is_request(CcixOp op) { return op >= CcixOp::ReadShared && op <= CcixOp::Atomic; }
constexpr bool is_snoop(CcixOp op) { return op >= CcixOp::SnpShared && op <= CcixOp::SnpOnce; }
constexpr core::CohRequest coh_request(CcixOp op) { return core::CohRequest(uint8_t(op) - 0x01); }
constexpr core::SnoopKind snoop_kind(CcixOp op) { return core::SnoopKind(uint8_t(op) - 0x11); }
// Posted requests travel as writes; the others expect a response.
constexpr bool is_posted(CcixOp op) {
    return op == CcixOp::WriteBack || op == CcixOp::WriteUnique || op == CcixOp::WriteNoSnoop ||
           op == CcixOp::Evict;
}

constexpr uint32_t kCcixHeaderBytes = 16;
constexpr uint32_t kCcixLineBytes = 64;  // CCIX's coherence granule
constexpr uint32_t kCcixMaxMessageBytes = kCcixHeaderBytes + kCcixLineBytes;
constexpr uint64_t kCcixMessageAddress = 1ull << 32;

struct CcixHeader {
    CcixOp op = CcixOp::ReadShared;
    uint8_t length = 0;  // data bytes after the header
    core::LineState state = core::LineState::I;
    core::AtomicKind atomic_kind = core::AtomicKind::Store;
    core::AtomicOp atomic_op = core::AtomicOp::Add;
    uint8_t atomic_size = 0;  // 0 when not an atomic, else 1, 2, 4 or 8
    uint8_t offset = 0;
    uint8_t agent = 0;
    uint16_t tag = 0;
    uint64_t address = 0;  // or the old value of an atomic (CompAtomic)

    void encode(uint8_t* out) const;  // kCcixHeaderBytes bytes
    // Parses `bytes` (n of them); returns "" or what is wrong (too short, unknown opcode, a
    // length, state or atomic field out of range, a length the buffer does not hold).
    static std::string decode(const uint8_t* bytes, uint32_t n, CcixHeader& out);
};

// The data bytes a message with this opcode carries (for Atomic: its operands, by kind).
uint32_t expected_length(CcixOp op, core::AtomicKind kind = core::AtomicKind::Store);

// The request message of a non-posted CCIX transaction (request or snoop): header and, for
// atomics, operands. Cloned by the link onto the TLP it forwards.
struct CcixMessageExt : core::Extension<CcixMessageExt> {
    std::array<uint8_t, kCcixHeaderBytes + 16> bytes{};
    uint8_t length = 0;  // bytes used
};

}  // namespace canopy::link
