#include "cpu_harness.hpp"

#include <cstring>

namespace canopy::cpu::test {

// --- assembler -------------------------------------------------------------------------------

Asm& Asm::label(const std::string& name) {
    EXPECT_TRUE(labels_.emplace(name, pc()).second) << "label " << name << " defined twice";
    return *this;
}

uint32_t Asm::addr(const std::string& name) const {
    auto it = labels_.find(name);
    EXPECT_TRUE(it != labels_.end()) << "no label " << name;
    return it == labels_.end() ? 0 : it->second;
}

Asm& Asm::branch(uint32_t f3, uint32_t a, uint32_t b, const std::string& l) {
    fixups_.push_back({words_.size(), l, Fix::Branch});
    return (*this)(enc::b(0, b, a, f3));
}

Asm& Asm::jal(uint32_t rd, const std::string& l) {
    fixups_.push_back({words_.size(), l, Fix::Jal});
    return (*this)(enc::j(0, rd));
}

Asm& Asm::li(uint32_t rd, uint32_t value) {
    // addi sign-extends its 12 bits: round the upper part so that the sum is exact.
    const uint32_t hi = (value + 0x800) >> 12, lo = value & 0xfff;
    (*this)(lui(rd, hi));
    return (*this)(addi(rd, rd, int32_t(lo << 20) >> 20));
}

Asm& Asm::la(uint32_t rd, const std::string& l) {
    fixups_.push_back({words_.size(), l, Fix::Hi});
    (*this)(lui(rd, 0));
    fixups_.push_back({words_.size(), l, Fix::Lo});
    return (*this)(addi(rd, rd, 0));
}

Asm& Asm::set_mtvec(const std::string& l, uint32_t mode) {
    la(t6, l);
    if (mode) (*this)(ori(t6, t6, int32_t(mode)));
    return csrw(csrn::mtvec, t6);
}

Asm& Asm::exit(uint32_t r) {
    li(t6, SPU_EXIT_BASE + SPU_EXIT_CODE);
    return (*this)(sw(r, t6, 0));
}

Asm& Asm::puts(const std::string& text) {
    li(t5, SPU_CONSOLE_BASE + SPU_CONSOLE_TX);
    for (char c : text) {
        (*this)(addi(t4, zero, int32_t(uint8_t(c))));
        (*this)(sb(t4, t5, 0));
    }
    return *this;
}

std::vector<uint32_t> Asm::words() const {
    std::vector<uint32_t> w = words_;
    for (const auto& f : fixups_) {
        const uint32_t target = addr(f.label), here = base_ + 4 * uint32_t(f.index);
        const int32_t off = int32_t(target - here);
        uint32_t& word = w[f.index];
        switch (f.kind) {
            case Fix::Branch:
                word = enc::b(off, (word >> 20) & 31, (word >> 15) & 31, (word >> 12) & 7);
                break;
            case Fix::Jal:
                word = enc::j(off, (word >> 7) & 31);
                break;
            case Fix::Hi:
                word = lui((word >> 7) & 31, (target + 0x800) >> 12);
                break;
            case Fix::Lo:
                word = addi((word >> 7) & 31, (word >> 15) & 31,
                            int32_t((target & 0xfff) << 20) >> 20);
                break;
        }
    }
    return w;
}

// --- machine ---------------------------------------------------------------------------------

MemoryConfig sized(uint64_t bytes, double latency_ns, bool read_only) {
    MemoryConfig c;
    c.size_bytes = bytes;
    c.latency_ns = latency_ns;
    c.read_only = read_only;
    return c;
}

static std::vector<Router::Mapping> spu_map() {
    return {{"imem", SPU_IMEM_BASE, SPU_IMEM_SIZE},
            {"dmem", SPU_DMEM_BASE, SPU_DMEM_SIZE},
            {"clint", SPU_CLINT_BASE, SPU_CLINT_SIZE},
            {"console", SPU_CONSOLE_BASE, SPU_CONSOLE_SIZE},
            {"exit", SPU_EXIT_BASE, SPU_EXIT_SIZE}};
}

Machine::Machine(sc_core::sc_module_name name, const CoreConfig& cfg, core::Services& services,
                 std::ostream& console_out, const MemoryConfig& imem_cfg,
                 const MemoryConfig& dmem_cfg)
    : sc_module(name),
      core("core", cfg, services),
      bus("bus", spu_map()),
      imem("imem", imem_cfg, services),
      dmem("dmem", dmem_cfg, services),
      clint("clint", services),
      console("console", services, core.name(), console_out),
      exit("exit", services) {
    core.bus.bind(bus.target);
    bus.port[0].bind(imem.socket);
    bus.port[1].bind(dmem.socket);
    bus.port[2].bind(clint.socket);
    bus.port[3].bind(console.socket);
    bus.port[4].bind(exit.socket);
    clint.connect(core);
    exit.on_exit([this](uint32_t code) {
        core.notify_exit(code);
        sc_core::sc_stop();
    });
}

Timeline::Timeline(sc_core::sc_module_name name) : sc_module(name) { SC_THREAD(run); }

void Timeline::run() {
    for (const auto& s : plan_) {
        if (s.t > sc_core::sc_time_stamp()) wait(s.t - sc_core::sc_time_stamp());
        s.action();
    }
}

// --- fixture ---------------------------------------------------------------------------------

Machine& CpuTest::build(const CoreConfig& cfg, const std::string& name, const MemoryConfig& imem,
                        const MemoryConfig& dmem) {
    m = std::make_unique<Machine>(name.c_str(), cfg, services, console_out, imem, dmem);
    m->core.on_trap([this](uint32_t c, uint32_t v, uint32_t e) { traps.push_back({c, v, e}); });
    return *m;
}

Timeline& CpuTest::timeline() {
    if (!timeline_) timeline_ = std::make_unique<Timeline>("timeline");
    return *timeline_;
}

void CpuTest::load_words(uint32_t addr, const std::vector<uint32_t>& words) {
    Memory& mem = addr >= SPU_DMEM_BASE ? m->dmem : m->imem;
    const uint32_t base = addr >= SPU_DMEM_BASE ? SPU_DMEM_BASE : SPU_IMEM_BASE;
    mem.write(addr - base, reinterpret_cast<const uint8_t*>(words.data()), 4 * words.size());
}

void CpuTest::load(const Asm& a) { load_words(a.base(), a.words()); }

void CpuTest::run(const sc_core::sc_time& limit) {
    if (sc_core::sc_get_status() == sc_core::SC_STOPPED) return;
    sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);  // a stopped core does not move time
}

bool CpuTest::run_program(const Asm& a, const CoreConfig& cfg) {
    build(cfg);
    load(a);
    run();
    return exited();
}

uint32_t CpuTest::dmem_word(uint32_t addr) const {
    uint32_t v = 0;
    m->dmem.read(addr - SPU_DMEM_BASE, reinterpret_cast<uint8_t*>(&v), 4);
    return v;
}

uint64_t CpuTest::stat(const std::string& module, const std::string& name) const {
    const auto* s = dynamic_cast<const core::Counter*>(services.stats.find(module, name));
    EXPECT_NE(s, nullptr) << "no counter " << module << " " << name;
    return s ? s->value() : 0;
}

std::string CpuTest::trap_log() const {
    std::ostringstream s;
    for (const auto& t : traps)
        s << std::hex << "trap mcause=0x" << t.mcause << " mtval=0x" << t.mtval << " epc=0x"
          << t.epc << "\n";
    return s.str();
}

}  // namespace canopy::cpu::test
