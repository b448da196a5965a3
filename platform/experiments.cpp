#include "platform/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "platform/ccix_experiments.hpp"
#include "platform/flashcosmos_experiment.hpp"
#include "platform/flashcosmos_platform.hpp"
#include "platform/ftl_experiment.hpp"
#include "platform/nand_experiments.hpp"
#include "platform/pcie_experiments.hpp"
#include "platform/rpc_latency_experiment.hpp"
#include "platform/willow_apps_experiment.hpp"
#include "platform/willow_io.hpp"
#include "platform/willow_prototype.hpp"

namespace canopy::platform {

double ExpRow::error_pct() const {
    auto from = [&](double p) { return p == 0 ? 0.0 : 100.0 * (simulated - p) / std::fabs(p); };
    if (!has_range()) return from(published);
    if (simulated < published_lo) return from(published_lo);
    if (simulated > published_hi) return from(published_hi);
    return 0.0;
}

PlatformConfig ExpOptions::platform(const std::vector<std::string>& extra,
                                    std::vector<core::ParamInfo>* params) const {
    std::vector<std::string> all = overrides;
    all.insert(all.end(), extra.begin(), extra.end());
    PlatformConfig cfg = machine ? machine() : PlatformConfig();
    std::vector<core::ParamInfo> p = load_config(cfg, config_file, all);
    if (params) *params = std::move(p);
    return cfg;
}

const std::vector<Experiment>& experiments() {
    static const std::vector<Experiment> list = {
        {"nand-characterisation",
         "Flash-Cosmos Sec. 5 / Table 1: tMWS, MWS power and energy, ESP latency and reliability, "
         "Fig. 7 transfer times, measured on the NAND die model",
         nand_characterisation},
        {"ats-cost",
         "CCIX-vs-PCIe paper Sec. IV Exp. 2 (ATS): 64 B and 32 KiB device reads of host memory "
         "with "
         "ATC hit and miss, first vs sequential page crossings, 4 KiB vs 2 MiB pages",
         ats_cost},
        {"pcie-latency",
         "CCIX-vs-PCIe paper Sec. IV Exp. 1, PCIe-DMA side: device<-host read and device->host "
         "write "
         "latency 32 B .. 16 KiB and throughput to 32 KiB through the DMA engine (physical "
         "addresses); "
         "the paper publishes CCIX/PCIe ratios only, so no published values",
         pcie_latency},
        {"ccix-latency",
         "CCIX-vs-PCIe paper Sec. IV Exp. 1: device reads and writes of host memory over CCIX "
         "(request agent, system-cache misses) and by PCIe DMA, 32 B .. 32 KiB; latency ratios "
         "and read throughput ratios at 1, 16, 32 KiB",
         ccix_latency},
        {"locality",
         "CCIX-vs-PCIe paper Sec. IV Exp. 3: local (system-cache hit) write and read latency of "
         "the u280 and vck5000 profiles, and a working set larger than the u280's system cache",
         ccix_locality},
        {"coherence",
         "CCIX-vs-PCIe paper Sec. IV Exp. 4: host cores and the device read and write random "
         "words of a shared buffer of 2 MiB .. 32 KiB (huge pages); mean latency and spread per "
         "side, 1 and 3 host cores",
         ccix_coherence},
        {"atomics",
         "CCIX-vs-PCIe paper Sec. IV Exp. 5: AtomicCompare issued by a host core and by the "
         "device (CCIX far atomic at the home)",
         ccix_atomics},
        {"lock-table",
         "CCIX-vs-PCIe paper Sec. V (neoDBMS): host and device lock record versions in a shared "
         "lock table in pinned huge-page host memory under rising contention; no double grants",
         lock_table},
        {"willow-io",
         "Willow Sec. 4.1-4.2 (Figures 4-5): Base-IO bandwidth as a share of PCIe 1.1 x8 and "
         "4 KiB read IOPS, Direct-IO against Base-IO through the host file system (512 B reads "
         "and writes, 4 KiB read latency), and the 4 KiB read's time per part",
         willow_io,
         {},
         prototype_config},
        {"willow-apps",
         "Willow Sec. 4.3-4.5 (Figure 6): Atomic-Writes against a host write-ahead log "
         "(TPC-B-like transactions per second, 1..6 threads; MARS up to 1.5x ARIES), and the "
         "Key-Value app against a host key-value store over the file system (GET and PUT of "
         "1 KiB), and Caching against FlashCache in front of a disk (Zipf 90/10), on the "
         "prototype's machine",
         willow_apps,
         {},
         prototype_config},
        {"rpc-latency",
         "Willow's RPCs through PCIe doorbells against coherent queues over CCIX (the bridge "
         "watches the submission queues through the device's request agent): round trip of a "
         "null RPC, Base-IO and Direct-IO 4 KiB reads and writes, one at a time, on PCIe 4.0 x8",
         rpc_latency,
         {},
         rpc_latency_machine},
        {"ftl",
         "the FTL (sw/firmware/ftl) on a channel's flash controller and 2 dies x 2 planes of "
         "TLC: write amplification (against the greedy-GC estimate, not a published value), mean "
         "and p99 write latency and GC rate under uniform random page writes at 7-28 % "
         "over-provisioning",
         ftl_experiment},
        {"flashcosmos",
         "Flash-Cosmos Sec. 7-8 (Table 1, Figures 17-18): speed-up and energy efficiency of "
         "Flash-Cosmos (FC), ParaBit (PB) and in-storage processing (ISP) over outside-storage "
         "processing (OSP) on BMI (m = 1..36 months), IMS (I = 10K..200K images) and KCS "
         "(k = 8..64); full-scale timing-only model, each page-stripe measured on the NAND die "
         "model; then the same workloads, small, on the whole platform with real firmware (rows "
         "P.*, left out by --quick); --workload bmi|ims|kcs|all",
         [](const ExpOptions& o) {
             std::vector<ExpRow> rows = flashcosmos_experiment(o);
             if (!o.quick)  // the platform runs take seconds: --quick is the model alone
                 for (ExpRow& r : flashcosmos_platform_rows(o)) rows.push_back(std::move(r));
             return rows;
         },
         flashcosmos_workloads(), flashcosmos_machine},
    };
    return list;
}

void print_table(const std::vector<ExpRow>& rows, std::ostream& os) {
    size_t w = 8;
    for (const auto& r : rows) w = std::max(w, r.quantity.size());
    char line[512];
    std::snprintf(line, sizeof line, "%-6s %-*s %14s %14s %-6s %9s\n", "id", int(w), "quantity",
                  "simulated", "published", "unit", "error %");
    os << line;
    for (const auto& r : rows) {
        char published[64];
        if (r.has_range() && std::isinf(r.published_hi))
            std::snprintf(published, sizeof published, ">= %g", r.published_lo);
        else if (r.has_range() && std::isinf(r.published_lo))
            std::snprintf(published, sizeof published, "<= %g", r.published_hi);
        else if (r.has_range())
            std::snprintf(published, sizeof published, "%g-%g", r.published_lo, r.published_hi);
        else
            std::snprintf(published, sizeof published, "%.6g", r.published);
        std::snprintf(line, sizeof line, "%-6s %-*s %14.6g %14s %-6s %9.2f\n", r.id.c_str(), int(w),
                      r.quantity.c_str(), r.simulated, published, r.unit.c_str(), r.error_pct());
        os << line;
    }
}

static std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string to_csv(const std::vector<ExpRow>& rows) {
    std::ostringstream s;
    s << "id,quantity,simulated,published,unit,error_pct,published_lo,published_hi\n";
    for (const auto& r : rows) {
        s << csv_field(r.id) << "," << csv_field(r.quantity) << "," << r.simulated << ","
          << r.published << "," << csv_field(r.unit) << "," << r.error_pct() << ",";
        if (r.has_range())
            s << r.published_lo << "," << r.published_hi;
        else
            s << ",";
        s << "\n";
    }
    return s.str();
}

std::string to_json(const std::vector<ExpRow>& rows) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
        a.push_back({{"id", r.id},
                     {"quantity", r.quantity},
                     {"simulated", r.simulated},
                     {"published", r.published},
                     {"unit", r.unit},
                     {"error_pct", r.error_pct()}});
        auto end = [](double v) {  // an open end (a bound) is null
            return std::isinf(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
        };
        if (r.has_range()) a.back()["published_range"] = {end(r.published_lo), end(r.published_hi)};
    }
    return a.dump(2) + "\n";
}

static std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '<')
            o += "&lt;";
        else if (c == '>')
            o += "&gt;";
        else if (c == '&')
            o += "&amp;";
        else
            o += c;
    }
    return o;
}

// Paired bars per row, simulated and published, each scaled to the larger of the two.
std::string to_svg(const std::string& title, const std::vector<ExpRow>& rows) {
    const int row_h = 34, label_w = 430, bar_w = 360, top = 50;
    const int h = top + int(rows.size()) * row_h + 30, w = label_w + bar_w + 220;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(title)
      << "</text>\n"
      << "<rect x=\"" << label_w
      << "\" y=\"30\" width=\"10\" height=\"10\" fill=\"#2a7ab0\"/><text x=\"" << label_w + 14
      << "\" y=\"39\">simulated</text><rect x=\"" << label_w + 90
      << "\" y=\"30\" width=\"10\" height=\"10\" fill=\"#c8c8c8\"/>"
      << "<text x=\"" << label_w + 104 << "\" y=\"39\">published</text>\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        const int y = top + int(i) * row_h;
        const double m = std::max(std::fabs(r.simulated), std::fabs(r.published));
        const double fs = m > 0 ? std::fabs(r.simulated) / m : 0,
                     fp = m > 0 ? std::fabs(r.published) / m : 0;
        char num[64];
        std::snprintf(num, sizeof num, "%.4g / %.4g %s", r.simulated, r.published, r.unit.c_str());
        s << "<text x=\"10\" y=\"" << y + 15 << "\">" << xml_escape(r.id + "  " + r.quantity)
          << "</text>\n"
          << "<rect x=\"" << label_w << "\" y=\"" << y + 3 << "\" width=\"" << fs * bar_w
          << "\" height=\"12\" fill=\"#2a7ab0\"/>\n"
          << "<rect x=\"" << label_w << "\" y=\"" << y + 16 << "\" width=\"" << fp * bar_w
          << "\" height=\"12\" fill=\"#c8c8c8\"/>\n"
          << "<text x=\"" << label_w + bar_w + 6 << "\" y=\"" << y + 20 << "\">" << xml_escape(num)
          << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

std::string histogram_svg(const std::string& title, const std::vector<HistogramPanel>& panels) {
    static const char* const kColours[] = {"#c0392b", "#2a7ab0", "#27ae60", "#8e44ad"};
    const int pw = 420, ph = 220, top = 60, left = 50, gap = 40;
    auto samples = [](const HistogramSeries& ser) {
        double n = 0;
        for (const auto& b : ser.bins) n += b[2];
        return n;
    };
    // One log axis for every panel: from the lowest bin edge to the highest, whole decades.
    double lo = 0, hi = 0, most = 0;
    for (const auto& p : panels)
        for (const auto& ser : p.series) {
            const double n = samples(ser);
            for (const auto& b : ser.bins) {
                if (b[0] > 0) lo = lo == 0 ? b[0] : std::min(lo, b[0]);
                hi = std::max(hi, b[1]);
                if (n > 0) most = std::max(most, b[2] / n);
            }
        }
    if (lo <= 0 || hi <= lo || most <= 0) lo = 1, hi = 10, most = 1;
    const double d0 = std::floor(std::log10(lo)), d1 = std::ceil(std::log10(hi));
    auto x_of = [&](double v) { return (std::log10(std::max(v, lo)) - d0) / (d1 - d0) * pw; };
    const int w = left + int(panels.size()) * (pw + gap), h = top + ph + 50;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
         "fill=\"white\"/>\n<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">"
      << xml_escape(title) << "</text>\n";
    for (size_t i = 0; i < panels.size(); ++i) {
        const int x0 = left + int(i) * (pw + gap), y0 = top + ph;
        s << "<text x=\"" << x0 << "\" y=\"" << top - 8 << "\" font-weight=\"bold\">"
          << xml_escape(panels[i].title) << "</text>\n<line x1=\"" << x0 << "\" y1=\"" << y0
          << "\" x2=\"" << x0 + pw << "\" y2=\"" << y0 << "\" stroke=\"black\"/>\n";
        for (double d = d0; d <= d1; ++d) {
            const double x = x0 + (d - d0) / (d1 - d0) * pw;
            char label[32];
            std::snprintf(label, sizeof label, "%g", std::pow(10.0, d));
            s << "<line x1=\"" << x << "\" y1=\"" << y0 << "\" x2=\"" << x << "\" y2=\"" << y0 + 5
              << "\" stroke=\"black\"/><text x=\"" << x << "\" y=\"" << y0 + 18
              << "\" text-anchor=\"middle\">" << label << "</text>\n";
        }
        const auto& series = panels[i].series;
        for (size_t k = 0; k < series.size(); ++k) {
            const char* colour = kColours[k % 4];
            const double n = samples(series[k]);
            s << "<rect x=\"" << x0 + pw - 110 << "\" y=\"" << top + 14 * int(k)
              << "\" width=\"10\" height=\"10\" fill=\"" << colour << "\"/><text x=\""
              << x0 + pw - 96 << "\" y=\"" << top + 9 + 14 * int(k) << "\">"
              << xml_escape(series[k].label) << "</text>\n";
            for (const auto& b : series[k].bins) {
                if (n <= 0 || b[2] <= 0) continue;
                const double xa = x_of(b[0]), xb = std::max(x_of(b[1]), xa + 3);  // visible
                const double bh = b[2] / n / most * ph;
                s << "<rect x=\"" << x0 + xa << "\" y=\"" << y0 - bh << "\" width=\"" << xb - xa
                  << "\" height=\"" << bh << "\" fill=\"" << colour
                  << "\" fill-opacity=\"0.6\"/>\n";
            }
        }
    }
    s << "<text x=\"" << w / 2 << "\" y=\"" << h - 8
      << "\" text-anchor=\"middle\">latency (ns, log scale); bar height: share of the side's "
         "samples</text>\n</svg>\n";
    return s.str();
}

void write_output(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    if (!f) throw InputError(path, "", "cannot open for writing");
    f << text;
}

void run_experiment(const std::string& name, const ExpOptions& options, const std::string& out_dir,
                    std::ostream& os) {
    const Experiment* e = nullptr;
    std::vector<std::string> names;
    for (const auto& x : experiments()) {
        names.push_back(x.name);
        if (x.name == name) e = &x;
    }
    if (!e) {
        std::string hint = closest_match(name, names);
        throw InputError("canopy exp", name,
                         "no such experiment" + (hint.empty() ? std::string("; see --list")
                                                              : "; did you mean '" + hint + "'?"));
    }
    if (!options.workload.empty()) {
        const auto& w = e->workloads;
        if (w.empty())
            throw InputError("canopy exp", "--workload " + options.workload,
                             "experiment '" + e->name + "' has no workloads");
        if (std::find(w.begin(), w.end(), options.workload) == w.end()) {
            std::string allowed;
            for (const auto& x : w) allowed += (allowed.empty() ? "" : "|") + x;
            throw InputError("canopy exp", "--workload " + options.workload,
                             "unknown workload of '" + e->name + "'; allowed: " + allowed);
        }
    }
    ExpOptions run_options = options;
    run_options.machine = e->machine;
    std::vector<core::ParamInfo> config;  // what the machines start from, for NAME.config.json
    run_options.platform({}, &config);    // checked up front
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw InputError("--out", out_dir, "cannot create the directory: " + ec.message());
    run_options.out_dir = out_dir;
    std::vector<ExpRow> rows = e->run(run_options);
    os << e->name << ": " << e->description << "\n";
    for (const auto& o : options.overrides) os << "  --set " << o << "\n";
    if (!options.config_file.empty()) os << "  --config " << options.config_file << "\n";
    print_table(rows, os);
    const std::string base = out_dir + "/" + e->name;
    write_output(base + ".csv", to_csv(rows));
    write_output(base + ".json", to_json(rows));
    write_output(base + ".svg", to_svg(e->name, rows));
    write_output(base + ".config.json", core::dump_params(config, true));
    os << "wrote " << base << ".csv, .json, .svg, .config.json\n";
}

}  // namespace canopy::platform
