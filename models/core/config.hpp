// Configuration: a JSON file overlaid with `--set key=value` overrides onto typed, documented
// defaults. Each module keeps its parameters in one struct with units in the field names and a
// `describe(Params&)` that names every field once; that single description serves loading,
// range checking, `canopy config --dump` and the docs. Keys nobody described are rejected, with
// the closest valid key suggested.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace canopy::core {

// The raw values a user gave: flattened dotted keys with the place each came from.
class ConfigSource {
  public:
    // What the value was written as: JSON's own types, or text (--set) that each parameter
    // parses as its type.
    enum class Kind : uint8_t { Text, Number, Bool, String };
    struct Value {
        std::string text;
        std::string origin;         // "cfg.json" or "--set"
        mutable bool used = false;  // set by binding, which sees the source as const
        Kind kind = Kind::Text;
    };

    // Bounds of a config file: far above any real one (the whole dump is ~20 KB, 5 levels), so
    // that a hostile file costs little memory and time before it is refused.
    static constexpr uint64_t kMaxFileBytes = 4 << 20;
    static constexpr int kMaxDepth = 16;

    // Reads a JSON object; nested objects become dotted keys. Throws InputError.
    void load_file(const std::string& path);
    // The same from text already read; `name` stands for the file in errors.
    void load_text(const std::string& text, const std::string& name);
    // Parses "key=value" (from --set). Throws InputError.
    void set(const std::string& assignment);
    void set(const std::string& key, const std::string& value, const std::string& origin,
             Kind kind = Kind::Text);

    const Value* find(const std::string& key) const;
    void mark_used(const std::string& key) const;
    // Throws InputError naming the first key no module described, with the closest known key.
    void check_all_used(const std::vector<std::string>& known_keys) const;

  private:
    std::map<std::string, Value> values_;
};

// One described parameter, as `config --dump` shows it.
struct ParamInfo {
    std::string key, type, unit, description, default_text, value_text, origin;
};

// Visitor handed to each config struct's describe(): binds a key to a field, loads the user's
// value into it (type- and range-checked) and records it for the dump.
class Params {
  public:
    explicit Params(const ConfigSource* source = nullptr) : source_(source) {}

    // A view of the same visitor under "prefix.".
    Params scope(const std::string& prefix);

    Params& operator()(const std::string& key, double& field, const char* unit, const char* desc,
                       double min = -1e300, double max = 1e300);
    Params& operator()(const std::string& key, uint64_t& field, const char* unit, const char* desc,
                       uint64_t min = 0, uint64_t max = UINT64_MAX);
    Params& operator()(const std::string& key, uint32_t& field, const char* unit, const char* desc,
                       uint32_t min = 0, uint32_t max = UINT32_MAX);
    Params& operator()(const std::string& key, bool& field, const char* desc);
    Params& operator()(const std::string& key, std::string& field, const char* desc);
    // A string restricted to a set of choices.
    Params& choice(const std::string& key, std::string& field,
                   const std::vector<std::string>& choices, const char* desc);

    const std::vector<ParamInfo>& infos() const { return shared_->infos; }
    std::vector<std::string> keys() const;

  private:
    struct Shared {
        std::vector<ParamInfo> infos;
    };
    Params(const ConfigSource* source, std::string prefix, std::shared_ptr<Shared> shared)
        : source_(source), prefix_(std::move(prefix)), shared_(std::move(shared)) {}

    template <class T, class Parse>
    Params& bind(const std::string& key, T& field, const char* type, const char* unit,
                 const char* desc, Parse parse);

    const ConfigSource* source_;
    std::string prefix_;
    std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

// Formats a parameter table for `canopy config --dump`; JSON when `as_json`, loadable by --config.
std::string dump_params(const std::vector<ParamInfo>& infos, bool as_json);

}  // namespace canopy::core
