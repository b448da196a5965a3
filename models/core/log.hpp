// Logs by component, through SystemC's report handler (sc_report: severity and verbosity). Each
// module holds a Logger named as the module (`device.ssd.spu3`, `device.ssd.flash0`); the run's
// rules (`--log 'device.ssd.spu*=debug' --log link=info`: globs over those names, later rules
// win) give each its level once, at construction, so a message below its level costs one
// comparison. A message is printed with the simulated time it happened at (a model running
// ahead of the kernel gives its own time) and the module's name: warnings on stderr, the rest on
// stdout. Logging schedules nothing: a run prints more or less, and simulates the same.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

namespace canopy::core {

enum class LogLevel : uint8_t { Off, Warning, Info, Debug };

class Log {
  public:
    // Routes SystemC's reports through Canopy's handler; starts from the process's defaults.
    Log();

    // The rules every Log of this process starts with (`canopy exp` builds a machine, with its
    // own services, per configuration). InputError names a bad rule.
    static void set_defaults(const std::vector<std::string>& rules, LogLevel default_level);
    // The console directory every Log of this process starts with ("" for none).
    static void set_default_console_dir(const std::string& dir);

    // Rules "PATTERN=LEVEL" (LEVEL: off, warning, info, debug), applied in order over
    // `default_level`; must come before the models are built. InputError names a bad rule.
    void configure(const std::vector<std::string>& rules, LogLevel default_level);
    // The rules no logger matched (to refuse before simulating).
    std::vector<std::string> unmatched_rules() const;
    LogLevel level_for(const std::string& module);
    // Where the SPU consoles keep their whole transcripts (DIR/<spu>.log); "" for none.
    void set_console_dir(const std::string& dir) { console_dir_ = dir; }
    const std::string& console_dir() const { return console_dir_; }

  private:
    struct Rule {
        std::string text, pattern;
        LogLevel level;
        bool used = false;
    };
    std::vector<Rule> rules_;
    LogLevel default_ = LogLevel::Info;
    std::string console_dir_;
};

class Logger {
  public:
    Logger(Log& log, std::string module)
        : module_(std::move(module)), level_(log.level_for(module_)) {}
    bool on(LogLevel l) const { return l <= level_ && l != LogLevel::Off; }
    // Reports `message` at `level`, as of simulated time `at` (default: the kernel's time).
    void operator()(LogLevel level, const std::string& message,
                    const sc_core::sc_time& at = sc_core::sc_time_stamp()) const {
        if (on(level)) report(level, message, at);
    }
    const std::string& module() const { return module_; }

  private:
    void report(LogLevel level, const std::string& message, const sc_core::sc_time& at) const;
    std::string module_;
    LogLevel level_;
};

// A stream that discards what it is given (no transcript).
std::ostream& no_stream();

}  // namespace canopy::core
