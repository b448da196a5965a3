// The write tap `canopy iss` puts between the core and its bus for the tohost word: it passes
// everything through, sees every write to a watched range, and keeps DMI off that range by
// clipping the ranges it passes on and refusing DMI inside it.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>

#include "core/services.hpp"
#include "cpu/memory.hpp"
#include "platform/write_tap.hpp"

using namespace canopy;

namespace {

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};
    std::vector<std::pair<uint64_t, uint64_t>> invalidated;
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_invalidate_direct_mem_ptr(this, &Initiator::invalidate);
    }
    void invalidate(sc_dt::uint64 lo, sc_dt::uint64 hi) { invalidated.emplace_back(lo, hi); }

    bool dmi(uint64_t addr, tlm::tlm_dmi& d) {
        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(addr);
        return socket->get_direct_mem_ptr(gp, d);
    }
    bool write(uint64_t addr, uint32_t v) {
        tlm::tlm_generic_payload gp;
        sc_core::sc_time t = sc_core::SC_ZERO_TIME;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(4);
        gp.set_streaming_width(4);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        socket->b_transport(gp, t);
        return gp.is_response_ok();
    }
};

struct Bench {
    core::Services services;
    Initiator cpu{"cpu"};
    platform::WriteTap tap{"tap"};
    cpu::Memory mem{"mem", 4096, services};
    std::vector<std::pair<uint64_t, uint32_t>> seen;
    Bench() {
        cpu.socket.bind(tap.target);
        tap.initiator.bind(mem.socket);
        tap.watch_writes(0x100, 8, [this](uint64_t a, const uint8_t* p, unsigned n) {
            uint32_t v = 0;
            std::memcpy(&v, p, std::min(n, 4u));
            seen.emplace_back(a, v);
        });
    }
};

}  // namespace

TEST(PlatformIss, TapClipsDmiAroundTheWatchedRange) {
    Bench b;
    EXPECT_EQ(b.cpu.invalidated.size(), 1u);  // watching withdraws DMI over the range
    tlm::tlm_dmi below, inside, above;
    ASSERT_TRUE(b.cpu.dmi(0x10, below));
    EXPECT_EQ(below.get_start_address(), 0u);
    EXPECT_EQ(below.get_end_address(), 0xffu);
    EXPECT_EQ(below.get_dmi_ptr(), b.mem.data());
    EXPECT_FALSE(b.cpu.dmi(0x104, inside));
    EXPECT_EQ(inside.get_start_address(), 0x100u);
    EXPECT_EQ(inside.get_end_address(), 0x107u);
    ASSERT_TRUE(b.cpu.dmi(0x200, above));
    EXPECT_EQ(above.get_start_address(), 0x108u);
    EXPECT_EQ(above.get_end_address(), 4095u);
    EXPECT_EQ(above.get_dmi_ptr(), b.mem.data() + 0x108);  // the pointer follows the clip
}

TEST(PlatformIss, TapSeesWritesToTheWatchedRangeOnly) {
    Bench b;
    ASSERT_TRUE(b.cpu.write(0x80, 7));
    ASSERT_TRUE(b.cpu.write(0x104, 0x2b));
    ASSERT_TRUE(b.cpu.write(0xfe, 9));  // overlaps the first bytes of the range
    ASSERT_EQ(b.seen.size(), 2u);
    EXPECT_EQ(b.seen[0], std::make_pair(uint64_t(0x104), uint32_t(0x2b)));
    EXPECT_EQ(b.seen[1].first, 0xfeu);
    uint32_t v = 0;
    b.mem.read(0x104, reinterpret_cast<uint8_t*>(&v), 4);
    EXPECT_EQ(v, 0x2bu);                 // and the write went through
    EXPECT_FALSE(b.cpu.write(4096, 1));  // errors pass back unchanged
    EXPECT_EQ(b.seen.size(), 2u);
}
