#pragma once

namespace canopy::app {
inline constexpr const char* kVersion = "0.1.0";
}
