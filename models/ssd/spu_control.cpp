#include "ssd/spu_control.hpp"

namespace canopy::ssd {

namespace {
using core::Access;
const char* const kSegmentRegs[] = {"code_base", "code_size", "data_base", "data_size"};
}  // namespace

void SpuControlConfig::describe(core::Params& p) { bank.describe(p); }

core::RegisterMap SpuControl::register_map() {
    const std::vector<core::FieldValue> none;
    return core::RegisterMap(
        "spu_ctl",
        "an SPU's control block: identity, segment registers, interrupts, performance counters",
        {
            {"id",
             0x00,
             32,
             Access::RO,
             0,
             "who this SPU is on the ring",
             {
                 {"node", 0, 8, "this SPU's ring node (SPU i is node i)"},
                 {"spu_count", 8, 8, "SPUs in the SSD"},
                 {"bridge_node", 16, 8, "the PCIe bridge's ring node (= spu_count)"},
                 {"flash", 24, 1,
                  "a flash controller answers in this SPU's flash window (SPU i drives channel "
                  "i, when the array has one)"},
             }},
            {"code_base", 0x04, 32, Access::RW, 0,
             "first instruction address the running SSD App may fetch (user mode)"},
            {"code_size", 0x08, 32, Access::RW, 0,
             "bytes of the app's code segment; 0: the app may fetch nothing"},
            {"data_base", 0x0C, 32, Access::RW, 0,
             "first data address the running SSD App may load or store (user mode)"},
            {"data_size", 0x10, 32, Access::RW, 0,
             "bytes of the app's data segment; 0: the app may touch no data"},
            {"irq_pending",
             0x14,
             32,
             Access::RO,
             0,
             "interrupt sources now active (levels)",
             {
                 {"ni_request", unsigned(SpuIrq::NiRequest), 1,
                  "the network interface holds a received request"},
                 {"ni_response", unsigned(SpuIrq::NiResponse), 1,
                  "the network interface holds a received response"},
                 {"dma_done", unsigned(SpuIrq::DmaDone), 1,
                  "the DMA controller finished (its status.done is set, irq enabled there)"},
                 {"flash_done", unsigned(SpuIrq::FlashDone), 1,
                  "the flash controller holds completions (irq enabled there)"},
             }},
            {"irq_enable",
             0x18,
             32,
             Access::RW,
             0,
             "sources that raise the core's external interrupt (MEIP)",
             {
                 {"ni_request", unsigned(SpuIrq::NiRequest), 1, "received requests"},
                 {"ni_response", unsigned(SpuIrq::NiResponse), 1, "received responses"},
                 {"dma_done", unsigned(SpuIrq::DmaDone), 1, "DMA completion"},
                 {"flash_done", unsigned(SpuIrq::FlashDone), 1, "flash completions"},
             }},
            {"perf_requests_in", 0x20, 32, Access::RO, 0,
             "RPC requests the network interface accepted (wraps)"},
            {"perf_requests_dropped", 0x24, 32, Access::RO, 0,
             "RPC requests dropped for want of receive buffer (wraps)"},
            {"perf_responses_in", 0x28, 32, Access::RO, 0, "responses received (wraps)"},
            {"perf_requests_out", 0x2C, 32, Access::RO, 0, "requests sent (wraps)"},
            {"perf_dma_bytes", 0x30, 64, Access::RO, 0, "bytes the DMA controller moved"},
            {"perf_flash_bytes", 0x38, 64, Access::RO, 0,
             "bytes the flash controller moved to or from the SSD's memory"},
            {"store_base", 0x40, 64, Access::RO, 0,
             "SSD memory address of this SPU's local store (its bank) [Willow 3.1]"},
            {"store_bytes", 0x48, 64, Access::RO, 0,
             "bytes of this SPU's local store: SPU-OS keeps NVM transfers inside it"},
        });
}

SpuControl::SpuControl(sc_core::sc_module_name name, cpu::Rv32Core& core, unsigned node,
                       unsigned spu_count, bool flash, LocalStore store, core::Services& services,
                       const SpuControlConfig& cfg)
    : sc_module(name),
      socket("socket"),
      core_(core),
      bank_("bank", register_map(), services, cfg.bank) {
    socket.bind(bank_.socket);
    bank_.write("id", node | (spu_count << 8) | (spu_count << 16) | (uint32_t(flash) << 24));
    bank_.write("store_base", store.base);
    bank_.write("store_bytes", store.bytes);
    for (const char* r : kSegmentRegs)
        bank_.on_write(r, [this](const core::RegisterAccess&) { segments_written(); });
    bank_.on_write("irq_enable", [this](const core::RegisterAccess& a) { update_meip(a.at); });
}

void SpuControl::segments_written() {
    cpu::Segments s;
    s.code_base = uint32_t(bank_.read("code_base"));
    s.code_size = uint32_t(bank_.read("code_size"));
    s.data_base = uint32_t(bank_.read("data_base"));
    s.data_size = uint32_t(bank_.read("data_size"));
    core_.set_segments(s);
}

void SpuControl::set_irq(SpuIrq source, bool level, const sc_core::sc_time& at) {
    const uint32_t bit = 1u << unsigned(source);
    pending_ = level ? (pending_ | bit) : (pending_ & ~bit);
    bank_.write("irq_pending", pending_);
    update_meip(at);
}

bool SpuControl::irq_level(SpuIrq source) const { return (pending_ >> unsigned(source)) & 1u; }

void SpuControl::update_meip(const sc_core::sc_time& at) {
    (void)at;  // the core takes an interrupt at its next quantum boundary or wfi wake-up
    core_.set_irq(cpu::cause::kMei, (pending_ & bank_.read("irq_enable")) != 0);
}

void SpuControl::counter_source(const std::string& reg, std::function<uint64_t()> source) {
    bank_.on_read(reg, [source = std::move(source)](core::RegisterAccess& a) {
        a.value = source() & a.reg.width_mask();
    });
}

}  // namespace canopy::ssd
