#include "core/trace.hpp"

#include <algorithm>
#include <cinttypes>
#include <string_view>

#include "core/error.hpp"

namespace canopy::core {

static constexpr int kPid = 1;

static void write_escaped(std::FILE* f, std::string_view s) {
    std::fputc('"', f);
    for (char c : s) {
        if (c == '"' || c == '\\')
            std::fputc('\\', f), std::fputc(c, f);
        else if (static_cast<unsigned char>(c) < 0x20)
            std::fprintf(f, "\\u%04x", c);
        else
            std::fputc(c, f);
    }
    std::fputc('"', f);
}

// Microseconds with picosecond digits: the format's unit, SystemC's default resolution.
static double us(const sc_core::sc_time& t) { return t.to_seconds() * 1e6; }

TransactionTrace::~TransactionTrace() { close(); }

const std::vector<std::string>& TransactionTrace::categories() {
    static const std::vector<std::string> c = {"mmio", "nand", "flash", "link", "ccix",
                                               "host", "spu",  "ring",  "model"};
    return c;
}

void TransactionTrace::open(const std::string& path, std::vector<std::string> categories) {
    close();
    for (const std::string& c : categories)
        if (std::find(this->categories().begin(), this->categories().end(), c) ==
            this->categories().end()) {
            std::string known;
            for (const std::string& k : this->categories())
                known += (known.empty() ? "" : ", ") + k;
            throw InputError("--trace-filter", c, "no such category; the categories are " + known);
        }
    kept_ = std::move(categories);
    lanes_.clear();
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) throw InputError(path, "", "cannot open for writing");
    path_ = path;
    first_ = true;
    flows_.clear();
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
    begin_event();
    std::fprintf(file_,
                 "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                 "\"args\":{\"name\":\"canopy\"}}",
                 kPid);
    // Name the tracks that modules asked for before the trace was opened, in track order.
    std::vector<const std::pair<const std::string, int>*> known;
    for (const auto& t : tracks_) known.push_back(&t);
    std::sort(known.begin(), known.end(), [](auto* a, auto* b) { return a->second < b->second; });
    for (const auto* t : known) write_track_name(t->first, t->second);
}

void TransactionTrace::close() {
    if (!file_) return;
    std::fputs("\n]}\n", file_);
    std::fclose(file_);
    file_ = nullptr;
}

void TransactionTrace::begin_event() {
    if (!first_) std::fputs(",\n", file_);
    first_ = false;
}

void TransactionTrace::write_track_name(const std::string& module, int track) {
    begin_event();
    std::fprintf(file_,
                 "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                 "\"args\":{\"name\":",
                 kPid, track);
    write_escaped(file_, module);
    std::fputs("}}", file_);
}

int TransactionTrace::track(const std::string& module) {
    auto [it, added] = tracks_.emplace(module, int(tracks_.size()) + 1);
    if (added) {
        track_names_.push_back(module);
        if (file_) write_track_name(module, it->second);
    }
    return it->second;
}

int TransactionTrace::lane(int track, uint64_t start, uint64_t end) {
    std::vector<Lane>& lanes = lanes_[track];
    if (lanes.empty()) lanes.push_back({track, {}});
    if (end <= start) return track;  // an instant crosses nothing
    auto fits = [&](const Lane& l) {
        auto next = l.slices.lower_bound(start);
        if (next != l.slices.end() && next->first < end) return false;
        return next == l.slices.begin() || std::prev(next)->second <= start;
    };
    for (Lane& l : lanes)
        if (fits(l)) {
            l.slices.emplace(start, end);
            return l.track;
        }
    const int t =
        this->track(track_names_[size_t(track) - 1] + " #" + std::to_string(lanes.size() + 1));
    lanes.push_back({t, {{start, end}}});
    return t;
}

void TransactionTrace::complete(int track, const char* name, const char* category,
                                const sc_core::sc_time& start, const sc_core::sc_time& dur,
                                uint64_t flow, const std::vector<Arg>& args) {
    if (!file_) return;
    if (!kept_.empty() && std::find(kept_.begin(), kept_.end(), category) == kept_.end()) return;
    track = lane(track, start.value(), (start + dur).value());
    begin_event();
    std::fputs("{\"name\":", file_);
    write_escaped(file_, name);
    std::fputs(",\"cat\":", file_);
    write_escaped(file_, category);
    std::fprintf(file_, ",\"ph\":\"X\",\"ts\":%.6f,\"dur\":%.6f,\"pid\":%d,\"tid\":%d", us(start),
                 us(dur), kPid, track);
    if (!args.empty() || flow) {
        std::fputs(",\"args\":{", file_);
        bool first = true;
        if (flow) std::fprintf(file_, "\"flow\":%" PRIu64, flow), first = false;
        for (const auto& a : args) {
            if (!first) std::fputc(',', file_);
            first = false;
            write_escaped(file_, a.key);
            std::fputc(':', file_);
            write_escaped(file_, a.value);
        }
        std::fputc('}', file_);
    }
    std::fputc('}', file_);
    if (!flow) return;
    // Link this hop into its flow's chain by an s/f pair of its own id, always from the hop that
    // starts first to the later one (each bound to its slice). Hops come in any order: in time
    // order (a request going on), or inner first (a nested call reports before its caller). A
    // hop before the flow's earliest links to that one, a hop after its latest from that one,
    // so either way the arrows form a chain; one in between hangs off the earliest. On equal
    // starts the hop reported later comes first: it is the caller, which reports once its
    // callee has returned.
    const Hop here{track, start};
    auto before = [&](const Hop& other) { return here.start <= other.start; };
    auto it = flows_.find(flow);
    if (it == flows_.end()) {
        flows_.emplace(flow, Ends{here, here});
        return;
    }
    Ends& ends = it->second;
    if (before(ends.first)) {
        arrow(here, ends.first);
        ends.first = here;
    } else if (!before(ends.last)) {
        arrow(ends.last, here);
        ends.last = here;
    } else {
        arrow(ends.first, here);
    }
}

void TransactionTrace::arrow(const Hop& from, const Hop& to) {
    const uint64_t id = ++last_flow_edge_;
    begin_event();
    std::fprintf(file_,
                 "{\"name\":\"request\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%" PRIu64
                 ",\"ts\":%.6f,\"pid\":%d,\"tid\":%d}",
                 id, us(from.start), kPid, from.track);
    begin_event();
    std::fprintf(file_,
                 "{\"name\":\"request\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
                 ",\"ts\":%.6f,\"pid\":%d,\"tid\":%d}",
                 id, us(to.start), kPid, to.track);
}

static const void* running_process() {
    return sc_core::sc_get_current_process_handle().get_process_object();
}

uint64_t TransactionTrace::current_flow() const {
    if (!file_ || current_.empty()) return 0;
    const auto it = current_.find(running_process());
    return it == current_.end() ? 0 : it->second;
}

TransactionTrace::FlowScope::FlowScope(TransactionTrace& t, uint64_t flow) : t_(t) {
    if (!t.enabled()) return;
    active_ = true;
    process_ = running_process();
    uint64_t& current = t.current_[process_];
    outer_ = current;
    current = flow;
}

TransactionTrace::FlowScope::~FlowScope() {
    if (!active_) return;
    if (outer_)
        t_.current_[process_] = outer_;
    else
        t_.current_.erase(process_);
}

std::string TransactionTrace::hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

}  // namespace canopy::core
