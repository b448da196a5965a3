#include "ssd/ssd_dram.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

namespace canopy::ssd {

using sc_core::SC_NS;
using sc_core::sc_time;

void SsdDramConfig::describe(core::Params& p) {
    p("size_mib", size_mib, "MiB", "capacity (sparse) [assumed]", 1, uint64_t(1) << 20);
    p("banks", banks, "", "equal banks; bank i is SPU i's local store [Willow 3.1]", 1, 256);
    p("read_latency_ns", read_latency_ns, "ns", "read latency [Willow 3.2: PCM emulation, 48 ns]",
      0.0, 1e6);
    p("write_latency_ns", write_latency_ns, "ns",
      "write latency [Willow 3.2: PCM emulation, 150 ns]", 0.0, 1e6);
    p("bank_gbps", bank_gbps, "GB/s",
      "streaming rate of one bank [Willow 3.2: DDR2-800 x64 shared by two SPUs]", 0.001, 1e4);
}

void SsdDram::Free::operator()(uint8_t* p) const { std::free(p); }

SsdDram::SsdDram(sc_core::sc_module_name name, const SsdDramConfig& cfg, core::Services& services)
    : sc_module(name),
      socket("socket"),
      cfg_(cfg),
      size_(cfg.size_mib << 20),
      bank_bytes_(cfg.banks ? size_ / cfg.banks : 0),
      reads_(services.stats.counter(this->name(), "reads", "reads (DMA bursts)")),
      writes_(services.stats.counter(this->name(), "writes", "writes (DMA bursts)")),
      errors_(services.stats.counter(this->name(), "errors", "accesses refused (out of range)")),
      read_bytes_(services.stats.sum(this->name(), "read_bytes", "B", "bytes read")),
      write_bytes_(services.stats.sum(this->name(), "write_bytes", "B", "bytes written")) {
    if (cfg.banks == 0 || size_ % cfg.banks != 0)
        throw InputError("config", "ssd.dram",
                         "size_mib (" + std::to_string(cfg.size_mib) +
                             " MiB) must divide into ssd.dram.banks (" + std::to_string(cfg.banks) +
                             ") equal banks");
    mem_.reset(static_cast<uint8_t*>(std::calloc(size_t(size_), 1)));
    if (!mem_) throw std::bad_alloc();
    for (uint32_t b = 0; b < cfg.banks; ++b)
        banks_.emplace_back(&services.stats.occupancy(this->name(), "bank" + std::to_string(b),
                                                      "bank busy with bursts, and the queueing"));
    socket.register_b_transport(this, &SsdDram::b_transport);
    socket.register_transport_dbg(this, &SsdDram::transport_dbg);
}

void SsdDram::write(uint64_t addr, const uint8_t* bytes, uint64_t len) {
    if (!in_range(addr, len))
        throw std::out_of_range(std::string(name()) + ": write outside " + std::to_string(size_) +
                                " bytes at " + std::to_string(addr));
    std::memcpy(mem_.get() + addr, bytes, len);
}

void SsdDram::read(uint64_t addr, uint8_t* bytes, uint64_t len) const {
    if (!in_range(addr, len))
        throw std::out_of_range(std::string(name()) + ": read outside " + std::to_string(size_) +
                                " bytes at " + std::to_string(addr));
    std::memcpy(bytes, mem_.get() + addr, len);
}

void SsdDram::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    const uint64_t addr = gp.get_address(), len = gp.get_data_length();
    const bool write = gp.is_write();
    if (gp.get_byte_enable_ptr() || !in_range(addr, len) || len == 0 || (!write && !gp.is_read())) {
        errors_.add();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    // A burst occupies the bank of its first byte for its streaming time (bursts are cut by the
    // DMA controller well below a bank's size); the latency follows the grant.
    const sc_time at = sc_core::sc_time_stamp() + delay;
    const sc_time stream(double(len) / cfg_.bank_gbps, SC_NS);
    const auto grant = banks_[addr / bank_bytes_].reserve(at, stream);
    const double latency = write ? cfg_.write_latency_ns : cfg_.read_latency_ns;
    delay = grant.end - sc_core::sc_time_stamp() + sc_time(latency, SC_NS);
    if (write) {
        std::memcpy(mem_.get() + addr, gp.get_data_ptr(), len);
        writes_.add(), write_bytes_.add(double(len));
    } else {
        std::memcpy(gp.get_data_ptr(), mem_.get() + addr, len);
        reads_.add(), read_bytes_.add(double(len));
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned SsdDram::transport_dbg(tlm::tlm_generic_payload& gp) {
    const uint64_t addr = gp.get_address(), len = gp.get_data_length();
    if (!in_range(addr, len)) return 0;
    if (gp.is_write())
        std::memcpy(mem_.get() + addr, gp.get_data_ptr(), len);
    else
        std::memcpy(gp.get_data_ptr(), mem_.get() + addr, len);
    return unsigned(len);
}

}  // namespace canopy::ssd
