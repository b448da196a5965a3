#include "core/waves.hpp"

#include "core/error.hpp"

namespace canopy::core {

Waves::~Waves() { close(); }

void Waves::open(const std::string& path) {
    std::string base = path;
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".vcd") == 0) base.resize(base.size() - 4);
    file_ = sc_core::sc_create_vcd_trace_file(base.c_str());
    if (!file_) throw InputError(path, "", "cannot create VCD file");
    file_->set_time_unit(1, sc_core::SC_NS);
}

void Waves::close() {
    if (file_) sc_core::sc_close_vcd_trace_file(file_);
    file_ = nullptr;
}

}  // namespace canopy::core
