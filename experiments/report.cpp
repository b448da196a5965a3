#include "experiments/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"

namespace canopy::experiments {

namespace {

// The published value as the table shows it: a value, a range, a bound, or blank.
std::string published_text(const ExpRow& r) {
    char b[64];
    if (r.has_range() && std::isinf(r.published_hi))
        std::snprintf(b, sizeof b, ">= %g", r.published_lo);
    else if (r.has_range() && std::isinf(r.published_lo))
        std::snprintf(b, sizeof b, "<= %g", r.published_hi);
    else if (r.has_range())
        std::snprintf(b, sizeof b, "%g-%g", r.published_lo, r.published_hi);
    else if (r.published)
        std::snprintf(b, sizeof b, "%.6g", *r.published);
    else
        b[0] = 0;
    return b;
}

// Splits `text` into lines of at most `width` characters at spaces (a longer word is cut).
std::vector<std::string> wrap(const std::string& text, size_t width) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
        while (w.size() > width) {
            if (!line.empty()) lines.push_back(line), line.clear();
            lines.push_back(w.substr(0, width));
            w = w.substr(width);
        }
        if (!line.empty() && line.size() + 1 + w.size() > width)
            lines.push_back(line), line.clear();
        line += (line.empty() ? "" : " ") + w;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

}  // namespace

void print_table(const std::vector<ExpRow>& rows, std::ostream& os, size_t columns) {
    // id, quantity (wrapped), then fixed columns: " %11s %13s %-6s %8s" = 43 characters.
    constexpr size_t kFixed = 43, kMinQuantity = 24, kMaxId = 20;
    size_t id_w = 2;
    for (const auto& r : rows) id_w = std::max(id_w, std::min(r.id.size(), kMaxId));
    const size_t q_w = std::max(
        kMinQuantity, columns > id_w + 1 + kFixed ? columns - id_w - 1 - kFixed : kMinQuantity);
    auto line = [&](const std::string& id, const std::string& q, const std::string& sim,
                    const std::string& pub, const std::string& unit, const std::string& err) {
        char b[512];
        std::snprintf(b, sizeof b, "%-*s %-*s %11s %13s %-6s %8s", int(id_w), id.c_str(), int(q_w),
                      q.c_str(), sim.c_str(), pub.c_str(), unit.c_str(), err.c_str());
        std::string l = b;
        while (!l.empty() && l.back() == ' ') l.pop_back();
        os << l << "\n";
    };
    line("id", "quantity", "simulated", "published", "unit", "error %");
    for (const auto& r : rows) {
        char sim[32], err[32] = "";
        std::snprintf(sim, sizeof sim, "%.6g", r.simulated);
        if (const auto e = r.error_pct())
            std::snprintf(err, sizeof err, "%.2f", *e);
        else if (!r.paper_machine && (r.published || r.has_range()))
            std::snprintf(err, sizeof err, "unscored");
        std::string id = r.id;
        if (id.size() > id_w) {  // a long id on a line of its own
            os << id << "\n";
            id.clear();
        }
        const std::vector<std::string> q = wrap(r.quantity, q_w);
        line(id, q[0], sim, published_text(r), r.unit, err);
        for (size_t i = 1; i < q.size(); ++i) line("", q[i], "", "", "", "");
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
    s << "id,quantity,simulated,published,unit,error_pct,published_lo,published_hi,"
         "paper_machine\n";
    auto value = [&](std::optional<double> v) {
        if (v) s << *v;
    };
    for (const auto& r : rows) {
        s << csv_field(r.id) << "," << csv_field(r.quantity) << "," << r.simulated << ",";
        value(r.published);
        s << "," << csv_field(r.unit) << ",";
        value(r.error_pct());
        s << ",";
        if (r.has_range())
            s << r.published_lo << "," << r.published_hi;
        else
            s << ",";
        s << "," << (r.paper_machine ? 1 : 0) << "\n";
    }
    return s.str();
}

std::string to_json(const std::vector<ExpRow>& rows, const ExpMeta& meta) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    auto value = [](std::optional<double> v) {  // none (and an open end) is null
        return v && !std::isinf(*v) ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    for (const auto& r : rows) {
        a.push_back({{"id", r.id},
                     {"quantity", r.quantity},
                     {"simulated", r.simulated},
                     {"published", value(r.published)},
                     {"unit", r.unit},
                     {"error_pct", value(r.error_pct())},
                     {"paper_machine", r.paper_machine}});
        if (r.has_range())
            a.back()["published_range"] = {value(r.published_lo), value(r.published_hi)};
    }
    nlohmann::ordered_json j = {{"experiment", meta.experiment},
                                {"canopy", meta.version},
                                {"seed", meta.seed},
                                {"config_sha256", meta.config_sha256},
                                {"paper_machine", meta.changed.empty()},
                                {"changed", meta.changed},
                                {"rows", std::move(a)}};
    return j.dump(2) + "\n";
}

void write_output(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    if (!f) throw InputError(path, "", "cannot open for writing");
    f << text;
}

}  // namespace canopy::experiments
