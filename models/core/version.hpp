// Canopy's version, the CMake project's (written into every output's header and `canopy
// --version`).
#pragma once

namespace canopy::core {
inline constexpr const char* kVersion = CANOPY_VERSION;
}
