#include "host/host_memory.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace canopy::host {

using sc_core::SC_NS;
using sc_core::sc_time;

void HostMemoryConfig::describe(core::Params& p) {
    p("size_bytes", size_bytes, "B", "host DRAM size (assumed 4 GiB)", 1 << 20, 1ull << 48);
    p("latency_ns", latency_ns, "ns",
      "one host DRAM access past the system cache (assumed; with the IOMMU's processing it "
      "gives the 617 ns ATS answer, seeds/003 Sec. IV)",
      0.0, 1e6);
}

HostMemory::HostMemory(sc_core::sc_module_name name, const HostMemoryConfig& cfg,
                       core::Services& services)
    : sc_module(name),
      socket("socket"),
      cfg_(cfg),
      reads_(services.stats.counter(this->name(), "reads", "timed read transactions")),
      writes_(services.stats.counter(this->name(), "writes", "timed write transactions")),
      errors_(services.stats.counter(this->name(), "address_errors",
                                     "transactions beyond the end of host memory")),
      dmi_grants_(services.stats.counter(this->name(), "dmi_grants", "DMI chunks granted")) {
    socket.register_b_transport(this, &HostMemory::b_transport);
    socket.register_transport_dbg(this, &HostMemory::transport_dbg);
    socket.register_get_direct_mem_ptr(this, &HostMemory::get_direct_mem_ptr);
}

void HostMemory::check(uint64_t addr, uint64_t len) const {
    if (addr > cfg_.size_bytes || len > cfg_.size_bytes - addr)
        throw std::out_of_range("host memory: access of " + std::to_string(len) + " B at " +
                                std::to_string(addr) + " beyond its " +
                                std::to_string(cfg_.size_bytes) + " B");
}

uint8_t* HostMemory::chunk(uint64_t index, bool create) {
    auto it = chunks_.find(index);
    if (it != chunks_.end()) return it->second.get();
    if (!create) return nullptr;
    auto& c = chunks_[index];
    c.reset(new uint8_t[kChunkBytes]());  // value-initialised: zeros
    return c.get();
}

const uint8_t* HostMemory::chunk(uint64_t index) const {
    auto it = chunks_.find(index);
    return it == chunks_.end() ? nullptr : it->second.get();
}

void HostMemory::write(uint64_t addr, const uint8_t* bytes, uint64_t len) {
    check(addr, len);
    while (len > 0) {
        uint64_t off = addr % kChunkBytes, n = std::min(len, kChunkBytes - off);
        std::memcpy(chunk(addr / kChunkBytes, true) + off, bytes, n);
        addr += n, bytes += n, len -= n;
    }
}

void HostMemory::read(uint64_t addr, uint8_t* bytes, uint64_t len) const {
    check(addr, len);
    while (len > 0) {
        uint64_t off = addr % kChunkBytes, n = std::min(len, kChunkBytes - off);
        const uint8_t* c = chunk(addr / kChunkBytes);
        if (c)
            std::memcpy(bytes, c + off, n);
        else
            std::memset(bytes, 0, n);
        addr += n, bytes += n, len -= n;
    }
}

uint64_t HostMemory::read64(uint64_t addr) const {
    uint8_t b[8];
    read(addr, b, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];  // little-endian, as the Arm host
    return v;
}

void HostMemory::write64(uint64_t addr, uint64_t value) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = uint8_t(value >> (8 * i));
    write(addr, b, 8);
}

void HostMemory::zero(uint64_t addr, uint64_t len) {
    check(addr, len);
    while (len > 0) {
        uint64_t off = addr % kChunkBytes, n = std::min(len, kChunkBytes - off);
        // Chunks stay allocated: a DMI pointer to them may be out.
        if (uint8_t* c = chunk(addr / kChunkBytes, false)) std::memset(c + off, 0, n);
        addr += n, len -= n;
    }
}

bool HostMemory::access(tlm::tlm_generic_payload& gp) {
    uint64_t addr = gp.get_address(), len = gp.get_data_length();
    if (gp.get_byte_enable_ptr() || gp.get_streaming_width() < len) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return false;
    }
    if (addr > cfg_.size_bytes || len > cfg_.size_bytes - addr) {
        errors_.add();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (gp.is_read())
        read(addr, gp.get_data_ptr(), len);
    else if (gp.is_write())
        write(addr, gp.get_data_ptr(), len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return true;
}

void HostMemory::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    if (!access(gp)) return;
    if (gp.is_read()) reads_.add();
    if (gp.is_write()) writes_.add();
    delay += sc_time(cfg_.latency_ns, SC_NS);
    gp.set_dmi_allowed(chunk(gp.get_address() / kChunkBytes) != nullptr);
}

unsigned HostMemory::transport_dbg(tlm::tlm_generic_payload& gp) {
    return access(gp) ? gp.get_data_length() : 0;
}

bool HostMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    uint64_t addr = gp.get_address(), index = addr / kChunkBytes;
    uint8_t* c = addr < cfg_.size_bytes ? chunk(index, false) : nullptr;
    if (!c) {
        // Untouched (or out of range): no pointer; the region granted is nothing.
        dmi.allow_none();
        dmi.set_start_address(addr);
        dmi.set_end_address(addr);
        return false;
    }
    dmi.set_dmi_ptr(c);
    dmi.set_start_address(index * kChunkBytes);
    dmi.set_end_address(std::min(cfg_.size_bytes, (index + 1) * kChunkBytes) - 1);
    dmi.allow_read_write();
    dmi.set_read_latency(sc_time(cfg_.latency_ns, SC_NS));
    dmi.set_write_latency(sc_time(cfg_.latency_ns, SC_NS));
    dmi_grants_.add();
    return true;
}

}  // namespace canopy::host
