// Memory-mapped device registers, declared once as data. A RegisterMap describes a block of
// registers (the DMA engine's PCIe BAR, an SPU's device registers, the bridge's doorbells): per
// register its name, byte offset, width, access kind, reset value, description and named bit
// fields. The same description serves three readers: the model (a RegisterBank decodes bus
// accesses with it), the firmware (c_header() writes the offsets, shifts, masks and field values
// as a C header for rv32 code) and the docs (markdown() writes the tables), so the three cannot
// drift apart.
//
// Conventions of the hardware this stands for (a simple APB/AXI-Lite register slave):
// - Registers are 32 or 64 bits wide, naturally aligned, little-endian. The bus accesses them as
//   aligned 4- or 8-byte words; a 64-bit register may also be accessed as two 32-bit halves
//   (32-bit firmware does), low half at the lower address. An 8-byte access to a 32-bit register,
//   any other size, byte enables or a streaming width narrower than the data are refused.
// - Access kinds, per register, and per field inside an RW register (a register mixing kinds,
//   like a status register with a read-only busy bit and write-1-to-clear done bits):
//     RW       read/write;
//     RO       read-only: a bus write to an RO register is refused, an RO field ignores writes;
//     WO       write-only: stored for the model, reads as 0;
//     W1C      write 1 to clear: the model sets bits, the bus clears them by writing 1s;
//     Trigger  write triggers an action (a doorbell, a start bit): the written value goes to the
//              register's write callbacks, nothing is stored, reads as 0.
// - A register without fields takes its access in every bit. In a register with fields, the bits
//   outside every field are reserved: they read as 0 and ignore writes, so a driver writing all
//   ones to clear status flags does not leave junk behind.
//
// Errors in a map are errors in the model's source, but are reported like input errors
// (InputError naming the block and the register) since maps may later come from files.
#pragma once

#include <tlm_utils/simple_target_socket.h>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"

namespace canopy::core {

enum class Access : uint8_t { RW, RO, WO, W1C, Trigger };
constexpr size_t kAccessKinds = 5;
// "RW", "RO", "WO", "W1C", "WT" (write triggers), as the docs and the C header show them.
const char* to_string(Access a);

// A named value of a field (an error code, a direction); becomes <BLOCK>_<REG>_<FIELD>_<VALUE>.
struct FieldValue {
    FieldValue(std::string n, uint64_t v, std::string desc = "")
        : name(std::move(n)), value(v), description(std::move(desc)) {}
    std::string name;
    uint64_t value = 0;  // unshifted: the field's own value
    std::string description;
};

struct Field {
    Field(std::string n, unsigned lsb_bit, unsigned width, std::string desc,
          std::vector<FieldValue> named_values = {}, std::optional<Access> own_access = {})
        : name(std::move(n)),
          lsb(lsb_bit),
          width_bits(width),
          description(std::move(desc)),
          values(std::move(named_values)),
          access(own_access) {}
    std::string name;  // lower-case C identifier, unique in its register
    unsigned lsb = 0;
    unsigned width_bits = 1;
    std::string description;
    std::vector<FieldValue> values;
    // When set, overrides the register's access for these bits; only in an RW register.
    std::optional<Access> access;

    uint64_t mask() const;  // in place: ((1 << width) - 1) << lsb
};

struct Register {
    Register(std::string n, uint64_t byte_offset, unsigned width, Access kind, uint64_t reset_value,
             std::string desc, std::vector<Field> bit_fields = {})
        : name(std::move(n)),
          offset(byte_offset),
          width_bits(width),
          access(kind),
          reset(reset_value),
          description(std::move(desc)),
          fields(std::move(bit_fields)) {}
    std::string name;  // lower-case C identifier in hardware style: "host_addr", "status"
    uint64_t offset = 0;
    unsigned width_bits = 32;  // 32 or 64
    Access access = Access::RW;
    uint64_t reset = 0;
    std::string description;  // one line
    std::vector<Field> fields;

    // Filled in by RegisterMap: which bits behave as which access kind (they partition the
    // register's bits; reserved bits count as RO, always 0).
    std::array<uint64_t, kAccessKinds> access_bits{};
    uint64_t reserved_bits = 0;

    uint64_t bits(Access a) const { return access_bits[size_t(a)]; }
    unsigned size_bytes() const { return width_bits / 8; }
    uint64_t width_mask() const {
        return width_bits == 64 ? ~uint64_t(0) : (uint64_t(1) << 32) - 1;
    }
    const Field* field(const std::string& name) const;
};

class RegisterMap {
  public:
    // Validates the map: names are lower-case C identifiers and unique, widths 32 or 64,
    // registers naturally aligned and not overlapping, reset values inside their register and
    // not in reserved or trigger bits, fields inside their register and not overlapping, field
    // access kinds only in RW registers, field values fitting their field, generated C names
    // unique. Throws InputError("register map <block>", "register <name>", what is wrong).
    RegisterMap(std::string block, std::string description, std::vector<Register> registers);

    const std::string& block() const { return block_; }
    const std::string& description() const { return description_; }
    // In offset order.
    const std::vector<Register>& registers() const { return registers_; }
    const Register* find(const std::string& name) const;
    // Index in registers() of the register named `name`; throws std::invalid_argument naming the
    // block and the closest name (a model asking for a register its map lacks is a bug).
    size_t index(const std::string& name) const;
    // The register holding byte `offset`, or null.
    const Register* at(uint64_t offset) const;
    // Bytes from 0 to the end of the last register (the size of the BAR or window).
    uint64_t size_bytes() const;

    // A C header for firmware (C99, no includes needed): per register a comment and
    // <BLOCK>_<REG>_OFFSET, _RESET; per field _SHIFT, _MASK (in place) and per field value
    // <BLOCK>_<REG>_<FIELD>_<VALUE>; <BLOCK>_SIZE. `source` names the file the map lives in, for
    // the "generated from" line. The same map gives the same bytes.
    std::string c_header(const std::string& source = "") const;
    // Markdown: a heading, the register table and a field table.
    std::string markdown() const;

  private:
    void validate();
    std::string block_, description_;
    std::vector<Register> registers_;
};

struct RegisterBankConfig {
    // Time a register access takes in the block, added to the access's delay. Assumed: one cycle
    // of a 250 MHz register clock (FPGA and controller register slaves run at 100-250 MHz).
    double access_ns = 4.0;
    void describe(Params& p);  // binds "access_ns" under the owner's scope
};

// What a callback sees of one access.
struct RegisterAccess {
    const Register& reg;
    // Reads: the value the bus will see (stored value with WO and trigger bits as 0); a read
    // callback may change it. Writes: the bus data placed at the register's bit positions.
    uint64_t value = 0;
    uint64_t previous = 0;  // writes: the stored value before the write
    uint64_t lanes = 0;     // the register bits the access covered (a 32-bit half or all)
    sc_core::sc_time at;    // simulated time of the access: now + the access's delay
    bool debug = false;     // from transport_dbg (read callbacks only)

    // Bits of this write that hit trigger bits with a 1, e.g. a start bit.
    uint64_t triggered() const { return value & lanes & reg.bits(Access::Trigger); }
};

// Holds the values of one RegisterMap and serves them on `socket`. b_transport decodes the
// access, applies the access kind, adds the configured latency to the delay and calls the
// register's callbacks (writes after the value is stored). Refused accesses are answered with a
// TLM error response and counted, never thrown:
//   no register at the address, or an access straddling two registers  TLM_ADDRESS_ERROR_RESPONSE
//   address not aligned to the access size                              TLM_ADDRESS_ERROR_RESPONSE
//   size other than 4 or 8, 8 on a 32-bit register, narrow streaming    TLM_BURST_ERROR_RESPONSE
//   byte enables TLM_BYTE_ENABLE_ERROR_RESPONSE a write to an RO register
//   TLM_COMMAND_ERROR_RESPONSE
// (IEEE 1666 names the command error for a target that cannot execute the command, such as a
// write to a read-only location.) transport_dbg is a debugger's view of the flops: reads return
// the stored value (through read callbacks, with `debug` set), writes store the value as given
// (except trigger bits) with no callbacks; it refuses what b_transport refuses, returning 0.
class RegisterBank : public sc_core::sc_module {
  public:
    tlm_utils::simple_target_socket<RegisterBank> socket;

    using WriteCallback = std::function<void(const RegisterAccess&)>;
    using ReadCallback = std::function<void(RegisterAccess&)>;

    // Statistics under this module's name: reads, writes, errors.
    RegisterBank(sc_core::sc_module_name name, RegisterMap map, Services& services,
                 const RegisterBankConfig& cfg = RegisterBankConfig());

    const RegisterMap& map() const { return map_; }

    // Callbacks run in the order added. Unknown names throw std::invalid_argument.
    void on_write(const std::string& reg, WriteCallback fn);
    void on_read(const std::string& reg, ReadCallback fn);

    // The model's side: the stored value, and setting it whatever the access kind (an RO status,
    // a W1C done bit), with no callbacks. Values are cut to the register's width.
    uint64_t read(const std::string& reg) const { return values_[map_.index(reg)]; }
    void write(const std::string& reg, uint64_t value);
    uint64_t field(const std::string& reg, const std::string& field) const;
    void set_field(const std::string& reg, const std::string& field, uint64_t value);
    // Index-based forms for hot paths (index from map().index()).
    uint64_t read(size_t index) const { return values_.at(index); }
    void write(size_t index, uint64_t value);
    // Every register back to its reset value.
    void reset();

  private:
    // The register index and the field named; throws naming the closest field when unknown.
    std::pair<size_t, const Field*> field_of(const std::string& reg, const std::string& name) const;
    enum class Refusal { None, Address, Burst, ByteEnable, Command };
    static tlm::tlm_response_status response(Refusal refusal);
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    // Checks an access and finds its register and lanes.
    Refusal decode(const tlm::tlm_generic_payload& gp, size_t& index, unsigned& shift) const;
    uint64_t read_value(size_t index, const sc_core::sc_time& at, bool debug);

    RegisterMap map_;
    RegisterBankConfig cfg_;
    sc_core::sc_time access_;  // cfg_.access_ns, made once: every bus access adds it
    Services& services_;
    std::vector<uint64_t> values_;
    std::vector<std::vector<WriteCallback>> write_callbacks_;
    std::vector<std::vector<ReadCallback>> read_callbacks_;
    int track_;
    Counter &reads_, &writes_, &errors_;
};

}  // namespace canopy::core
