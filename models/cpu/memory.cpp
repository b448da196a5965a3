#include "cpu/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace canopy::cpu {

void MemoryConfig::describe(core::Params& p) {
    p("size_bytes", size_bytes, "B", "size of the region [Willow Sec. 3: 32 KiB]", 4,
      uint64_t(1) << 32);
    p("latency_ns", latency_ns, "ns",
      "access latency beyond the core's CPI [assumed: single-cycle SRAM]", 0.0, 1e6);
    p("read_only", read_only, "a ROM: stores fail with an access fault");
}

void Memory::Free::operator()(uint8_t* p) const { std::free(p); }

Memory::Memory(sc_core::sc_module_name name, const MemoryConfig& cfg, core::Services& services)
    : sc_module(name),
      socket("socket"),
      cfg_(cfg),
      latency_(cfg.latency_ns, sc_core::SC_NS),
      reads_(services.stats.counter(this->name(), "reads",
                                    "reads through b_transport (DMI reads are not seen)")),
      writes_(services.stats.counter(this->name(), "writes",
                                     "writes through b_transport (DMI writes are not seen)")),
      errors_(services.stats.counter(
          this->name(), "errors", "accesses refused (out of range, write to ROM, bad payload)")) {
    // calloc: zeroed, and large regions get their pages from the OS only when touched.
    mem_.reset(
        static_cast<uint8_t*>(std::calloc(size_t(std::max<uint64_t>(cfg_.size_bytes, 1)), 1)));
    if (!mem_) throw std::bad_alloc();
    socket.register_b_transport(this, &Memory::b_transport);
    socket.register_transport_dbg(this, &Memory::transport_dbg);
    socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
}

static MemoryConfig sized(uint64_t size) {
    MemoryConfig c;
    c.size_bytes = size;
    return c;
}

Memory::Memory(sc_core::sc_module_name name, uint64_t size_bytes, core::Services& services)
    : Memory(name, sized(size_bytes), services) {}

Memory::~Memory() = default;

static void check_range(const Memory& m, uint64_t offset, uint64_t len) {
    if (offset > m.size() || len > m.size() - offset)
        throw std::out_of_range(std::string(m.name()) + ": [" + std::to_string(offset) + ", +" +
                                std::to_string(len) + ") is outside its " +
                                std::to_string(m.size()) + " bytes");
}

void Memory::write(uint64_t offset, const uint8_t* bytes, uint64_t len) {
    check_range(*this, offset, len);
    if (len) std::memcpy(mem_.get() + offset, bytes, len);
}

void Memory::read(uint64_t offset, uint8_t* bytes, uint64_t len) const {
    check_range(*this, offset, len);
    if (len) std::memcpy(bytes, mem_.get() + offset, len);
}

void Memory::revoke_dmi() { socket->invalidate_direct_mem_ptr(0, cfg_.size_bytes - 1); }

void Memory::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const uint64_t addr = gp.get_address(), len = gp.get_data_length();
    const bool write = gp.is_write();
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    if (addr >= cfg_.size_bytes || len > cfg_.size_bytes - addr) {
        errors_.add();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (gp.get_streaming_width() < len) {
        errors_.add();
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    if (write && cfg_.read_only) {
        errors_.add();
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    uint8_t* p = mem_.get() + addr;
    const uint8_t* be = gp.get_byte_enable_ptr();
    const unsigned be_len = gp.get_byte_enable_length();
    if (write) {
        if (!be)
            std::memcpy(p, gp.get_data_ptr(), len);
        else
            for (uint64_t i = 0; i < len; ++i)
                if (be[i % be_len] == TLM_BYTE_ENABLED) p[i] = gp.get_data_ptr()[i];
        writes_.add();
    } else {
        if (!be)
            std::memcpy(gp.get_data_ptr(), p, len);
        else
            for (uint64_t i = 0; i < len; ++i)
                if (be[i % be_len] == TLM_BYTE_ENABLED) gp.get_data_ptr()[i] = p[i];
        reads_.add();
    }
    delay += latency_;
    gp.set_dmi_allowed(true);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned Memory::transport_dbg(tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address();
    if (addr >= cfg_.size_bytes) return 0;
    const uint64_t n = std::min<uint64_t>(gp.get_data_length(), cfg_.size_bytes - addr);
    if (gp.is_write())
        std::memcpy(mem_.get() + addr, gp.get_data_ptr(), n);  // loads a ROM too
    else if (gp.is_read())
        std::memcpy(gp.get_data_ptr(), mem_.get() + addr, n);
    else
        return 0;
    return unsigned(n);
}

bool Memory::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    if (gp.get_address() >= cfg_.size_bytes) {
        dmi.set_start_address(cfg_.size_bytes);
        dmi.set_end_address(~sc_dt::uint64(0));
        dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
        return false;
    }
    dmi.set_dmi_ptr(mem_.get());
    dmi.set_start_address(0);
    dmi.set_end_address(cfg_.size_bytes - 1);
    dmi.set_granted_access(cfg_.read_only ? tlm::tlm_dmi::DMI_ACCESS_READ
                                          : tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
    dmi.set_read_latency(latency_);
    dmi.set_write_latency(latency_);
    return true;
}

}  // namespace canopy::cpu
