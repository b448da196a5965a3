// Waveforms: signals that modules register (queue depths, busy flags, die states, a core's pc)
// written to a VCD file. Under temporal decoupling a module knows a change's time before the
// kernel reaches it, and may report intervals out of order; the changes wait in a time-ordered
// queue and are written once the kernel's time has passed them, so the file shows each change
// at its own time. Observation changes nothing: waves schedule no SystemC event and never make
// a process wait, so a run with waves simulates exactly what a run without them does. Same run,
// same bytes: the file has no date.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <systemc>

namespace canopy::core {

class Waves {
  public:
    // How a signal's events make its value.
    enum class Fold : uint8_t {
        Last,   // the latest event is the value (a state, a pc)
        Count,  // events add up (+1 / -1 per interval); the value is the sum, at least 0
        Any,    // as Count, shown as one bit: any interval open
    };

    // Names for a signal's values (a die's operation, a privilege mode). GTKWave shows them
    // through a translate filter file, which the waves write beside the VCD, one per table:
    // `<vcd stem>.<tag>.txt` (Edit > Data Format > Translate Filter File > Enable and Select).
    struct ValueNames {
        std::string tag;  // the file's name part: "die_state"
        std::vector<std::pair<uint64_t, std::string>> names;
    };

    ~Waves();
    // Must be called before the modules that register probes are built. InputError when the
    // file cannot be written. With `filters` (shell globs of dotted signal names, as fnmatch
    // matches them), only the signals one of them matches are kept.
    void open(const std::string& path, std::vector<std::string> filters = {});
    // The filters no declared signal matched (to refuse before simulating).
    std::vector<std::string> unmatched_filters() const;
    bool enabled() const { return file_ != nullptr; }
    // Writes every pending change and closes the file.
    void close();

    // Declares a signal (`name` dotted: the dots are scopes) of `bits` bits; returns its
    // handle, or -1 when waves are off. All signals come before the first change is written.
    int add(const std::string& name, unsigned bits, Fold fold, int64_t initial,
            const ValueNames* names = nullptr);
    // Signal `id` gets `event` at simulated time `at` (now if `at` is in the past), on the next
    // whole nanosecond (the VCD's unit).
    void post(int id, const sc_core::sc_time& at, int64_t event);

  private:
    struct Signal {
        std::string name, code;
        unsigned bits;
        Fold fold;
        int64_t state;
        uint64_t shown;  // the value last written
    };
    uint64_t value(const Signal& s) const;
    void write_header();
    void write_value(const Signal& s, uint64_t v);
    void flush_before(uint64_t ns);  // applies and writes every change before `ns`
    void write_translate_files() const;

    std::FILE* file_ = nullptr;
    std::string stem_;  // the VCD's path without ".vcd"
    struct Table {
        ValueNames names;
        unsigned bits = 0;
        std::vector<std::string> signals;  // that use it
    };
    std::map<std::string, Table> tables_;  // by tag
    std::vector<std::string> filters_;
    std::vector<bool> filter_used_;
    bool header_ = false;
    uint64_t written_ns_ = 0;  // the last timestamp written
    std::vector<Signal> signals_;
    std::multimap<uint64_t, std::pair<int, int64_t>> pending_;  // ns -> (signal, event)
};

// A value (a die's state, a queue depth, a pc): the latest one set wins.
template <class T>
class Probe {
  public:
    // `module_name` is the owner's name for the probe (kept for the call sites' symmetry with
    // submodules); the VCD shows it as `trace_name`.
    Probe(const char* /*module_name*/, Waves& waves, const std::string& trace_name, T initial = T(),
          const Waves::ValueNames* names = nullptr)
        : waves_(waves),
          id_(waves.add(trace_name, std::is_same_v<T, bool> ? 1 : 8 * sizeof(T), Waves::Fold::Last,
                        int64_t(initial), names)) {}
    bool enabled() const { return id_ >= 0; }
    // The value `v` from simulated time `at` on (now if `at` is in the past).
    void set(const T& v, const sc_core::sc_time& at) {
        if (id_ >= 0) waves_.post(id_, at, int64_t(v));
    }

  private:
    Waves& waves_;
    int id_;
};

// A signal driven by intervals, which may be reported out of time order, touch or overlap: a
// flag (bool: any interval open) or a count (how many are).
template <class T>
class IntervalProbe {
  public:
    IntervalProbe(const char* /*module_name*/, Waves& waves, const std::string& trace_name)
        : waves_(waves),
          id_(waves.add(trace_name, std::is_same_v<T, bool> ? 1 : 8 * sizeof(T),
                        std::is_same_v<T, bool> ? Waves::Fold::Any : Waves::Fold::Count, 0)) {}
    bool enabled() const { return id_ >= 0; }
    // One more interval over [start, end).
    void add(const sc_core::sc_time& start, const sc_core::sc_time& end) {
        if (id_ < 0 || end <= start) return;
        waves_.post(id_, start, +1);
        waves_.post(id_, end, -1);
    }

  private:
    Waves& waves_;
    int id_;
};

// A busy flag: high while any busy interval covers the time.
class BusyProbe : public IntervalProbe<bool> {
  public:
    using IntervalProbe<bool>::IntervalProbe;
    void busy(const sc_core::sc_time& start, const sc_core::sc_time& end) { add(start, end); }
};

// A queue depth: how many requests wait at the time (each from its arrival to its grant).
using QueueProbe = IntervalProbe<uint32_t>;

}  // namespace canopy::core
