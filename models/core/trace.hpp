// Transaction trace in the Chrome/Perfetto trace-event JSON format: one track (tid) per module,
// a complete event ("ph":"X") per transaction hop with its attributes, and flow events ("s"/"f")
// linking consecutive hops of one request. Events are streamed to the file as they happen; with
// the trace off, `enabled()` is false and callers skip all work.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <systemc>
#include <unordered_map>
#include <utility>
#include <vector>

namespace canopy::core {

class TransactionTrace {
  public:
    struct Arg {
        const char* key;
        std::string value;  // written as a JSON string
    };

    ~TransactionTrace();
    void open(const std::string& path);
    void close();
    bool enabled() const { return file_ != nullptr; }

    // A track for a module; the same name gives the same track.
    int track(const std::string& module);
    // A new request identity for flow events; 0 means "not part of a flow".
    uint64_t new_flow() { return ++last_flow_; }

    // One hop of a transaction on `track`, from `start` for `dur`. When `flow` is non-zero the
    // hop is linked to the previous hop of the same flow.
    void complete(int track, const char* name, const char* category, const sc_core::sc_time& start,
                  const sc_core::sc_time& dur, uint64_t flow, const std::vector<Arg>& args = {});

    static std::string hex(uint64_t v);

  private:
    void begin_event();
    void write_track_name(const std::string& module, int track);
    struct Hop {
        int track;
        sc_core::sc_time start;
    };
    std::FILE* file_ = nullptr;
    std::string path_;
    bool first_ = true;
    uint64_t last_flow_ = 0, last_flow_edge_ = 0;
    std::unordered_map<std::string, int> tracks_;
    std::unordered_map<uint64_t, Hop> last_hop_;
};

}  // namespace canopy::core
