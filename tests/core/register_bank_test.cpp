// Register maps as data and the bank serving them (models/core/register_bank.hpp): validation of
// maps, decoding of bus accesses, the semantics of each access kind, callbacks, error responses,
// latency, debug access, and the C header and Markdown generated from the same data.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include <nlohmann/json.hpp>

#include "../temp_dir.hpp"
#include "core/error.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"

namespace canopy::core {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// A block with one register of each kind and one mixing kinds in fields, listed out of offset
// order, with a hole at 0x1c.
RegisterMap test_map() {
    return RegisterMap(
        "dev", "a test device",
        {
            {"addr", 0x08, 64, Access::RW, 0, "a 64-bit address"},
            {"ctrl",
             0x00,
             32,
             Access::RW,
             0x5,
             "control and status",
             {
                 {"enable", 0, 1, "on"},
                 {"mode", 1, 3, "mode", {{"idle", 0, "nothing"}, {"run", 2, "running"}}},
                 {"go", 4, 1, "write 1 to start", {}, Access::Trigger},
                 {"busy", 8, 1, "running", {}, Access::RO},
                 {"done", 9, 1, "finished", {}, Access::W1C},
                 {"key", 12, 4, "secret", {}, Access::WO},
             }},
            {"id", 0x04, 32, Access::RO, 0xCAFE0001, "identification"},
            {"key", 0x10, 32, Access::WO, 0, "write-only key"},
            {"irq", 0x14, 32, Access::W1C, 0, "interrupt pending bits"},
            {"doorbell", 0x18, 32, Access::Trigger, 0, "queue tail"},
            {"count", 0x20, 64, Access::RO, 0x1122334455667788ull, "a 64-bit counter"},
        });
}

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket;
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {}
};

// The bank (latency 10 ns) with an initiator bound to it, elaborated; accesses come from the
// test body at time 0, the way a loosely-timed initiator calls b_transport.
struct Bench {
    Services services;
    RegisterBank bank;
    Initiator cpu;
    sc_time delay = SC_ZERO_TIME;

    // With `trace_path`, the transaction trace is opened before the bank is built.
    explicit Bench(const std::string& trace_path = "")
        : bank("bank", test_map(), open_trace(services, trace_path), config()), cpu("cpu") {
        cpu.socket.bind(bank.socket);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    static Services& open_trace(Services& s, const std::string& path) {
        if (!path.empty()) s.trace.open(path);
        return s;
    }
    static RegisterBankConfig config() {
        RegisterBankConfig c;
        c.access_ns = 10;
        return c;
    }
    tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t address, uint8_t* data,
                                    unsigned len) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(address);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        cpu.socket->b_transport(gp, delay);
        return gp.get_response_status();
    }
    // Little-endian, as the bus carries it.
    tlm::tlm_response_status write(uint64_t address, uint64_t value, unsigned len = 4) {
        uint8_t b[8];
        for (unsigned i = 0; i < 8; ++i) b[i] = uint8_t(value >> (8 * i));
        return access(tlm::TLM_WRITE_COMMAND, address, b, len);
    }
    uint64_t read(uint64_t address, unsigned len = 4) {
        uint8_t b[8] = {};
        EXPECT_EQ(access(tlm::TLM_READ_COMMAND, address, b, len), tlm::TLM_OK_RESPONSE)
            << "read at " << address;
        uint64_t v = 0;
        for (unsigned i = 0; i < len; ++i) v |= uint64_t(b[i]) << (8 * i);
        return v;
    }
    uint64_t stat(const char* name) const {
        return static_cast<const Counter*>(services.stats.find("bank", name))->value();
    }
};

// ---- the map ----

TEST(CoreRegisterMap, SortsByOffsetAndDecodesOffsets) {
    const RegisterMap m = test_map();
    std::vector<uint64_t> offsets;
    for (const Register& r : m.registers()) offsets.push_back(r.offset);
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0x00, 0x04, 0x08, 0x10, 0x14, 0x18, 0x20}));
    EXPECT_EQ(m.at(0x08)->name, "addr");
    EXPECT_EQ(m.at(0x0c)->name, "addr");  // the high half of the 64-bit register
    EXPECT_EQ(m.at(0x0f)->name, "addr");
    EXPECT_EQ(m.at(0x10)->name, "key");
    EXPECT_EQ(m.at(0x1c), nullptr);  // the hole
    EXPECT_EQ(m.at(0x28), nullptr);  // past the end
    EXPECT_EQ(m.size_bytes(), 0x28u);
    EXPECT_EQ(m.index("irq"), 4u);
    EXPECT_EQ(m.find("nope"), nullptr);
}

TEST(CoreRegisterMap, PartitionsBitsByAccessKind) {
    const RegisterMap m = test_map();
    const Register& ctrl = *m.find("ctrl");
    EXPECT_EQ(ctrl.field("mode")->mask(), 0xEu);  // bits 3:1
    EXPECT_EQ(ctrl.bits(Access::Trigger), 1u << 4);
    EXPECT_EQ(ctrl.bits(Access::W1C), 1u << 9);
    EXPECT_EQ(ctrl.bits(Access::WO), 0xFu << 12);
    EXPECT_EQ(ctrl.bits(Access::RW), 0xFu);  // enable and mode
    // Bits outside every field are reserved: read-only zeros.
    const uint64_t reserved = 0xFFFFFFFFu & ~(0xFu | 0x10 | 0x100 | 0x200 | 0xF000);
    EXPECT_EQ(ctrl.reserved_bits, reserved);
    EXPECT_EQ(ctrl.bits(Access::RO), reserved | 0x100);
    const Register& addr = *m.find("addr");
    EXPECT_EQ(addr.bits(Access::RW), ~uint64_t(0));
    EXPECT_EQ(m.find("irq")->bits(Access::W1C), 0xFFFFFFFFu);
}

// Builds a map and returns the InputError's text ("" if the map was accepted).
std::string map_error(std::vector<Register> regs) {
    try {
        RegisterMap("blk", "test", std::move(regs));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(CoreRegisterMap, RejectsOverlappingRegisters) {
    const std::string e =
        map_error({{"wide", 0x0, 64, Access::RW, 0, ""}, {"narrow", 0x4, 32, Access::RW, 0, ""}});
    EXPECT_TRUE(contains(e, "register map blk")) << e;
    EXPECT_TRUE(contains(e, "register narrow")) << e;
    EXPECT_TRUE(contains(e, "overlaps register wide")) << e;
}

TEST(CoreRegisterMap, RejectsMisalignedRegisters) {
    std::string e = map_error({{"a", 0x2, 32, Access::RW, 0, ""}});
    EXPECT_TRUE(contains(e, "register a")) << e;
    EXPECT_TRUE(contains(e, "misaligned")) << e;
    e = map_error({{"b", 0x4, 64, Access::RW, 0, ""}});  // 64-bit needs 8-byte alignment
    EXPECT_TRUE(contains(e, "register b")) << e;
    EXPECT_TRUE(contains(e, "misaligned")) << e;
}

TEST(CoreRegisterMap, RejectsFieldsOutsideOrOverlapping) {
    std::string e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 30, 3, ""}}}});
    EXPECT_TRUE(contains(e, "register r: field f")) << e;
    EXPECT_TRUE(contains(e, "outside the 32-bit register")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 0, 0, ""}}}});
    EXPECT_TRUE(contains(e, "field f")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 0, 4, ""}, {"g", 3, 2, ""}}}});
    EXPECT_TRUE(contains(e, "field g: overlaps")) << e;
    // 64-bit registers take fields up to bit 63.
    EXPECT_EQ(map_error({{"r", 0, 64, Access::RW, 0, "", {{"hi", 32, 32, ""}}}}), "");
}

TEST(CoreRegisterMap, RejectsDuplicateAndInvalidNames) {
    std::string e = map_error({{"a", 0, 32, Access::RW, 0, ""}, {"a", 4, 32, Access::RW, 0, ""}});
    EXPECT_TRUE(contains(e, "register a: name used twice")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 0, 1, ""}, {"f", 1, 1, ""}}}});
    EXPECT_TRUE(contains(e, "field f: name used twice")) << e;
    e = map_error({{"Src", 0, 32, Access::RW, 0, ""}});
    EXPECT_TRUE(contains(e, "register Src")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 0, 2, "", {{"x", 1}, {"x", 2}}}}}});
    EXPECT_TRUE(contains(e, "value name 'x' used twice")) << e;
    // Register a_b's field c and register a's field b_c would both be BLK_A_B_C_SHIFT.
    e = map_error({{"a", 0, 32, Access::RW, 0, "", {{"b_c", 0, 1, ""}}},
                   {"a_b", 4, 32, Access::RW, 0, "", {{"c", 0, 1, ""}}}});
    EXPECT_TRUE(contains(e, "BLK_A_B_C_SHIFT")) << e;
    EXPECT_THROW(RegisterMap("Bad-Block", "", {{"a", 0, 32, Access::RW, 0, ""}}), InputError);
    EXPECT_THROW(RegisterMap("empty", "", {}), InputError);
}

TEST(CoreRegisterMap, RejectsBadWidthsResetsAndAccessMixes) {
    std::string e = map_error({{"r", 0, 16, Access::RW, 0, ""}});
    EXPECT_TRUE(contains(e, "register r: width 16")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0x1'0000'0000ull, ""}});
    EXPECT_TRUE(contains(e, "register r: reset value")) << e;
    e = map_error({{"r", 0, 32, Access::RO, 0, "", {{"f", 0, 1, "", {}, Access::W1C}}}});
    EXPECT_TRUE(contains(e, "field f: access W1C in a RO register")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0x10, "", {{"go", 4, 1, "", {}, Access::Trigger}}}});
    EXPECT_TRUE(contains(e, "sets trigger bits")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0x100, "", {{"f", 0, 2, ""}}}});
    EXPECT_TRUE(contains(e, "register r: reset value 0x100 sets reserved bits")) << e;
    e = map_error({{"r", 0, 32, Access::RW, 0, "", {{"f", 0, 2, "", {{"big", 4}}}}}});
    EXPECT_TRUE(contains(e, "value big = 4 does not fit 2 bits")) << e;
    // A field repeating its register's kind is fine in any register.
    EXPECT_EQ(map_error({{"r", 0, 32, Access::RO, 0, "", {{"f", 0, 1, "", {}, Access::RO}}}}), "");
}

// ---- the bank ----

TEST(CoreRegisterBank, ResetValuesAndLittleEndianReads) {
    Bench b;
    EXPECT_EQ(b.read(0x00), 0x5u);
    EXPECT_EQ(b.read(0x04), 0xCAFE0001u);
    uint8_t bytes[4];
    ASSERT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x04, bytes, 4), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(bytes[0], 0x01);  // least significant byte at the lowest address
    EXPECT_EQ(bytes[3], 0xCA);
    EXPECT_EQ(b.read(0x20, 8), 0x1122334455667788ull);
    EXPECT_EQ(b.read(0x20), 0x55667788u);  // low half
    EXPECT_EQ(b.read(0x24), 0x11223344u);  // high half
    EXPECT_EQ(b.stat("reads"), 6u);
    EXPECT_EQ(b.stat("errors"), 0u);
}

TEST(CoreRegisterBank, ReadWriteWholeAndHalvesOf64BitRegister) {
    Bench b;
    ASSERT_EQ(b.write(0x08, 0x0123456789ABCDEFull, 8), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.bank.read("addr"), 0x0123456789ABCDEFull);
    ASSERT_EQ(b.write(0x0C, 0xFEEDFACE), tlm::TLM_OK_RESPONSE);  // high half only
    EXPECT_EQ(b.bank.read("addr"), 0xFEEDFACE89ABCDEFull);
    ASSERT_EQ(b.write(0x08, 0x11111111), tlm::TLM_OK_RESPONSE);  // low half only
    EXPECT_EQ(b.bank.read("addr"), 0xFEEDFACE11111111ull);
    EXPECT_EQ(b.read(0x08, 8), 0xFEEDFACE11111111ull);
    EXPECT_EQ(b.stat("writes"), 3u);
}

TEST(CoreRegisterBank, ReadOnlyRefusesBusWritesButNotTheModel) {
    Bench b;
    EXPECT_EQ(b.write(0x04, 0xFFFFFFFF), tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(b.bank.read("id"), 0xCAFE0001u);
    EXPECT_EQ(b.write(0x24, 1), tlm::TLM_COMMAND_ERROR_RESPONSE);  // half of a 64-bit RO
    EXPECT_EQ(b.stat("errors"), 2u);
    EXPECT_EQ(b.stat("writes"), 0u);
    b.bank.write("count", 42);
    EXPECT_EQ(b.read(0x20, 8), 42u);
}

TEST(CoreRegisterBank, WriteOnlyReadsZero) {
    Bench b;
    ASSERT_EQ(b.write(0x10, 0xDEADBEEF), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.read(0x10), 0u);
    EXPECT_EQ(b.bank.read("key"), 0xDEADBEEFu);  // the model sees it
}

TEST(CoreRegisterBank, WriteOneToClear) {
    Bench b;
    b.bank.write("irq", 0b1011);  // the model raises three bits
    EXPECT_EQ(b.read(0x14), 0b1011u);
    ASSERT_EQ(b.write(0x14, 0b0010), tlm::TLM_OK_RESPONSE);  // clear one
    EXPECT_EQ(b.read(0x14), 0b1001u);
    ASSERT_EQ(b.write(0x14, 0), tlm::TLM_OK_RESPONSE);  // zeros change nothing
    EXPECT_EQ(b.read(0x14), 0b1001u);
    ASSERT_EQ(b.write(0x14, 0xFFFFFFFF), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.read(0x14), 0u);
}

TEST(CoreRegisterBank, TriggerRegisterHandsTheValueToItsCallback) {
    Bench b;
    std::vector<uint64_t> rung;
    b.bank.on_write("doorbell", [&](const RegisterAccess& a) {
        rung.push_back(a.value);
        EXPECT_EQ(a.triggered(), a.value);
    });
    ASSERT_EQ(b.write(0x18, 7), tlm::TLM_OK_RESPONSE);
    ASSERT_EQ(b.write(0x18, 9), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(rung, (std::vector<uint64_t>{7, 9}));
    EXPECT_EQ(b.read(0x18), 0u);  // nothing stored
    EXPECT_EQ(b.bank.read("doorbell"), 0u);
}

TEST(CoreRegisterBank, MixedFieldsEachKeepTheirKind) {
    Bench b;
    b.bank.set_field("ctrl", "busy", 1);
    b.bank.set_field("ctrl", "done", 1);
    EXPECT_EQ(b.bank.read("ctrl"), 0x5u | 0x100 | 0x200);
    uint64_t triggered = 0;
    b.bank.on_write("ctrl", [&](const RegisterAccess& a) { triggered = a.triggered(); });
    // All ones: RW bits take 1, go triggers but is not stored, busy (RO) keeps 1, done (W1C) is
    // cleared, key (WO) is stored but reads 0, reserved bits stay 0.
    ASSERT_EQ(b.write(0x00, 0xFFFFFFFF), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(triggered, 0x10u);
    EXPECT_EQ(b.bank.read("ctrl"), 0xFu | 0x100 | 0xF000);
    EXPECT_EQ(b.read(0x00), 0xFu | 0x100);
    EXPECT_EQ(b.bank.field("ctrl", "mode"), 7u);
    EXPECT_EQ(b.bank.field("ctrl", "key"), 0xFu);
    // All zeros: RW bits and the WO field take 0, busy still 1 (RO), no trigger.
    ASSERT_EQ(b.write(0x00, 0), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(triggered, 0u);
    EXPECT_EQ(b.bank.read("ctrl"), 0x100u);
}

TEST(CoreRegisterBank, CallbacksSeeOldAndNewValuesAtTheWriteTime) {
    Bench b;
    std::vector<std::string> order;
    b.bank.write("addr", 0xAAAA'AAAA'0000'0000ull);
    b.bank.on_write("addr", [&](const RegisterAccess& a) {
        order.push_back("first");
        EXPECT_EQ(a.reg.name, "addr");
        EXPECT_EQ(a.previous, 0xAAAA'AAAA'0000'0000ull);
        EXPECT_EQ(a.value, 0x1234ull << 32);  // the written half, in place
        EXPECT_EQ(a.lanes, 0xFFFF'FFFF'0000'0000ull);
        // Already stored when the callback runs.
        EXPECT_EQ(b.bank.read("addr"), 0x1234ull << 32);
        // 100 ns of the initiator's local time + the bank's 10 ns.
        EXPECT_EQ(a.at, sc_time(110, SC_NS));
        EXPECT_FALSE(a.debug);
    });
    b.bank.on_write("addr", [&](const RegisterAccess&) { order.push_back("second"); });
    b.delay = sc_time(100, SC_NS);
    ASSERT_EQ(b.write(0x0C, 0x1234), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(order, (std::vector<std::string>{"first", "second"}));
}

TEST(CoreRegisterBank, ReadCallbackComputesTheValue) {
    Bench b;
    int calls = 0;
    // A live counter: the value the bus sees is computed from the access time.
    b.bank.on_read("count", [&](RegisterAccess& a) {
        ++calls;
        a.value = uint64_t(a.at / sc_time(1, SC_NS));
    });
    b.delay = sc_time(90, SC_NS);
    EXPECT_EQ(b.read(0x20, 8), 100u);  // 90 + 10 ns of access
    EXPECT_EQ(b.read(0x24), 0u);       // high half of 120
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(b.bank.read("count"), 0x1122334455667788ull);  // the stored value untouched
}

TEST(CoreRegisterBank, UnknownNamesThrowWithTheClosestName) {
    Bench b;
    try {
        b.bank.on_write("adr", [](const RegisterAccess&) {});
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(contains(e.what(), "dev: no register 'adr'")) << e.what();
        EXPECT_TRUE(contains(e.what(), "'addr'")) << e.what();
    }
    EXPECT_THROW(b.bank.field("ctrl", "mood"), std::invalid_argument);
    EXPECT_THROW(b.bank.set_field("ctrl", "mode", 8), std::invalid_argument);  // 3 bits
    EXPECT_THROW(b.bank.read("nothing"), std::invalid_argument);
}

TEST(CoreRegisterBank, RefusesBadAccessesWithTheRightResponse) {
    Bench b;
    int callbacks = 0;
    b.bank.on_write("ctrl", [&](const RegisterAccess&) { ++callbacks; });
    b.bank.on_write("addr", [&](const RegisterAccess&) { ++callbacks; });
    uint8_t data[16] = {};
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x1C, data, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x1000, data, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x02, data, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_READ_COMMAND, 0x0C, data, 8), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x00, data, 2), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x00, data, 1), tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x08, data, 16), tlm::TLM_BURST_ERROR_RESPONSE);
    // 8 bytes on a 32-bit register (would span ctrl and id).
    EXPECT_EQ(b.access(tlm::TLM_WRITE_COMMAND, 0x00, data, 8), tlm::TLM_BURST_ERROR_RESPONSE);
    {
        tlm::tlm_generic_payload gp;  // narrow streaming width
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(0x00);
        gp.set_data_ptr(data);
        gp.set_data_length(4);
        gp.set_streaming_width(2);
        b.cpu.socket->b_transport(gp, b.delay);
        EXPECT_EQ(gp.get_response_status(), tlm::TLM_BURST_ERROR_RESPONSE);
        uint8_t enables[4] = {0xFF, 0, 0xFF, 0};  // byte enables
        gp.set_streaming_width(4);
        gp.set_byte_enable_ptr(enables);
        gp.set_byte_enable_length(4);
        b.cpu.socket->b_transport(gp, b.delay);
        EXPECT_EQ(gp.get_response_status(), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    }
    EXPECT_EQ(callbacks, 0);
    EXPECT_EQ(b.bank.read("ctrl"), 0x5u);
    EXPECT_EQ(b.bank.read("addr"), 0u);
    EXPECT_EQ(b.stat("errors"), 10u);
    EXPECT_EQ(b.stat("writes"), 0u);
    EXPECT_EQ(b.stat("reads"), 0u);
}

TEST(CoreRegisterBank, AddsItsLatencyToEveryAccess) {
    Bench b;
    b.delay = sc_time(5, SC_NS);
    b.read(0x00);
    EXPECT_EQ(b.delay, sc_time(15, SC_NS));
    b.write(0x08, 1);
    EXPECT_EQ(b.delay, sc_time(25, SC_NS));
    b.write(0x1C, 1);  // refused, but the block still took its cycle to answer
    EXPECT_EQ(b.delay, sc_time(35, SC_NS));
}

TEST(CoreRegisterBank, DebugAccessSeesTheFlopsWithoutSideEffects) {
    Bench b;
    int writes = 0, debug_reads = 0;
    b.bank.on_write("irq", [&](const RegisterAccess&) { ++writes; });
    b.bank.on_read("irq", [&](RegisterAccess& a) { debug_reads += a.debug; });
    auto dbg = [&](tlm::tlm_command cmd, uint64_t address, uint8_t* data, unsigned len) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(address);
        gp.set_data_ptr(data);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        return b.cpu.socket->transport_dbg(gp);
    };
    uint8_t v[4] = {0x0F, 0, 0, 0};
    // A debugger writing a W1C register sets the value rather than clearing bits.
    EXPECT_EQ(dbg(tlm::TLM_WRITE_COMMAND, 0x14, v, 4), 4u);
    EXPECT_EQ(b.bank.read("irq"), 0x0Fu);
    EXPECT_EQ(writes, 0);
    uint8_t out[4] = {};
    EXPECT_EQ(dbg(tlm::TLM_READ_COMMAND, 0x14, out, 4), 4u);
    EXPECT_EQ(out[0], 0x0F);
    EXPECT_EQ(debug_reads, 1);
    EXPECT_EQ(dbg(tlm::TLM_READ_COMMAND, 0x1C, out, 4), 0u);  // no register
    EXPECT_EQ(dbg(tlm::TLM_WRITE_COMMAND, 0x04, v, 4), 0u);   // read-only
    EXPECT_EQ(b.bank.read("id"), 0xCAFE0001u);
    EXPECT_EQ(b.delay, SC_ZERO_TIME);  // debug access takes no time
    EXPECT_EQ(b.stat("reads") + b.stat("writes") + b.stat("errors"), 0u);
}

TEST(CoreRegisterBank, ResetRestoresResetValues) {
    Bench b;
    b.write(0x00, 0xFFFFFFFF);
    b.write(0x08, 0x77, 8);
    b.bank.write("count", 1);
    b.bank.reset();
    EXPECT_EQ(b.bank.read("ctrl"), 0x5u);
    EXPECT_EQ(b.bank.read("addr"), 0u);
    EXPECT_EQ(b.bank.read("count"), 0x1122334455667788ull);
}

TEST(CoreRegisterBank, TraceShowsEachAccess) {
    canopy_test::TempDir dir;
    const std::string path = dir.file("trace.json");
    {
        Bench b(path);
        b.delay = sc_time(100, SC_NS);
        b.write(0x08, 0xAB);
        b.write(0x1C, 1);  // refused
        b.services.trace.close();
    }
    const Json trace = Json::parse(canopy_test::read_text(path));
    std::vector<Json> events;
    for (const Json& e : trace["traceEvents"])
        if (e["ph"] == "X") events.push_back(e);
    ASSERT_EQ(events.size(), 2u) << trace.dump();
    EXPECT_EQ(events[0]["name"], "write");
    EXPECT_EQ(events[0]["cat"], "mmio");
    EXPECT_DOUBLE_EQ(events[0]["ts"].get<double>(), 0.1);    // 100 ns, in us
    EXPECT_DOUBLE_EQ(events[0]["dur"].get<double>(), 0.01);  // the bank's 10 ns
    EXPECT_EQ(events[0]["args"]["register"], "addr");
    EXPECT_EQ(events[1]["name"], "refused");
    EXPECT_DOUBLE_EQ(events[1]["ts"].get<double>(), 0.11);  // after the first access
    EXPECT_TRUE(contains(events[1]["args"]["response"].get<std::string>(), "ADDRESS_ERROR"));
}

// ---- generated header and docs ----

TEST(CoreRegisterMapCHeader, DefinesOffsetsShiftsMasksAndValues) {
    const std::string h = test_map().c_header("tests/core/register_bank_test.cpp");
    EXPECT_TRUE(contains(h, "#ifndef CANOPY_DEV_REGS_H")) << h;
    EXPECT_TRUE(contains(h, "Generated from tests/core/register_bank_test.cpp")) << h;
    // Values worked out by hand from test_map().
    EXPECT_TRUE(contains(h, "/* ctrl (32-bit, RW): control and status")) << h;
    EXPECT_TRUE(contains(h, "[3:1] mode: mode")) << h;
    EXPECT_TRUE(contains(h, "[4] go (WT): write 1 to start")) << h;
    auto define = [&](const std::string& name, const std::string& value) {
        const size_t p = h.find("#define " + name + " ");
        if (p == std::string::npos) return ::testing::AssertionFailure() << name << " missing";
        const size_t end = h.find('\n', p);
        const std::string line = h.substr(p, end - p);
        const size_t v = line.find_first_not_of(' ', 8 + name.size());
        if (line.compare(v, value.size(), value) != 0 ||
            (v + value.size() < line.size() && line[v + value.size()] != ' '))
            return ::testing::AssertionFailure() << line << " is not " << value;
        return ::testing::AssertionSuccess();
    };
    EXPECT_TRUE(define("DEV_SIZE", "0x28u"));  // count ends at 0x20 + 8
    EXPECT_TRUE(define("DEV_ADDR_OFFSET", "0x08u"));
    EXPECT_TRUE(define("DEV_ADDR_RESET", "0x0000000000000000ull"));
    EXPECT_TRUE(define("DEV_CTRL_RESET", "0x00000005u"));
    EXPECT_TRUE(define("DEV_CTRL_MODE_SHIFT", "1u"));
    EXPECT_TRUE(define("DEV_CTRL_MODE_MASK", "0x0000000eu"));
    EXPECT_TRUE(define("DEV_CTRL_MODE_RUN", "2u"));
    EXPECT_TRUE(define("DEV_CTRL_DONE_MASK", "0x00000200u"));
    EXPECT_TRUE(define("DEV_COUNT_OFFSET", "0x20u"));
    EXPECT_TRUE(define("DEV_COUNT_RESET", "0x1122334455667788ull"));
    EXPECT_EQ(h, test_map().c_header("tests/core/register_bank_test.cpp"));  // deterministic
}

// Compiles the header, and a file asserting at compile time that every macro equals the map's
// data, with `compiler` (skipped when absent). Returns "" or the compiler's complaint.
std::string compile_checks(const std::string& compiler, const std::string& flags) {
    if (std::system(("command -v " + compiler + " >/dev/null 2>&1").c_str()) != 0) return "skip";
    canopy_test::TempDir dir;
    const RegisterMap m = test_map();
    dir.write("dev_regs.h", m.c_header());
    std::string c = "#include \"dev_regs.h\"\n#include \"dev_regs.h\" /* guarded */\n";
    auto check = [&](const std::string& macro, uint64_t value) {
        c += "_Static_assert(" + macro + " == " + std::to_string(value) + "ull, \"" + macro +
             "\");\n";
    };
    check("DEV_SIZE", m.size_bytes());
    for (const Register& r : m.registers()) {
        std::string up = "DEV_";
        for (char ch : r.name) up += char(std::toupper(ch));
        check(up + "_OFFSET", r.offset);
        check(up + "_RESET", r.reset);
        for (const Field& f : r.fields) {
            std::string fp = up + "_";
            for (char ch : f.name) fp += char(std::toupper(ch));
            check(fp + "_SHIFT", f.lsb);
            check(fp + "_MASK", f.mask());
            // Field values placed with the shift and mask, as firmware would.
            for (const FieldValue& v : f.values) {
                std::string vn = fp + "_";
                for (char ch : v.name) vn += char(std::toupper(ch));
                c += "_Static_assert(((" + vn + " << " + fp + "_SHIFT) & " + fp + "_MASK) >> " +
                     fp + "_SHIFT == " + std::to_string(v.value) + "u, \"" + vn + "\");\n";
            }
        }
    }
    // The 32-bit masks must be 32-bit types so they can be written to a register as they are.
    c += "_Static_assert(sizeof(DEV_CTRL_MODE_MASK) == 4, \"32-bit mask\");\n";
    c += "unsigned int ctrl_run(void) { return DEV_CTRL_MODE_RUN << DEV_CTRL_MODE_SHIFT; }\n";
    const std::string src = dir.write("check.c", c);
    const std::string log = dir.file("cc.log");
    const std::string cmd = compiler + " " + flags + " -fsyntax-only -I" + dir.path().string() +
                            " " + src + " >" + log + " 2>&1";
    if (std::system(cmd.c_str()) != 0) return cmd + "\n" + canopy_test::read_text(log);
    return "";
}

TEST(CoreRegisterMapCHeader, CompilesAsCAndMatchesTheData) {
    const std::string r = compile_checks("cc", "-std=c11 -Wall -Wextra -Werror -pedantic");
    if (r == "skip") GTEST_SKIP() << "no host C compiler";
    EXPECT_EQ(r, "");
}

TEST(CoreRegisterMapCHeader, CompilesForTheRv32Firmware) {
    const std::string r =
        compile_checks("riscv64-unknown-elf-gcc",
                       "-march=rv32im_zicsr -mabi=ilp32 -std=c11 -Wall -Wextra -Werror -pedantic");
    if (r == "skip") GTEST_SKIP() << "no RISC-V cross compiler";
    EXPECT_EQ(r, "");
}

TEST(CoreRegisterMapMarkdown, OneRowPerRegisterAndField) {
    const RegisterMap m = test_map();
    const std::string md = m.markdown();
    EXPECT_TRUE(contains(md, "### `dev`: a test device\n")) << md;
    EXPECT_TRUE(contains(md, "| 0x08 | `addr` | 64 | RW | 0x0 | a 64-bit address |\n")) << md;
    EXPECT_TRUE(contains(md, "| 0x04 | `id` | 32 | RO | 0xcafe0001 | identification |\n")) << md;
    EXPECT_TRUE(contains(md, "| 0x18 | `doorbell` | 32 | WT | 0x0 | queue tail |\n")) << md;
    EXPECT_TRUE(contains(md,
                         "| `ctrl` | [3:1] | `mode` | RW | mode (0 idle: nothing; 2 run: "
                         "running) |\n"))
        << md;
    EXPECT_TRUE(contains(md, "| `ctrl` | [9] | `done` | W1C | finished |\n")) << md;
    // The register rows come in offset order: ctrl before id before addr.
    EXPECT_LT(md.find("`ctrl` | 32"), md.find("`id` | 32"));
    EXPECT_LT(md.find("`id` | 32"), md.find("`addr` | 64"));
    size_t rows = 0;
    for (size_t p = 0; (p = md.find("\n| ", p)) != std::string::npos; ++p) ++rows;
    // Two header rows + 7 registers + 6 fields.
    EXPECT_EQ(rows, 2u + 7 + 6) << md;
    EXPECT_EQ(md, test_map().markdown());
}

}  // namespace
}  // namespace canopy::core
