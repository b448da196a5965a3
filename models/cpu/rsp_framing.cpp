#include "cpu/rsp_framing.hpp"

namespace canopy::cpu {

namespace {
int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
}  // namespace

size_t RspFramer::feed(const char* data, size_t size, Event& event) {
    event = Event::None;
    for (size_t i = 0; i < size; ++i) {
        const char c = data[i];
        switch (state_) {
            case State::Between:
                if (c == '$') {
                    state_ = State::Data;
                    packet_.clear();
                    sum_ = 0;
                } else if (c == '\x03') {
                    event = Event::Interrupt;
                    return i + 1;
                }
                break;  // acknowledgements and noise between packets
            case State::Data:
                if (c == '#') {
                    state_ = State::Check1;
                } else if (packet_.size() == kMaxPacketBytes) {
                    state_ = State::Between;
                    packet_.clear();
                    event = Event::TooLong;
                    return i + 1;
                } else {
                    packet_ += c;
                    sum_ = (sum_ + uint8_t(c)) & 0xFF;
                }
                break;
            case State::Check1:
            case State::Check2: {
                const int n = nibble(c);
                check_ok_ = (state_ == State::Check1 || check_ok_) && n >= 0;
                check_ = (state_ == State::Check1 ? 0 : check_ << 4) | unsigned(n < 0 ? 0 : n);
                if (state_ == State::Check1) {
                    state_ = State::Check2;
                    break;
                }
                state_ = State::Between;
                event = check_ok_ && check_ == sum_ ? Event::Packet : Event::BadChecksum;
                return i + 1;
            }
        }
    }
    return size;
}

}  // namespace canopy::cpu
