#include "experiments/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"

namespace canopy::experiments {

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

}  // namespace canopy::experiments
