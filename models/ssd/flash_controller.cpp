#include "ssd/flash_controller.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/payload.hpp"
#include "core/sim_time.hpp"
#include "nand/address.hpp"
#include "nand/command.hpp"
#include "nand/sequence.hpp"

namespace canopy::ssd {

using core::Access;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
constexpr unsigned kOpShift = 0, kModeShift = 4, kRawBit = 7, kPlanesShift = 8, kFlagsShift = 12,
                   kTagShift = 16;

const char* opcode_name(FlashOpcode op) {
    switch (op) {
        case FlashOpcode::Read:
            return "read";
        case FlashOpcode::Program:
            return "program";
        case FlashOpcode::Erase:
            return "erase";
        case FlashOpcode::Mws:
            return "mws";
        case FlashOpcode::Xor:
            return "xor";
        case FlashOpcode::Accumulate:
            return "accumulate";
        case FlashOpcode::AccOut:
            return "acc_out";
    }
    return "?";
}

// The register's mode field, in CellMode order without Erased.
constexpr nand::CellMode kModes[] = {nand::CellMode::Slc, nand::CellMode::Mlc, nand::CellMode::Tlc,
                                     nand::CellMode::Esp};

}  // namespace

const char* status_name(FlashStatus s) {
    switch (s) {
        case FlashStatus::Ok:
            return "ok";
        case FlashStatus::Uncorrectable:
            return "uncorrectable";
        case FlashStatus::Refused:
            return "refused";
        case FlashStatus::Failed:
            return "failed";
        case FlashStatus::Bus:
            return "bus";
        case FlashStatus::Full:
            return "full";
    }
    return "?";
}

void FlashControllerConfig::describe(core::Params& p) {
    p("queue_depth", queue_depth, "", "commands in flight per channel [assumed]", 1, 4096)(
        "t_setup_ns", t_setup_ns, "ns", "descriptor decode before the first bus cycle [assumed]",
        0.0, 1e6)("meta_bytes", meta_bytes, "B",
                  "ECC-protected metadata per page in the spare area (the FTL's reverse map)", 1,
                  64);
    core::Params e = p.scope("ecc");
    ecc.describe(e);
    core::Params i = p.scope("isp");
    isp.describe(i);
    bank.describe(p);
}

core::RegisterMap FlashController::register_map() {
    std::vector<core::FieldValue> ops = {
        {"read", uint64_t(FlashOpcode::Read),
         "read `length` bytes at `column` of the page(s) into SSD memory at dram_addr"},
        {"program", uint64_t(FlashOpcode::Program),
         "program the page(s) from SSD memory at dram_addr (`length` bytes per plane, the rest "
         "0xFF)"},
        {"erase", uint64_t(FlashOpcode::Erase), "erase the block(s)"},
        {"mws", uint64_t(FlashOpcode::Mws),
         "multi-wordline sensing of the mws_count operand slots; then, if length > 0, the C-latch "
         "to SSD memory"},
        {"xor", uint64_t(FlashOpcode::Xor),
         "C-latch = S-latch XOR C-latch; then, if length > 0, the C-latch to SSD memory"},
        {"accumulate", uint64_t(FlashOpcode::Accumulate),
         "read `length` bytes at `column` of the page raw and combine them into the ISP "
         "accelerator's buffer at acc.offset by acc.op"},
        {"acc_out", uint64_t(FlashOpcode::AccOut),
         "`length` bytes of the ISP accelerator's buffer at acc.offset to SSD memory at "
         "dram_addr"},
    };
    std::vector<core::FieldValue> statuses;
    for (auto s : {FlashStatus::Ok, FlashStatus::Uncorrectable, FlashStatus::Refused,
                   FlashStatus::Failed, FlashStatus::Bus, FlashStatus::Full})
        statuses.push_back({status_name(s), uint64_t(s)});
    statuses[1].description = "a codeword had more bit errors than the ECC corrects";
    statuses[2].description = "malformed command, or the die refused the sequence";
    statuses[3].description = "the die reported FAIL (program or erase)";
    statuses[4].description = "the SSD's memory answered with an error";
    statuses[5].description = "submitted while the queue was full; not run";
    std::vector<core::Register> regs = {
        {"command",
         0x00,
         32,
         Access::RW,
         0,
         "the command to submit",
         {
             {"op", kOpShift, 4, "what to do", ops},
             {"mode",
              kModeShift,
              3,
              "cell mode of a program",
              {{"slc", 0}, {"mlc", 1}, {"tlc", 2}, {"esp", 3, "enhanced SLC (Flash-Cosmos 4.2)"}}},
             {"raw", kRawBit, 1,
              "no randomiser and no ECC (in-flash computing operands; latch transfers are always "
              "raw)"},
             {"planes", kPlanesShift, 4,
              "planes of a multi-plane read, program or erase (0 counts as 1)"},
             {"mws_flags", kFlagsShift, 4,
              "ISCM flags: 1 inverse, 2 init S-latch, 4 init C-latch, 8 S to C transfer"},
             {"tag", kTagShift, 16, "returned with the completion"},
         }},
        {"die", 0x04, 32, Access::RW, 0, "die on the channel (chip enable)"},
        {"plane", 0x08, 32, Access::RW, 0, "first plane"},
        {"block", 0x0C, 32, Access::RW, 0, "block in the plane"},
        {"page", 0x10, 32, Access::RW, 0, "page (wordline) in the block"},
        {"column", 0x14, 32, Access::RW, 0, "byte offset in the page's data area"},
        {"dram_addr", 0x18, 64, Access::RW, 0, "SSD memory address of the data"},
        {"length", 0x20, 32, Access::RW, 0, "bytes per plane"},
        {"mws_count", 0x24, 32, Access::RW, 0, "operand slots of an MWS (1-8)"},
        {"meta", 0x28, 64, Access::RW, 0, "metadata word a program stores in the spare area"},
        {"submit", 0x30, 32, Access::Trigger, 0, "write 1: queue the command in these registers"},
        {"sq_free", 0x34, 32, Access::RO, 0, "commands the queue takes now"},
        {"irq_enable", 0x38, 32, Access::RW, 0, "bit 0: raise flash_done while completions wait"},
        {"cq_count", 0x3C, 32, Access::RO, 0, "completions waiting"},
        {"cq_tag", 0x40, 32, Access::RO, 0, "the oldest completion's tag"},
        {"cq_status",
         0x44,
         32,
         Access::RO,
         0,
         "the oldest completion's status",
         {{"code", 0, 8, "how it ended", statuses}}},
        {"cq_corrected", 0x48, 32, Access::RO, 0, "bits the ECC corrected (reads)"},
        {"cq_uncorrectable", 0x4C, 32, Access::RO, 0, "codewords it could not correct (reads)"},
        {"cq_meta", 0x50, 64, Access::RO, 0, "the page's metadata word (reads; ones if erased)"},
        {"cq_latency_ns", 0x58, 32, Access::RO, 0, "submit to completion, in ns (rounded)"},
        {"cq_pop", 0x5C, 32, Access::Trigger, 0, "write 1: drop the oldest completion"},
        {"pages", 0x60, 32, Access::RW, 0,
         "reads: consecutive pages of the block, by cache read when > 1 (0 counts as 1); page i "
         "goes to dram_addr + i * length"},
        // The channel's geometry, so that firmware (the FTL) needs no build-time constants.
        {"geo_dies", 0x64, 32, Access::RO, 0, "dies on the channel"},
        {"geo_planes", 0x68, 32, Access::RO, 0, "planes per die"},
        {"geo_blocks", 0x6C, 32, Access::RO, 0, "blocks per plane"},
        {"geo_pages", 0x70, 32, Access::RO, 0, "pages (wordlines) per block"},
        {"geo_page_bytes", 0x74, 32, Access::RO, 0, "bytes in a page's data area"},
        {"acc",
         0x78,
         32,
         Access::RW,
         0,
         "the ISP accelerator's operation (accumulate, acc_out)",
         {
             {"op",
              0,
              2,
              "how the page's bytes combine with the buffer's",
              {{"copy", uint64_t(AccOp::Copy)},
               {"and", uint64_t(AccOp::And)},
               {"or", uint64_t(AccOp::Or)},
               {"xor", uint64_t(AccOp::Xor)}}},
             {"invert", 2, 1, "complement the page's bytes first"},
             {"complement", 3, 1, "complement the buffer's bytes after"},
             {"buffer", 8, 24, "byte offset in the buffer"},
         }},
    };
    for (uint32_t i = 0; i < kMaxMwsOperands; ++i) {
        const std::string n = std::to_string(i);
        regs.push_back({"mws_block" + n, 0x80 + 16 * i, 32, Access::RW, 0,
                        "MWS operand slot " + n + ": block"});
        regs.push_back({"mws_pbm" + n, 0x88 + 16 * i, 64, Access::RW, 0,
                        "MWS operand slot " + n + ": page bitmap (wordlines sensed)"});
    }
    regs.push_back({"meta_addr", 0x100, 64, Access::RW, 0,
                    "0: the metadata word is meta / cq_meta; else the SSD memory address of the "
                    "page's whole metadata (geo_meta_bytes; plane or page i at + i * "
                    "geo_meta_bytes), which a program takes and a read writes there"});
    regs.push_back({"geo_meta_bytes", 0x108, 32, Access::RO, 0,
                    "bytes of ECC-protected metadata in a page's spare area"});
    return core::RegisterMap(
        "flash_ctl",
        "a channel's flash controller: command queue, completion queue, MWS operand slots",
        std::move(regs));
}

struct FlashController::Run {
    const FlashCommand& c;
    FlashCompletion out;
    sc_time t;  // how far the command has got
    uint64_t flow = 0;
    std::vector<uint8_t>& buf;
};

FlashController::FlashController(sc_core::sc_module_name name, uint32_t channel,
                                 const nand::NandConfig& nand_cfg, core::Services& services,
                                 const FlashControllerConfig& cfg)
    : sc_module(name),
      socket("socket"),
      nand("nand"),
      dram("dram"),
      channel_(channel),
      nand_cfg_(nand_cfg),
      cfg_(cfg),
      services_(services),
      code_(cfg.ecc.codeword_bytes, cfg.ecc.t_bits),
      meta_code_(cfg.meta_bytes, cfg.ecc.t_bits),
      randomiser_(services.seed ^ 0x52414E44u),
      isp_(std::string(this->name()) + ".isp", cfg.isp, services),
      codec_(nand_cfg.geometry),
      page_buf_(size_t(nand_cfg.geometry.page_total_bytes()) * nand_cfg.geometry.planes_per_die),
      bank_("bank", register_map(), services, cfg.bank),
      die_free_(nand_cfg.geometry.dies_per_channel, SC_ZERO_TIME),
      track_(services.trace.track(this->name())),
      log_(services.log, this->name()),
      commands_(services.stats.counter(this->name(), "commands", "commands submitted", true)),
      refused_(services.stats.counter(this->name(), "refused",
                                      "commands refused (malformed or "
                                      "refused by the die)")),
      full_(services.stats.counter(this->name(), "full", "submits while the queue was full")),
      uncorrectable_(services.stats.counter(this->name(), "uncorrectable",
                                            "reads with an uncorrectable codeword")),
      failed_(services.stats.counter(this->name(), "failed", "programs and erases that failed")),
      corrected_bits_(
          services.stats.counter(this->name(), "corrected_bits", "bit errors the ECC corrected")),
      codewords_decoded_(services.stats.counter(this->name(), "codewords", "codewords decoded")),
      in_flight_probe_("in_flight_probe", services.waves,
                       std::string(this->name()) + ".in_flight") {
    const nand::Geometry& g = nand_cfg.geometry;
    const std::string place = std::string("ssd.flash.ecc (") + this->name() + ")";
    if (g.page_bytes % cfg.ecc.codeword_bytes)
        throw InputError("config", place,
                         "codeword_bytes " + std::to_string(cfg.ecc.codeword_bytes) +
                             " does not divide the page (" + std::to_string(g.page_bytes) + " B)");
    codewords_ = g.page_bytes / cfg.ecc.codeword_bytes;
    parity_offset_ = g.page_bytes;
    meta_offset_ = parity_offset_ + codewords_ * code_.parity_bytes();
    const uint32_t need = meta_offset_ + cfg.meta_bytes + meta_code_.parity_bytes();
    if (need > g.page_total_bytes())
        throw InputError("config", place,
                         std::to_string(codewords_) + " codewords of " +
                             std::to_string(code_.parity_bytes()) +
                             " parity bytes (t = " + std::to_string(cfg.ecc.t_bits) +
                             ") and the metadata need " + std::to_string(need - g.page_bytes) +
                             " spare bytes; the page has " + std::to_string(g.spare_bytes));
    for (auto op : {FlashOpcode::Read, FlashOpcode::Program, FlashOpcode::Erase, FlashOpcode::Mws,
                    FlashOpcode::Xor, FlashOpcode::Accumulate, FlashOpcode::AccOut})
        latency_.push_back(&services.stats.distribution(
            this->name(), std::string(opcode_name(op)) + "_latency", "ns",
            std::string("submit to completion of each ") + opcode_name(op)));
    socket.bind(bank_.socket);
    bank_.write("sq_free", cfg_.queue_depth);
    bank_.write("geo_dies", g.dies_per_channel);
    bank_.write("geo_planes", g.planes_per_die);
    bank_.write("geo_blocks", g.blocks_per_plane);
    bank_.write("geo_pages", g.wordlines_per_block);
    bank_.write("geo_page_bytes", g.page_bytes);
    bank_.write("geo_meta_bytes", cfg.meta_bytes);
    bank_.on_write("submit", [this](const core::RegisterAccess& a) { on_submit(a); });
    bank_.on_write("cq_pop", [this](const core::RegisterAccess& a) { on_pop(a); });
    bank_.on_write("irq_enable", [this](const core::RegisterAccess& a) {
        completions(a.at);
        update_irq(a.at);
    });
    bank_.on_read("sq_free", [this](core::RegisterAccess& a) {
        a.value = cfg_.queue_depth - std::min<size_t>(cfg_.queue_depth, in_flight(a.at));
    });
    bank_.on_read("cq_count", [this](core::RegisterAccess& a) { a.value = waiting(a); });
    // The head completion's fields, resolved once here rather than by name on every poll.
    using Field = uint64_t (*)(const FlashCompletion&);
    const std::pair<const char*, Field> head[] = {
        {"cq_tag", [](const FlashCompletion& h) -> uint64_t { return h.tag; }},
        {"cq_status", [](const FlashCompletion& h) -> uint64_t { return uint64_t(h.status); }},
        {"cq_corrected", [](const FlashCompletion& h) -> uint64_t { return h.corrected_bits; }},
        {"cq_uncorrectable",
         [](const FlashCompletion& h) -> uint64_t { return h.uncorrectable_codewords; }},
        {"cq_meta", [](const FlashCompletion& h) -> uint64_t { return h.meta; }},
        {"cq_latency_ns",
         [](const FlashCompletion& h) -> uint64_t { return uint64_t(h.latency_ns + 0.5); }},
    };
    for (const auto& [reg, field] : head)
        bank_.on_read(reg, [this, field = field](core::RegisterAccess& a) {
            a.value = waiting(a) ? field(visible_[visible_head_]) : 0;
        });
    SC_THREAD(irq_thread);
}

std::string FlashController::check(const FlashCommand& c) const {
    const nand::Geometry& g = nand_cfg_.geometry;
    auto over = [](const char* what, uint64_t v, uint64_t n) {
        return std::string(what) + " " + std::to_string(v) + " is out of range (the " + what +
               "s are 0-" + std::to_string(n - 1) + ")";
    };
    if (uint32_t(c.op) < 1 || uint32_t(c.op) > 7)
        return "unknown opcode " + std::to_string(uint32_t(c.op));
    if (c.die >= g.dies_per_channel) return over("die", c.die, g.dies_per_channel);
    if (c.planes == 0 || c.plane + c.planes > g.planes_per_die)
        return "planes " + std::to_string(c.plane) + "+" + std::to_string(c.planes) +
               " exceed the die's " + std::to_string(g.planes_per_die);
    if (c.block >= g.blocks_per_plane) return over("block", c.block, g.blocks_per_plane);
    if (c.page >= g.wordlines_per_block) return over("page", c.page, g.wordlines_per_block);
    switch (c.op) {
        case FlashOpcode::Read:
            if (c.pages > 1 && (c.planes != 1 || c.page + c.pages > g.wordlines_per_block))
                return "cache read of " + std::to_string(c.pages) + " pages from page " +
                       std::to_string(c.page) + " (one plane, inside the block's " +
                       std::to_string(g.wordlines_per_block) + " pages)";
            if (c.length == 0 || c.column > g.page_bytes || c.length > g.page_bytes - c.column)
                return "read of " + std::to_string(c.length) + " bytes at column " +
                       std::to_string(c.column) + " is not inside the " +
                       std::to_string(g.page_bytes) + "-byte page";
            break;
        case FlashOpcode::Program:
            if (c.length == 0 || c.length > g.page_bytes)
                return "program of " + std::to_string(c.length) + " bytes (a page holds 1-" +
                       std::to_string(g.page_bytes) + ")";
            if (c.mode == nand::CellMode::Erased) return "program without a cell mode";
            break;
        case FlashOpcode::Erase:
            break;
        case FlashOpcode::Mws:
            if (c.mws.empty() || c.mws.size() > kMaxMwsOperands)
                return "MWS with " + std::to_string(c.mws.size()) + " operand slots (1-" +
                       std::to_string(kMaxMwsOperands) + ")";
            for (const MwsSlot& s : c.mws)
                if (s.block >= g.blocks_per_plane)
                    return over("block", s.block, g.blocks_per_plane);
            [[fallthrough]];
        case FlashOpcode::Xor:
            if (c.planes != 1) return std::string(opcode_name(c.op)) + " works on one plane";
            if (c.column > g.page_total_bytes() || c.length > g.page_total_bytes() - c.column)
                return "latch transfer of " + std::to_string(c.length) + " bytes at column " +
                       std::to_string(c.column) + " is not inside the " +
                       std::to_string(g.page_total_bytes()) + "-byte latch";
            break;
        case FlashOpcode::Accumulate:
            if (c.planes != 1) return "accumulate works on one plane";
            if (c.length == 0 || c.column > g.page_bytes || c.length > g.page_bytes - c.column)
                return "accumulate of " + std::to_string(c.length) + " bytes at column " +
                       std::to_string(c.column) + " is not inside the " +
                       std::to_string(g.page_bytes) + "-byte page";
            [[fallthrough]];
        case FlashOpcode::AccOut:
            if (std::string why = isp_.check(c.acc.offset, c.length); !why.empty()) return why;
            break;
    }
    return {};
}

FlashCompletion FlashController::submit(const FlashCommand& cmd, const sc_time& at) {
    commands_.add();
    Run r{cmd, {}, at, 0, page_buf_};
    r.out.tag = cmd.tag;
    if (in_flight(at) >= cfg_.queue_depth) {
        full_.add();
        r.out.status = FlashStatus::Full;
        r.out.error = std::string(name()) + ": queue full (" + std::to_string(cfg_.queue_depth) +
                      " commands in flight); command dropped";
    } else if (std::string why = check(cmd); !why.empty()) {
        r.out.status = FlashStatus::Refused;
        r.out.error = std::string(name()) + ": " + opcode_name(cmd.op) + ": " + why;
    } else {
        if (services_.trace.enabled()) r.flow = services_.trace.new_flow();
        run(r);
    }
    if (r.out.status == FlashStatus::Refused) refused_.add();
    r.out.done = r.t;
    r.out.latency_ns = core::ns_of(r.t - at);
    if (r.out.status != FlashStatus::Full && uint32_t(cmd.op) - 1 < latency_.size())
        latency_[uint32_t(cmd.op) - 1]->sample(r.out.latency_ns);
    if (services_.trace.enabled() && r.out.status != FlashStatus::Full)
        services_.trace.complete(track_, opcode_name(cmd.op), "flash", at, r.t - at, r.flow,
                                 {{"die", std::to_string(cmd.die)},
                                  {"block", std::to_string(cmd.block)},
                                  {"page", std::to_string(cmd.page)},
                                  {"status", status_name(r.out.status)}});
    if (r.out.status != FlashStatus::Full) in_flight_probe_.add(at, r.t);
    if (log_.on(core::LogLevel::Debug))
        log_(core::LogLevel::Debug,
             std::string(opcode_name(cmd.op)) + " die " + std::to_string(cmd.die) + " block " +
                 std::to_string(cmd.block) + " page " + std::to_string(cmd.page) + ": " +
                 status_name(r.out.status) + " after " + std::to_string(r.out.latency_ns) + " ns" +
                 (r.out.error.empty() ? "" : " (" + r.out.error + ")"),
             at);
    pending_.emplace(r.t, r.out);
    const sc_time now = sc_core::sc_time_stamp();
    wake_.notify(r.t > now ? r.t - now : SC_ZERO_TIME);
    return r.out;
}

void FlashController::run(Run& r) {
    const FlashCommand& c = r.c;
    r.t += sc_time(cfg_.t_setup_ns, SC_NS);
    switch (c.op) {
        case FlashOpcode::Read:
            read(r);
            break;
        case FlashOpcode::Program:
            program(r);
            break;
        case FlashOpcode::Erase:
            nand::seq::erase(ext_, codec_, pages(c));
            issue(r, nullptr, 0, r.t);
            if (r.out.status == FlashStatus::Ok && !nand_cfg_.functional)
                for (uint32_t p = 0; p < c.planes; ++p)
                    for (uint32_t w = 0; w < nand_cfg_.geometry.wordlines_per_block; ++w)
                        spare_.erase(spare_key(c.die, c.plane + p, c.block, w));
            break;
        case FlashOpcode::Mws:
        case FlashOpcode::Xor:
            latch_op(r);
            break;
        case FlashOpcode::Accumulate:
            accumulate(r);
            break;
        case FlashOpcode::AccOut: {
            uint8_t* out = r.buf.data();
            r.t = memory(r, true, c.dram_addr, out, c.length,
                         isp_.drain(c.acc.offset, out, c.length, r.t));
            break;
        }
    }
}

// ISP: the page is sensed and leaves the die raw (operands are ESP pages, neither randomised nor
// encoded), streaming into the accelerator.
void FlashController::accumulate(Run& r) {
    const FlashCommand& c = r.c;
    nand::seq::read(ext_, codec_, pages(c));
    issue(r, nullptr, 0, r.t);
    if (r.out.status != FlashStatus::Ok) return;
    uint8_t* page = r.buf.data();
    nand::seq::data_out(ext_, codec_, c.die, c.plane, c.column, c.length);
    issue(r, page + c.column, c.length, r.t);
    if (r.out.status == FlashStatus::Ok) r.t = isp_.combine(c.acc, page + c.column, c.length, r.t);
}

std::vector<nand::PageAddress> FlashController::pages(const FlashCommand& c) const {
    std::vector<nand::PageAddress> v;
    for (uint32_t p = 0; p < c.planes; ++p)
        v.push_back({channel_, c.die, c.plane + p, c.block, c.page});
    return v;
}

sc_time FlashController::issue(Run& r, uint8_t* data, uint32_t length, const sc_time& at) {
    tlm::tlm_generic_payload gp;
    core::RequestExt req;
    req.flow = r.flow;
    core::set_access(gp, tlm::TLM_IGNORE_COMMAND, 0, data, length);
    gp.set_extension(&ext_);
    gp.set_extension(&req);
    const sc_time now = sc_core::sc_time_stamp();
    const sc_time start = std::max(at, die_free_[r.c.die]);
    sc_time delay = start - now;
    nand->b_transport(gp, delay);
    gp.clear_extension(&ext_);
    gp.clear_extension(&req);
    const sc_time ready = now + delay;
    die_free_[r.c.die] = ready;
    if (!ext_.ok() && r.out.status == FlashStatus::Ok) {
        r.out.status = FlashStatus::Refused;
        r.out.error = std::string(name()) + ": die " + std::to_string(r.c.die) + ": " + ext_.error;
    } else if ((ext_.status & nand::status::kFail) && r.out.status == FlashStatus::Ok) {
        r.out.status = FlashStatus::Failed;
        r.out.error = std::string(name()) + ": die " + std::to_string(r.c.die) + " reported FAIL";
        failed_.add();
    }
    r.t = ready;
    return ready;
}

sc_time FlashController::memory(Run& r, bool write, uint64_t addr, uint8_t* data, uint32_t length,
                                const sc_time& at) {
    tlm::tlm_generic_payload gp;
    core::set_access(gp, write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, addr, data,
                     length);
    const sc_time now = sc_core::sc_time_stamp();
    sc_time delay = at - now;
    dram->b_transport(gp, delay);
    bytes_moved_ += length;
    if (!gp.is_response_ok() && r.out.status == FlashStatus::Ok) {
        r.out.status = FlashStatus::Bus;
        r.out.error = std::string(name()) + ": SSD memory " + (write ? "write" : "read") + " at " +
                      core::TransactionTrace::hex(addr) + " (" + std::to_string(length) +
                      " B) failed: " + gp.get_response_string();
    }
    return now + delay;
}

bool FlashController::decode_codeword(Run& r, const BchCode& code, uint8_t* page, uint32_t data_at,
                                      uint32_t len, uint32_t parity_at,
                                      const std::vector<uint64_t>* flips) {
    codewords_decoded_.add();
    const PageCodeword res = decode_page_codeword(code, page, data_at, len, parity_at, flips);
    if (res.uncorrectable)
        ++r.out.uncorrectable_codewords;
    else
        r.out.corrected_bits += res.corrected;
    return res.erased;
}

// Page `index` of the command (its plane, or its page of a cache read): its bytes out of the
// C-latch of `plane` (page `page_no` of the command's block), through the decoder and the
// de-randomiser, into SSD memory at dram_addr + index * length, and its metadata to meta_addr +
// index * meta_bytes when meta_addr is set; returns when they are there.
sc_time FlashController::transfer_page(Run& r, uint32_t plane, uint32_t page_no, uint8_t* page,
                                       uint32_t index) {
    const uint64_t dram = r.c.dram_addr + uint64_t(index) * r.c.length;
    const FlashCommand& c = r.c;
    const uint32_t cw = cfg_.ecc.codeword_bytes, par = code_.parity_bytes();
    // Codewords k0..k1 hold the bytes asked for; their parity and the metadata come out too.
    const uint32_t k0 = c.column / cw, k1 = (c.column + c.length - 1) / cw, n = k1 - k0 + 1;
    // The raw bit errors of what comes out, when the die knows them all (in page order).
    flips_.clear();
    bool flips_known = cfg_.ecc.known_error_shortcut;
    auto out = [&](uint32_t column, uint32_t bytes) {
        nand::seq::data_out(ext_, codec_, c.die, plane, column, bytes);
        issue(r, page + column, bytes, r.t);
        flips_known = flips_known && ext_.flips_known;
        if (flips_known) flips_.insert(flips_.end(), ext_.flips.begin(), ext_.flips.end());
    };
    if (c.raw) {
        out(c.column, c.length);
    } else {
        out(k0 * cw, n * cw);
        out(parity_offset_ + k0 * par, n * par);
        out(meta_offset_, cfg_.meta_bytes + meta_code_.parity_bytes());
    }
    if (r.out.status != FlashStatus::Ok) return r.t;
    if (c.raw) return memory(r, true, dram, page + c.column, c.length, r.t);
    // The decoder works on codewords as they stream in: the page is decoded one codeword time
    // after its last byte, plus the correction when a codeword had errors.
    bool errors = false;
    if (nand_cfg_.functional) {
        const uint32_t before = r.out.corrected_bits + r.out.uncorrectable_codewords;
        const uint64_t key = randomiser_.page_key(channel_, c.die, plane, c.block, page_no);
        const std::vector<uint64_t>* flips = flips_known ? &flips_ : nullptr;
        for (uint32_t k = k0; k <= k1; ++k) {
            if (decode_codeword(r, code_, page, k * cw, cw, parity_offset_ + k * par, flips))
                continue;  // erased: ones, never scrambled
            // De-randomise the part of the codeword that was asked for.
            const uint32_t from = std::max(c.column, k * cw);
            const uint32_t to = std::min(c.column + c.length, (k + 1) * cw);
            randomiser_.apply(key, from, page + from, to - from);
        }
        decode_codeword(r, meta_code_, page, meta_offset_, cfg_.meta_bytes,
                        meta_offset_ + cfg_.meta_bytes, flips);
        errors = r.out.corrected_bits + r.out.uncorrectable_codewords != before;
    } else {
        // Timing only: the data reads as zeros; the metadata is what the program left.
        std::memset(page + c.column, 0, c.length);
        const auto it = spare_.find(spare_key(c.die, plane, c.block, page_no));
        if (it == spare_.end())
            std::memset(page + meta_offset_, 0xFF, cfg_.meta_bytes);
        else
            std::memcpy(page + meta_offset_, it->second.data(), cfg_.meta_bytes);
    }
    if (index == 0)
        std::memcpy(&r.out.meta, page + meta_offset_, std::min<uint32_t>(8, cfg_.meta_bytes));
    const sc_time decoded =
        r.t + sc_time(cfg_.ecc.t_decode_ns + (errors ? cfg_.ecc.t_correct_ns : 0.0), SC_NS);
    sc_time stored = memory(r, true, dram, page + c.column, c.length, decoded);
    if (c.meta_addr)
        stored = memory(r, true, c.meta_addr + uint64_t(index) * cfg_.meta_bytes,
                        page + meta_offset_, cfg_.meta_bytes, stored);
    return stored;
}

void FlashController::read(Run& r) {
    const FlashCommand& c = r.c;
    const uint32_t total = nand_cfg_.geometry.page_total_bytes();
    sc_time stored = r.t;
    nand::seq::read(ext_, codec_, pages(c));
    issue(r, nullptr, 0, r.t);
    if (c.pages <= 1) {
        for (uint32_t p = 0; p < c.planes && r.out.status == FlashStatus::Ok; ++p)
            stored = std::max(
                stored, transfer_page(r, c.plane + p, c.page, r.buf.data() + size_t(p) * total, p));
    } else {
        // Cache read (ONFI 31h/3Fh): while page i leaves the cache latch, page i+1 is sensed.
        for (uint32_t i = 0; i < c.pages && r.out.status == FlashStatus::Ok; ++i) {
            if (i + 1 < c.pages)
                nand::seq::cache_read(ext_, codec_,
                                      {channel_, c.die, c.plane, c.block, c.page + i + 1});
            else
                nand::seq::cache_read_end(ext_, c.die);
            issue(r, nullptr, 0, r.t);
            if (r.out.status != FlashStatus::Ok) break;
            stored = std::max(stored, transfer_page(r, c.plane, c.page + i, r.buf.data(), i));
        }
    }
    if (r.out.uncorrectable_codewords && r.out.status == FlashStatus::Ok) {
        r.out.status = FlashStatus::Uncorrectable;
        r.out.error = std::string(name()) + ": die " + std::to_string(c.die) + " block " +
                      std::to_string(c.block) + " page " + std::to_string(c.page) + ": " +
                      std::to_string(r.out.uncorrectable_codewords) +
                      " codeword(s) beyond the ECC's " + std::to_string(cfg_.ecc.t_bits) + " bits";
        uncorrectable_.add();
    }
    corrected_bits_.add(r.out.corrected_bits);
    r.t = std::max(r.t, stored);
}

void FlashController::encode_page(uint32_t die, uint32_t plane, uint32_t block, uint32_t page_no,
                                  uint8_t* page) const {
    const uint32_t cw = cfg_.ecc.codeword_bytes, par = code_.parity_bytes();
    randomise_page(die, plane, block, page_no, page);
    for (uint32_t k = 0; k < codewords_; ++k)
        code_.encode(page + k * cw, cw, page + parity_offset_ + k * par);
    uint8_t* meta = page + meta_offset_;
    meta_code_.encode(meta, cfg_.meta_bytes, meta + cfg_.meta_bytes);
}

void FlashController::randomise_page(uint32_t die, uint32_t plane, uint32_t block, uint32_t page_no,
                                     uint8_t* page) const {
    randomiser_.apply(randomiser_.page_key(channel_, die, plane, block, page_no), 0, page,
                      nand_cfg_.geometry.page_bytes);
}

void FlashController::program(Run& r) {
    const FlashCommand& c = r.c;
    const nand::Geometry& g = nand_cfg_.geometry;
    const uint32_t total = g.page_total_bytes();
    sc_time loaded = r.t;
    for (uint32_t p = 0; p < c.planes; ++p) {
        uint8_t* page = r.buf.data() + size_t(p) * total;
        std::memset(page, 0xFF, total);
        loaded = memory(r, false, c.dram_addr + uint64_t(p) * c.length, page, c.length, loaded);
        uint8_t* meta = page + meta_offset_;
        std::memset(meta, 0, cfg_.meta_bytes);
        if (c.meta_addr)
            loaded = memory(r, false, c.meta_addr + uint64_t(p) * cfg_.meta_bytes, meta,
                            cfg_.meta_bytes, loaded);
        else
            std::memcpy(meta, &c.meta, std::min<uint32_t>(8, cfg_.meta_bytes));
        if (!nand_cfg_.functional || c.raw) continue;
        encode_page(c.die, c.plane + p, c.block, c.page, page);
    }
    if (r.out.status != FlashStatus::Ok) return;
    // The encoder runs as the bytes stream to the die: one codeword's latency on top.
    if (!c.raw) loaded += sc_time(cfg_.ecc.t_encode_ns, SC_NS);
    nand::seq::program(ext_, codec_, pages(c), c.mode,
                       c.raw ? nand::Scramble::None : nand::Scramble::Controller, total);
    issue(r, r.buf.data(), total * c.planes, loaded);
    if (r.out.status != FlashStatus::Ok || nand_cfg_.functional || c.raw) return;
    for (uint32_t p = 0; p < c.planes; ++p)
        keep_spare(c.die, c.plane + p, c.block, c.page,
                   r.buf.data() + size_t(p) * total + meta_offset_);
}

uint64_t FlashController::spare_key(uint32_t die, uint32_t plane, uint32_t block,
                                    uint32_t page) const {
    const nand::Geometry& g = nand_cfg_.geometry;
    return ((uint64_t(die) * g.planes_per_die + plane) * g.blocks_per_plane + block) *
               g.wordlines_per_block +
           page;
}

void FlashController::keep_spare(uint32_t die, uint32_t plane, uint32_t block, uint32_t page,
                                 const uint8_t* meta) {
    spare_[spare_key(die, plane, block, page)].assign(meta, meta + cfg_.meta_bytes);
}

void FlashController::preload_page(nand::Plane& target, uint32_t die, uint32_t plane,
                                   uint32_t block, uint32_t page_no, nand::CellMode mode,
                                   uint8_t* page, std::shared_ptr<nand::PageSource> source) {
    if (nand_cfg_.functional)
        encode_page(die, plane, block, page_no, page);
    else
        keep_spare(die, plane, block, page_no, page + meta_offset_);
    if (nand_cfg_.functional && source)
        target.program_from(std::move(source), block, page_no, mode, nand::Scramble::Controller,
                            0.0);
    else
        target.program_image(block, page_no, mode, nand::Scramble::Controller, page,
                             nand_cfg_.geometry.page_total_bytes(), 0.0);
}

void FlashController::latch_op(Run& r) {
    const FlashCommand& c = r.c;
    if (c.op == FlashOpcode::Mws) {
        std::vector<nand::seq::MwsOperand> slots;
        for (const MwsSlot& s : c.mws) slots.push_back({s.block, s.pbm});
        nand::seq::mws(ext_, codec_, c.die, c.plane, c.mws_flags, slots);
    } else {
        nand::seq::xor_latches(ext_, codec_, c.die, c.plane);
    }
    issue(r, nullptr, 0, r.t);
    if (c.length == 0 || r.out.status != FlashStatus::Ok) return;
    uint8_t* page = r.buf.data();
    nand::seq::data_out(ext_, codec_, c.die, c.plane, c.column, c.length);
    issue(r, page + c.column, c.length, r.t);
    if (r.out.status == FlashStatus::Ok)
        r.t = memory(r, true, c.dram_addr, page + c.column, c.length, r.t);
}

size_t FlashController::in_flight(const sc_time& at) const {
    return size_t(std::distance(pending_.upper_bound(at), pending_.end()));
}

size_t FlashController::completions(const sc_time& at) {
    while (!pending_.empty() && pending_.begin()->first <= at) {
        const sc_time done = pending_.begin()->first;
        visible_.push_back(std::move(pending_.begin()->second));
        pending_.erase(pending_.begin());
        update_irq(done);  // the line rises when the completion enters the queue
    }
    return visible_.size() - visible_head_;
}

FlashCommand FlashController::from_registers() const {
    FlashCommand c;
    const uint64_t cmd = bank_.read("command");
    c.op = FlashOpcode((cmd >> kOpShift) & 0xF);
    const uint32_t mode = (cmd >> kModeShift) & 7;
    c.mode = mode < 4 ? kModes[mode] : nand::CellMode::Erased;
    c.raw = (cmd >> kRawBit) & 1;
    c.planes = std::max<uint32_t>(1, (cmd >> kPlanesShift) & 0xF);
    c.mws_flags = uint8_t((cmd >> kFlagsShift) & 0xF);
    c.tag = uint16_t(cmd >> kTagShift);
    c.die = uint32_t(bank_.read("die"));
    c.plane = uint32_t(bank_.read("plane"));
    c.block = uint32_t(bank_.read("block"));
    c.page = uint32_t(bank_.read("page"));
    c.column = uint32_t(bank_.read("column"));
    c.dram_addr = bank_.read("dram_addr");
    c.length = uint32_t(bank_.read("length"));
    c.pages = std::max<uint32_t>(1, uint32_t(bank_.read("pages")));
    const uint64_t acc = bank_.read("acc");
    c.acc = {AccOp(acc & 3), ((acc >> 2) & 1) != 0, ((acc >> 3) & 1) != 0, uint32_t(acc >> 8)};
    c.meta = bank_.read("meta");
    c.meta_addr = bank_.read("meta_addr");
    if (c.op == FlashOpcode::Mws) {
        const uint64_t n = bank_.read("mws_count");
        for (uint64_t i = 0; i < std::min<uint64_t>(n, kMaxMwsOperands); ++i)
            c.mws.push_back({uint32_t(bank_.read("mws_block" + std::to_string(i))),
                             bank_.read("mws_pbm" + std::to_string(i))});
        if (n > kMaxMwsOperands) c.mws.resize(kMaxMwsOperands + 1);  // refused by check()
    }
    return c;
}

void FlashController::on_submit(const core::RegisterAccess& a) {
    if (!(a.value & a.lanes & 1)) return;
    submit(from_registers(), a.at);
}

size_t FlashController::waiting(const core::RegisterAccess& a) {
    return a.debug ? visible_.size() - visible_head_ : completions(a.at);
}

void FlashController::on_pop(const core::RegisterAccess& a) {
    if (!(a.value & a.lanes & 1)) return;
    if (completions(a.at) > 0 && ++visible_head_ == visible_.size()) {
        visible_.clear();
        visible_head_ = 0;
    }
    update_irq(a.at);
}

void FlashController::update_irq(const sc_time& at) {
    const bool level = (bank_.read("irq_enable") & 1) && visible_.size() > visible_head_;
    if (level == irq_level_) return;
    irq_level_ = level;
    if (irq_) irq_(level, at);
}

void FlashController::irq_thread() {
    while (true) {
        wait(wake_);
        const sc_time now = sc_core::sc_time_stamp();
        completions(now);
        if (!pending_.empty()) wake_.notify(pending_.begin()->first - now);
    }
}

}  // namespace canopy::ssd
