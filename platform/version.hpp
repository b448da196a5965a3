#pragma once

namespace canopy::platform {
inline constexpr const char* kVersion = "0.1.0";
}
