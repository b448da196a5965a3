#include "link/dma_registers.hpp"

#include "link/command_status.hpp"

namespace canopy::link {

namespace {
using core::Access;
constexpr uint64_t kStart = 1u << 0, kDirection = 1u << 1, kTranslate = 1u << 2,
                   kIrqEnable = 1u << 3;
}  // namespace

void DmaRegistersConfig::describe(core::Params& p) {
    core::Params s = p.scope("link").scope("dma_regs");
    bank.describe(s);
}

core::RegisterMap DmaRegisters::register_map() {
    return core::RegisterMap(
        "dma", "the device DMA engine's registers, programmed by the host through a PCIe BAR",
        {
            {"host_addr", 0x00, 64, Access::RW, 0,
             "host address of the transfer: physical, or virtual when control.translate is set"},
            {"device_addr", 0x08, 64, Access::RW, 0, "device memory address of the transfer"},
            {"length", 0x10, 32, Access::RW, 0, "bytes to move; 0 is refused (zero_length)"},
            {"control",
             0x14,
             32,
             Access::RW,
             0,
             "descriptor options; writing start = 1 runs the descriptor",
             {
                 {"start",
                  0,
                  1,
                  "write 1: run the descriptor in host_addr, device_addr, length, control",
                  {},
                  Access::Trigger},
                 {"direction",
                  1,
                  1,
                  "which way the bytes move",
                  {{"host_to_device", 0, "read host memory, write device memory"},
                   {"device_to_host", 1, "read device memory, write host memory"}}},
                 {"translate", 2, 1,
                  "host_addr is virtual (ATS through the ATC); must match the engine's mode "
                  "link.dma.translate, else translate_mismatch"},
                 {"irq_enable", 3, 1, "raise the completion interrupt when done is set"},
             }},
            command_status::status_register(0x18, "descriptor"),
            {"error_code",
             0x1C,
             32,
             Access::RO,
             0,
             "why the last descriptor failed",
             {{"code",
               0,
               8,
               "failure reason",
               {{"none", uint64_t(DmaErrorCode::None), "it succeeded"},
                {"zero_length", uint64_t(DmaErrorCode::ZeroLength), "length was 0"},
                {"translate_mismatch", uint64_t(DmaErrorCode::TranslateMismatch),
                 "control.translate differs from the engine's mode"},
                {"transfer", uint64_t(DmaErrorCode::Transfer),
                 "a bus error or translation fault ended it; see bytes_done"}}}}},
            {"completed", 0x20, 32, Access::RO, 0,
             "descriptors completed since reset, with or without error (wraps)"},
            {"bytes_done", 0x28, 64, Access::RO, 0,
             "bytes the last descriptor moved (length unless it failed)"},
            {"last_latency_ns", 0x30, 64, Access::RO, 0,
             "the last descriptor's time from start to done, in ns (rounded)"},
        });
}

DmaRegisters::DmaRegisters(sc_core::sc_module_name name, DmaEngine& engine,
                           core::Services& services, const DmaRegistersConfig& cfg)
    : sc_module(name),
      socket("socket"),
      engine_(engine),
      bank_("bank", register_map(), services, cfg.bank),
      starts_(services.stats.counter(this->name(), "starts", "descriptors started", true)),
      overruns_(services.stats.counter(this->name(), "overruns", "starts ignored while busy")),
      refused_(services.stats.counter(this->name(), "refused",
                                      "descriptors refused before the engine (zero length, "
                                      "translate mismatch)")),
      interrupts_(services.stats.counter(this->name(), "interrupts", "completion interrupts")) {
    socket.bind(bank_.socket);
    bank_.on_write("control", [this](const core::RegisterAccess& a) { on_control(a); });
    SC_THREAD(run);
}

void DmaRegisters::on_interrupt(std::function<void(const DmaResult&)> fn) {
    interrupt_callbacks_.push_back(std::move(fn));
}

void DmaRegisters::on_control(const core::RegisterAccess& a) {
    if (!(a.triggered() & kStart) || !command_status::begin(bank_, overruns_)) return;
    const uint64_t control = bank_.read("control");
    pending_.direction =
        (control & kDirection) ? DmaDirection::DeviceToHost : DmaDirection::HostToDevice;
    pending_.host_address = bank_.read("host_addr");
    pending_.device_address = bank_.read("device_addr");
    pending_.length = bank_.read("length");
    pending_translate_ = (control & kTranslate) != 0;
    starts_.add();
    // The thread runs the descriptor at the write's simulated time (a.at is never before now).
    start_.notify(a.at - sc_core::sc_time_stamp());
}

void DmaRegisters::run() {
    while (true) {
        wait(start_);
        const DmaDescriptor d = pending_;
        DmaResult r;
        r.completion = sc_core::sc_time_stamp();
        if (d.length == 0) {
            refused_.add();
            r.error = std::string(name()) + ": zero-length descriptor refused";
            complete(r, DmaErrorCode::ZeroLength);
            continue;
        }
        if (pending_translate_ != engine_.config().translate) {
            refused_.add();
            r.error = std::string(name()) +
                      ": control.translate = " + std::to_string(int(pending_translate_)) +
                      " but the engine's " + "link.dma.translate is " +
                      (engine_.config().translate ? "on" : "off");
            complete(r, DmaErrorCode::TranslateMismatch);
            continue;
        }
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        r = engine_.execute(d, delay);
        wait(delay);  // the transfer's time passes: status shows busy meanwhile
        complete(r, r.ok ? DmaErrorCode::None : DmaErrorCode::Transfer);
    }
}

void DmaRegisters::complete(const DmaResult& r, DmaErrorCode code) {
    last_ = r;
    bank_.write("error_code", uint64_t(code));
    bank_.write("bytes_done", r.bytes_done);
    command_status::finish(bank_, code != DmaErrorCode::None, r.latency_ns);
    if (!(bank_.read("control") & kIrqEnable)) return;
    interrupts_.add();
    interrupt_.notify(sc_core::SC_ZERO_TIME);
    for (size_t i = 0; i < interrupt_callbacks_.size(); ++i) interrupt_callbacks_[i](r);
}

}  // namespace canopy::link
