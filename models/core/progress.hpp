// The progress line of long runs: simulated time, wall time, simulation rate and, when the end
// is known, the time left. Drawn on stderr only when it is a terminal and the run is not quiet.
#pragma once

#include <chrono>
#include <systemc>

namespace canopy::core {

class Progress {
  public:
    Progress(bool wanted, sc_core::sc_time end = sc_core::SC_ZERO_TIME);
    void update(const sc_core::sc_time& now);
    void finish();
    double wall_seconds() const;

  private:
    bool on_;
    sc_core::sc_time end_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    bool drawn_ = false;
};

}  // namespace canopy::core
