#include "core/stats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include <boost/histogram.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace canopy::core {

static std::string fmt(double v, const std::string& unit = "") {
    std::ostringstream s;
    s << std::setprecision(4) << v;
    if (!unit.empty()) s << " " << unit;
    return s.str();
}

Json Counter::to_json(double) const { return value_; }
Json Sum::to_json(double) const { return value_; }
std::string Counter::summary(double) const { return std::to_string(value_); }
std::string Sum::summary(double) const { return fmt(value_, unit()); }

template <class T>
static const T& as(const Stat* s) {
    return static_cast<const T&>(*s);
}
static std::string over(size_t n) { return " over " + std::to_string(n); }

std::string Counter::group_summary(const std::vector<const Stat*>& g, double) const {
    uint64_t total = 0;
    for (const Stat* s : g) total += as<Counter>(s).value();
    return "total " + std::to_string(total) + over(g.size());
}

std::string Sum::group_summary(const std::vector<const Stat*>& g, double) const {
    double total = 0;
    for (const Stat* s : g) total += as<Sum>(s).value();
    return "total " + fmt(total, unit()) + over(g.size());
}

using Axis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;

static Axis log_axis() {
    return Axis(unsigned(std::lround(Distribution::kBinsPerDecade *
                                     std::log10(Distribution::kHigh / Distribution::kLow))),
                Distribution::kLow, Distribution::kHigh);
}

struct Distribution::Histogram {
    boost::histogram::histogram<std::tuple<Axis>, boost::histogram::dense_storage<uint64_t>> bins =
        boost::histogram::make_histogram_with(boost::histogram::dense_storage<uint64_t>(),
                                              log_axis());
};

Distribution::Distribution(std::string name, std::string unit, std::string desc)
    : Stat(std::move(name), std::move(unit), std::move(desc)),
      hist_(std::make_unique<Histogram>()) {}

Distribution::~Distribution() = default;

// Samples are taken on every simulated access, and a logarithm per sample was a tenth of the CCIX
// benchmark's time. The exponent and the top 10 bits of the mantissa give log2(v) from below to
// within 2^-10 / ln 2, a twentieth of a bin, so the estimate is the bin or the one below it; the
// axis's own bin edges settle which.
int Distribution::bin_of(double v) {
    constexpr int kMantissaBits = 10;
    static const struct Tables {
        const Axis axis = log_axis();
        std::vector<double> edge;  // edge[i]: the lower edge of bin i; edge[size]: kHigh
        double log2_mantissa[1 << kMantissaBits];
        const double log2_low = std::log2(kLow), bins_per_octave = kBinsPerDecade * std::log10(2.0);
        Tables() {
            for (int i = 0; i <= axis.size(); ++i) edge.push_back(axis.value(i));
            for (int j = 0; j < (1 << kMantissaBits); ++j)
                log2_mantissa[j] = std::log2(1.0 + double(j) / (1 << kMantissaBits));
        }
    } t;
    const int size = t.axis.size();
    if (!(v >= t.edge[0])) return -1;  // also zero, negative and NaN: below the range
    if (v >= t.edge[size]) return size;
    uint64_t bits = 0;  // v is a normal double here: 2^(exponent - 1023) * 1.mantissa
    std::memcpy(&bits, &v, sizeof bits);
    const int exponent = int(bits >> 52 & 0x7ff) - 1023;
    const double log2v =
        exponent + t.log2_mantissa[bits >> (52 - kMantissaBits) & ((1 << kMantissaBits) - 1)];
    int i = int((log2v - t.log2_low) * t.bins_per_octave);
    i = std::clamp(i, 0, size - 1);
    // Without branches: which way a sample falls at an edge is data, not a pattern to predict.
    i += int(i + 1 < size && v >= t.edge[i + 1]);
    i -= int(i > 0 && v < t.edge[i]);
    return i;
}

void Distribution::sample(double v) {
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    ++count_;
    sum_ += v;
    // Zero and negative values have no logarithm: count them below the range, not above it.
    if (!(v == last_value_)) last_value_ = v, last_bin_ = bin_of(v);
    ++hist_->bins.at(last_bin_);
}

double Distribution::percentile(double p) const {
    if (count_ == 0) return 0.0;
    if (p <= 0) return min_;
    if (p >= 100) return max_;
    const double target = p / 100.0 * double(count_);
    double cum = 0;
    for (auto&& bin : boost::histogram::indexed(hist_->bins, boost::histogram::coverage::all)) {
        double n = *bin;
        if (n == 0) continue;
        if (cum + n >= target) {
            // The bin's samples lie in [lower, upper) and [min, max]; below the log range that
            // is [min, kLow), which may hold zero or negative values.
            double lo = bin.index() < 0 ? min_ : std::max(bin.bin().lower(), min_);
            double hi = std::min(bin.bin().upper(), max_);
            if (!(lo > 0) || !(hi > lo)) return std::clamp(lo, min_, max_);
            double frac = (target - cum) / n;
            return std::clamp(lo * std::pow(hi / lo, frac), min_, max_);
        }
        cum += n;
    }
    return max_;
}

Json Distribution::to_json(double) const {
    Json j = {{"count", count_},       {"mean", mean()},        {"min", min()},
              {"p50", percentile(50)}, {"p90", percentile(90)}, {"p99", percentile(99)},
              {"max", max()},          {"unit", unit()}};
    Json bins = Json::array();
    const int size = hist_->bins.axis().size();
    for (auto&& bin : boost::histogram::indexed(hist_->bins, boost::histogram::coverage::all)) {
        if (*bin == 0) continue;
        // The under- and overflow bins are unbounded; JSON has no infinity, so they end at the
        // smallest and largest sample.
        double lo = bin.bin().lower(), hi = bin.bin().upper();
        if (bin.index() < 0) lo = std::min(lo, min_);
        if (bin.index() >= size) hi = max_;
        bins.push_back({lo, hi, uint64_t(*bin)});
    }
    j["histogram"] = {{"bins_per_decade", kBinsPerDecade}, {"bins", bins}};
    return j;
}

std::string Distribution::summary(double) const {
    if (!count_) return "no samples";
    return "n " + std::to_string(count_) + ", mean " + fmt(mean(), unit()) + ", p99 " +
           fmt(percentile(99), unit());
}

std::string Distribution::group_summary(const std::vector<const Stat*>& g, double) const {
    uint64_t n = 0;
    double sum = 0, mx = 0;
    for (const Stat* s : g) {
        const auto& d = as<Distribution>(s);
        n += d.count(), sum += d.mean() * double(d.count()), mx = std::max(mx, d.max());
    }
    if (!n) return "no samples" + over(g.size());
    return "n " + std::to_string(n) + ", mean " + fmt(sum / double(n), unit()) + ", max " +
           fmt(mx, unit()) + over(g.size());
}

void Occupancy::occupy(double wait_ns, double busy_ns) {
    ++grants_;
    wait_ns_ += wait_ns;
    busy_ns_ += busy_ns;
    max_wait_ns_ = std::max(max_wait_ns_, wait_ns);
}

// Time averages over the run; with no elapsed time there is nothing to average over.
static double per_time(double total_ns, double elapsed_ns) {
    return elapsed_ns > 0 ? total_ns / elapsed_ns : 0.0;
}

Json Occupancy::to_json(double elapsed_ns) const {
    return {{"grants", grants_},
            {"busy_ns", busy_ns_},
            {"utilisation", per_time(busy_ns_, elapsed_ns)},
            {"mean_wait_ns", grants_ ? wait_ns_ / double(grants_) : 0.0},
            {"max_wait_ns", max_wait_ns_},
            {"mean_queue_depth", per_time(wait_ns_, elapsed_ns)}};
}

std::string Occupancy::summary(double elapsed_ns) const {
    return "util " + fmt(100.0 * per_time(busy_ns_, elapsed_ns)) + "%, " + std::to_string(grants_) +
           " grants";
}

std::string Occupancy::group_summary(const std::vector<const Stat*>& g, double elapsed_ns) const {
    double e = elapsed_ns > 0 ? elapsed_ns : 1, busy = 0, most = 0;
    for (const Stat* s : g)
        busy += as<Occupancy>(s).busy_ns(), most = std::max(most, as<Occupancy>(s).busy_ns());
    return "util mean " + fmt(100.0 * busy / double(g.size()) / e) + "%, max " +
           fmt(100.0 * most / e) + "%" + over(g.size());
}

template <class T, class... A>
T& StatsRegistry::add(const std::string& module, bool key, A&&... args) {
    auto stat = std::make_unique<T>(std::forward<A>(args)...);
    T& ref = *stat;
    auto& list = modules_[module];
    for (const auto& e : list)
        if (e.stat->name() == ref.name())
            throw std::logic_error("statistic registered twice: " + module + "." + ref.name());
    list.push_back(Entry{std::move(stat), key});
    return ref;
}

Counter& StatsRegistry::counter(const std::string& module, const std::string& name,
                                const std::string& desc, bool key) {
    return add<Counter>(module, key, name, "", desc);
}
Sum& StatsRegistry::sum(const std::string& module, const std::string& name, const std::string& unit,
                        const std::string& desc, bool key) {
    return add<Sum>(module, key, name, unit, desc);
}
Distribution& StatsRegistry::distribution(const std::string& module, const std::string& name,
                                          const std::string& unit, const std::string& desc,
                                          bool key) {
    return add<Distribution>(module, key, name, unit, desc);
}
Occupancy& StatsRegistry::occupancy(const std::string& module, const std::string& name,
                                    const std::string& desc, bool key) {
    return add<Occupancy>(module, key, name, "", desc);
}

const Stat* StatsRegistry::find(const std::string& module, const std::string& name) const {
    auto it = modules_.find(module);
    if (it == modules_.end()) return nullptr;
    for (const auto& e : it->second)
        if (e.stat->name() == name) return e.stat.get();
    return nullptr;
}

Json StatsRegistry::to_json(const Json& header, double elapsed_ns) const {
    Json root = header;
    Json mods = Json::object();
    for (const auto& [module, list] : modules_) {
        Json m = Json::object();
        for (const auto& e : list) m[e.stat->name()] = e.stat->to_json(elapsed_ns);
        mods[module] = std::move(m);
    }
    root["modules"] = std::move(mods);
    return root;
}

void StatsRegistry::write_json(const std::string& path, const Json& header,
                               double elapsed_ns) const {
    std::ofstream f(path);
    if (!f) throw InputError(path, "", "cannot open for writing");
    f << to_json(header, elapsed_ns).dump(1) << "\n";
    f.close();
    if (!f) throw InputError(path, "", "write failed");
}

void StatsRegistry::print_summary(std::ostream& os, double elapsed_ns) const {
    // Group by the module name with its numbers starred, then by statistic name, in first-seen
    // order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const Stat*>> groups;
    for (const auto& [module, list] : modules_) {
        std::string pattern;
        for (size_t i = 0; i < module.size(); ++i) {
            if (std::isdigit(static_cast<unsigned char>(module[i]))) {
                while (i + 1 < module.size() &&
                       std::isdigit(static_cast<unsigned char>(module[i + 1])))
                    ++i;
                pattern += '*';
            } else {
                pattern += module[i];
            }
        }
        for (const auto& e : list) {
            if (!e.key) continue;
            std::string k = pattern + "." + e.stat->name();
            auto& g = groups[k];
            if (g.empty()) order.push_back(k);
            g.push_back(e.stat.get());
        }
    }
    std::vector<std::pair<std::string, std::string>> rows;
    size_t w = 0;
    for (const auto& k : order) {
        const auto& g = groups[k];
        // A lone member keeps its real name.
        std::string name = k;
        if (g.size() == 1)
            for (const auto& [module, list] : modules_)
                for (const auto& e : list)
                    if (e.stat.get() == g[0]) name = module + "." + e.stat->name();
        rows.emplace_back(
            name, g.size() == 1 ? g[0]->summary(elapsed_ns) : g[0]->group_summary(g, elapsed_ns));
        w = std::max(w, name.size());
    }
    const auto flags = os.flags();
    for (const auto& [name, value] : rows)
        os << "  " << std::left << std::setw(int(w)) << name << "  " << value << "\n";
    os.flags(flags);
}

}  // namespace canopy::core
