// Waveforms: signals that modules register (queue depths, busy flags, die states) traced into a
// VCD file with SystemC's sc_trace. Under temporal decoupling a module knows a change's time
// before the kernel reaches it, so a Probe holds the change until that time and then drives its
// sc_signal, and the VCD shows each change when it happens in simulated time. With waves off a
// probe does nothing, not even keep its events.
#pragma once

#include <map>
#include <string>
#include <systemc>

namespace canopy::core {

class Waves {
  public:
    ~Waves();
    // Must be called before the modules that register probes are built.
    void open(const std::string& path);
    bool enabled() const { return file_ != nullptr; }
    sc_core::sc_trace_file* file() const { return file_; }
    void close();

  private:
    sc_core::sc_trace_file* file_ = nullptr;
};

// A traced signal whose changes are posted ahead of time as events and applied when simulated
// time reaches them. `Fold` turns the events due so far into the signal's value:
// `static void apply(State&, const Event&)` and `static T value(const State&)`.
template <class T, class State, class Event, class Fold>
class ScheduledSignal : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(ScheduledSignal);
    // The signal appears in the VCD under `trace_name` (dots become scopes).
    ScheduledSignal(sc_core::sc_module_name name, Waves& waves, const std::string& trace_name,
                    State initial)
        : sc_module(name),
          on_(waves.enabled()),
          state_(initial),
          signal_("signal", Fold::value(initial)) {
        if (!on_) return;
        sc_core::sc_trace(waves.file(), signal_, trace_name);
        SC_METHOD(apply);
        sensitive << wake_;
        dont_initialize();
    }

    bool enabled() const { return on_; }

  protected:
    // Schedules `e` for simulated time `at` (now if `at` is in the past), on the next whole
    // nanosecond: the VCD is drawn in nanoseconds, and SystemC writes a change between two of
    // them under a timestamp it already wrote, which breaks the format.
    void post(const Event& e, const sc_core::sc_time& at) {
        if (!on_) return;
        pending_.emplace(std::max(whole_ns(at), whole_ns(sc_core::sc_time_stamp())), e);
        notify_next();
    }

  private:
    static sc_core::sc_time whole_ns(const sc_core::sc_time& t) {
        const uint64_t ns = sc_core::sc_time(1, sc_core::SC_NS).value();
        return sc_core::sc_time::from_value((t.value() + ns - 1) / ns * ns);
    }
    void apply() {
        auto end = pending_.upper_bound(sc_core::sc_time_stamp());
        for (auto it = pending_.begin(); it != end; ++it) Fold::apply(state_, it->second);
        pending_.erase(pending_.begin(), end);
        signal_.write(Fold::value(state_));
        notify_next();
    }
    void notify_next() {
        if (pending_.empty()) return;
        const auto now = sc_core::sc_time_stamp();
        const auto t = pending_.begin()->first;
        wake_.notify(t > now ? t - now : sc_core::SC_ZERO_TIME);
    }

    bool on_;
    State state_;
    sc_core::sc_signal<T> signal_;
    sc_core::sc_event wake_;
    std::multimap<sc_core::sc_time, Event> pending_;
};

template <class T>
struct LastValue {
    static void apply(T& s, const T& e) { s = e; }
    static T value(const T& s) { return s; }
};

// A value (a die's state, a queue depth): the latest one set wins.
template <class T>
class Probe : public ScheduledSignal<T, T, T, LastValue<T>> {
  public:
    Probe(sc_core::sc_module_name name, Waves& waves, const std::string& trace_name,
          T initial = T())
        : ScheduledSignal<T, T, T, LastValue<T>>(name, waves, trace_name, initial) {}
    // The value `v` from simulated time `at` on (now if `at` is in the past).
    void set(const T& v, const sc_core::sc_time& at) { this->post(v, at); }
};

// How many intervals cover the current time, shown as T: a flag (bool: any) or a count.
template <class T>
struct IntervalCount {
    static void apply(int& s, const int& e) { s += e; }
    static T value(const int& s) { return s > 0 ? T(s) : T(0); }
};

// A signal driven by intervals, which may be reported out of time order, touch or overlap.
template <class T>
class IntervalProbe : public ScheduledSignal<T, int, int, IntervalCount<T>> {
  public:
    IntervalProbe(sc_core::sc_module_name name, Waves& waves, const std::string& trace_name)
        : ScheduledSignal<T, int, int, IntervalCount<T>>(name, waves, trace_name, 0) {}
    // One more interval over [start, end).
    void add(const sc_core::sc_time& start, const sc_core::sc_time& end) {
        if (end <= start) return;
        this->post(+1, start);
        this->post(-1, end);
    }
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
