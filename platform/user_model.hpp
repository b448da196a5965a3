// Models from outside Canopy (docs/sdk.md, "A TLM-2.0 model"): the extension point of
// elaboration. A shared library built against the installed headers (find_package(Canopy),
// Canopy::model) registers TLM-2.0 modules by name and says where each attaches:
//
//   - Attach::bar: a window of the device's BAR0 (model.NAME.bar_offset, .bar_bytes) in the
//     8 MiB BAR beside the DMA, CTG and SSD bridge blocks; host programs reach it with
//     map_device(). The model's target socket sees offsets from the window's start.
//   - Attach::ring: a node on the Willow SSD's token ring (model.NAME.node), through a network
//     interface the model owns (ssd/network_interface.hpp): SPUs' apps and host HREs send it
//     RPCs as they send them to an SPU.
//   - Attach::flash_channel: the target of one flash channel (model.NAME.channel) in place of the
//     NAND array's: the SSD's flash controller and the command player drive it with Canopy's
//     NAND command protocol (nand/channel.hpp: a CommandExt per transaction) - a different NAND.
//
// `canopy run --model LIB.so` loads the library (dlopen) before the configuration is read: its
// canopy_register_models() adds the modules to the registry, each one's own keys join the
// configuration as model.NAME.* (`canopy config --dump --model LIB.so` lists them), and the
// platform builds each as "model.NAME" with the platform's services (statistics, trace tracks,
// waves, log) and binds it. A model is C++: it must be built against this very version of Canopy
// (CANOPY_MODEL_LIBRARY records it; another version's library is refused).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config.hpp"
#include "core/services.hpp"
#include "core/version.hpp"
#include "ssd/network_interface.hpp"

namespace canopy::platform {

enum class Attach { bar, ring, flash_channel };
const char* to_string(Attach a);

// What a model from outside is: a module that hands the platform the socket or interface its
// attachment binds (the others stay null).
class UserModel : public sc_core::sc_module {
  public:
    using sc_core::sc_module::sc_module;
    virtual tlm::tlm_target_socket<>* bar_target() { return nullptr; }    // Attach::bar
    virtual ssd::NetworkInterface* ring_interface() { return nullptr; }   // Attach::ring
    virtual tlm::tlm_target_socket<>* flash_target() { return nullptr; }  // Attach::flash_channel
};

class ModelRegistry {
  public:
    struct Entry {
        std::string name, description, library;
        Attach attach = Attach::bar;
        std::function<std::shared_ptr<void>()> make_config;
        std::function<void(void* config, core::Params& p)> describe;  // relative to model.NAME.
        std::function<std::unique_ptr<UserModel>(const char* name, const void* config,
                                                 core::Services& services)>
            make;
    };

    // Registers model M: M::Config (defaults in its members, `void describe(core::Params&)`)
    // and M(sc_core::sc_module_name, const M::Config&, core::Services&).
    template <class M>
    void add(const std::string& name, Attach attach, const std::string& description) {
        using Config = typename M::Config;
        Entry e;
        e.name = name;
        e.description = description;
        e.attach = attach;
        e.make_config = [] { return std::make_shared<Config>(); };
        e.describe = [](void* c, core::Params& p) { static_cast<Config*>(c)->describe(p); };
        e.make = [](const char* n, const void* c, core::Services& s) -> std::unique_ptr<UserModel> {
            return std::make_unique<M>(n, *static_cast<const Config*>(c), s);
        };
        add(std::move(e));
    }
    // Throws InputError (naming the library) for a bad or repeated name.
    void add(Entry e);

    // Loads a model library (--model PATH.so): InputError naming it for a file that is missing
    // or no model library, one built against another version of Canopy, or a bad registration.
    void load(const std::string& path);

    const std::vector<std::shared_ptr<const Entry>>& entries() const { return entries_; }
    // The registry of this process (model libraries register into it).
    static ModelRegistry& global();

  private:
    std::vector<std::shared_ptr<const Entry>> entries_;
    std::string loading_ = "(built in)";  // the library being loaded
};

// One registered model in a platform's configuration: where it attaches and its own config.
// (Copies of a PlatformConfig share the model's own config object.)
struct ModelSetup {
    std::shared_ptr<const ModelRegistry::Entry> entry;
    std::shared_ptr<void> config;
    uint64_t bar_offset = 0x10000;  // Attach::bar: in BAR0's free range 0x2000..0x3fffff
    uint64_t bar_bytes = 0x1000;
    uint32_t node = 0;     // Attach::ring: its node id (0: the next free id after the bridge's)
    uint32_t channel = 0;  // Attach::flash_channel
    void describe(core::Params& p);  // relative to model.NAME.
    // One per model of the global registry, with fresh configs.
    static std::vector<ModelSetup> registered();
};

// The container of the models from outside: module "model", each model "model.NAME".
class ModelBay : public sc_core::sc_module {
  public:
    ModelBay(sc_core::sc_module_name name, const std::vector<ModelSetup>& setups,
             core::Services& services);
    std::vector<std::unique_ptr<UserModel>> models;  // in the order of the setups
};

}  // namespace canopy::platform

// A model library's registration function:
//     CANOPY_MODEL_LIBRARY(registry) { registry.add<Crc>("crc", Attach::ring, "a CRC unit"); }
#define CANOPY_MODEL_LIBRARY(registry)                                                            \
    extern "C" __attribute__((visibility("default"))) const char canopy_model_library_version[] = \
        CANOPY_VERSION;                                                                           \
    extern "C" __attribute__((visibility("default"))) void canopy_register_models(                \
        canopy::platform::ModelRegistry& registry)
