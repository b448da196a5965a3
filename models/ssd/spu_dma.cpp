#include "ssd/spu_dma.hpp"

#include <algorithm>
#include <vector>

#include "core/payload.hpp"
#include "core/sim_time.hpp"
#include "link/command_status.hpp"
#include "ssd/network_interface.hpp"

namespace canopy::ssd {

namespace cs = link::command_status;
using core::Access;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
constexpr uint64_t kStart = 1u << 0, kIrqEnable = 1u << 7;
constexpr unsigned kSrcShift = 1, kDstShift = 4, kPortMask = 7;

const char* port_name(DmaPort p) {
    switch (p) {
        case DmaPort::Dmem:
            return "dmem";
        case DmaPort::Dram:
            return "dram";
        case DmaPort::NiRx:
            return "ni_rx";
        case DmaPort::NiTx:
            return "ni_tx";
    }
    return "?";
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}
}  // namespace

void SpuDmaConfig::describe(core::Params& p) {
    p("clock_mhz", clock_mhz, "MHz", "datapath clock [assumed: the ring's 250 MHz]", 1.0, 1e4);
    p("bytes_per_cycle", bytes_per_cycle, "B", "datapath width [assumed: 128 bits as the ring]", 1,
      4096);
    p("setup_cycles", setup_cycles, "cycles", "descriptor decode before the first access [assumed]",
      0, 1u << 20);
    p("burst_bytes", burst_bytes, "B", "largest piece per bus access", 4, 1u << 20);
    bank.describe(p);
}

core::RegisterMap SpuDma::register_map() {
    const std::vector<core::FieldValue> ports = {
        {"dmem", uint64_t(DmaPort::Dmem), "the SPU's data memory (SPU addresses)"},
        {"dram", uint64_t(DmaPort::Dram), "the SSD's memory (byte address)"},
        {"ni_rx", uint64_t(DmaPort::NiRx),
         "the received request's payload, read in order (source only; address ignored)"},
        {"ni_tx", uint64_t(DmaPort::NiTx),
         "the open outgoing request's payload, appended (destination only; address ignored)"},
    };
    return core::RegisterMap(
        "spu_dma", "an SPU's DMA controller: local memory, SSD memory and the network interface",
        {
            {"src_addr", 0x00, 64, Access::RW, 0, "source address (see control.src_port)"},
            {"dst_addr", 0x08, 64, Access::RW, 0, "destination address (see control.dst_port)"},
            {"length", 0x10, 32, Access::RW, 0, "bytes to move; 0 is refused (zero_length)"},
            {"control",
             0x14,
             32,
             Access::RW,
             0,
             "transfer options; writing start = 1 runs the transfer",
             {
                 {"start",
                  0,
                  1,
                  "write 1: run the transfer in src_addr, dst_addr, length, control",
                  {},
                  Access::Trigger},
                 {"src_port", kSrcShift, 3, "where the bytes come from", ports},
                 {"dst_port", kDstShift, 3, "where the bytes go", ports},
                 {"irq_enable", 7, 1, "raise the dma_done interrupt while status.done is set"},
             }},
            cs::status_register(0x18, "transfer"),
            {"error_code",
             0x1C,
             32,
             Access::RO,
             0,
             "why the last transfer failed",
             {{"code",
               0,
               8,
               "failure reason",
               {{"none", uint64_t(SpuDmaError::None), "it succeeded"},
                {"zero_length", uint64_t(SpuDmaError::ZeroLength), "length was 0"},
                {"bad_port", uint64_t(SpuDmaError::BadPort),
                 "no such port, ni_rx as destination or ni_tx as source"},
                {"out_of_range", uint64_t(SpuDmaError::OutOfRange),
                 "the dmem or dram range lies outside the memory"},
                {"network", uint64_t(SpuDmaError::Network),
                 "the network interface refused: nothing (or too little) received, or no open "
                 "request (or past its length)"},
                {"bus", uint64_t(SpuDmaError::Bus), "a memory answered with an error"}}}}},
            {"completed", 0x20, 32, Access::RO, 0, "transfers completed since reset (wraps)"},
            {"bytes_done", 0x28, 64, Access::RO, 0, "bytes the last transfer moved"},
            {"last_latency_ns", 0x30, 64, Access::RO, 0,
             "the last transfer's time from start to done, in ns (rounded)"},
        });
}

SpuDma::SpuDma(sc_core::sc_module_name name, uint32_t dmem_base, uint32_t dmem_size,
               uint64_t dram_size, core::Services& services, const SpuDmaConfig& cfg)
    : sc_module(name),
      socket("socket"),
      dmem("dmem"),
      dram("dram"),
      cfg_(cfg),
      dmem_base_(dmem_base),
      dmem_size_(dmem_size),
      dram_size_(dram_size),
      cycle_(1000.0 / cfg.clock_mhz, SC_NS),
      bank_("bank", register_map(), services, cfg.bank),
      starts_(services.stats.counter(this->name(), "starts", "transfers started", true)),
      overruns_(services.stats.counter(this->name(), "overruns", "starts ignored while busy")),
      failures_(services.stats.counter(this->name(), "failures", "transfers that failed")),
      latency_(services.stats.distribution(this->name(), "latency", "ns",
                                           "start to done of each transfer")) {
    socket.bind(bank_.socket);
    bank_.on_write("control", [this](const core::RegisterAccess& a) { on_control(a); });
    bank_.on_read("status", [this](core::RegisterAccess& a) { on_status_read(a); });
    bank_.on_write("status", [this](const core::RegisterAccess& a) { on_status_write(a); });
    SC_THREAD(irq_thread);
}

SpuDmaError SpuDma::check(DmaPort src, uint64_t src_addr, DmaPort dst, uint64_t dst_addr,
                          uint64_t length, std::string& why) const {
    if (length == 0) {
        why = "zero-length transfer refused";
        return SpuDmaError::ZeroLength;
    }
    if (uint32_t(src) > 3 || uint32_t(dst) > 3 || src == DmaPort::NiTx || dst == DmaPort::NiRx) {
        why = "port " + std::to_string(uint32_t(src)) + " -> " + std::to_string(uint32_t(dst)) +
              " refused (ni_rx is a source only, ni_tx a destination only)";
        return SpuDmaError::BadPort;
    }
    for (auto [port, addr] : {std::pair{src, src_addr}, std::pair{dst, dst_addr}}) {
        const bool in = port == DmaPort::Dmem ? addr >= dmem_base_ && length <= dmem_size_ &&
                                                    addr - dmem_base_ <= dmem_size_ - length
                        : port == DmaPort::Dram
                            ? length <= dram_size_ && addr <= dram_size_ - length
                            : true;
        if (!in) {
            why = std::string(port_name(port)) + " range [" + hex(addr) + ", +" +
                  std::to_string(length) + ") is outside the memory";
            return SpuDmaError::OutOfRange;
        }
    }
    if ((src == DmaPort::NiRx || dst == DmaPort::NiTx) && !ni_) {
        why = "no network interface attached";
        return SpuDmaError::Network;
    }
    return SpuDmaError::None;
}

// One piece from or to `port`; `latency` gets the access's latency beyond the call's start.
SpuDmaError SpuDma::move(DmaPort port, uint64_t addr, uint8_t* data, uint64_t n, bool write,
                         sc_time& latency, std::string& why) {
    if (port == DmaPort::NiRx || port == DmaPort::NiTx) {
        const bool ok = port == DmaPort::NiRx
                            ? ni_->request_unread() >= n && ni_->read_request(data, n) == n
                            : ni_->append(data, n) == NiStatus::Ok;
        latency = SC_ZERO_TIME;
        if (!ok)
            why = port == DmaPort::NiRx
                      ? "the network interface holds no received request with " +
                            std::to_string(n) + " more bytes"
                      : "the network interface has no open request with room for " +
                            std::to_string(n) + " more bytes";
        return ok ? SpuDmaError::None : SpuDmaError::Network;
    }
    tlm::tlm_generic_payload gp;
    core::set_access(gp, write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, addr, data,
                     unsigned(n));
    sc_time d = SC_ZERO_TIME;
    (port == DmaPort::Dmem ? dmem : dram)->b_transport(gp, d);
    latency = d;
    if (!gp.is_response_ok()) {
        why = std::string(port_name(port)) + (write ? " write" : " read") + " at " + hex(addr) +
              " failed: " + gp.get_response_string();
        return SpuDmaError::Bus;
    }
    return SpuDmaError::None;
}

SpuDmaResult SpuDma::transfer(DmaPort src, uint64_t src_addr, DmaPort dst, uint64_t dst_addr,
                              uint64_t length, sc_time& delay) {
    SpuDmaResult r;
    std::string why;
    r.code = check(src, src_addr, dst, dst_addr, length, why);
    const sc_time start = delay;
    delay += cycle_ * double(cfg_.setup_cycles);
    if (r.code == SpuDmaError::None) {
        std::vector<uint8_t> buf(std::min<uint64_t>(length, cfg_.burst_bytes));
        sc_time first_read = SC_ZERO_TIME, last_write = SC_ZERO_TIME;
        for (uint64_t done = 0; done < length;) {
            const uint64_t n = std::min<uint64_t>(length - done, cfg_.burst_bytes);
            sc_time lr, lw;
            r.code = move(src, src_addr + done, buf.data(), n, false, lr, why);
            if (r.code == SpuDmaError::None)
                r.code = move(dst, dst_addr + done, buf.data(), n, true, lw, why);
            if (r.code != SpuDmaError::None) break;
            if (done == 0) first_read = lr;
            last_write = lw;
            done += n;
            r.bytes = done;
        }
        // Bursts stream back to back: the first read's latency, the data at the datapath rate,
        // the last write's latency.
        const double cycles = double((r.bytes + cfg_.bytes_per_cycle - 1) / cfg_.bytes_per_cycle);
        delay += first_read + cycle_ * cycles + last_write;
    }
    r.ok = r.code == SpuDmaError::None;
    if (!r.ok) {
        r.error =
            std::string(name()) + ": " + port_name(src) + " -> " + port_name(dst) + ": " + why;
        failures_.add();
    }
    bytes_moved_ += r.bytes;
    r.latency_ns = core::ns_of(delay - start);
    latency_.sample(r.latency_ns);
    return r;
}

void SpuDma::on_control(const core::RegisterAccess& a) {
    if (!(a.triggered() & kStart) || !cs::begin(bank_, overruns_)) return;
    starts_.add();
    const uint64_t control = bank_.read("control");
    const auto src = DmaPort((control >> kSrcShift) & kPortMask);
    const auto dst = DmaPort((control >> kDstShift) & kPortMask);
    const sc_time now = sc_core::sc_time_stamp();
    sc_time delay = a.at - now;
    last_ = transfer(src, bank_.read("src_addr"), dst, bank_.read("dst_addr"), bank_.read("length"),
                     delay);
    running_ = true;
    end_at_ = now + delay;
    done_event_.notify(delay);
}

void SpuDma::complete_if_due(const sc_time& at) {
    if (!running_ || at < end_at_) return;
    running_ = false;
    bank_.write("error_code", uint64_t(last_.code));
    bank_.write("bytes_done", last_.bytes);
    cs::finish(bank_, !last_.ok, last_.latency_ns);
    if (irq_ && (bank_.read("control") & kIrqEnable)) irq_(true, end_at_);
}

void SpuDma::on_status_read(core::RegisterAccess& a) {
    if (a.debug) return;
    complete_if_due(a.at);
    a.value = bank_.read("status");
}

void SpuDma::on_status_write(const core::RegisterAccess& a) {
    if (irq_ && !(bank_.read("status") & cs::kDone)) irq_(false, a.at);
}

void SpuDma::irq_thread() {
    while (true) {
        wait(done_event_);
        complete_if_due(sc_core::sc_time_stamp());
    }
}

}  // namespace canopy::ssd
