#include "sw/host/block_trace.hpp"

#include <algorithm>
#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/algorithm/string/split.hpp>
#include <boost/algorithm/string/trim.hpp>
#include <charconv>
#include <fstream>
#include <istream>
#include <set>

#include "core/error.hpp"
#include "core/user_files.hpp"

namespace canopy::sw {

namespace {

constexpr uint64_t kTickNs = 100;  // FILETIME and ResponseTime count 100 ns ticks
const char* const kFields = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

class LineParser {
  public:
    LineParser(const std::string& source, uint32_t line) : source_(source), line_(line) {}

    [[noreturn]] void fail(const std::string& msg) const {
        throw InputError(source_, "line " + std::to_string(line_), msg);
    }

    uint64_t number(const std::string& t, const char* what, uint64_t max = UINT64_MAX) const {
        if (t.empty()) fail(std::string(what) + " is empty");
        if (t[0] == '-') fail(std::string(what) + " '" + t + "' is negative");
        uint64_t v = 0;
        const char* e = t.data() + t.size();
        auto r = std::from_chars(t.data(), e, v);
        if (r.ec == std::errc::result_out_of_range ||
            (r.ec == std::errc() && r.ptr == e && v > max))
            fail(std::string(what) + " '" + t + "' is out of range (0.." + std::to_string(max) +
                 ")");
        if (r.ec != std::errc() || r.ptr != e)
            fail(std::string(what) + " '" + t + "' is not a decimal number");
        return v;
    }

  private:
    const std::string& source_;
    uint32_t line_;
};

bool is_type(const std::string& t, const char* name) { return boost::algorithm::iequals(t, name); }

}  // namespace

uint64_t BlockTrace::read_bytes() const {
    uint64_t n = 0;
    for (const auto& r : requests)
        if (!r.write) n += r.size_bytes;
    return n;
}

uint64_t BlockTrace::write_bytes() const {
    uint64_t n = 0;
    for (const auto& r : requests)
        if (r.write) n += r.size_bytes;
    return n;
}

size_t BlockTrace::reads() const { return requests.size() - writes(); }

size_t BlockTrace::writes() const {
    size_t n = 0;
    for (const auto& r : requests) n += r.write;
    return n;
}

uint64_t BlockTrace::span_bytes() const {
    uint64_t s = 0;
    for (const auto& r : requests) s = std::max(s, r.offset_bytes + r.size_bytes);
    return s;
}

namespace {

// An MSR line is about 60 characters; a file with no line end in sight (a binary, /dev/zero)
// is refused at this length instead of read into memory whole.
constexpr size_t kMaxLineBytes = 4096;

// The next line (without its '\n') into `raw`; false at the end of the input.
bool read_line(std::istream& in, std::string& raw, const std::string& source, uint32_t line) {
    raw.clear();
    for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
        if (c == '\n') return true;
        if (raw.size() == kMaxLineBytes)
            throw InputError(source, "line " + std::to_string(line),
                             "longer than " + std::to_string(kMaxLineBytes) +
                                 " characters; not an MSR trace line");
        raw.push_back(char(c));
    }
    return !raw.empty();
}

}  // namespace

BlockTrace parse_msr_trace(std::istream& in, const std::string& source, const MsrOptions& opt) {
    BlockTrace t;
    t.source = source;
    std::string raw;
    std::vector<std::string> f;
    uint32_t line = 0;
    std::optional<uint64_t> first_ts, last_ts;
    uint32_t last_ts_line = 0;
    std::set<uint32_t> disks_seen;  // for the message when the disk filter keeps nothing
    while (!(opt.max_requests && t.requests.size() >= *opt.max_requests) &&
           read_line(in, raw, source, line + 1)) {
        ++line;
        boost::algorithm::trim(raw);  // also drops the '\r' of CRLF files
        if (raw.empty() || raw[0] == '#') continue;
        LineParser p(source, line);
        boost::algorithm::split(f, raw, boost::algorithm::is_any_of(","));
        if (f.size() != 7)
            p.fail("expected 7 fields (" + std::string(kFields) + "), found " +
                   std::to_string(f.size()));
        for (auto& s : f) boost::algorithm::trim(s);

        const uint64_t ts = p.number(f[0], "Timestamp");
        if (f[1].empty()) p.fail("Hostname is empty");
        const uint32_t disk = uint32_t(p.number(f[2], "DiskNumber", UINT32_MAX));
        bool write = false;
        if (is_type(f[3], "Read"))
            write = false;
        else if (is_type(f[3], "Write"))
            write = true;
        else
            p.fail("Type '" + f[3] + "' is neither Read nor Write");
        const uint64_t offset = p.number(f[4], "Offset");
        const uint64_t size = p.number(f[5], "Size");
        if (size == 0) p.fail("Size is 0");
        if (offset > UINT64_MAX - size)
            p.fail("Offset " + f[4] + " + Size " + f[5] + " is past 2^64 bytes");
        const uint64_t rt = p.number(f[6], "ResponseTime", UINT64_MAX / kTickNs);

        // Order is checked across every line, whichever disk it is for: it is the file's property.
        if (last_ts && ts < *last_ts)
            p.fail("Timestamp " + f[0] + " is before the previous request's (" +
                   std::to_string(*last_ts) + ", line " + std::to_string(last_ts_line) +
                   "); MSR traces are sorted by time");
        last_ts = ts, last_ts_line = line;

        disks_seen.insert(disk);
        if (opt.disk && disk != *opt.disk) continue;
        if (!first_ts) first_ts = ts;
        const uint64_t ticks = ts - *first_ts;
        // SystemC counts picoseconds in 64 bits: about 213 days of simulated time.
        constexpr uint64_t kMaxSpanNs = 200ull * 24 * 3600 * 1000'000'000;
        if (ticks > kMaxSpanNs / kTickNs)
            p.fail("Timestamp " + f[0] + " is more than 200 days after the first request's, " +
                   "beyond the simulated clock's reach");
        BlockRequest r;
        r.time_ns = ticks * kTickNs;
        r.write = write;
        r.offset_bytes = offset;
        r.size_bytes = size;
        r.response_ns = rt * kTickNs;
        r.line = line;
        t.requests.push_back(r);
    }
    if (in.bad()) throw InputError(source, "", "read error after line " + std::to_string(line));
    if (t.requests.empty()) {
        if (opt.disk && !disks_seen.empty()) {
            std::string seen;
            for (uint32_t d : disks_seen) seen += (seen.empty() ? "" : ", ") + std::to_string(d);
            throw InputError(source, "",
                             "no requests for disk " + std::to_string(*opt.disk) +
                                 " (disks in the trace: " + seen + ")");
        }
        if (opt.max_requests && *opt.max_requests == 0)
            throw InputError(source, "", "no requests kept: the request limit is 0");
        throw InputError(source, "", "the trace has no requests");
    }
    return t;
}

BlockTrace read_msr_trace(const std::string& path, const MsrOptions& opt) {
    core::check_input_file(path, "a block trace");
    std::ifstream f(path);
    if (!f) throw InputError(path, "", "cannot read the trace");
    return parse_msr_trace(f, path, opt);
}

}  // namespace canopy::sw
