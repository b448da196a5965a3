// A model library built against another version of Canopy (its version string is not this
// Canopy's): refused before it registers anything.
#include "platform/user_model.hpp"

extern "C" __attribute__((visibility("default"))) const char canopy_model_library_version[] =
    "0.0.0-other";
extern "C" __attribute__((visibility("default"))) void canopy_register_models(
    canopy::platform::ModelRegistry&) {}
