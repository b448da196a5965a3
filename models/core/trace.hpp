// Transaction trace in the Chrome/Perfetto trace-event JSON format, written so that Perfetto's
// JSON importer takes it as meant: one named track (tid) per module, a complete event
// ("ph":"X") per transaction hop with its attributes, and flow events ("s"/"f") linking the hops
// of one request. Hops that overlap on one module without nesting (transfers in flight on a
// link, commands queued at a player) go to lanes of the module, further tracks named
// "<module> #2", "#3", ..., so that no two slices on a track cross. A flow's arrows always run
// forward in time and chain its hops in start order whatever order they are reported in: each
// links the earlier-starting hop to the later, both bound to their enclosing slices. Categories
// (mmio, nand, flash, link, ccix, host, spu, ring, and model for models from outside) can be kept
// selectively. Events are streamed to the file as they happen; with the trace off, `enabled()`
// is false and callers skip all work.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
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
    // With `categories`, only hops of those categories are written; InputError names one that
    // no model uses (see categories()).
    void open(const std::string& path, std::vector<std::string> categories = {});
    static const std::vector<std::string>& categories();  // every category the models use
    void close();
    bool enabled() const { return file_ != nullptr; }

    // A track for a module; the same name gives the same track.
    int track(const std::string& module);
    // A new request identity for flow events; 0 means "not part of a flow".
    uint64_t new_flow() { return ++last_flow_; }
    // Whether a hop of `flow` has been written: the request left its initiator.
    bool reached(uint64_t flow) const { return flows_.count(flow) != 0; }

    // The request the running SystemC process serves, for hops reached by calls that carry no
    // payload (a core's cache asking its home node): a scope names the request of every hop its
    // process reaches inside it, also across a wait() (other processes keep their own). 0 with
    // the trace off or outside any scope.
    uint64_t current_flow() const;
    class FlowScope {
      public:
        FlowScope(TransactionTrace& t, uint64_t flow);
        ~FlowScope();
        FlowScope(const FlowScope&) = delete;
        FlowScope& operator=(const FlowScope&) = delete;

      private:
        TransactionTrace& t_;
        bool active_ = false;  // false: the trace is off, nothing to restore
        const void* process_ = nullptr;
        uint64_t outer_ = 0;
    };

    // One hop of a transaction on `track`, from `start` for `dur`. When `flow` is non-zero the
    // hop is linked to the previous hop of the same flow.
    void complete(int track, const char* name, const char* category, const sc_core::sc_time& start,
                  const sc_core::sc_time& dur, uint64_t flow, const std::vector<Arg>& args = {});

    static std::string hex(uint64_t v);

  private:
    void begin_event();
    void write_track_name(const std::string& module, int track);
    // The track of `track`'s lanes on which [start, end) crosses no slice (ps).
    int lane(int track, uint64_t start, uint64_t end);
    struct Hop {
        int track;
        sc_core::sc_time start;
    };
    struct Ends {  // a flow's earliest- and latest-starting hops so far
        Hop first, last;
    };
    void arrow(const Hop& from, const Hop& to);
    std::FILE* file_ = nullptr;
    std::string path_;
    bool first_ = true;
    uint64_t last_flow_ = 0, last_flow_edge_ = 0;
    std::unordered_map<const void*, uint64_t> current_;  // by SystemC process: see FlowScope
    std::unordered_map<std::string, int> tracks_;
    std::vector<std::string> track_names_;  // by track - 1
    std::unordered_map<uint64_t, Ends> flows_;
    std::vector<std::string> kept_;  // categories written; empty: all
    // Per module track, its lanes: the first is the module's own track. A lane maps each
    // slice's start to its end (ps).
    struct Lane {
        int track;
        std::map<uint64_t, uint64_t> slices;
    };
    std::unordered_map<int, std::vector<Lane>> lanes_;
};

}  // namespace canopy::core
