// The remote-protocol framing the GDB stub reads its socket through (GDB manual, "Overview"):
// `$data#cc` with the modulo-256 sum of data as two hex digits, acks between packets ignored,
// 0x03 outside a packet an interrupt, nothing longer than the advertised PacketSize kept.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/rsp_framing.hpp"

using canopy::cpu::RspFramer;
using Event = RspFramer::Event;

namespace {

std::string framed(const std::string& data) {
    unsigned sum = 0;
    for (char c : data) sum = (sum + uint8_t(c)) & 0xFF;
    char cs[3];
    std::snprintf(cs, sizeof cs, "%02x", sum);
    return "$" + data + "#" + cs;
}

// Every event of `bytes` fed in pieces of `piece` bytes, with the packets they completed.
std::vector<std::pair<Event, std::string>> events(const std::string& bytes, size_t piece) {
    RspFramer f;
    std::vector<std::pair<Event, std::string>> out;
    for (size_t at = 0; at < bytes.size(); at += piece) {
        const std::string chunk = bytes.substr(at, piece);
        size_t used = 0;
        while (used < chunk.size()) {
            Event e;
            used += f.feed(chunk.data() + used, chunk.size() - used, e);
            if (e != Event::None) out.push_back({e, e == Event::Packet ? f.packet() : ""});
        }
    }
    return out;
}

}  // namespace

TEST(RspFraming, PacketsAcksAndInterruptsInAnyPieces) {
    const std::string stream =
        "+" + framed("qSupported:swbreak+") + "+-" + framed("m10000,4") + "\x03" + framed("");
    const std::vector<std::pair<Event, std::string>> expect = {
        {Event::Packet, "qSupported:swbreak+"},
        {Event::Packet, "m10000,4"},
        {Event::Interrupt, ""},
        {Event::Packet, ""}};
    for (size_t piece : {size_t(1), size_t(2), size_t(7), stream.size()})
        EXPECT_EQ(events(stream, piece), expect) << "pieces of " << piece;
}

TEST(RspFraming, AWrongOrMalformedChecksumIsABadPacket) {
    // "g" sums to 0x67.
    EXPECT_EQ(events("$g#67", 64),
              (std::vector<std::pair<Event, std::string>>{{Event::Packet, "g"}}));
    EXPECT_EQ(events("$g#6A$g#67", 64).front().first, Event::BadChecksum);
    EXPECT_EQ(events("$g#6A$g#67", 64).back(), (std::pair<Event, std::string>{Event::Packet, "g"}));
    EXPECT_EQ(events("$g#zz", 64).front().first, Event::BadChecksum);
    // Hex digits in either case.
    EXPECT_EQ(events(framed("X"), 64).front().first, Event::Packet);
    EXPECT_EQ(events("$:#3A", 64).front().first, Event::Packet);
}

TEST(RspFraming, APacketLongerThanPacketSizeIsCutOffNotKept) {
    const std::string fits(RspFramer::kMaxPacketBytes, 'a');
    auto ok = events(framed(fits), 4096);
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_EQ(ok[0].first, Event::Packet);
    EXPECT_EQ(ok[0].second.size(), RspFramer::kMaxPacketBytes);
    // One byte more: the event comes at that byte, not at the end of a 16 MB stream.
    RspFramer f;
    const std::string big = "$" + std::string(16 << 20, 'a');
    Event e;
    const size_t used = f.feed(big.data(), big.size(), e);
    EXPECT_EQ(e, Event::TooLong);
    EXPECT_EQ(used, 1 + RspFramer::kMaxPacketBytes + 1);
    EXPECT_TRUE(f.packet().empty());
}
