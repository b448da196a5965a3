// The framing of GDB's remote serial protocol (GDB manual, "Remote Protocol: Overview"): packets
// `$data#cc` with a two-digit checksum, the `+`/`-` acknowledgements and the interrupt byte 0x03
// between packets. Pure: bytes go in, packets and events come out, so the GDB stub reads its
// socket in blocks and the framing can be fuzzed on its own (tests/fuzz).
#pragma once

#include <cstddef>
#include <string>

namespace canopy::cpu {

class RspFramer {
  public:
    // The largest packet accepted: what the stub advertises in qSupported as PacketSize=4000
    // (hexadecimal, as the protocol writes it).
    static constexpr size_t kMaxPacketBytes = 0x4000;

    enum class Event {
        None,         // every byte given was consumed; nothing complete yet
        Packet,       // packet() holds a packet whose checksum matched
        BadChecksum,  // a whole packet whose checksum did not match (answer '-')
        Interrupt,    // 0x03 outside a packet (GDB's Ctrl-C)
        TooLong,      // a packet grew past kMaxPacketBytes: the peer breaks the protocol
    };

    // Consumes bytes of [data, data + size) up to and including the first that completes an
    // event; returns how many it consumed and the event in `event`.
    size_t feed(const char* data, size_t size, Event& event);
    const std::string& packet() const { return packet_; }

  private:
    enum class State { Between, Data, Check1, Check2 } state_ = State::Between;
    std::string packet_;
    unsigned sum_ = 0, check_ = 0;
    bool check_ok_ = true;
};

}  // namespace canopy::cpu
