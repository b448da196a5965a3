#include "core/register_bank.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "core/error.hpp"
#include "core/payload.hpp"

namespace canopy::core {

namespace {

bool is_identifier(const std::string& s) {
    if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

std::string upper(const std::string& s) {
    std::string u = s;
    for (char& c : u)
        if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
    return u;
}

std::string hex(uint64_t v, int digits = 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, digits, v);
    return buf;
}

// "[3]" or "[7:4]"
std::string bit_range(const Field& f) {
    const unsigned msb = f.lsb + f.width_bits - 1;
    return "[" +
           (msb == f.lsb ? std::to_string(f.lsb)
                         : std::to_string(msb) + ":" + std::to_string(f.lsb)) +
           "]";
}

// Text safe inside a C block comment.
std::string c_comment(std::string s) {
    for (size_t p; (p = s.find("*/")) != std::string::npos;) s.replace(p, 2, "* /");
    return s;
}

// Text safe inside a Markdown table cell.
std::string md_cell(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

std::string values_text(const Field& f) {
    std::string s;
    for (const FieldValue& v : f.values) {
        if (!s.empty()) s += "; ";
        s += std::to_string(v.value) + " " + v.name;
        if (!v.description.empty()) s += ": " + v.description;
    }
    return s;
}

[[noreturn]] void unknown(const std::string& block, const std::string& what,
                          const std::string& name, const std::vector<std::string>& known) {
    std::string msg = block + ": no " + what + " '" + name + "'";
    const std::string close = closest_match(name, known);
    if (!close.empty()) msg += " (did you mean '" + close + "'?)";
    throw std::invalid_argument(msg);
}

}  // namespace

const char* to_string(Access a) {
    switch (a) {
        case Access::RW:
            return "RW";
        case Access::RO:
            return "RO";
        case Access::WO:
            return "WO";
        case Access::W1C:
            return "W1C";
        case Access::Trigger:
            return "WT";
    }
    return "?";
}

uint64_t Field::mask() const {
    if (width_bits == 0 || lsb >= 64) return 0;
    const uint64_t ones = width_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << width_bits) - 1;
    return ones << lsb;
}

const Field* Register::field(const std::string& n) const {
    for (const Field& f : fields)
        if (f.name == n) return &f;
    return nullptr;
}

RegisterMap::RegisterMap(std::string block, std::string description,
                         std::vector<Register> registers)
    : block_(std::move(block)),
      description_(std::move(description)),
      registers_(std::move(registers)) {
    validate();
}

void RegisterMap::validate() {
    const std::string input = "register map " + block_;
    auto fail = [&](const std::string& place, const std::string& msg) {
        throw InputError(input, place, msg);
    };
    if (!is_identifier(block_))
        fail("", "block name '" + block_ + "' is not a lower-case C identifier");
    if (description_.find('\n') != std::string::npos) fail("", "description spans lines");
    if (registers_.empty()) fail("", "has no registers");

    std::set<std::string> names;
    for (Register& r : registers_) {
        const std::string place = "register " + r.name;
        if (!is_identifier(r.name))
            fail(place, "name is not a lower-case C identifier ([a-z][a-z0-9_]*)");
        if (!names.insert(r.name).second) fail(place, "name used twice");
        if (r.width_bits != 32 && r.width_bits != 64)
            fail(place, "width " + std::to_string(r.width_bits) + " bits (must be 32 or 64)");
        if (r.offset % r.size_bytes() != 0)
            fail(place, "misaligned: offset " + hex(r.offset) + " is not a multiple of " +
                            std::to_string(r.size_bytes()) + " bytes");
        if (r.offset > UINT64_MAX - r.size_bytes()) fail(place, "offset past the address space");
        if (r.reset & ~r.width_mask())
            fail(place, "reset value " + hex(r.reset) + " does not fit " +
                            std::to_string(r.width_bits) + " bits");
        if (r.description.find('\n') != std::string::npos) fail(place, "description spans lines");

        // Without fields every bit takes the register's access; with fields, the bits outside
        // them are reserved (read 0, writes ignored).
        r.access_bits = {};
        r.reserved_bits = r.fields.empty() ? 0 : r.width_mask();
        if (r.fields.empty()) r.access_bits[size_t(r.access)] = r.width_mask();
        uint64_t used = 0;
        std::set<std::string> field_names;
        for (const Field& f : r.fields) {
            const std::string fp = place + ": field " + f.name;
            if (!is_identifier(f.name))
                fail(fp, "name is not a lower-case C identifier ([a-z][a-z0-9_]*)");
            if (!field_names.insert(f.name).second) fail(fp, "name used twice");
            if (f.width_bits == 0 || f.lsb + uint64_t(f.width_bits) > r.width_bits)
                fail(fp, "bits " + std::to_string(f.lsb) + ".." +
                             std::to_string(int64_t(f.lsb) + int64_t(f.width_bits) - 1) +
                             " lie outside the " + std::to_string(r.width_bits) + "-bit register");
            if (f.mask() & used) fail(fp, "overlaps another field");
            used |= f.mask();
            if (f.description.find('\n') != std::string::npos) fail(fp, "description spans lines");
            if (f.access && *f.access != r.access && r.access != Access::RW)
                fail(fp, std::string("access ") + to_string(*f.access) + " in a " +
                             to_string(r.access) +
                             " register (fields of other kinds need an RW register)");
            r.access_bits[size_t(f.access ? *f.access : r.access)] |= f.mask();
            r.reserved_bits &= ~f.mask();
            std::set<std::string> value_names;
            for (const FieldValue& v : f.values) {
                if (!is_identifier(v.name))
                    fail(fp, "value name '" + v.name + "' is not a lower-case C identifier");
                if (!value_names.insert(v.name).second)
                    fail(fp, "value name '" + v.name + "' used twice");
                if (f.width_bits < 64 && (v.value >> f.width_bits) != 0)
                    fail(fp, "value " + v.name + " = " + std::to_string(v.value) +
                                 " does not fit " + std::to_string(f.width_bits) + " bits");
            }
        }
        r.access_bits[size_t(Access::RO)] |= r.reserved_bits;
        if (r.reset & r.reserved_bits)
            fail(place,
                 "reset value " + hex(r.reset) + " sets reserved bits (outside every field)");
        if (r.reset & r.bits(Access::Trigger))
            fail(place,
                 "reset value " + hex(r.reset) + " sets trigger bits, which are never stored");
    }

    std::stable_sort(registers_.begin(), registers_.end(),
                     [](const Register& a, const Register& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < registers_.size(); ++i) {
        const Register &prev = registers_[i - 1], &r = registers_[i];
        if (r.offset < prev.offset + prev.size_bytes())
            fail("register " + r.name, "at " + hex(r.offset) + " overlaps register " + prev.name +
                                           " (" + hex(prev.offset) + ".." +
                                           hex(prev.offset + prev.size_bytes() - 1) + ")");
    }

    // The C names must not collide either (register a_b field c vs register a field b_c).
    std::map<std::string, std::string> macros;  // name -> register it came from
    const std::string prefix = upper(block_) + "_";
    macros[prefix + "SIZE"] = "";
    auto define = [&](const Register& r, const std::string& macro) {
        auto [it, fresh] = macros.emplace(macro, r.name);
        if (!fresh)
            fail("register " + r.name, "its C name " + macro + " is also generated" +
                                           (it->second.empty() ? std::string(" for the block")
                                                               : " by register " + it->second));
    };
    for (const Register& r : registers_) {
        const std::string rp = prefix + upper(r.name) + "_";
        define(r, rp + "OFFSET");
        define(r, rp + "RESET");
        for (const Field& f : r.fields) {
            const std::string fp = rp + upper(f.name) + "_";
            define(r, fp + "SHIFT");
            define(r, fp + "MASK");
            for (const FieldValue& v : f.values) define(r, fp + upper(v.name));
        }
    }
}

const Register* RegisterMap::find(const std::string& name) const {
    for (const Register& r : registers_)
        if (r.name == name) return &r;
    return nullptr;
}

size_t RegisterMap::index(const std::string& name) const {
    for (size_t i = 0; i < registers_.size(); ++i)
        if (registers_[i].name == name) return i;
    std::vector<std::string> known;
    for (const Register& r : registers_) known.push_back(r.name);
    unknown(block_, "register", name, known);
}

const Register* RegisterMap::at(uint64_t offset) const {
    // Registers are sorted and disjoint: the candidate is the last one starting at or below.
    auto it = std::upper_bound(registers_.begin(), registers_.end(), offset,
                               [](uint64_t o, const Register& r) { return o < r.offset; });
    if (it == registers_.begin()) return nullptr;
    --it;
    return offset - it->offset < it->size_bytes() ? &*it : nullptr;
}

uint64_t RegisterMap::size_bytes() const {
    const Register& last = registers_.back();
    return last.offset + last.size_bytes();
}

std::string RegisterMap::c_header(const std::string& source) const {
    struct Line {
        std::string name, value, comment;
    };
    const std::string prefix = upper(block_) + "_";
    const std::string guard = "CANOPY_" + prefix + "REGS_H";
    std::string out;
    out += "/* " + c_comment(block_ + ": " + description_) + "\n";
    out += " * Generated from " + (source.empty() ? std::string("its RegisterMap") : source) +
           "; do not edit.\n";
    out += " * (canopy::core::RegisterMap::c_header(), models/core/register_bank.hpp)\n";
    out += " * Offsets are from the block's base. Registers are little-endian and naturally\n";
    out += " * aligned; a 64-bit register may be accessed as two 32-bit halves, low half at the\n";
    out += " * lower address. _MASK values are in place (already shifted); field values are not.\n";
    out +=
        " * Access: RW read/write, RO read-only, WO write-only (reads 0), W1C write 1 to clear,\n";
    out += " * WT write triggers an action (not stored, reads 0). In a register with fields the\n";
    out += " * bits outside them are reserved: they read 0 and ignore writes. */\n";
    out += "#ifndef " + guard + "\n#define " + guard + "\n\n";

    // Macro values aligned in one column for the whole header.
    std::vector<std::vector<Line>> groups;
    std::vector<std::string> heads;
    heads.push_back("");
    groups.push_back({{prefix + "SIZE", hex(size_bytes(), 2) + "u", "bytes spanned by the block"}});
    size_t width = 0;
    for (const Register& r : registers_) {
        const bool wide = r.width_bits == 64;
        const int digits = wide ? 16 : 8;
        const std::string suffix = wide ? "ull" : "u";
        std::string head = "/* " + r.name + " (" + std::to_string(r.width_bits) + "-bit, " +
                           to_string(r.access) + "): " + c_comment(r.description);
        for (const Field& f : r.fields) {
            head += "\n *   " + bit_range(f) + " " + f.name;
            if (f.access) head += std::string(" (") + to_string(*f.access) + ")";
            head += ": " + c_comment(f.description);
        }
        head += " */\n";
        std::vector<Line> lines;
        const std::string rp = prefix + upper(r.name) + "_";
        lines.push_back({rp + "OFFSET", hex(r.offset, 2) + "u", ""});
        lines.push_back({rp + "RESET", hex(r.reset, digits) + suffix, ""});
        for (const Field& f : r.fields) {
            const std::string fp = rp + upper(f.name) + "_";
            lines.push_back({fp + "SHIFT", std::to_string(f.lsb) + "u", ""});
            lines.push_back({fp + "MASK", hex(f.mask(), digits) + suffix, ""});
            for (const FieldValue& v : f.values)
                lines.push_back({fp + upper(v.name),
                                 std::to_string(v.value) + (v.value > 0xffffffffu ? "ull" : "u"),
                                 c_comment(v.description)});
        }
        heads.push_back(head);
        groups.push_back(lines);
    }
    for (const auto& g : groups)
        for (const Line& l : g) width = std::max(width, l.name.size());
    for (size_t i = 0; i < groups.size(); ++i) {
        out += heads[i];
        for (const Line& l : groups[i]) {
            std::string line =
                "#define " + l.name + std::string(width + 1 - l.name.size(), ' ') + l.value;
            if (!l.comment.empty()) line += " /* " + l.comment + " */";
            out += line + "\n";
        }
        out += "\n";
    }
    out += "#endif /* " + guard + " */\n";
    return out;
}

std::string RegisterMap::markdown() const {
    std::string out = "### `" + block_ + "`: " + md_cell(description_) + "\n\n";
    out += "| Offset | Register | Width | Access | Reset | Description |\n";
    out += "|-------:|----------|------:|--------|------:|-------------|\n";
    for (const Register& r : registers_)
        out += "| " + hex(r.offset, 2) + " | `" + r.name + "` | " + std::to_string(r.width_bits) +
               " | " + to_string(r.access) + " | " + hex(r.reset) + " | " + md_cell(r.description) +
               " |\n";
    bool any = false;
    for (const Register& r : registers_) any = any || !r.fields.empty();
    if (!any) return out;
    out += "\n| Register | Bits | Field | Access | Description |\n";
    out += "|----------|------|-------|--------|-------------|\n";
    for (const Register& r : registers_)
        for (const Field& f : r.fields) {
            std::string desc = f.description;
            const std::string values = values_text(f);
            if (!values.empty()) desc += " (" + values + ")";
            out += "| `" + r.name + "` | " + bit_range(f) + " | `" + f.name + "` | " +
                   to_string(f.access ? *f.access : r.access) + " | " + md_cell(desc) + " |\n";
        }
    return out;
}

void RegisterBankConfig::describe(Params& p) {
    p("access_ns", access_ns, "ns",
      "time of one register access in the block [assumed: one 250 MHz register-clock cycle]", 0.0,
      1e6);
}

RegisterBank::RegisterBank(sc_core::sc_module_name name, RegisterMap map, Services& services,
                           const RegisterBankConfig& cfg)
    : sc_module(name),
      socket("socket"),
      map_(std::move(map)),
      cfg_(cfg),
      access_(cfg.access_ns, sc_core::SC_NS),
      services_(services),
      values_(map_.registers().size()),
      write_callbacks_(map_.registers().size()),
      read_callbacks_(map_.registers().size()),
      track_(services.trace.track(this->name())),
      reads_(services.stats.counter(this->name(), "reads", "register reads from the bus")),
      writes_(services.stats.counter(this->name(), "writes", "register writes from the bus")),
      errors_(services.stats.counter(
          this->name(), "errors",
          "bus accesses refused: no register, misaligned, wrong size, write to read-only")) {
    socket.register_b_transport(this, &RegisterBank::b_transport);
    socket.register_transport_dbg(this, &RegisterBank::transport_dbg);
    reset();
}

void RegisterBank::on_write(const std::string& reg, WriteCallback fn) {
    write_callbacks_[map_.index(reg)].push_back(std::move(fn));
}

void RegisterBank::on_read(const std::string& reg, ReadCallback fn) {
    read_callbacks_[map_.index(reg)].push_back(std::move(fn));
}

void RegisterBank::write(const std::string& reg, uint64_t value) { write(map_.index(reg), value); }

void RegisterBank::write(size_t index, uint64_t value) {
    const Register& r = map_.registers().at(index);
    values_[index] = value & r.width_mask() & ~r.bits(Access::Trigger);
}

std::pair<size_t, const Field*> RegisterBank::field_of(const std::string& reg,
                                                       const std::string& name) const {
    const size_t i = map_.index(reg);
    const Register& r = map_.registers()[i];
    const Field* f = r.field(name);
    if (!f) {
        std::vector<std::string> known;
        for (const Field& k : r.fields) known.push_back(k.name);
        unknown(map_.block() + "." + reg, "field", name, known);
    }
    return {i, f};
}

uint64_t RegisterBank::field(const std::string& reg, const std::string& name) const {
    const auto [i, f] = field_of(reg, name);
    return (values_[i] & f->mask()) >> f->lsb;
}

void RegisterBank::set_field(const std::string& reg, const std::string& name, uint64_t value) {
    const auto [i, f] = field_of(reg, name);
    if (f->width_bits < 64 && (value >> f->width_bits) != 0)
        throw std::invalid_argument(map_.block() + "." + reg + "." + name + ": value " +
                                    std::to_string(value) + " does not fit " +
                                    std::to_string(f->width_bits) + " bits");
    write(i, (values_[i] & ~f->mask()) | (value << f->lsb));
}

void RegisterBank::reset() {
    for (size_t i = 0; i < values_.size(); ++i) values_[i] = map_.registers()[i].reset;
}

RegisterBank::Refusal RegisterBank::decode(const tlm::tlm_generic_payload& gp, size_t& index,
                                           unsigned& shift) const {
    const unsigned len = gp.get_data_length();
    const uint64_t address = gp.get_address();
    if (gp.get_byte_enable_ptr() && gp.get_byte_enable_length()) return Refusal::ByteEnable;
    if (len != 4 && len != 8) return Refusal::Burst;
    if (gp.get_streaming_width() < len) return Refusal::Burst;
    if (address % len != 0) return Refusal::Address;
    const Register* r = map_.at(address);
    if (!r) return Refusal::Address;
    if (len > r->size_bytes()) return Refusal::Burst;
    index = size_t(r - map_.registers().data());
    shift = unsigned(address - r->offset) * 8;
    if (gp.is_write() && r->access == Access::RO) return Refusal::Command;
    return Refusal::None;
}

uint64_t RegisterBank::read_value(size_t index, const sc_core::sc_time& at, bool debug) {
    const Register& r = map_.registers()[index];
    const uint64_t v = values_[index] & ~(r.bits(Access::WO) | r.bits(Access::Trigger));
    RegisterAccess a{r, v, v, r.width_mask(), at, debug};
    auto& cbs = read_callbacks_[index];
    for (size_t k = 0; k < cbs.size(); ++k) cbs[k](a);
    return a.value & r.width_mask();
}

namespace {
uint64_t load_le(const uint8_t* p, unsigned len) {
    uint64_t v = 0;
    for (unsigned i = 0; i < len; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}
void store_le(uint8_t* p, unsigned len, uint64_t v) {
    for (unsigned i = 0; i < len; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint64_t lanes_of(unsigned len, unsigned shift) {
    return len == 8 ? ~uint64_t(0) : uint64_t(0xffffffffu) << shift;
}
}  // namespace

tlm::tlm_response_status RegisterBank::response(Refusal refusal) {
    switch (refusal) {
        case Refusal::Address:
            return tlm::TLM_ADDRESS_ERROR_RESPONSE;
        case Refusal::Burst:
            return tlm::TLM_BURST_ERROR_RESPONSE;
        case Refusal::ByteEnable:
            return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
        case Refusal::Command:
            return tlm::TLM_COMMAND_ERROR_RESPONSE;
        case Refusal::None:
            break;
    }
    return tlm::TLM_OK_RESPONSE;
}

void RegisterBank::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
    delay += access_;
    const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
    size_t index = 0;
    unsigned shift = 0;
    const Refusal refusal = decode(gp, index, shift);
    const bool is_write = gp.is_write();
    uint64_t traced = 0;
    if (refusal != Refusal::None) {
        errors_.add();
        gp.set_response_status(response(refusal));
    } else if (gp.is_read()) {
        reads_.add();
        traced = read_value(index, at, false) >> shift;
        store_le(gp.get_data_ptr(), gp.get_data_length(), traced);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    } else if (is_write) {
        writes_.add();
        const Register& r = map_.registers()[index];
        const uint64_t lanes = lanes_of(gp.get_data_length(), shift) & r.width_mask();
        const uint64_t in = load_le(gp.get_data_ptr(), gp.get_data_length()) << shift;
        traced = in >> shift;
        const uint64_t old = values_[index];
        const uint64_t stored = lanes & (r.bits(Access::RW) | r.bits(Access::WO));
        uint64_t v = (old & ~stored) | (in & stored);
        v &= ~(in & lanes & r.bits(Access::W1C));
        write(index, v);
        // Set the response first: a callback may look at the bank, never at the payload.
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        const RegisterAccess a{r, in, old, lanes, at, false};
        auto& cbs = write_callbacks_[index];
        for (size_t k = 0; k < cbs.size(); ++k) cbs[k](a);
    } else {  // TLM_IGNORE_COMMAND at a valid register
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
    if (services_.trace.enabled()) {
        std::vector<TransactionTrace::Arg> args{
            {"address", TransactionTrace::hex(gp.get_address())},
            {"bytes", std::to_string(gp.get_data_length())}};
        if (refusal == Refusal::None) {
            args.push_back({"register", map_.registers()[index].name});
            args.push_back({"value", TransactionTrace::hex(traced)});
        } else {
            args.push_back({"response", gp.get_response_string()});
        }
        services_.trace.complete(
            track_, refusal != Refusal::None ? "refused" : (is_write ? "write" : "read"), "mmio",
            start, access_, flow_of(gp), args);
    }
}

unsigned RegisterBank::transport_dbg(tlm::tlm_generic_payload& gp) {
    size_t index = 0;
    unsigned shift = 0;
    if (decode(gp, index, shift) != Refusal::None) return 0;
    const unsigned len = gp.get_data_length();
    if (gp.is_read()) {
        store_le(gp.get_data_ptr(), len,
                 read_value(index, sc_core::sc_time_stamp(), true) >> shift);
    } else if (gp.is_write()) {
        const uint64_t lanes = lanes_of(len, shift);
        write(index,
              (values_[index] & ~lanes) | ((load_le(gp.get_data_ptr(), len) << shift) & lanes));
    }
    return len;
}

}  // namespace canopy::core
