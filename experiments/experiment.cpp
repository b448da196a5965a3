#include "experiments/experiment.hpp"

#include <cmath>

namespace canopy::experiments {

std::optional<double> ExpRow::error_pct() const {
    if (!paper_machine || (!published && !has_range())) return std::nullopt;
    // Against a published 0 the difference is taken relative to the simulated value: 0 when it
    // is 0 too, otherwise wholly off (+-100%).
    auto from = [&](double p) -> double {
        if (p == 0) return simulated == 0 ? 0.0 : 100.0 * simulated / std::fabs(simulated);
        return 100.0 * (simulated - p) / std::fabs(p);
    };
    if (!has_range()) return from(*published);
    if (simulated < published_lo) return from(published_lo);
    if (simulated > published_hi) return from(published_hi);
    return 0.0;
}

PlatformConfig ExpOptions::platform(const std::vector<std::string>& extra,
                                    std::vector<core::ParamInfo>* params) const {
    std::vector<std::string> all = overrides;
    all.insert(all.end(), extra.begin(), extra.end());
    PlatformConfig cfg = machine ? machine() : PlatformConfig();
    std::vector<core::ParamInfo> p = platform::load_config(cfg, config_file, all);
    if (params) *params = std::move(p);
    cfg.debug = debug;
    return cfg;
}

}  // namespace canopy::experiments
