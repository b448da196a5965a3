// One flash channel's controller (Willow on NAND; Flash-Cosmos Sections 2.1, 3.2 and 6): the SPU
// that owns the channel queues commands through memory-mapped registers; the controller turns
// each into the dies' ONFI and Flash-Cosmos command sequences (multi-plane READ and PROGRAM,
// cache READ, ESP PROGRAM, ERASE, MWS, XOR; and the ISP baseline's accelerator), keeps the
// channel's dies working in parallel while their bus phases interleave, and streams the data
// between the SSD's memory and the dies through its randomiser and ECC engine:
//   - normal pages are randomised (keyed by the page address), then BCH-encoded per codeword;
//     the spare area holds the parity and ECC-protected metadata, meta_bytes of it, moved by the
//     meta registers (8 bytes) or from and to SSD memory (meta_addr) as controllers move OOB
//     bytes; the FTL keeps the page's write sequence and the logical unit of each slot there, so
//     the map can be rebuilt after a crash;
//   - raw pages (operands for in-flash computing, written with ESP) are neither randomised nor
//     encoded, and MWS or XOR results leave the latches raw: no code survives an AND of pages.
//   With a timing-only array (nand.functional=false) nothing is encoded and data reads as
//   zeros; the controller keeps each normal page's metadata itself, so that an FTL still finds
//   what it wrote there.
//   An uncorrectable codeword fails the command (status `uncorrectable`); its bytes still go to
//   memory, but firmware is told, never handed bad data as good.
//
// Registers: register_map(), block "flash_ctl" at SPU_FLASH_BASE; also the firmware's C header
// and docs/registers.md. Loosely timed: a command is worked out when it is submitted, at the
// submitting core's local time, against the occupancy of the dies, the channel bus and the
// SSD's memory; its completion enters the completion queue at the simulated time it ends (reads
// of the queue registers at a local time past that already see it).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "core/register_bank.hpp"
#include "core/services.hpp"
#include "nand/address.hpp"
#include "nand/command.hpp"
#include "nand/config.hpp"
#include "nand/plane.hpp"
#include "nand/reliability.hpp"
#include "ssd/bitwise_accelerator.hpp"
#include "ssd/ecc_engine.hpp"
#include "ssd/randomiser.hpp"

namespace canopy::ssd {

enum class FlashOpcode : uint32_t {
    Read = 1,
    Program = 2,
    Erase = 3,
    Mws = 4,
    Xor = 5,
    Accumulate = 6,  // a raw page read into the ISP accelerator (ssd/bitwise_accelerator)
    AccOut = 7,      // the accelerator's buffer to SSD memory
};

enum class FlashStatus : uint32_t {
    Ok = 0,
    Uncorrectable = 1,  // a codeword had more errors than the ECC corrects
    Refused = 2,        // a malformed command, or the die refused the sequence
    Failed = 3,         // the die reported FAIL (program or erase)
    Bus = 4,            // the SSD's memory answered with an error
    Full = 5,           // submitted while the queue was full (never queued)
};
const char* status_name(FlashStatus s);

constexpr uint32_t kMaxMwsOperands = 8;  // slots in the register block (the die takes up to 32)

struct MwsSlot {
    uint32_t block = 0;
    uint64_t pbm = 0;  // wordlines sensed with VREF (Flash-Cosmos Figure 15a)
};

// One command as the registers hold it.
struct FlashCommand {
    FlashOpcode op = FlashOpcode::Read;
    uint16_t tag = 0;
    uint32_t die = 0, plane = 0, block = 0, page = 0;
    uint32_t planes = 1;  // multi-plane: planes plane .. plane+planes-1, same block and page
    uint32_t pages = 1;   // reads: pages page .. page+pages-1 of one plane, by cache read
    nand::CellMode mode = nand::CellMode::Tlc;  // programs
    bool raw = false;  // no randomiser, no ECC (in-flash computing operands)
    uint64_t dram_addr = 0;
    uint32_t column = 0;     // byte offset in the page's data area (reads, latch transfers)
    uint32_t length = 0;     // bytes per plane; programs: up to a page (the rest is written 0xFF)
    uint64_t meta = 0;       // programs: stored in the spare area
    uint64_t meta_addr = 0;  // else 0: the whole metadata moves to / from SSD memory here
    uint8_t mws_flags = 0;   // nand::iscm flags
    std::vector<MwsSlot> mws;
    AccCommand acc;  // Accumulate, AccOut: the accelerator's operation and buffer offset
};

struct FlashCompletion {
    uint16_t tag = 0;
    FlashStatus status = FlashStatus::Ok;
    uint32_t corrected_bits = 0;
    uint32_t uncorrectable_codewords = 0;
    uint64_t meta = 0;  // reads: the page's metadata word (all ones if erased)
    double latency_ns = 0;
    sc_core::sc_time done;
    std::string error;  // names the controller, the die and the reason
};

struct FlashControllerConfig {
    uint32_t queue_depth = 32;  // assumed: commands in flight per channel
    double t_setup_ns = 50.0;   // assumed: descriptor decode before the first bus cycle
    EccConfig ecc;
    BitwiseAcceleratorConfig isp;
    // ECC-protected metadata in the spare area; assumed: 24, the FTL's sequence word and the
    // tags of 4 mapping units (4 KiB units on 16 KiB pages, sw/firmware/ftl).
    uint32_t meta_bytes = 24;
    core::RegisterBankConfig bank;
    void describe(core::Params& p);  // relative to the caller's scope
};

class FlashController : public sc_core::sc_module {
  public:
    tlm::tlm_target_socket<> socket;                           // registers
    tlm_utils::simple_initiator_socket<FlashController> nand;  // the channel (nand::Channel)
    tlm_utils::simple_initiator_socket<FlashController> dram;  // the SSD's memory

    SC_HAS_PROCESS(FlashController);

    // Throws InputError when the page's spare area cannot hold the ECC parity and metadata.
    FlashController(sc_core::sc_module_name name, uint32_t channel, const nand::NandConfig& nand,
                    core::Services& services,
                    const FlashControllerConfig& cfg = FlashControllerConfig());

    static core::RegisterMap register_map();

    // Queues one command submitted at `at` (>= now), as a write of submit does; the completion
    // is returned now and enters the completion queue at its `done` time.
    FlashCompletion submit(const FlashCommand& cmd, const sc_core::sc_time& at);
    // Completions whose time has come by `at`, oldest first (the register view pops them).
    size_t completions(const sc_core::sc_time& at);
    // Commands submitted and not yet completed at `at`.
    size_t in_flight(const sc_core::sc_time& at) const;

    // Called with the interrupt level (completions waiting and irq enabled) when it changes.
    void on_irq(std::function<void(bool, const sc_core::sc_time&)> fn) { irq_ = std::move(fn); }

    // A normal page as a program puts it on the die: `page` (page_total_bytes) holds the data
    // and, at meta_offset(), the metadata (meta_bytes, zero-padded); randomised and ECC-encoded
    // in place for (die, plane, block, page_no). Preconditioning programs pages through it.
    void encode_page(uint32_t die, uint32_t plane, uint32_t block, uint32_t page_no,
                     uint8_t* page) const;
    // Its first step alone: the randomiser over the page's data area (page_bytes).
    void randomise_page(uint32_t die, uint32_t plane, uint32_t block, uint32_t page_no,
                        uint8_t* page) const;
    // Preconditioning's way in: the page put on `target` (die, plane) as a program leaves it,
    // without time: encoded in place (functional; with a `source`, which makes the cells again
    // when they are sensed, the plane keeps no bytes), or only its metadata kept (timing only).
    void preload_page(nand::Plane& target, uint32_t die, uint32_t plane, uint32_t block,
                      uint32_t page_no, nand::CellMode mode, uint8_t* page,
                      std::shared_ptr<nand::PageSource> source = nullptr);
    uint32_t meta_offset() const { return meta_offset_; }
    uint32_t meta_bytes() const { return cfg_.meta_bytes; }

    core::RegisterBank& bank() { return bank_; }
    const BchCode& code() const { return code_; }
    uint64_t bytes_moved() const { return bytes_moved_; }

  private:
    struct Run;  // one command being worked out

    std::string check(const FlashCommand& c) const;
    // The command's page in each of its planes.
    std::vector<nand::PageAddress> pages(const FlashCommand& c) const;
    void run(Run& r);
    void read(Run& r);
    sc_core::sc_time transfer_page(Run& r, uint32_t plane, uint32_t page_no, uint8_t* page,
                                   uint32_t index);
    void program(Run& r);
    void latch_op(Run& r);
    void accumulate(Run& r);
    // Sends one sequence to the die at `at`; returns when the die is ready again.
    sc_core::sc_time issue(Run& r, uint8_t* data, uint32_t length, const sc_core::sc_time& at);
    sc_core::sc_time memory(Run& r, bool write, uint64_t addr, uint8_t* data, uint32_t length,
                            const sc_core::sc_time& at);
    // Corrects codeword `data`/`parity` of `page` in place; true when it was erased (read as
    // ones, left so). `flips`: the raw bit errors the die reported for the page, or null.
    bool decode_codeword(Run& r, const BchCode& code, uint8_t* page, uint32_t data_at, uint32_t len,
                         uint32_t parity_at, const std::vector<uint64_t>* flips);
    FlashCommand from_registers() const;
    void on_submit(const core::RegisterAccess& a);
    // Completions waiting as a register read at its time sees them (a debug read moves none).
    size_t waiting(const core::RegisterAccess& a);
    void on_pop(const core::RegisterAccess& a);
    void update_irq(const sc_core::sc_time& at);
    void irq_thread();

    // Timing only (nand.functional=false): the dies keep no bytes, so the controller keeps
    // each normal page's metadata for the FTL, as the spare area would (by spare_key).
    uint64_t spare_key(uint32_t die, uint32_t plane, uint32_t block, uint32_t page) const;
    void keep_spare(uint32_t die, uint32_t plane, uint32_t block, uint32_t page,
                    const uint8_t* meta);
    std::unordered_map<uint64_t, std::vector<uint8_t>> spare_;

    uint32_t channel_;
    const nand::NandConfig& nand_cfg_;
    FlashControllerConfig cfg_;
    core::Services& services_;
    BchCode code_, meta_code_;
    Randomiser randomiser_;
    BitwiseAccelerator isp_;
    nand::RowCodec codec_;
    nand::CommandExt ext_;           // the sequence being sent (large: kept, not rebuilt)
    std::vector<uint8_t> page_buf_;  // a page per plane, data and spare
    std::vector<uint64_t> flips_;    // the raw bit errors of the page being read, when known
    uint32_t codewords_;             // per page
    uint32_t parity_offset_;  // in the page: codeword k's parity at parity_offset_ + k * parity
    uint32_t meta_offset_;    // the metadata word, then its parity
    core::RegisterBank bank_;
    std::vector<sc_core::sc_time> die_free_;
    std::multimap<sc_core::sc_time, FlashCompletion> pending_;  // by done time
    std::vector<FlashCompletion> visible_;                      // completion queue, oldest first
    size_t visible_head_ = 0;
    bool irq_level_ = false;
    std::function<void(bool, const sc_core::sc_time&)> irq_;
    sc_core::sc_event wake_;
    int track_;
    core::Logger log_;  // debug: every command, with its outcome
    uint64_t bytes_moved_ = 0;
    core::Counter &commands_, &refused_, &full_, &uncorrectable_, &failed_;
    core::Counter &corrected_bits_, &codewords_decoded_;
    std::vector<core::Distribution*> latency_;  // per opcode
    core::QueueProbe in_flight_probe_;  // commands submitted and not yet done (the queue's depth)
};

}  // namespace canopy::ssd
