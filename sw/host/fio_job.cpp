// The fio job-file reader; see fio_job.hpp.
#include "sw/host/fio_job.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/user_files.hpp"

namespace canopy::sw {

namespace {

constexpr uint64_t kMaxFileBytes = core::kMiB;  // a job file is a few lines
constexpr size_t kMaxLineBytes = 4096;
constexpr uint64_t kMaxBytes = 1ull << 50;  // sizes and offsets: 1 PiB

// Options fio has that Canopy does not model: refused with this reason rather than "unknown".
const std::vector<std::string> kUnmodelled = {"allrandrepeat",
                                              "ba",
                                              "blockalign",
                                              "blocksize_range",
                                              "bsrange",
                                              "buffer_compress_percentage",
                                              "buffer_pattern",
                                              "buffered",
                                              "clat_percentiles",
                                              "continue_on_error",
                                              "cpus_allowed",
                                              "create_on_open",
                                              "dedupe_percentage",
                                              "disable_bw_measurement",
                                              "disable_clat",
                                              "disable_lat",
                                              "disable_slat",
                                              "do_verify",
                                              "exitall",
                                              "file_service_type",
                                              "fill_device",
                                              "fsync_on_close",
                                              "gtod_reduce",
                                              "include",
                                              "invalidate",
                                              "io_limit",
                                              "io_size",
                                              "iodepth_batch",
                                              "iodepth_batch_complete",
                                              "iodepth_batch_complete_max",
                                              "iodepth_batch_complete_min",
                                              "iodepth_batch_submit",
                                              "iodepth_low",
                                              "iomem",
                                              "ioscheduler",
                                              "kb_base",
                                              "lat_percentiles",
                                              "loops",
                                              "mem",
                                              "new_group",
                                              "nrfiles",
                                              "offset_increment",
                                              "openfiles",
                                              "overwrite",
                                              "percentage_random",
                                              "percentile_list",
                                              "pre_read",
                                              "random_generator",
                                              "randseed",
                                              "rate",
                                              "rate_min",
                                              "refill_buffers",
                                              "scramble_buffers",
                                              "size_increment",
                                              "slat_percentiles",
                                              "startdelay",
                                              "stonewall",
                                              "thinktime",
                                              "thinktime_blocks",
                                              "thinktime_spin",
                                              "unified_rw_reporting",
                                              "unit_base",
                                              "unlink",
                                              "verify",
                                              "verify_pattern",
                                              "zero_buffers",
                                              "zonemode",
                                              "zonesize",
                                              "zoneskip",
                                              "bs_unaligned",
                                              "rw_sequencer",
                                              "fadvise_hint",
                                              "exec_prerun",
                                              "exec_postrun"};
const std::vector<std::string> kModelled = {"name",         "description",
                                            "rw",           "readwrite",
                                            "rwmixread",    "rwmixwrite",
                                            "bs",           "blocksize",
                                            "bssplit",      "iodepth",
                                            "numjobs",      "size",
                                            "offset",       "number_ios",
                                            "runtime",      "time_based",
                                            "ramp_time",    "random_distribution",
                                            "direct",       "ioengine",
                                            "filename",     "randrepeat",
                                            "fsync",        "fdatasync",
                                            "end_fsync",    "norandommap",
                                            "thread",       "group_reporting",
                                            "sync",         "write_lat_log",
                                            "write_bw_log", "write_iops_log",
                                            "log_avg_msec", "log_offset",
                                            "rate_iops"};

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

uint64_t parse_uint(const std::string& text, const std::string& source, const std::string& place,
                    const std::string& option, uint64_t lo, uint64_t hi) {
    const std::string t = trim(text);
    uint64_t v = 0;
    bool ok = !t.empty() && t.size() <= 20;
    for (char c : t) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || v > (UINT64_MAX - 9) / 10) {
            ok = false;
            break;
        }
        v = v * 10 + uint64_t(c - '0');
    }
    if (!ok || v < lo || v > hi)
        throw InputError(source, place,
                         option + "=" + t + ": needs a whole number from " + std::to_string(lo) +
                             " to " + std::to_string(hi));
    return v;
}

}  // namespace

uint64_t FioJob::min_bs() const {
    uint64_t m = UINT64_MAX;
    for (const auto& [b, p] : bssplit) m = std::min(m, b);
    return m;
}

uint64_t FioJob::max_bs() const {
    uint64_t m = 0;
    for (const auto& [b, p] : bssplit) m = std::max(m, b);
    return m;
}

uint64_t parse_fio_size(const std::string& text, const std::string& source,
                        const std::string& place, const std::string& option, uint64_t max) {
    const std::string t = lower(trim(text));
    size_t digits = 0;
    while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
    std::string suffix = t.substr(digits);
    static const std::map<std::string, int> kShift = {
        {"", 0},     {"b", 0},   {"k", 10},   {"kb", 10}, {"kib", 10}, {"ki", 10},
        {"m", 20},   {"mb", 20}, {"mib", 20}, {"mi", 20}, {"g", 30},   {"gb", 30},
        {"gib", 30}, {"gi", 30}, {"t", 40},   {"tb", 40}, {"tib", 40}, {"ti", 40}};
    const auto s = kShift.find(suffix);
    const std::string bad = option + "=" + trim(text) +
                            ": needs a size (bytes, or with k, m, g, t: " + "base 1024) up to " +
                            std::to_string(max) + " B";
    if (digits == 0 || digits > 19 || s == kShift.end()) throw InputError(source, place, bad);
    const uint64_t n = std::stoull(t.substr(0, digits));
    if (n > (max >> s->second)) throw InputError(source, place, bad);
    return n << s->second;
}

double parse_fio_time(const std::string& text, const std::string& source, const std::string& place,
                      const std::string& option) {
    const std::string t = lower(trim(text));
    size_t digits = 0;
    while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
    static const std::map<std::string, double> kUnit = {
        {"", 1e9},   {"s", 1e9},    {"sec", 1e9}, {"ms", 1e6},   {"msec", 1e6},
        {"us", 1e3}, {"usec", 1e3}, {"m", 60e9},  {"min", 60e9}, {"h", 3600e9}};
    const auto u = kUnit.find(t.substr(digits));
    // At most a simulated day: longer runs would take years of wall time.
    constexpr double kMaxNs = 86400e9;
    if (digits == 0 || digits > 12 || u == kUnit.end() ||
        double(std::stoull(t.substr(0, digits))) * u->second > kMaxNs)
        throw InputError(source, place,
                         option + "=" + trim(text) +
                             ": needs a time (seconds, or with us, ms, s, m, h) up to 24 h");
    return double(std::stoull(t.substr(0, digits))) * u->second;
}

namespace {

// Applies one option to `j`; `place` is "line N".
void apply(FioJob& j, bool& group_reporting, const std::string& key, const std::string& value,
           bool has_value, const std::string& source, const std::string& place) {
    auto need_value = [&] {
        if (!has_value || value.empty())
            throw InputError(source, place, "option " + key + " needs a value (" + key + "=...)");
    };
    auto one_value = [&](const std::string& why) {  // fio's per-direction lists: a,b,c
        need_value();
        if (value.find(',') != std::string::npos)
            throw InputError(source, place, key + "=" + value + ": " + why);
    };
    auto flag = [&] {  // a bare flag, or =0 / =1
        return !has_value || parse_uint(value, source, place, key, 0, 1) == 1;
    };
    if (key == "name") {
        need_value();
        j.name = value;
    } else if (key == "description") {
        j.description = value;
    } else if (key == "rw" || key == "readwrite") {
        need_value();
        const std::string v = lower(value);
        // Bits: 1 read, 2 write, 4 trim; and whether random.
        static const std::map<std::string, std::pair<int, bool>> kRw = {
            {"read", {1, false}},     {"write", {2, false}}, {"randread", {1, true}},
            {"randwrite", {2, true}}, {"rw", {3, false}},    {"readwrite", {3, false}},
            {"randrw", {3, true}},    {"trim", {4, false}},  {"randtrim", {4, true}}};
        if (v == "trimwrite" || v == "randtrimwrite")
            throw InputError(
                source, place,
                key + "=" + value +
                    ": not modelled (a TRIM followed by a write of the same blocks); "
                    "read, write, trim, randread, randwrite, randtrim, rw, randrw are");
        const auto r = kRw.find(v);
        if (r == kRw.end())
            throw InputError(source, place,
                             key + "=" + value +
                                 ": unknown; read, write, trim, randread, randwrite, randtrim, "
                                 "rw (readwrite), randrw");
        j.rw = v;
        j.read = r->second.first & 1;
        j.write = r->second.first & 2;
        j.trim = r->second.first & 4;
        j.random = r->second.second;
    } else if (key == "rwmixread" || key == "rwmixwrite") {
        need_value();
        const auto p = uint32_t(parse_uint(value, source, place, key, 0, 100));
        j.rwmixread = key == "rwmixread" ? p : 100 - p;
    } else if (key == "bs" || key == "blocksize") {
        one_value(
            "separate read and write block sizes are not modelled; give one size, or a "
            "bssplit");
        const uint64_t b = parse_fio_size(value, source, place, key, kFioMaxBlockBytes);
        if (b < kFioMinBlockBytes || b % kFioMinBlockBytes)
            throw InputError(source, place,
                             key + "=" + value + ": needs a multiple of 512 B from 512 B to 1 MiB");
        j.bssplit = {{b, 100}};
    } else if (key == "bssplit") {
        need_value();
        std::vector<std::pair<uint64_t, uint32_t>> split;
        uint32_t total = 0;
        std::stringstream in(value);
        std::string part;
        while (std::getline(in, part, ':')) {
            if (part.find(',') != std::string::npos)
                throw InputError(
                    source, place,
                    "bssplit=" + value + ": separate read and write splits are not modelled");
            const auto slash = part.find('/');
            const uint64_t b =
                parse_fio_size(part.substr(0, slash), source, place, "bssplit", kFioMaxBlockBytes);
            if (b < kFioMinBlockBytes || b % kFioMinBlockBytes)
                throw InputError(source, place,
                                 "bssplit=" + value +
                                     ": each size needs a multiple of 512 B from 512 B to 1 MiB");
            const uint32_t pct = slash == std::string::npos
                                     ? 0
                                     : uint32_t(parse_uint(part.substr(slash + 1), source, place,
                                                           "bssplit", 0, 100));
            split.push_back({b, pct});
            total += pct;
            if (split.size() > 64) throw InputError(source, place, "bssplit: more than 64 sizes");
        }
        // As fio: sizes without a percentage share what the others leave.
        const auto blank = size_t(
            std::count_if(split.begin(), split.end(), [](const auto& s) { return s.second == 0; }));
        if (split.empty() || total > 100 || (blank == 0 && total != 100))
            throw InputError(source, place,
                             "bssplit=" + value + ": the percentages must add up to 100");
        // The rounding's remainder goes to the last of them, so the shares add up to 100.
        uint32_t left = 100 - total, blanks_left = uint32_t(blank);
        for (auto& s : split)
            if (s.second == 0) {
                s.second = --blanks_left ? (100 - total) / uint32_t(blank) : left;
                left -= s.second;
            }
        j.bssplit = split;
    } else if (key == "iodepth") {
        need_value();
        j.iodepth = uint32_t(parse_uint(value, source, place, key, 1, 1024));
    } else if (key == "numjobs") {
        need_value();
        j.numjobs = uint32_t(parse_uint(value, source, place, key, 1, kFioMaxNumjobs));
    } else if (key == "size") {
        need_value();
        const std::string v = trim(value);
        if (!v.empty() && v.back() == '%') {
            j.size_percent =
                double(parse_uint(v.substr(0, v.size() - 1), source, place, key, 1, 100));
            j.size_bytes = 0;
        } else {
            j.size_bytes = parse_fio_size(v, source, place, key, kMaxBytes);
            j.size_percent = 0;
            if (j.size_bytes == 0)
                throw InputError(source, place, "size=0: needs at least 1 block");
        }
    } else if (key == "offset") {
        need_value();
        j.offset_bytes = parse_fio_size(value, source, place, key, kMaxBytes);
    } else if (key == "number_ios") {
        need_value();
        j.number_ios = parse_uint(value, source, place, key, 1, uint64_t(1) << 40);
    } else if (key == "runtime") {
        need_value();
        j.runtime_ns = parse_fio_time(value, source, place, key);
    } else if (key == "ramp_time") {
        need_value();
        j.ramp_ns = parse_fio_time(value, source, place, key);
    } else if (key == "time_based") {
        j.time_based = flag();
    } else if (key == "random_distribution") {
        need_value();
        const std::string v = lower(trim(value));
        if (v == "random") {
            j.zipf_theta = 0;
        } else if (v.rfind("zipf:", 0) == 0) {
            double theta = -1;
            size_t used = 0;
            try {
                theta = std::stod(v.substr(5), &used);
            } catch (const std::exception&) {
                used = 0;
            }
            // fio's own bounds: theta > 0 and not 1 (its generator divides by 1 - theta).
            if (used == 0 || used != v.size() - 5 || !(theta > 0) || theta > 10 ||
                std::fabs(theta - 1.0) < 1e-9)
                throw InputError(source, place,
                                 "random_distribution=" + value +
                                     ": zipf needs a theta above 0, at most 10, and not 1");
            j.zipf_theta = theta;
        } else {
            throw InputError(source, place,
                             "random_distribution=" + value +
                                 ": random and zipf:theta are modelled (pareto, normal, "
                                 "gauss and zoned are not)");
        }
    } else if (key == "direct") {
        if (!flag())
            throw InputError(source, place,
                             "direct=0: buffered I/O through a host page cache is not modelled; "
                             "Canopy's jobs are always direct=1");
    } else if (key == "ioengine") {
        need_value();
        const std::string v = lower(trim(value));
        if (v == "libaio" || v == "io_uring" || v == "base-io")
            j.direct_io = false;
        else if (v == "libdirectio" || v == "direct-io")
            j.direct_io = true;
        else
            throw InputError(source, place,
                             "ioengine=" + value +
                                 ": libaio, io_uring or base-io (Base-IO, the kernel's block "
                                 "device) and libdirectio or direct-io (Direct-IO, OS bypass) are "
                                 "modelled");
        j.ioengine = v;
    } else if (key == "filename") {
        need_value();
        if (value[0] != '/' || value.size() > 150)
            throw InputError(source, place,
                             "filename=" + value + ": needs an absolute path of at most 150 bytes");
        j.filename = value;
    } else if (key == "randrepeat") {
        j.randrepeat = flag();
    } else if (key == "fsync" || key == "fdatasync") {
        need_value();
        (key == "fsync" ? j.fsync : j.fdatasync) =
            uint32_t(parse_uint(value, source, place, key, 0, UINT32_MAX));
    } else if (key == "end_fsync") {
        j.end_fsync = flag();
    } else if (key == "sync") {  // a bare flag, or fio's none (0), sync (1), dsync
        const std::string v = has_value ? lower(trim(value)) : "1";
        if (v == "0" || v == "none")
            j.sync_writes = false;
        else if (v == "1" || v == "sync" || v == "dsync")
            j.sync_writes = true;
        else
            throw InputError(source, place,
                             "sync=" + value + ": none (0), sync (1) or dsync are modelled");
    } else if (key == "write_lat_log" || key == "write_bw_log" || key == "write_iops_log") {
        // A bare option: the job's name is the prefix. The files go into the --out folder.
        const bool ok = value.size() <= 64 &&
                        value.find_first_not_of(
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789._-") == std::string::npos &&
                        (value.empty() || value[0] != '.');
        if (!ok)
            throw InputError(source, place,
                             key + "=" + value +
                                 ": a log's prefix is a file name of at most 64 letters, digits, "
                                 "'.', '_' or '-', not starting with '.' (the logs go into the "
                                 "--out folder)");
        FioJob::Log& l = key == "write_lat_log"  ? j.lat_log
                         : key == "write_bw_log" ? j.bw_log
                                                 : j.iops_log;
        l = {true, value};
    } else if (key == "rate_iops") {
        one_value(
            "separate read, write and trim rates are not modelled; one rate caps each "
            "direction");
        j.rate_iops = uint32_t(parse_uint(value, source, place, key, 1, 10000000));
    } else if (key == "log_avg_msec") {
        need_value();
        j.log_avg_msec = uint32_t(parse_uint(value, source, place, key, 0, 86400000));
    } else if (key == "log_offset") {
        j.log_offset = flag();
    } else if (key == "norandommap" || key == "thread") {
        flag();  // no random map is kept, and jobs are host programs either way
    } else if (key == "group_reporting") {
        group_reporting = flag();
    } else if (std::find(kUnmodelled.begin(), kUnmodelled.end(), key) != kUnmodelled.end()) {
        throw InputError(source, place,
                         "fio option " + key +
                             " is not modelled by Canopy (running without it "
                             "would measure something else)");
    } else {
        std::vector<std::string> all = kModelled;
        all.insert(all.end(), kUnmodelled.begin(), kUnmodelled.end());
        const std::string near = closest_match(key, all);
        throw InputError(
            source, place,
            "unknown fio option " + key + (near.empty() ? "" : " (did you mean " + near + "?)"));
    }
}

}  // namespace

FioJobFile parse_fio_job_file(std::istream& in, const std::string& source) {
    FioJobFile file;
    file.source = source;
    FioJob global;
    global.bssplit = {{4096, 100}};  // fio's default bs
    global.name = "global";
    FioJob* current = nullptr;  // null: before any section
    bool in_global = false;
    std::string raw;
    uint32_t line = 0;
    while (std::getline(in, raw)) {
        ++line;
        const std::string place = "line " + std::to_string(line);
        if (raw.size() > kMaxLineBytes)
            throw InputError(source, place, "a line longer than 4096 bytes");
        const std::string t = trim(raw);
        if (t.empty() || t[0] == ';' || t[0] == '#') continue;
        if (t[0] == '[') {
            if (t.back() != ']' || t.size() < 3)
                throw InputError(source, place, "a section header is [name]");
            const std::string name = trim(t.substr(1, t.size() - 2));
            if (name.empty() || name.find_first_of("[]/ ") != std::string::npos || name.size() > 64)
                throw InputError(source, place,
                                 "section [" + name +
                                     "]: a job name is 1 to 64 characters, no spaces, '/' or "
                                     "brackets");
            if (name == "global") {
                if (!file.jobs.empty())
                    throw InputError(source, place,
                                     "[global] after a job: fio would start a new group with "
                                     "it; groups (stonewall) are not modelled");
                current = &global, in_global = true;
            } else {
                for (const FioJob& j : file.jobs)
                    if (j.name == name)
                        throw InputError(source, place, "job [" + name + "] given twice");
                if (file.jobs.size() == 64) throw InputError(source, place, "more than 64 jobs");
                FioJob j = global;
                j.name = name;
                j.line = line;
                file.jobs.push_back(j);
                current = &file.jobs.back(), in_global = false;
            }
            continue;
        }
        if (!current) throw InputError(source, place, "an option before any [section]: " + t);
        const auto eq = t.find('=');
        const std::string key = lower(trim(t.substr(0, eq)));
        const std::string value = eq == std::string::npos ? "" : trim(t.substr(eq + 1));
        if (key.empty()) throw InputError(source, place, "an option without a name: " + t);
        if (key == "name" && in_global)
            throw InputError(source, place, "name= in [global]: name each job by its section");
        apply(*current, file.group_reporting, key, value, eq != std::string::npos, source, place);
    }
    if (in.bad()) throw InputError(source, "", "cannot read the job file");
    if (file.jobs.empty()) throw InputError(source, "", "no job: a job file needs a [job] section");
    for (const FioJob& j : file.jobs) {
        const std::string place = "line " + std::to_string(j.line) + ", job " + j.name;
        if (j.size_bytes && j.size_bytes < j.max_bs())
            throw InputError(source, place,
                             "size=" + std::to_string(j.size_bytes) +
                                 " B is smaller than the largest block (" +
                                 std::to_string(j.max_bs()) + " B)");
        if (j.time_based && j.runtime_ns <= 0)
            throw InputError(source, place, "time_based needs a runtime");
    }
    return file;
}

FioJobFile read_fio_job_file(const std::string& path) {
    std::istringstream in(core::read_input_file(path, kMaxFileBytes, "an fio job file"));
    return parse_fio_job_file(in, path);
}

}  // namespace canopy::sw
