#include "nand/die.hpp"

#include <algorithm>
#include <cstring>

#include "nand/timing.hpp"

namespace canopy::nand {

namespace {
// The die's state signal as GTKWave names it: idle, or the operation (OpKind) it runs.
const core::Waves::ValueNames& state_names() {
    static const core::Waves::ValueNames names = [] {
        core::Waves::ValueNames n{"die_state", {{0, "IDLE"}}};
        for (uint8_t k = 1; k < uint8_t(OpKind::Count); ++k)
            n.names.push_back({k, op_name(OpKind(k))});
        return n;
    }();
    return names;
}
}  // namespace

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;
using sc_core::SC_ZERO_TIME;

static constexpr size_t kMaxPlanes = 8;
static constexpr size_t kMaxSlots = 32;

struct Die::Decoded {
    OpKind op = OpKind::None;
    CellMode mode = CellMode::Tlc;  // a TLC part programs TLC unless told otherwise
    Scramble scramble = Scramble::None;
    uint32_t n_rows = 0;
    std::array<uint32_t, kMaxPlanes> rows{};
    std::array<uint32_t, kMaxPlanes> din_column{}, din_offset{}, din_length{};
    uint32_t column = 0, dout_offset = 0, dout_length = 0;
    bool explicit_plane = false;  // 06h names its plane; 05h uses the last one read
    std::array<SenseSlot, kMaxSlots> slots{};
    uint32_t slot_plane = 0;
    size_t n_slots = 0;
    SenseFlags flags;
    uint8_t feature = 0;
    uint32_t bus_cycles = 0, din_bytes = 0;
};

// Walks the cycles of a sequence; each expectation that fails names what was expected where.
class Cursor {
  public:
    Cursor(const CommandExt& c, uint32_t length) : c_(c), length_(length) {}
    bool done() const { return i_ >= c_.n_cycles; }
    const Cycle* peek() const { return done() ? nullptr : &c_.cycles[i_]; }
    bool take_cmd(uint8_t v) {
        if (done() || c_.cycles[i_].kind != Cycle::Cmd || c_.cycles[i_].value != v) return false;
        ++i_, ++cycles_;
        return true;
    }
    std::string expect_cmd(uint8_t v, const char* after) {
        return take_cmd(v) ? std::string()
                           : where() + "expected command " + hex(v) + " after " + after;
    }
    std::string addr(int n, uint64_t& out, const char* after) {
        out = 0;
        for (int k = 0; k < n; ++k) {
            if (done() || c_.cycles[i_].kind != Cycle::Addr)
                return where() + "expected " + std::to_string(n) + " address cycles after " +
                       after + ", got " + std::to_string(k);
            out |= uint64_t(c_.cycles[i_].value) << (8 * k);
            ++i_, ++cycles_;
        }
        return {};
    }
    // An optional data phase of the given kind; its bytes come next in the payload.
    bool data(Cycle::Kind kind, uint32_t& offset, uint32_t& len) {
        if (done() || c_.cycles[i_].kind != kind) return false;
        offset = offset_;
        len = c_.cycles[i_].length;
        offset_ += len;
        ++i_;
        return true;
    }
    std::string finish() const {
        if (!done()) return where() + "unexpected cycles after the end of the command";
        if (offset_ > length_)
            return "data phases need " + std::to_string(offset_) + " bytes but the payload has " +
                   std::to_string(length_);
        return {};
    }
    std::string where() const { return "cycle " + std::to_string(i_) + ": "; }
    uint32_t cycles() const { return cycles_; }
    static std::string hex(uint8_t v) {
        char b[8];
        std::snprintf(b, sizeof b, "%02Xh", v);
        return b;
    }

  private:
    const CommandExt& c_;
    uint32_t length_;
    uint16_t i_ = 0;
    uint32_t cycles_ = 0, offset_ = 0;
};

Die::Die(sc_core::sc_module_name name, const NandConfig& cfg, core::Services& services,
         ChannelBus& bus, uint32_t channel, uint32_t index)
    : sc_module(name),
      cfg_(cfg),
      services_(services),
      bus_(bus),
      index_(index),
      path_("ch" + std::to_string(channel) + ".die" + std::to_string(index)),
      codec_(cfg.geometry),
      model_(cfg.reliability),
      rng_(core::derive_seed(services.seed, this->name())),
      state_probe_("state_probe", services.waves, std::string(this->name()) + ".state", 0,
                   &state_names()),
      array_(&services.stats.occupancy(this->name(), "array",
                                       "die array busy (sense/program/erase)", true),
             nullptr),
      track_(services.trace.track(this->name())),
      refused_(
          services.stats.counter(this->name(), "refused", "illegal command sequences refused")),
      bits_sensed_(services.stats.counter(this->name(), "bits_sensed", "cell bits sensed")),
      bit_errors_(
          services.stats.counter(this->name(), "bit_errors", "raw bit errors injected at sensing")),
      wordlines_sensed_(services.stats.counter(this->name(), "wordlines_sensed",
                                               "wordlines sensed (MWS operands)")),
      energy_uj_(services.stats.sum(this->name(), "energy", "uJ", "array and I/O energy", true)) {
    for (uint32_t p = 0; p < cfg.geometry.planes_per_die; ++p)
        planes_.push_back(std::make_unique<Plane>(
            cfg, model_,
            core::derive_seed(services.seed,
                              std::string(this->name()) + ".plane" + std::to_string(p))));
    features_[feature::kEspFactor][0] = uint8_t(std::lround(cfg.timing.esp_factor * 10));
}

uint8_t Die::status_at(const sc_time& t) const {
    uint8_t s = status::kWriteProtectOff;
    if (t >= cache_ready_) s |= status::kReady;
    if (t >= array_.free_at() && t >= cache_ready_) s |= status::kArrayReady;
    if (failed_) s |= status::kFail;
    return s;
}

double Die::read_time_us(CellMode m) const {
    switch (m) {
        case CellMode::Mlc:
            return cfg_.timing.t_read_mlc_us;
        case CellMode::Tlc:
            return cfg_.timing.t_read_tlc_us;
        default:
            return cfg_.timing.t_read_slc_us;
    }
}

std::string Die::decode(const CommandExt& c, uint32_t length, Decoded& d) const {
    Cursor k(c, length);
    bool prefixed = false;
    for (;;) {  // mode prefixes
        if (k.take_cmd(op::kPrefixSlc))
            d.mode = CellMode::Slc;
        else if (k.take_cmd(op::kPrefixMlc))
            d.mode = CellMode::Mlc;
        else if (k.take_cmd(op::kPrefixEsp))
            d.mode = CellMode::Esp;
        else if (k.take_cmd(op::kPrefixRandomise))
            d.scramble = Scramble::OnDie;
        else if (k.take_cmd(op::kPrefixRandomised))
            d.scramble = Scramble::Controller;
        else
            break;
        prefixed = true;
    }
    const Cycle* first = k.peek();
    if (!first) return "empty command sequence";
    if (first->kind != Cycle::Cmd) return k.where() + "a sequence must start with a command cycle";
    const uint8_t opcode = first->value;
    if (prefixed && opcode != op::kProgram1)
        return k.where() + "mode prefixes apply to PROGRAM (80h) only, not " + Cursor::hex(opcode);
    std::string e;
    uint64_t a = 0;
    auto row_of = [&](uint64_t addr5) { return uint32_t(addr5 >> 16); };
    auto add_row = [&](uint32_t row) -> std::string {
        if (d.n_rows >= cfg_.geometry.planes_per_die || d.n_rows >= kMaxPlanes)
            return "more plane addresses than the die has planes (" +
                   std::to_string(cfg_.geometry.planes_per_die) + ")";
        d.rows[d.n_rows++] = row;
        return {};
    };

    if (k.take_cmd(op::kReset)) {
        d.op = OpKind::Reset;
    } else if (k.take_cmd(op::kReadStatus)) {
        d.op = OpKind::ReadStatus;
        k.data(Cycle::DataOut, d.dout_offset, d.dout_length);
    } else if (k.take_cmd(op::kRead1)) {
        for (;;) {
            if (!(e = k.addr(5, a, "00h")).empty()) return e;
            if (!(e = add_row(row_of(a))).empty()) return e;
            if (k.take_cmd(op::kReadMultiPlane)) {
                if (!(e = k.expect_cmd(op::kRead1, "32h")).empty()) return e;
                continue;
            }
            if (k.take_cmd(op::kRead2))
                d.op = OpKind::Read;
            else if (k.take_cmd(op::kReadCacheRandom) && d.n_rows == 1)
                d.op = OpKind::CacheRead;
            else
                return k.where() + "expected 30h, 31h or 32h to end the read address";
            break;
        }
    } else if (k.take_cmd(op::kReadCacheEnd)) {
        d.op = OpKind::CacheReadEnd;
    } else if (k.take_cmd(op::kChangeReadColumn1) || k.take_cmd(op::kChangeReadColumnEnh)) {
        d.op = OpKind::DataOut;
        d.explicit_plane = opcode == op::kChangeReadColumnEnh;
        if (!(e = k.addr(d.explicit_plane ? 5 : 2, a, Cursor::hex(opcode).c_str())).empty())
            return e;
        d.column = uint32_t(a & 0xFFFF);
        if (d.explicit_plane && !(e = add_row(row_of(a))).empty()) return e;
        if (!(e = k.expect_cmd(op::kChangeReadColumn2, "the column address")).empty()) return e;
        if (!k.data(Cycle::DataOut, d.dout_offset, d.dout_length))
            return k.where() + "expected a data-out phase after E0h";
        if (d.column + uint64_t(d.dout_length) > cfg_.geometry.page_total_bytes())
            return "data out of " + std::to_string(d.dout_length) + " bytes from column " +
                   std::to_string(d.column) + " runs past the " +
                   std::to_string(cfg_.geometry.page_total_bytes()) + "-byte page";
    } else if (k.take_cmd(op::kProgram1)) {
        d.op = OpKind::Program;
        for (;;) {
            if (!(e = k.addr(5, a, "80h")).empty()) return e;
            if (!(e = add_row(row_of(a))).empty()) return e;
            uint32_t col = uint32_t(a & 0xFFFF), off = 0, len = 0;
            k.data(Cycle::DataIn, off, len);
            if (col + uint64_t(len) > cfg_.geometry.page_total_bytes())
                return "data in of " + std::to_string(len) + " bytes at column " +
                       std::to_string(col) + " runs past the " +
                       std::to_string(cfg_.geometry.page_total_bytes()) + "-byte page";
            d.din_column[d.n_rows - 1] = col;
            d.din_offset[d.n_rows - 1] = off;
            d.din_length[d.n_rows - 1] = len;
            d.din_bytes += len;
            if (k.take_cmd(op::kProgramMultiPlane)) {
                if (!(e = k.expect_cmd(op::kProgram1, "11h")).empty()) return e;
                continue;
            }
            if (!(e = k.expect_cmd(op::kProgram2, "the program data")).empty()) return e;
            break;
        }
    } else if (k.take_cmd(op::kErase1)) {
        d.op = OpKind::Erase;
        for (;;) {
            if (!(e = k.addr(3, a, "60h")).empty()) return e;
            if (!(e = add_row(uint32_t(a))).empty()) return e;
            if (k.take_cmd(op::kEraseMultiPlane)) {
                if (!(e = k.expect_cmd(op::kErase1, "D1h")).empty()) return e;
                continue;
            }
            if (!(e = k.expect_cmd(op::kErase2, "the block address")).empty()) return e;
            break;
        }
    } else if (k.take_cmd(op::kSetFeatures) || k.take_cmd(op::kGetFeatures)) {
        const bool set = opcode == op::kSetFeatures;
        d.op = set ? OpKind::SetFeatures : OpKind::GetFeatures;
        if (!(e = k.addr(1, a, set ? "EFh" : "EEh")).empty()) return e;
        d.feature = uint8_t(a);
        if (d.feature != feature::kTimingMode && d.feature != feature::kEspFactor)
            return "feature address " + Cursor::hex(d.feature) + " is not supported";
        uint32_t off = 0, len = 0;
        if (!k.data(set ? Cycle::DataIn : Cycle::DataOut, off, len) || len != 4)
            return k.where() + "expected a 4-byte data phase (P1-P4)";
        if (set)
            d.din_offset[0] = off, d.din_length[0] = len, d.din_bytes = len;
        else
            d.dout_offset = off, d.dout_length = len;
    } else if ((opcode & 0xF0) == op::kIscm) {
        k.take_cmd(opcode);
        d.op = OpKind::Mws;
        const uint8_t f = opcode & 0x0F;
        d.flags = SenseFlags{bool(f & iscm::kInverse), bool(f & iscm::kInitS),
                             bool(f & iscm::kInitC), bool(f & iscm::kTransfer)};
        if (d.flags.inverse && !d.flags.init_s)
            return "an inverse read initialises the S-latch, so it needs the S-latch init flag "
                   "(ISCM " +
                   Cursor::hex(uint8_t(op::kIscm | iscm::kInverse | iscm::kInitS)) + ")";
        const int pbm_cycles = int(codec_.pbm_bytes());
        for (;;) {
            uint64_t row = 0, pbm = 0;
            if (!(e = k.addr(3, row, "the ISCM/CONT slot")).empty()) return e;
            if (!(e = k.addr(pbm_cycles, pbm, "the block address (page bitmap)")).empty()) return e;
            if (d.n_slots >= kMaxSlots)
                return "more than " + std::to_string(kMaxSlots) + " block slots";
            uint32_t plane, block, page;
            if (std::string r = codec_.check(uint32_t(row)); !r.empty())
                return "slot " + std::to_string(d.n_slots) + ": " + r;
            codec_.decode(uint32_t(row), plane, block, page);
            if (d.n_slots == 0)
                d.slot_plane = plane;
            else if (plane != d.slot_plane)
                return "slot " + std::to_string(d.n_slots) + ": block " + std::to_string(block) +
                       " is in plane " + std::to_string(plane) + " but slot 0 is in plane " +
                       std::to_string(d.slot_plane) + "; operands must share bitlines";
            if (uint32_t lun = codec_.lun(uint32_t(row)); lun != index_)
                return "slot " + std::to_string(d.n_slots) + ": operand in die " +
                       std::to_string(lun) + " but the command went to die " +
                       std::to_string(index_);
            if (cfg_.geometry.wordlines_per_block < 64 &&
                (pbm >> cfg_.geometry.wordlines_per_block))
                return "slot " + std::to_string(d.n_slots) +
                       ": page bitmap selects wordlines past " +
                       std::to_string(cfg_.geometry.wordlines_per_block - 1);
            d.slots[d.n_slots++] = SenseSlot{block, pbm};
            if (k.take_cmd(op::kCont)) continue;
            if (!(e = k.expect_cmd(op::kConf, "the block address (CONT or CONF)")).empty())
                return e;
            break;
        }
        if (d.n_slots > cfg_.power.mws_max_blocks)
            return std::to_string(d.n_slots) + " block slots exceed the limit of " +
                   std::to_string(cfg_.power.mws_max_blocks) + " (inter-block MWS power cap)";
    } else if (k.take_cmd(op::kXor)) {
        d.op = OpKind::Xor;
        if (!(e = k.addr(3, a, "C5h")).empty()) return e;
        if (!(e = add_row(uint32_t(a))).empty()) return e;
    } else {
        return k.where() + "unknown command " + Cursor::hex(opcode);
    }
    if (!(e = k.finish()).empty()) return e;
    d.bus_cycles = k.cycles();
    if (d.op != OpKind::Mws)
        for (uint32_t i = 0; i < d.n_rows; ++i) {
            if (std::string r = codec_.check(d.rows[i]); !r.empty()) return r;
            if (uint32_t lun = codec_.lun(d.rows[i]); lun != index_)
                return "address in die " + std::to_string(lun) + " but the command went to die " +
                       std::to_string(index_);
        }
    // Multi-plane operations take one address per distinct plane, all at the same wordline (ONFI).
    for (uint32_t i = 0; i < d.n_rows; ++i)
        for (uint32_t j = 0; j < i; ++j) {
            uint32_t pi, pj, bi, bj, wi, wj;
            codec_.decode(d.rows[i], pi, bi, wi);
            codec_.decode(d.rows[j], pj, bj, wj);
            if (pi == pj)
                return "multi-plane operation names plane " + std::to_string(pi) + " twice";
            if (wi != wj && d.op != OpKind::Erase)
                return "multi-plane operation must address the same wordline in every plane (" +
                       std::to_string(wj) + " and " + std::to_string(wi) + ")";
        }
    return {};
}

// The checks that need the die's state or the data-in bytes (the error gets the op name in
// front from execute()).
std::string Die::check(const Decoded& d, const uint8_t* data) const {
    uint32_t plane, block, page;
    switch (d.op) {
        case OpKind::Program:
            for (uint32_t i = 0; i < d.n_rows; ++i) {
                codec_.decode(d.rows[i], plane, block, page);
                if (auto e = planes_[plane]->check_program(block, page, d.mode); !e.empty())
                    return "plane " + std::to_string(plane) + ": " + e;
            }
            return {};
        case OpKind::Mws:
            return planes_[d.slot_plane]->check_sense(d.slots.data(), d.n_slots);
        case OpKind::SetFeatures:
            if (d.feature == feature::kEspFactor && data) {
                const uint8_t p1 = data[d.din_offset[0]];
                if (p1 < 10 || p1 > 40)
                    return "ESP factor P1 = " + std::to_string(p1) +
                           " (tESP/tPROG x 10) is outside 10..40 (1.0x..4.0x)";
            }
            return {};
        default:
            return {};
    }
}

sc_time Die::execute(CommandExt& c, uint8_t* data, uint32_t length, const sc_time& at,
                     uint64_t flow) {
    c.op = OpKind::None;
    c.error.clear();
    c.energy_pj = 0;
    c.array_start_ps = c.array_end_ps = 0;
    c.issue_ps = uint64_t(at.value());
    Decoded d;
    std::string err = decode(c, length, d);
    if (err.empty()) err = check(d, data);
    if (!err.empty()) {
        // Refused: the cycles were on the bus, nothing else happens but the FAIL bit. The
        // controller has sent every command and address cycle and the data-in bytes it had.
        c.op = d.op;
        c.error = "nand " + path_ + ": " +
                  (d.op == OpKind::None ? "" : std::string(op_name(d.op)) + ": ") + err;
        failed_ = true;
        c.status = status_at(at) | status::kFail;
        refused_.add();
        uint32_t cycles = 0;
        uint64_t din = 0;
        for (uint32_t i = 0; i < c.n_cycles; ++i) {
            if (c.cycles[i].kind == Cycle::Cmd || c.cycles[i].kind == Cycle::Addr) ++cycles;
            if (c.cycles[i].kind == Cycle::DataIn) din += c.cycles[i].length;
        }
        auto g = bus_.transfer(at, cycles, std::min<uint64_t>(din, length), SC_ZERO_TIME, false);
        c.done_ps = uint64_t(g.end.value());
        return g.end;
    }
    c.op = d.op;
    run(c, d, data, at, flow);
    c.status = status_at(sc_time::from_value(c.done_ps));
    return sc_time::from_value(c.done_ps);
}

void Die::run(CommandExt& c, Decoded& d, uint8_t* data, const sc_time& at, uint64_t flow) {
    const auto& T = cfg_.timing;
    const auto& P = cfg_.power;
    const bool functional = cfg_.functional;
    const double now_s = at.to_seconds();
    double array_us = 0, power_mw = P.p_read_mw;
    std::vector<core::TransactionTrace::Arg> args;
    const bool tracing = services_.trace.enabled();
    uint32_t plane = 0, block = 0, page = 0;
    if (d.n_rows) codec_.decode(d.rows[0], plane, block, page);

    // Work done now, in call order; its timing is booked below.
    switch (d.op) {
        case OpKind::Reset:
            array_us = T.t_reset_us;
            failed_ = false;
            break;
        case OpKind::ReadStatus:
            break;
        case OpKind::Read:
        case OpKind::CacheRead: {
            for (uint32_t i = 0; i < d.n_rows; ++i) {
                uint32_t pl, b, w;
                codec_.decode(d.rows[i], pl, b, w);
                const PageState* ps = planes_[pl]->page(b, w);
                array_us = std::max(array_us, read_time_us(ps ? ps->mode : CellMode::Slc));
                SenseSlot slot{b, 1ull << w};
                SenseFlags f;
                if (d.op == OpKind::CacheRead) {
                    // The page sensed before moves to the cache latch, then the new one is sensed.
                    planes_[pl]->cache_from_sense();
                    f = SenseFlags{false, true, false, false};
                }
                auto r =
                    planes_[pl]->sense(&slot, 1, f, now_s, rng_, cfg_.reliability.inject_errors);
                bits_sensed_.add(r.bits_sensed), bit_errors_.add(r.bit_errors),
                    wordlines_sensed_.add(1);
            }
            last_plane_ = plane;
            if (d.op == OpKind::CacheRead) array_us += T.t_cache_busy_us;
            break;
        }
        case OpKind::CacheReadEnd: {
            planes_[last_plane_]->cache_from_sense();
            array_us = T.t_cache_busy_us;
            break;
        }
        case OpKind::DataOut: {
            const Plane& p = *planes_[d.explicit_plane ? plane : last_plane_];
            if (functional && data)
                c.flips_known = p.data_out(d.column, data + d.dout_offset, d.dout_length, &c.flips);
            break;
        }
        case OpKind::Program: {
            double t_prog = d.mode == CellMode::Slc   ? T.t_prog_slc_us
                            : d.mode == CellMode::Mlc ? T.t_prog_mlc_us
                            : d.mode == CellMode::Tlc ? T.t_prog_tlc_us
                                                      : esp_factor() * T.t_prog_slc_us;
            array_us = t_prog;
            power_mw *= P.prog_vs_read;
            for (uint32_t i = 0; i < d.n_rows; ++i) {
                uint32_t pl, b, w;
                codec_.decode(d.rows[i], pl, b, w);
                Plane& p = *planes_[pl];
                p.load_begin();
                if (functional && data && d.din_length[i])
                    p.data_in(d.din_column[i], data + d.din_offset[i], d.din_length[i]);
                p.program(b, w, d.mode, d.scramble, esp_factor(), now_s);
            }
            break;
        }
        case OpKind::Erase:
            array_us = T.t_erase_us;
            power_mw *= P.erase_vs_read;
            for (uint32_t i = 0; i < d.n_rows; ++i) {
                uint32_t pl, b, w;
                codec_.decode(d.rows[i], pl, b, w);
                planes_[pl]->erase(b);
            }
            break;
        case OpKind::SetFeatures:
            array_us = T.t_feature_us;
            if (data) std::memcpy(features_[d.feature].data(), data + d.din_offset[0], 4);
            break;
        case OpKind::GetFeatures:
            array_us = T.t_feature_us;
            if (data) std::memcpy(data + d.dout_offset, features_[d.feature].data(), 4);
            break;
        case OpKind::Mws: {
            Plane& p = *planes_[d.slot_plane];
            uint32_t max_wl = 0;
            CellMode slowest = CellMode::Slc;
            for (size_t i = 0; i < d.n_slots; ++i) {
                max_wl = std::max<uint32_t>(max_wl, uint32_t(__builtin_popcountll(d.slots[i].pbm)));
                if (const BlockState* bs = p.block(d.slots[i].block))
                    for (uint64_t m = d.slots[i].pbm; m; m &= m - 1)
                        if (read_time_us(bs->pages[__builtin_ctzll(m)].mode) >
                            read_time_us(slowest))
                            slowest = bs->pages[__builtin_ctzll(m)].mode;
            }
            const uint32_t wpb = cfg_.geometry.wordlines_per_block;
            array_us =
                read_time_us(slowest) *
                (T.mws_fixed_latency ? mws_latency_factor(T, wpb, P.mws_max_blocks, wpb)
                                     : mws_latency_factor(T, max_wl, uint32_t(d.n_slots), wpb));
            power_mw *= mws_power_factor(P, max_wl, uint32_t(d.n_slots), wpb);
            auto r = p.sense(d.slots.data(), d.n_slots, d.flags, now_s, rng_,
                             cfg_.reliability.inject_errors);
            bits_sensed_.add(r.bits_sensed), bit_errors_.add(r.bit_errors),
                wordlines_sensed_.add(r.wordlines);
            last_plane_ = d.slot_plane;
            if (tracing) {
                args.push_back({"blocks", std::to_string(d.n_slots)});
                args.push_back({"wordlines", std::to_string(r.wordlines)});
            }
            break;
        }
        case OpKind::Xor:
            array_us = T.t_xor_us;
            planes_[plane]->xor_latches();
            last_plane_ = plane;
            break;
        default:
            break;
    }
    // FAIL reports the last operation (refused ones set it in execute); status reads leave it.
    if (d.op != OpKind::ReadStatus) failed_ = false;

    // Timing: bus phase, then the array, then any data out.
    const sc_time wb(T.t_wb_ns, SC_NS), ccs(T.t_ccs_ns, SC_NS), whr(T.t_whr_ns, SC_NS);
    sc_time done;
    const uint64_t dout = d.dout_length;
    if (d.op == OpKind::ReadStatus) {
        auto g = bus_.transfer(at, d.bus_cycles, dout, dout ? whr : SC_ZERO_TIME, true);
        if (data && dout) data[d.dout_offset] = status_at(g.start);
        done = g.end;
    } else if (d.op == OpKind::DataOut) {
        auto g = bus_.transfer(std::max(at, cache_ready_), d.bus_cycles, dout, ccs, true);
        done = g.end;
        if (tracing)
            services_.trace.complete(bus_.track(), "DATA_OUT", "nand", g.start, g.end - g.start,
                                     flow, {{"die", path_}, {"bytes", std::to_string(dout)}});
    } else {
        sc_time ready = std::max({at, array_.free_at(), cache_ready_});
        auto g_bus = bus_.transfer(ready, d.bus_cycles, d.din_bytes, SC_ZERO_TIME, false);
        auto g_arr = array_.reserve(g_bus.end + wb, sc_time(array_us, SC_US));
        state_probe_.set(uint8_t(d.op), g_arr.start);
        state_probe_.set(0, g_arr.end);
        done = g_arr.end;
        c.array_start_ps = uint64_t(g_arr.start.value());
        c.array_end_ps = uint64_t(g_arr.end.value());
        cache_ready_ =
            d.op == OpKind::CacheRead ? g_arr.start + sc_time(T.t_cache_busy_us, SC_US) : g_arr.end;
        if (d.op == OpKind::CacheRead) done = cache_ready_;
        if (dout) {  // GET FEATURES returns its parameters once the die is ready
            auto g = bus_.transfer(g_arr.end, 0, dout, ccs, true);
            done = g.end;
        }
        c.energy_pj += power_mw * array_us * 1e3;  // mW x us = nJ = 1e3 pJ
        if (tracing) {
            if (d.n_rows && d.op != OpKind::Mws)
                args.push_back({"row", core::TransactionTrace::hex(d.rows[0])});
            args.push_back({"cycles", std::to_string(d.bus_cycles)});
            services_.trace.complete(bus_.track(), op_name(d.op), "nand", g_bus.start,
                                     g_bus.end - g_bus.start, flow, {{"die", path_}});
            services_.trace.complete(track_, op_name(d.op), "nand", g_arr.start,
                                     g_arr.end - g_arr.start, flow, args);
        }
    }
    c.energy_pj += P.io_pj_per_byte * double(d.bus_cycles + d.din_bytes + dout);
    energy_uj_.add(c.energy_pj * 1e-6);
    c.done_ps = uint64_t(done.value());
    account(d.op, at, done);
}

void Die::account(OpKind op, const sc_time& issue, const sc_time& done) {
    const size_t i = size_t(op);
    if (!op_count_[i]) {
        std::string n = op_name(op);
        for (auto& ch : n) ch = char(std::tolower(ch));
        op_count_[i] =
            &services_.stats.counter(name(), "cmd." + n, std::string(op_name(op)) + " commands");
        op_latency_[i] = &services_.stats.distribution(
            name(), "latency." + n, "us", std::string(op_name(op)) + " issue-to-ready latency");
    }
    op_count_[i]->add();
    op_latency_[i]->sample((done - issue).to_seconds() * 1e6);
}

}  // namespace canopy::nand
