// NAND command transactions, modelled on ONFI bus sequences: command cycles, address cycles,
// data-in and data-out phases, ready/busy and a status byte. A transaction carries one complete
// sequence in a CommandExt; the die decodes it like the chip's command state machine. The
// opcodes are ONFI's where ONFI has them; mode prefixes and the Flash-Cosmos commands of its
// Figure 15 (ISCM/CONT/CONF for MWS, ESP, XOR) are vendor-specific values chosen here and
// documented in docs/nand.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/payload.hpp"

namespace canopy::nand {

namespace op {
// ONFI
constexpr uint8_t kRead1 = 0x00, kRead2 = 0x30, kReadMultiPlane = 0x32;
constexpr uint8_t kReadCacheRandom = 0x31, kReadCacheEnd = 0x3F;
constexpr uint8_t kChangeReadColumn1 = 0x05, kChangeReadColumnEnh = 0x06, kChangeReadColumn2 = 0xE0;
constexpr uint8_t kProgram1 = 0x80, kProgram2 = 0x10, kProgramMultiPlane = 0x11;
constexpr uint8_t kErase1 = 0x60, kErase2 = 0xD0, kEraseMultiPlane = 0xD1;
constexpr uint8_t kReadStatus = 0x70, kReset = 0xFF;
constexpr uint8_t kSetFeatures = 0xEF, kGetFeatures = 0xEE;
// Vendor-style mode prefixes before a program (a TLC part programs TLC without prefix)
constexpr uint8_t kPrefixSlc = 0xA2, kPrefixMlc = 0xA1, kPrefixRandomise = 0x9A;
// The data comes randomised by the controller: the die keeps it as sent (assumed vendor hint)
constexpr uint8_t kPrefixRandomised = 0x9B;
// Flash-Cosmos (Figure 15)
constexpr uint8_t kPrefixEsp = 0xA5;  // ESP PROGRAM: prefix + regular program interface
constexpr uint8_t kIscm = 0xB0;       // B0h-BFh: ISCM slot, flags in the low nibble
constexpr uint8_t kCont = 0xC1, kConf = 0xC0;
constexpr uint8_t kXor = 0xC5;  // C-latch = S-latch XOR C-latch
}  // namespace op

// ISCM flags (Figure 15a): the four functions the MWS command switches on or off.
namespace iscm {
constexpr uint8_t kInverse = 1, kInitS = 2, kInitC = 4, kTransfer = 8;
}

// Feature addresses for SET/GET FEATURES.
namespace feature {
constexpr uint8_t kTimingMode = 0x01;  // ONFI; stored and returned
constexpr uint8_t kEspFactor = 0x90;   // P1 = tESP/tPROG x 10 (ISPP extra steps of ESP)
}  // namespace feature

// Status register bits (ONFI).
namespace status {
constexpr uint8_t kFail = 0x01, kArrayReady = 0x20, kReady = 0x40, kWriteProtectOff = 0x80;
}

struct Cycle {
    enum Kind : uint8_t { Cmd, Addr, DataIn, DataOut };
    Kind kind;
    uint8_t value;    // command or address byte
    uint32_t length;  // DataIn/DataOut: bytes moved, taken from/put into the payload data in order
};

// The operation a sequence decoded to, for statistics and the trace.
enum class OpKind : uint8_t {
    None,
    Reset,
    ReadStatus,
    Read,
    CacheRead,
    CacheReadEnd,
    DataOut,
    Program,
    Erase,
    SetFeatures,
    GetFeatures,
    Mws,
    Xor,
    Count
};
const char* op_name(OpKind k);

struct CommandExt : core::Extension<CommandExt> {
    static constexpr size_t kMaxCycles = 400;  // a 32-block MWS with 6-byte page bitmaps fits

    uint8_t chip_enable = 0;  // which die on the channel (CE#)
    uint16_t n_cycles = 0;
    std::array<Cycle, kMaxCycles> cycles{};

    // Filled in by the die.
    OpKind op = OpKind::None;
    uint8_t status = 0;
    std::string error;  // empty unless refused
    double energy_pj = 0;
    uint64_t issue_ps = 0, done_ps = 0;
    uint64_t array_start_ps = 0, array_end_ps = 0;  // the array operation, if any
    // Data out, a simulation aid beyond ONFI: whether the die knows the raw bit errors in the
    // bytes it moved, and their positions (bits of the page image, increasing). The flash
    // controller's ECC corrects a codeword with no more than t of them by undoing them, which
    // is exactly what its decoder would do (flash_controller.cpp).
    bool flips_known = false;
    std::vector<uint64_t> flips;

    bool ok() const { return error.empty(); }
    CommandExt& cmd(uint8_t v);
    CommandExt& addr(uint8_t v);
    CommandExt& data_in(uint32_t bytes);
    CommandExt& data_out(uint32_t bytes);
    uint32_t data_bytes() const;  // total DataIn + DataOut bytes
    void clear();
};

}  // namespace canopy::nand
