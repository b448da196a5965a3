#include "core/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/user_files.hpp"

namespace canopy::core {

namespace {

// SAX handler that flattens a JSON object into dotted keys as it parses, keeping each number's
// text exactly as written (no round trip through a double). Throws InputError on anything a
// config may not hold.
class Flattener : public nlohmann::json_sax<nlohmann::json> {
  public:
    Flattener(const std::string& path, const std::string& text, ConfigSource& out)
        : path_(path), text_(text), out_(out) {}

    bool null() override {
        throw InputError(path_, place(), "null is not a value; leave the key out for its default");
    }
    using Kind = ConfigSource::Kind;
    bool boolean(bool v) override { return value(v ? "true" : "false", Kind::Bool); }
    bool number_integer(number_integer_t v) override {
        return value(std::to_string(v), Kind::Number);
    }
    bool number_unsigned(number_unsigned_t v) override {
        return value(std::to_string(v), Kind::Number);
    }
    bool number_float(number_float_t, const string_t& text) override {
        return value(text, Kind::Number);
    }
    bool string(string_t& v) override { return value(v, Kind::String); }
    bool binary(binary_t&) override { return value("", Kind::String); }  // not from text

    bool start_object(std::size_t) override {
        // Each level keeps its whole dotted key: bounded depth keeps that memory linear.
        if (depth_ > ConfigSource::kMaxDepth)
            throw InputError(path_, place(),
                             "objects nested deeper than " +
                                 std::to_string(ConfigSource::kMaxDepth) +
                                 " levels; no config key is that deep");
        if (depth_++ > 0) prefixes_.push_back(full_key());
        return true;
    }
    bool key(string_t& k) override {
        if (k.empty()) throw InputError(path_, place(), "empty key name");
        key_ = k;
        return true;
    }
    bool end_object() override {
        if (--depth_ > 0) prefixes_.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        if (depth_ == 0)
            throw InputError(path_, "top level", "expected a JSON object, got an array");
        throw InputError(path_, place(),
                         "arrays are not allowed in a config; use one key per value");
    }
    bool end_array() override { return true; }

    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& e) override {
        // `position` counts the characters read, the offending one included.
        size_t at = std::min(position > 0 ? position - 1 : 0, text_.size());
        size_t line = 1 + size_t(std::count(text_.begin(), text_.begin() + long(at), '\n'));
        size_t line_start = text_.rfind('\n', at > 0 ? at - 1 : 0);
        size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
        // "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error ..."
        std::string message = e.what();
        auto p = message.find("] ");
        if (message.rfind("[json.exception.", 0) == 0 && p != message.npos) message.erase(0, p + 2);
        p = message.find(": ");
        if (message.rfind("parse error", 0) == 0 && p != message.npos) message.erase(0, p + 2);
        throw InputError(
            path_, "line " + std::to_string(line) + ", column " + std::to_string(column), message);
    }

  private:
    std::string full_key() const {
        return prefixes_.empty() ? key_ : prefixes_.back() + "." + key_;
    }
    std::string place() const { return depth_ == 0 ? "top level" : "key " + full_key(); }
    bool value(const std::string& text, Kind kind) {
        if (depth_ == 0) throw InputError(path_, "top level", "expected a JSON object");
        std::string key = full_key();
        // Also catches one key written both nested and dotted: {"a": {"b": 1}, "a.b": 2}.
        if (out_.find(key)) throw InputError(path_, "key " + key, "given more than once");
        out_.set(key, text, path_, kind);
        return true;
    }

    const std::string& path_;
    const std::string& text_;
    ConfigSource& out_;
    int depth_ = 0;
    std::vector<std::string> prefixes_;
    std::string key_;
};

}  // namespace

void ConfigSource::load_file(const std::string& path) {
    load_text(read_input_file(path, kMaxFileBytes, "a config file"), path);
}

void ConfigSource::load_text(const std::string& text, const std::string& path) {
    // The JSON reader takes a NUL for the end of its input: the rest would pass unread.
    if (auto nul = text.find('\0'); nul != std::string::npos)
        throw InputError(path, "byte " + std::to_string(nul),
                         "a NUL byte; a config file is JSON text");
    // Parse into a scratch source so that a bad file leaves this one untouched.
    ConfigSource parsed;
    Flattener flattener(path, text, parsed);
    nlohmann::json::sax_parse(text, &flattener);
    for (auto& [key, value] : parsed.values_) values_[key] = std::move(value);
}

void ConfigSource::set(const std::string& assignment) {
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--set", assignment, "expected key=value");
    set(assignment.substr(0, eq), assignment.substr(eq + 1), "--set");
}

void ConfigSource::set(const std::string& key, const std::string& value, const std::string& origin,
                       Kind kind) {
    values_[key] = Value{value, origin, false, kind};
}

const ConfigSource::Value* ConfigSource::find(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
}

void ConfigSource::mark_used(const std::string& key) const {
    auto it = values_.find(key);
    if (it != values_.end()) it->second.used = true;
}

void ConfigSource::check_all_used(const std::vector<std::string>& known_keys) const {
    for (const auto& [key, v] : values_) {
        if (v.used) continue;
        std::string hint = closest_match(key, known_keys);
        throw InputError(v.origin, "key " + key,
                         "unknown config key" +
                             (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
    }
}

Params Params::scope(const std::string& prefix) {
    return Params(source_, prefix_ + prefix + ".", shared_);
}

std::vector<std::string> Params::keys() const {
    std::vector<std::string> k;
    for (const auto& i : shared_->infos) k.push_back(i.key);
    return k;
}

static std::string to_text(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}
static std::string to_text(uint64_t v) { return std::to_string(v); }
static std::string to_text(uint32_t v) { return std::to_string(v); }
static std::string to_text(bool v) { return v ? "true" : "false"; }
static std::string to_text(const std::string& v) { return v; }

// A JSON file's value must have the parameter's JSON type: "7" is not a number, 1 not true. An
// integer may be a string of hex digits ("0x80000000"), since JSON has no hex numbers.
static std::string kind_problem(const ConfigSource::Value& v, const std::string& type) {
    using Kind = ConfigSource::Kind;
    const bool numeric = type == "number" || type == "integer";
    if (v.kind == Kind::Text) return {};
    if (numeric && v.kind == Kind::String && !(type == "integer" && v.text.rfind("0x", 0) == 0))
        return std::string(type == "integer" ? "expected an integer" : "expected a number") +
               ", not a string";
    if (type == "bool" && v.kind != Kind::Bool) return "expected true or false";
    if (!numeric && type != "bool" && v.kind != Kind::String) return "expected a string";
    return {};
}

template <class T, class Parse>
Params& Params::bind(const std::string& key, T& field, const char* type, const char* unit,
                     const char* desc, Parse parse) {
    ParamInfo info{prefix_ + key, type, unit, desc, to_text(field), "", "default"};
    if (source_) {
        if (const auto* v = source_->find(info.key)) {
            source_->mark_used(info.key);
            std::string problem = kind_problem(*v, info.type);
            if (problem.empty()) problem = parse(v->text, field);
            if (!problem.empty())
                throw InputError(v->origin, "key " + info.key, problem + ", got '" + v->text + "'");
            info.origin = v->origin;
        }
    }
    info.value_text = to_text(field);
    shared_->infos.push_back(std::move(info));
    return *this;
}

template <class T>
static std::string range_problem(T v, T min, T max) {
    if (v < min || v > max) {
        std::ostringstream s;
        s << "out of range [" << to_text(min) << ", " << to_text(max) << "]";
        return s.str();
    }
    return {};
}

Params& Params::operator()(const std::string& key, double& field, const char* unit,
                           const char* desc, double min, double max) {
    return bind(key, field, "number", unit, desc, [&](const std::string& t, double& f) {
        const char* end = t.data() + t.size();
        double v;
        auto r = std::from_chars(t.data(), end, v);
        if (t.empty() || r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
            return std::string("expected a number");
        if (auto p = range_problem(v, min, max); !p.empty()) return p;
        f = v;
        return std::string();
    });
}

template <class U>
static std::string parse_unsigned(const std::string& t, U& f, U min, U max) {
    int base = 10;
    const char* b = t.data();
    const char* end = t.data() + t.size();
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, b += 2;
    U v;
    auto r = std::from_chars(b, end, v, base);
    if (t.empty() || r.ec != std::errc() || r.ptr != end)
        return r.ec == std::errc::result_out_of_range ? "too large"
                                                      : "expected a non-negative integer";
    if (auto p = range_problem(v, min, max); !p.empty()) return p;
    f = v;
    return {};
}

Params& Params::operator()(const std::string& key, uint64_t& field, const char* unit,
                           const char* desc, uint64_t min, uint64_t max) {
    return bind(key, field, "integer", unit, desc,
                [&](const std::string& t, uint64_t& f) { return parse_unsigned(t, f, min, max); });
}

Params& Params::operator()(const std::string& key, uint32_t& field, const char* unit,
                           const char* desc, uint32_t min, uint32_t max) {
    return bind(key, field, "integer", unit, desc,
                [&](const std::string& t, uint32_t& f) { return parse_unsigned(t, f, min, max); });
}

Params& Params::operator()(const std::string& key, bool& field, const char* desc) {
    return bind(key, field, "bool", "", desc, [](const std::string& t, bool& f) {
        if (t == "true" || t == "1" || t == "on" || t == "yes") return f = true, std::string();
        if (t == "false" || t == "0" || t == "off" || t == "no") return f = false, std::string();
        return std::string("expected true or false");
    });
}

Params& Params::operator()(const std::string& key, std::string& field, const char* desc) {
    return bind(key, field, "string", "", desc, [](const std::string& t, std::string& f) {
        f = t;
        return std::string();
    });
}

Params& Params::choice(const std::string& key, std::string& field,
                       const std::vector<std::string>& choices, const char* desc) {
    std::string type = "one of";
    for (const auto& c : choices) type += " " + c;
    return bind(key, field, type.c_str(), "", desc, [&](const std::string& t, std::string& f) {
        for (const auto& c : choices)
            if (t == c) return f = t, std::string();
        std::string list;
        for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
        std::string hint = closest_match(t, choices);
        return "expected one of " + list + (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
    });
}

std::string dump_params(const std::vector<ParamInfo>& infos, bool as_json) {
    std::ostringstream s;
    if (as_json) {
        nlohmann::ordered_json root = nlohmann::ordered_json::object();
        for (const auto& i : infos) {
            nlohmann::ordered_json* node = &root;
            std::string rest = i.key;
            for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
                node = &(*node)[rest.substr(0, dot)];
                rest = rest.substr(dot + 1);
            }
            if (i.type == "number" || i.type == "integer")
                (*node)[rest] = nlohmann::ordered_json::parse(i.value_text);
            else if (i.type == "bool")
                (*node)[rest] = i.value_text == "true";
            else
                (*node)[rest] = i.value_text;
        }
        s << root.dump(2) << "\n";
        return s.str();
    }
    size_t kw = 0, vw = 0;
    for (const auto& i : infos)
        kw = std::max(kw, i.key.size()), vw = std::max(vw, i.value_text.size());
    for (const auto& i : infos) {
        s << std::left << std::setw(int(kw)) << i.key << " = " << std::setw(int(vw)) << i.value_text
          << "  " << std::setw(4) << i.unit << "  " << i.description;
        if (i.origin != "default")
            s << "  [default " << i.default_text << ", from " << i.origin << "]";
        s << "\n";
    }
    return s.str();
}

}  // namespace canopy::core
