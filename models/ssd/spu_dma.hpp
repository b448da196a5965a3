// An SPU's programmable DMA controller (Willow Section 3.1 "SPU architecture" and "RPC
// interface"): it moves data between the SPU's local data memory, the SSD's memory (the local
// non-volatile store; the flash controller later), and the network interface, where a received
// RPC's payload is read out as a stream (RPCReceiveBytes) and an outgoing request's payload is
// appended to (RPCAppendRequest). DMA is what lets a 125 MHz core handle high-bandwidth streams.
//
// Programmed through its register block (register_map(), block "spu_dma" at SPU_DMA_BASE; also
// the C header and docs/registers.md): src_addr, dst_addr (64-bit), length, control (start,
// src_port, dst_port, irq_enable), status (busy; done, error, overrun W1C), error_code,
// completed, bytes_done, last_latency_ns. Only SPU-OS reaches it (the registers lie outside every
// app's data segment): apps ask SPU-OS, which checks the originating HRE's permissions first.
//
// Timing (loosely timed): a transfer takes setup + the source's first access latency + length at
// the datapath rate + the destination's last access latency; the bytes move in bursts of
// burst_bytes through b_transport on the dmem and dram sockets, whose targets add their latency
// and queueing (SSD memory banks). The network interface's buffers cost nothing beyond the rate.
// The bytes move when the transfer starts; status shows busy until its end time, and a read of
// status at or after that time (in the reader's local time) already sees done, so firmware
// polling from a temporally decoupled core sees completion at the right time.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"

namespace canopy::ssd {

class NetworkInterface;

// Where a transfer's source or destination lies (control.src_port / dst_port).
enum class DmaPort : uint32_t { Dmem = 0, Dram = 1, NiRx = 2, NiTx = 3 };

// error_code values.
enum class SpuDmaError : uint32_t {
    None = 0,
    ZeroLength = 1,
    BadPort = 2,     // a port that does not exist, NI_RX as destination or NI_TX as source
    OutOfRange = 3,  // the DMEM or DRAM range lies outside the memory
    Network = 4,     // the NI refused: no received request to read, more than it holds, no
                     // request open to append to, or appending past its length
    Bus = 5,         // the memory answered with an error
};

struct SpuDmaConfig {
    double clock_mhz = 250.0;       // assumed: the datapath runs with the ring [Willow 3.2]
    uint32_t bytes_per_cycle = 16;  // assumed: 128 bits, as the ring (4 GB/s)
    uint32_t setup_cycles = 4;      // assumed: descriptor decode
    uint32_t burst_bytes = 256;     // largest piece per bus access
    core::RegisterBankConfig bank;
    void describe(core::Params& p);  // relative to the caller's scope
};

struct SpuDmaResult {
    bool ok = false;
    SpuDmaError code = SpuDmaError::None;
    uint64_t bytes = 0;     // moved
    double latency_ns = 0;  // start to end
    std::string error;      // names the controller, the port and the address
};

class SpuDma : public sc_core::sc_module {
  public:
    tlm::tlm_target_socket<> socket;                  // registers, at SPU_DMA_BASE
    tlm_utils::simple_initiator_socket<SpuDma> dmem;  // the SPU's data memory
    tlm_utils::simple_initiator_socket<SpuDma> dram;  // the SSD's memory

    SC_HAS_PROCESS(SpuDma);

    // `dmem_base`/`dmem_size`: the SPU address range of its data memory (DMEM port addresses
    // are SPU addresses, as firmware knows them).
    SpuDma(sc_core::sc_module_name name, uint32_t dmem_base, uint32_t dmem_size, uint64_t dram_size,
           core::Services& services, const SpuDmaConfig& cfg = SpuDmaConfig());

    static core::RegisterMap register_map();

    void attach(NetworkInterface& ni) { ni_ = &ni; }
    // Called with the done level (true at completion with irq_enable set; false when software
    // clears status.done), at the simulated time it changes.
    void on_irq(std::function<void(bool, const sc_core::sc_time&)> fn) { irq_ = std::move(fn); }

    // One transfer, as a start through the registers runs it, for models and tests: moves the
    // bytes now and adds the transfer's time to `delay`. Never throws.
    SpuDmaResult transfer(DmaPort src, uint64_t src_addr, DmaPort dst, uint64_t dst_addr,
                          uint64_t length, sc_core::sc_time& delay);

    core::RegisterBank& bank() { return bank_; }
    uint64_t bytes_moved() const { return bytes_moved_; }

  private:
    void on_control(const core::RegisterAccess& a);
    void on_status_read(core::RegisterAccess& a);
    void on_status_write(const core::RegisterAccess& a);
    void complete_if_due(const sc_core::sc_time& at);
    void irq_thread();
    SpuDmaError check(DmaPort src, uint64_t src_addr, DmaPort dst, uint64_t dst_addr,
                      uint64_t length, std::string& why) const;
    SpuDmaError move(DmaPort port, uint64_t addr, uint8_t* data, uint64_t n, bool write,
                     sc_core::sc_time& latency, std::string& why);

    SpuDmaConfig cfg_;
    uint32_t dmem_base_, dmem_size_;
    uint64_t dram_size_;
    sc_core::sc_time cycle_;
    core::RegisterBank bank_;
    NetworkInterface* ni_ = nullptr;
    std::function<void(bool, const sc_core::sc_time&)> irq_;
    // The running transfer: when it ends and how.
    bool running_ = false;
    sc_core::sc_time end_at_;
    SpuDmaResult last_;
    sc_core::sc_event done_event_;
    uint64_t bytes_moved_ = 0;
    core::Counter &starts_, &overruns_, &failures_;
    core::Distribution& latency_;
};

}  // namespace canopy::ssd
