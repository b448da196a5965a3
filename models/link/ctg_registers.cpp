#include "link/ctg_registers.hpp"

#include <string>

#include "core/sim_time.hpp"
#include "link/command_status.hpp"

namespace canopy::link {

namespace {
using core::Access;
constexpr uint64_t kStart = 1u << 0, kWrite = 1u << 1;
}  // namespace

void CtgRegistersConfig::describe(core::Params& p) {
    core::Params s = p.scope("link").scope("ctg_regs");
    bank.describe(s);
}

core::RegisterMap CtgRegisters::register_map() {
    return core::RegisterMap(
        "ctg",
        "the CCIX Traffic Generator's startTrans interface, programmed by the host through BAR0",
        {
            {"address", 0x00, 64, Access::RW, 0,
             "virtual address of the transfer in the host process the device works for"},
            {"length", 0x08, 32, Access::RW, 0, "bytes to move, 1 .. 1 MiB"},
            {"control",
             0x0C,
             32,
             Access::RW,
             0,
             "request type; writing start = 1 issues the transfer (startTrans)",
             {
                 {"start",
                  0,
                  1,
                  "write 1: issue the transfer in address, length, control",
                  {},
                  Access::Trigger},
                 {"type",
                  1,
                  1,
                  "what the request agent does",
                  {{"read", 0, "read host memory (device <- host)"},
                   {"write", 1, "write host memory (device -> host)"}}},
             }},
            command_status::status_register(0x10, "transfer"),
            {"error_code",
             0x14,
             32,
             Access::RO,
             0,
             "why the last transfer failed",
             {{"code",
               0,
               8,
               "failure reason",
               {{"none", uint64_t(CtgErrorCode::None), "it succeeded"},
                {"length", uint64_t(CtgErrorCode::Length), "length was 0 or above 1 MiB"},
                {"access", uint64_t(CtgErrorCode::Access),
                 "the request agent failed it (ATS failure, error response)"}}}}},
            {"completed", 0x18, 32, Access::RO, 0,
             "transfers completed since reset, with or without error (wraps)"},
            {"last_latency_ns", 0x20, 64, Access::RO, 0,
             "captured latency of the last transfer: its first request to its last data, in ns"},
        });
}

CtgRegisters::CtgRegisters(sc_core::sc_module_name name, RequestAgent& ra, uint32_t pasid,
                           core::Services& services, const CtgRegistersConfig& cfg)
    : sc_module(name),
      socket("socket"),
      ra_(ra),
      pasid_(pasid),
      bank_("bank", register_map(), services, cfg.bank),
      starts_(services.stats.counter(this->name(), "starts", "transfers started", true)),
      overruns_(services.stats.counter(this->name(), "overruns", "starts ignored while busy")),
      errors_(services.stats.counter(this->name(), "errors", "transfers failed or refused")),
      latency_(services.stats.distribution(this->name(), "latency", "ns",
                                           "captured transfer latency", true)) {
    socket.bind(bank_.socket);
    bank_.on_write("control", [this](const core::RegisterAccess& a) { on_control(a); });
    SC_THREAD(run);
}

void CtgRegisters::on_control(const core::RegisterAccess& a) {
    if (!(a.triggered() & kStart) || !command_status::begin(bank_, overruns_)) return;
    write_ = (bank_.read("control") & kWrite) != 0;
    address_ = bank_.read("address");
    length_ = bank_.read("length");
    starts_.add();
    start_.notify(a.at - sc_core::sc_time_stamp());  // at the write's simulated time
}

void CtgRegisters::run() {
    while (true) {
        wait(start_);
        const sc_core::sc_time t0 = sc_core::sc_time_stamp();
        CtgErrorCode code = CtgErrorCode::None;
        if (length_ == 0 || length_ > kMaxBytes) {
            code = CtgErrorCode::Length;
        } else {
            if (data_.size() < length_) data_.resize(length_);
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            const RaResult r = ra_.transfer(write_, pasid_, address_, data_.data(), length_, delay);
            wait(delay);  // the transfer's time passes: status shows busy meanwhile
            if (!r.ok) code = CtgErrorCode::Access;
        }
        const double latency = core::ns_of(sc_core::sc_time_stamp() - t0);
        if (code == CtgErrorCode::None)
            latency_.sample(latency);
        else
            errors_.add();
        bank_.write("error_code", uint64_t(code));
        command_status::finish(bank_, code != CtgErrorCode::None, latency);
    }
}

}  // namespace canopy::link
