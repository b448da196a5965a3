// Waveforms: signals that modules register (queue depths, busy flags, die states) traced into a
// VCD file with SystemC's sc_trace. Under temporal decoupling a module knows a change's time
// before the kernel reaches it, so a Probe holds the change until that time and then drives its
// sc_signal, and the VCD shows each change when it happens in simulated time. With waves off a
// probe does nothing.
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

template <class T>
class Probe : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Probe);
    // The signal appears in the VCD under `trace_name` (dots become scopes).
    Probe(sc_core::sc_module_name name, Waves& waves, const std::string& trace_name, T initial = T())
        : sc_module(name), on_(waves.enabled()), signal_("signal", initial) {
        if (!on_) return;
        sc_core::sc_trace(waves.file(), signal_, trace_name);
        SC_METHOD(apply);
        sensitive << wake_;
        dont_initialize();
    }

    bool enabled() const { return on_; }

    // Schedule the value `v` from simulated time `at` on (now if `at` is in the past).
    void set(const T& v, const sc_core::sc_time& at) {
        if (!on_) return;
        pending_.emplace(at, v);
        notify_next();
    }

private:
    void apply() {
        const auto now = sc_core::sc_time_stamp();
        auto end = pending_.upper_bound(now);
        if (end != pending_.begin()) signal_.write(std::prev(end)->second);
        pending_.erase(pending_.begin(), end);
        notify_next();
    }
    void notify_next() {
        if (pending_.empty()) return;
        const auto now = sc_core::sc_time_stamp();
        const auto t = pending_.begin()->first;
        wake_.notify(t > now ? t - now : sc_core::SC_ZERO_TIME);
    }

    bool on_;
    sc_core::sc_signal<T> signal_;
    sc_core::sc_event wake_;
    std::multimap<sc_core::sc_time, T> pending_;
};

}  // namespace canopy::core
