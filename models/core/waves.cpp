#include "core/waves.hpp"

#include <fnmatch.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/error.hpp"

namespace canopy::core {

namespace {
// The first whole nanosecond at or after `t`.
uint64_t ceil_ns(const sc_core::sc_time& t) {
    static const uint64_t per_ns = sc_core::sc_time(1, sc_core::SC_NS).value();
    return (t.value() + per_ns - 1) / per_ns;
}

// VCD identifier codes: printable characters from '!' to '~', least significant first.
std::string code_of(size_t i) {
    std::string s;
    do {
        s += char('!' + i % 94);
        i /= 94;
    } while (i);
    return s;
}
}  // namespace

Waves::~Waves() { close(); }

void Waves::open(const std::string& path, std::vector<std::string> filters) {
    close();
    filters_ = std::move(filters);
    filter_used_.assign(filters_.size(), false);
    std::string name = path;
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".vcd") != 0) name += ".vcd";
    stem_ = name.substr(0, name.size() - 4);
    tables_.clear();
    file_ = std::fopen(name.c_str(), "w");
    if (!file_)
        throw InputError(path, "", std::string("cannot open for writing: ") + std::strerror(errno));
    header_ = false;
    written_ns_ = 0;
    signals_.clear();
    pending_.clear();
}

void Waves::close() {
    if (!file_) return;
    flush_before(UINT64_MAX);
    if (!header_) write_header();
    std::fclose(file_);
    file_ = nullptr;
    write_translate_files();
}

// GTKWave shows a multi-bit value in hex, zero-padded to the signal's width: the filter's
// left-hand sides must read the same.
void Waves::write_translate_files() const {
    for (const auto& [tag, table] : tables_) {
        const std::string path = stem_ + "." + tag + ".txt";
        std::FILE* f = std::fopen(path.c_str(), "w");
        if (!f)
            throw InputError(path, "",
                             std::string("cannot open for writing: ") + std::strerror(errno));
        std::fprintf(
            f,
            "# GTKWave translate filter: select the signals, then Edit > Data Format >\n"
            "# Translate Filter File > Enable and Select > Add Filter to List > this file.\n"
            "# For:");
        for (const std::string& sig : table.signals) std::fprintf(f, " %s", sig.c_str());
        std::fprintf(f, "\n");
        for (const auto& [value, name] : table.names.names)
            std::fprintf(f, "%0*llx %s\n", int((table.bits + 3) / 4),
                         static_cast<unsigned long long>(value), name.c_str());
        std::fclose(f);
    }
}

std::vector<std::string> Waves::unmatched_filters() const {
    std::vector<std::string> unmatched;
    for (size_t i = 0; i < filters_.size(); ++i)
        if (!filter_used_[i]) unmatched.push_back(filters_[i]);
    return unmatched;
}

int Waves::add(const std::string& name, unsigned bits, Fold fold, int64_t initial,
               const ValueNames* names) {
    if (!file_) return -1;
    if (!filters_.empty()) {
        bool kept = false;
        for (size_t i = 0; i < filters_.size(); ++i)
            if (fnmatch(filters_[i].c_str(), name.c_str(), 0) == 0) kept = filter_used_[i] = true;
        if (!kept) return -1;
    }
    if (header_)
        throw std::logic_error("waves: signal " + name + " declared after the first change");
    if (names) {
        Table& table = tables_[names->tag];
        table.names = *names;
        table.bits = bits;  // one table serves signals of one width
        table.signals.push_back(name);
    }
    Signal s{name, code_of(signals_.size()), bits, fold, initial, 0};
    s.shown = value(s);
    signals_.push_back(s);
    return int(signals_.size() - 1);
}

uint64_t Waves::value(const Signal& s) const {
    switch (s.fold) {
        case Fold::Last:
            return s.bits >= 64 ? uint64_t(s.state) : uint64_t(s.state) & ((1ull << s.bits) - 1);
        case Fold::Count:
            return s.state > 0 ? uint64_t(s.state) : 0;
        case Fold::Any:
            return s.state > 0;
    }
    return 0;
}

void Waves::post(int id, const sc_core::sc_time& at, int64_t event) {
    if (!file_ || id < 0) return;
    const uint64_t now = ceil_ns(sc_core::sc_time_stamp());
    pending_.emplace(std::max(ceil_ns(at), now), std::make_pair(id, event));
    // Nothing can be posted before the kernel's time any more: what lies before it is final.
    flush_before(now);
}

void Waves::flush_before(uint64_t ns) {
    if (pending_.empty() || pending_.begin()->first >= ns) return;
    if (!header_) write_header();
    auto it = pending_.begin();
    while (it != pending_.end() && it->first < ns) {
        // All changes at one time first: only the value after the last of them is shown.
        const uint64_t t = it->first;
        auto group_end = it;
        for (; group_end != pending_.end() && group_end->first == t; ++group_end) {
            Signal& s = signals_[size_t(group_end->second.first)];
            s.state = s.fold == Fold::Last ? group_end->second.second
                                           : s.state + group_end->second.second;
        }
        for (; it != group_end; ++it) {
            Signal& s = signals_[size_t(it->second.first)];
            const uint64_t v = value(s);
            if (v == s.shown) continue;
            if (t != written_ns_) {
                std::fprintf(file_, "#%llu\n", static_cast<unsigned long long>(t));
                written_ns_ = t;
            }
            write_value(s, v);
            s.shown = v;
        }
    }
    pending_.erase(pending_.begin(), it);
}

void Waves::write_value(const Signal& s, uint64_t v) {
    if (s.bits == 1) {
        std::fprintf(file_, "%c%s\n", v ? '1' : '0', s.code.c_str());
        return;
    }
    char b[80];
    int n = 0;
    for (int bit = 63; bit >= 0; --bit)
        if (n || (v >> bit & 1) || bit == 0) b[n++] = char('0' + (v >> bit & 1));
    b[n] = 0;
    std::fprintf(file_, "b%s %s\n", b, s.code.c_str());
}

void Waves::write_header() {
    header_ = true;
    std::fprintf(file_, "$version Canopy $end\n$timescale 1 ns $end\n");
    // Scopes from the dotted names, in name order, so the same models give the same header.
    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < signals_.size(); ++i) by_name.emplace(signals_[i].name, i);
    std::vector<std::string> open;
    for (const auto& [name, i] : by_name) {
        std::vector<std::string> parts;
        for (size_t at = 0;;) {
            const size_t dot = name.find('.', at);
            parts.push_back(name.substr(at, dot == std::string::npos ? dot : dot - at));
            if (dot == std::string::npos) break;
            at = dot + 1;
        }
        const std::vector<std::string> scopes(parts.begin(), parts.end() - 1);
        size_t common = 0;
        while (common < open.size() && common < scopes.size() && open[common] == scopes[common])
            ++common;
        for (size_t k = open.size(); k > common; --k) std::fprintf(file_, "$upscope $end\n");
        for (size_t k = common; k < scopes.size(); ++k)
            std::fprintf(file_, "$scope module %s $end\n", scopes[k].c_str());
        open = scopes;
        const Signal& s = signals_[i];
        std::fprintf(file_, "$var wire %u %s %s $end\n", s.bits, s.code.c_str(),
                     parts.back().c_str());
    }
    for (size_t k = open.size(); k > 0; --k) std::fprintf(file_, "$upscope $end\n");
    std::fprintf(file_, "$enddefinitions $end\n#0\n$dumpvars\n");
    for (const Signal& s : signals_) write_value(s, s.shown);
    std::fprintf(file_, "$end\n");
}

}  // namespace canopy::core
