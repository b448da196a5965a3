// A model library that registers one name twice: refused, naming it.
#include "platform/user_model.hpp"

namespace {
struct Nothing : canopy::platform::UserModel {
    struct Config {
        void describe(canopy::core::Params&) {}
    };
    Nothing(sc_core::sc_module_name n, const Config&, canopy::core::Services&) : UserModel(n) {}
};
}  // namespace

CANOPY_MODEL_LIBRARY(registry) {
    registry.add<Nothing>("twice", canopy::platform::Attach::bar, "first");
    registry.add<Nothing>("twice", canopy::platform::Attach::bar, "second");
}
