#include "platform/user_model.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace canopy::platform {

const char* to_string(Attach a) {
    switch (a) {
        case Attach::bar:
            return "bar";
        case Attach::ring:
            return "ring";
        case Attach::flash_channel:
            return "flash_channel";
    }
    return "?";
}

namespace {
const char* socket_of(Attach a) {
    return a == Attach::bar    ? "bar_target()"
           : a == Attach::ring ? "ring_interface()"
                               : "flash_target()";
}
}  // namespace

ModelRegistry& ModelRegistry::global() {
    static ModelRegistry r;
    return r;
}

void ModelRegistry::add(Entry e) {
    auto refuse = [&](const std::string& why) { throw InputError("--model", loading_, why); };
    if (e.name.empty() || e.name.size() > 32 ||
        e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos ||
        !std::isalpha(static_cast<unsigned char>(e.name[0])))
        refuse("registers a model named '" + e.name +
               "': a name is 1 to 32 of a-z, 0-9 and '_', starting with a letter");
    for (const auto& o : entries_)
        if (o->name == e.name)
            refuse("registers a model '" + e.name + "', which " + o->library + " registered");
    if (!e.make || !e.make_config || !e.describe) refuse("registers '" + e.name + "' incomplete");
    e.library = loading_;
    entries_.push_back(std::make_shared<const Entry>(std::move(e)));
}

void ModelRegistry::load(const std::string& path) {
    auto refuse = [&](const std::string& why) { throw InputError("--model", path, why); };
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) refuse("no such file");
    // RTLD_NOW: a symbol canopy does not have is refused here, not in the middle of a run. The
    // library stays loaded for the process (its models' code).
    void* h = dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) refuse(std::string("cannot load it: ") + dlerror());
    const auto* version = static_cast<const char*>(dlsym(h, "canopy_model_library_version"));
    using Register = void (*)(ModelRegistry&);
    const auto reg = reinterpret_cast<Register>(dlsym(h, "canopy_register_models"));
    if (!version || !reg)
        refuse(
            "not a Canopy model library: no canopy_model_library_version and "
            "canopy_register_models (define them with CANOPY_MODEL_LIBRARY, "
            "platform/user_model.hpp)");
    if (std::strcmp(version, core::kVersion) != 0)
        refuse(std::string("built against Canopy ") + version + "; this is Canopy " +
               core::kVersion + ": rebuild it against this version's headers");
    const size_t before = entries_.size();
    loading_ = path;
    try {
        reg(*this);
    } catch (...) {
        loading_ = "(built in)";
        entries_.resize(before);
        throw;
    }
    loading_ = "(built in)";
    if (entries_.size() == before) refuse("registers no model");
}

void ModelSetup::describe(core::Params& p) {
    switch (entry->attach) {
        case Attach::bar:
            p("bar_offset", bar_offset, "B",
              "its window's offset in the device's BAR0 (free: 0x2000 to 0x3fffff)", 0,
              (8ull << 20) - 1)("bar_bytes", bar_bytes, "B", "its window's size in BAR0", 4,
                                8ull << 20);
            break;
        case Attach::ring:
            p("node", node, "", "its node id on the SSD's ring (0: the next after the bridge's)", 0,
              255);
            break;
        case Attach::flash_channel:
            p("channel", channel, "",
              "the flash channel it is the target of, in place of the "
              "NAND array's",
              0, 255);
            break;
    }
    entry->describe(config.get(), p);
}

std::vector<ModelSetup> ModelSetup::registered() {
    std::vector<ModelSetup> out;
    for (const auto& e : ModelRegistry::global().entries()) {
        ModelSetup s;
        s.entry = e;
        s.config = e->make_config();
        out.push_back(std::move(s));
    }
    return out;
}

ModelBay::ModelBay(sc_core::sc_module_name name, const std::vector<ModelSetup>& setups,
                   core::Services& services)
    : sc_module(name) {
    for (const ModelSetup& s : setups) {
        models.push_back(s.entry->make(s.entry->name.c_str(), s.config.get(), services));
        UserModel& m = *models.back();
        const Attach a = s.entry->attach;
        const bool gives = a == Attach::bar    ? m.bar_target() != nullptr
                           : a == Attach::ring ? m.ring_interface() != nullptr
                                               : m.flash_target() != nullptr;
        if (!gives)
            throw InputError("--model", s.entry->library,
                             "model '" + s.entry->name + "' attaches to " + to_string(a) +
                                 " but its " + socket_of(a) + " is null");
    }
}

}  // namespace canopy::platform
