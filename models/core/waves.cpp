#include "core/waves.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace canopy::core {

Waves::~Waves() { close(); }

void Waves::open(const std::string& path) {
    close();
    std::string base = path;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".vcd") == 0)
        base.resize(base.size() - 4);
    // SystemC opens the file only when simulation starts and then reports a failure as an
    // sc_report; check now, so that a bad path is an input error before anything runs.
    const std::string name = base + ".vcd";
    std::FILE* probe = std::fopen(name.c_str(), "w");
    if (!probe)
        throw InputError(path, "", std::string("cannot open for writing: ") + std::strerror(errno));
    std::fclose(probe);
    file_ = sc_core::sc_create_vcd_trace_file(base.c_str());
    if (!file_) throw InputError(path, "", "cannot create VCD file");
    // Waves are drawn in nanoseconds: probes apply their changes on whole nanoseconds
    // (ScheduledSignal). SystemC's notes about the unit and the rounding would only clutter.
    sc_core::sc_report_handler::set_actions("tracing timescale unit set", sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions("current kernel time is not representable in VCD time units",
                                            sc_core::SC_DO_NOTHING);
    file_->set_time_unit(1, sc_core::SC_NS);
}

void Waves::close() {
    if (file_) sc_core::sc_close_vcd_trace_file(file_);
    file_ = nullptr;
}

}  // namespace canopy::core
