#include "core/log.hpp"

#include <fnmatch.h>

#include <cstdio>
#include <ostream>

#include "core/error.hpp"

namespace canopy::core {

namespace {

constexpr const char* kOurs = "canopy";  // the file of Canopy's reports: the handler knows them
sc_core::sc_time report_time;            // the simulated time of the report being handled

void handler(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
    if (std::string(r.get_file_name()) != kOurs) {
        sc_core::sc_report_handler::default_handler(r, actions);
        return;
    }
    std::FILE* out = r.get_severity() == sc_core::SC_WARNING ? stderr : stdout;
    std::fprintf(out, "%14.6f us %s%s: %s\n", report_time.to_seconds() * 1e6,
                 r.get_severity() == sc_core::SC_WARNING ? "warning: " : "", r.get_msg_type(),
                 r.get_msg());
    std::fflush(out);
}

bool parse_level(const std::string& s, LogLevel& l) {
    static const std::pair<const char*, LogLevel> names[] = {{"off", LogLevel::Off},
                                                             {"warning", LogLevel::Warning},
                                                             {"info", LogLevel::Info},
                                                             {"debug", LogLevel::Debug}};
    for (const auto& [name, level] : names)
        if (s == name) return l = level, true;
    return false;
}

struct Defaults {
    std::vector<std::string> rules;
    LogLevel level = LogLevel::Info;
    std::string console_dir;
};
Defaults& defaults() {
    static Defaults d;
    return d;
}

}  // namespace

Log::Log() {
    sc_core::sc_report_handler::set_handler(handler);
    // Canopy filters by module itself; SystemC's own verbosity filter must let debug through.
    sc_core::sc_report_handler::set_verbosity_level(sc_core::SC_DEBUG);
    configure(defaults().rules, defaults().level);
    console_dir_ = defaults().console_dir;
}

void Log::set_defaults(const std::vector<std::string>& rules, LogLevel default_level) {
    Log().configure(rules, default_level);  // checks them
    defaults().rules = rules;
    defaults().level = default_level;
}

void Log::set_default_console_dir(const std::string& dir) { defaults().console_dir = dir; }

void Log::configure(const std::vector<std::string>& rules, LogLevel default_level) {
    rules_.clear();
    default_ = default_level;
    for (const std::string& r : rules) {
        const auto eq = r.rfind('=');
        LogLevel level;
        if (eq == std::string::npos || eq == 0 || !parse_level(r.substr(eq + 1), level))
            throw InputError("--log", r,
                             "expected PATTERN=LEVEL, LEVEL one of off, warning, info, debug "
                             "(PATTERN: a glob of module names, e.g. 'device.ssd.spu*')");
        rules_.push_back({r, r.substr(0, eq), level});
    }
}

std::vector<std::string> Log::unmatched_rules() const {
    std::vector<std::string> v;
    for (const Rule& r : rules_)
        if (!r.used) v.push_back(r.text);
    return v;
}

LogLevel Log::level_for(const std::string& module) {
    LogLevel l = default_;
    for (Rule& r : rules_)
        if (fnmatch(r.pattern.c_str(), module.c_str(), 0) == 0) l = r.level, r.used = true;
    return l;
}

void Logger::report(LogLevel level, const std::string& message, const sc_core::sc_time& at) const {
    report_time = at;
    if (level == LogLevel::Warning)
        sc_core::sc_report_handler::report(sc_core::SC_WARNING, module_.c_str(), message.c_str(),
                                           kOurs, 0);
    else
        sc_core::sc_report_handler::report(
            sc_core::SC_INFO, module_.c_str(), message.c_str(),
            level == LogLevel::Debug ? sc_core::SC_DEBUG : sc_core::SC_MEDIUM, kOurs, 0);
}

std::ostream& no_stream() {
    static std::ostream discard(nullptr);
    return discard;
}

}  // namespace canopy::core
