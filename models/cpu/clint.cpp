#include "cpu/clint.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "cpu/spu_map.h"

namespace canopy::cpu {

Clint::Clint(sc_core::sc_module_name name, core::Services& services, uint32_t harts,
             double mtime_hz)
    : sc_module(name),
      socket("socket"),
      harts_(std::max<uint32_t>(harts, 1)),
      period_(std::max<uint64_t>(
          1,
          sc_core::sc_time(1.0 / (mtime_hz > 0 ? mtime_hz : double(SPU_MTIME_HZ)), sc_core::SC_SEC)
              .value())),
      timer_irqs_(services.stats.counter(this->name(), "timer_interrupts", "MTIP rising edges")),
      soft_irqs_(services.stats.counter(this->name(), "software_interrupts", "MSIP rising edges")) {
    socket.register_b_transport(this, &Clint::b_transport);
    socket.register_transport_dbg(this, &Clint::transport_dbg);
    SC_METHOD(on_timer);
    sensitive << timer_event_;
    dont_initialize();
}

void Clint::on_irq(std::function<void(uint32_t, unsigned, bool)> cb) { irq_ = std::move(cb); }

void Clint::connect(Rv32Core& core, uint32_t hart) {
    if (hart >= harts_.size())
        throw std::out_of_range(std::string(name()) + ": no hart " + std::to_string(hart));
    if (cores_.size() < harts_.size()) cores_.resize(harts_.size(), nullptr);
    cores_[hart] = &core;
    core.set_time_source([this](const sc_core::sc_time& t) { return mtime_at(t); });
}

uint64_t Clint::mtime_at(const sc_core::sc_time& t) const {
    return uint64_t(int64_t(t.value() / period_) + mtime_offset_);
}

void Clint::drive(uint32_t hart, unsigned bit, bool& line, bool level) {
    if (line == level) return;
    line = level;
    if (level) (bit == 7 ? timer_irqs_ : soft_irqs_).add();
    if (irq_) irq_(hart, bit, level);
    if (hart < cores_.size() && cores_[hart]) cores_[hart]->set_irq(bit, level);
}

void Clint::update_timers(const sc_core::sc_time& at) {
    const uint64_t now_mtime = mtime_at(at);
    uint64_t next = ~uint64_t(0);  // earliest future compare, in ticks
    for (uint32_t h = 0; h < harts_.size(); ++h) {
        Hart& s = harts_[h];
        drive(h, 7, s.mtip, now_mtime >= s.mtimecmp);
        if (s.mtimecmp > now_mtime) {
            // mtime reaches mtimecmp at tick (mtimecmp - offset) * period, if that is
            // representable.
            const int64_t count = int64_t(s.mtimecmp) - mtime_offset_;
            if (s.mtimecmp != ~uint64_t(0) && count > 0 &&
                uint64_t(count) <= ~uint64_t(0) / period_)
                next = std::min(next, uint64_t(count) * period_);
        }
    }
    timer_event_.cancel();
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (next != ~uint64_t(0))
        timer_event_.notify(next > now ? sc_core::sc_time::from_value(next - now)
                                       : sc_core::SC_ZERO_TIME);
}

void Clint::on_timer() { update_timers(sc_core::sc_time_stamp()); }

bool Clint::access(uint64_t off, bool write, uint8_t* data, unsigned len,
                   const sc_core::sc_time& at) {
    if ((len != 4 && len != 8) || (off % len) != 0) return false;
    uint64_t* reg = nullptr;
    uint64_t value = 0;
    enum { None, Msip, Cmp, Time } kind = None;
    uint32_t hart = 0;
    uint64_t base = off;
    if (off < SPU_CLINT_MTIMECMP && off / 4 < harts_.size() && len == 4) {
        kind = Msip, hart = uint32_t(off / 4), value = harts_[hart].msip, base = off;
    } else if (off >= SPU_CLINT_MTIMECMP && off < SPU_CLINT_MTIME &&
               (off - SPU_CLINT_MTIMECMP) / 8 < harts_.size()) {
        kind = Cmp, hart = uint32_t((off - SPU_CLINT_MTIMECMP) / 8);
        reg = &harts_[hart].mtimecmp, value = *reg, base = SPU_CLINT_MTIMECMP + 8 * hart;
    } else if (off >= SPU_CLINT_MTIME && off < SPU_CLINT_MTIME + 8) {
        kind = Time, value = mtime_at(at), base = SPU_CLINT_MTIME;
    }
    if (kind == None) return false;
    const unsigned shift = unsigned(off - base) * 8;  // 0, or 32 for the high word
    if (!write) {
        const uint64_t v = value >> shift;
        std::memcpy(data, &v, len);
        return true;
    }
    uint64_t in = 0;
    std::memcpy(&in, data, len);
    const uint64_t mask = len == 8 ? ~uint64_t(0) : (uint64_t(0xffffffffu) << shift);
    const uint64_t v = (value & ~mask) | ((in << shift) & mask);
    switch (kind) {
        case Msip:
            drive(hart, 3, harts_[hart].msip, (v & 1) != 0);
            break;
        case Cmp:
            *reg = v;
            update_timers(at);
            break;
        case Time:
            mtime_offset_ = int64_t(v) - int64_t(at.value() / period_);
            update_timers(at);
            break;
        case None:
            break;
    }
    return true;
}

void Clint::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (gp.get_byte_enable_ptr() || gp.get_streaming_width() < gp.get_data_length() ||
        !access(gp.get_address(), gp.is_write(), gp.get_data_ptr(), gp.get_data_length(),
                sc_core::sc_time_stamp() + delay)) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned Clint::transport_dbg(tlm::tlm_generic_payload& gp) {
    // Debug reads only: a debugger peeking must not raise interrupts.
    if (!gp.is_read()) return 0;
    return access(gp.get_address(), false, gp.get_data_ptr(), gp.get_data_length(),
                  sc_core::sc_time_stamp())
               ? gp.get_data_length()
               : 0;
}

}  // namespace canopy::cpu
