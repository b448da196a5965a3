#include "core/progress.hpp"

#include <unistd.h>
#include <cstdio>

namespace canopy::core {

Progress::Progress(bool wanted, sc_core::sc_time end)
    : on_(wanted && isatty(STDERR_FILENO)),
      end_(end),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::wall_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(const sc_core::sc_time& now) {
    if (!on_) return;
    auto t = std::chrono::steady_clock::now();
    if (t - last_draw_ < std::chrono::milliseconds(200)) return;
    last_draw_ = t;
    double wall = wall_seconds(), sim_ms = now.to_seconds() * 1e3;
    double rate = wall > 0 ? sim_ms / wall : 0;
    std::fprintf(stderr, "\r  sim %.3f ms | wall %.1f s | %.3f sim-ms/s", sim_ms, wall, rate);
    if (end_ > sc_core::SC_ZERO_TIME && rate > 0)
        std::fprintf(stderr, " | %.0f s left", (end_.to_seconds() * 1e3 - sim_ms) / rate);
    std::fputs("   ", stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (drawn_) std::fputs("\r\033[K", stderr);
    drawn_ = false;
}

}  // namespace canopy::core
