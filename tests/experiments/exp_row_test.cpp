// An experiment row's error against what the paper published: a single value, a published 0, a
// range such as the lock table's "200-250 ns", a bound, or nothing at all (experiments/report.hpp);
// rows of a machine that is not the paper's are not scored; and how the outputs show each.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "experiments/report.hpp"

using canopy::experiments::ExpMeta;
using canopy::experiments::ExpRow;

namespace {

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream s(text);
    for (std::string l; std::getline(s, l);) v.push_back(l);
    return v;
}

}  // namespace

TEST(PlatformExpRow, ErrorAgainstASingleValueIsRelative) {
    EXPECT_DOUBLE_EQ(*(ExpRow{"X.1", "q", 90.0, 100.0, "ns"}.error_pct()), -10.0);
    EXPECT_DOUBLE_EQ(*(ExpRow{"X.1", "q", 115.0, 100.0, "ns"}.error_pct()), 15.0);
}

TEST(PlatformExpRow, NothingPublishedIsNoneAndAPublishedZeroIsAValue) {
    EXPECT_FALSE((ExpRow{"X.1", "q", 7.0, std::nullopt, "ns"}.error_pct()));
    // The paper's "no bit errors": a simulated 0 matches it, anything else is wholly off.
    EXPECT_EQ((ExpRow{"F11b", "q", 0.0, 0.0, "bits"}.error_pct()), 0.0);
    EXPECT_EQ((ExpRow{"F11b", "q", 3.0, 0.0, "bits"}.error_pct()), 100.0);

    const std::vector<ExpRow> rows = {{"N.1", "none", 7.0, std::nullopt, "ns"},
                                      {"Z.1", "zero", 0.0, 0.0, "bits"}};
    const auto j = nlohmann::json::parse(canopy::experiments::to_json(rows, {}));
    EXPECT_TRUE(j["rows"][0]["published"].is_null());
    EXPECT_TRUE(j["rows"][0]["error_pct"].is_null());
    EXPECT_EQ(j["rows"][1]["published"], 0.0);
    EXPECT_EQ(j["rows"][1]["error_pct"], 0.0);
    const std::string csv = canopy::experiments::to_csv(rows);
    EXPECT_NE(csv.find("N.1,none,7,,ns,,,,1\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("Z.1,zero,0,0,bits,0,,,1\n"), std::string::npos) << csv;
    std::ostringstream table;
    canopy::experiments::print_table(rows, table);
    const auto t = lines(table.str());
    ASSERT_EQ(t.size(), 3u) << table.str();
    EXPECT_EQ(t[1].find(" 0 "), std::string::npos) << t[1];  // blank, not 0, under published
    EXPECT_NE(t[1].find("ns"), std::string::npos) << t[1];
    EXPECT_NE(t[2].find("0.00"), std::string::npos) << t[2];
}

TEST(PlatformExpRow, ErrorAgainstARangeIsToItsNearerEnd) {
    auto row = [](double sim) { return ExpRow{"DB.3", "q", sim, 225.0, "ns", 200.0, 250.0}; };
    EXPECT_DOUBLE_EQ(*row(200.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(*row(249.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(*row(180.0).error_pct(), -10.0);  // 20 below 200
    EXPECT_DOUBLE_EQ(*row(275.0).error_pct(), 10.0);   // 25 above 250
}

TEST(PlatformExpRow, OutputsShowTheRange) {
    const std::vector<ExpRow> rows = {{"A.1", "single", 90.0, 100.0, "ns"},
                                      {"A.2", "ranged", 180.0, 225.0, "ns", 200.0, 250.0}};
    std::ostringstream table;
    canopy::experiments::print_table(rows, table);
    EXPECT_NE(table.str().find("200-250"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("-10.00"), std::string::npos) << table.str();

    const auto j = nlohmann::json::parse(canopy::experiments::to_json(rows, {}))["rows"];
    EXPECT_FALSE(j[0].contains("published_range"));
    EXPECT_EQ(j[1]["published_range"], nlohmann::json({200.0, 250.0}));
    EXPECT_DOUBLE_EQ(j[1]["error_pct"].get<double>(), -10.0);

    const std::string csv = canopy::experiments::to_csv(rows);
    EXPECT_NE(csv.find("published_lo,published_hi,paper_machine\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("A.1,single,90,100,ns,-10,,,1\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("A.2,ranged,180,225,ns,-10,200,250,1\n"), std::string::npos) << csv;
}

TEST(PlatformExpRow, ABoundIsARangeWithAnOpenEnd) {
    const double inf = std::numeric_limits<double>::infinity();
    auto at_least = [&](double sim) { return ExpRow{"E2.13", "q", sim, 1.0, "x", 1.0, inf}; };
    EXPECT_DOUBLE_EQ(*at_least(512.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(*at_least(0.5).error_pct(), -50.0);
    const ExpRow at_most{"E2.17", "q", 0.6, 0.5, "x", -inf, 0.5};
    EXPECT_DOUBLE_EQ(*at_most.error_pct(), 20.0);

    std::ostringstream table;
    canopy::experiments::print_table({at_least(512.0), at_most}, table);
    EXPECT_NE(table.str().find(">= 1 "), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("<= 0.5 "), std::string::npos) << table.str();
    const auto j =
        nlohmann::json::parse(canopy::experiments::to_json({at_least(512.0), at_most}, {}))["rows"];
    EXPECT_EQ(j[0]["published_range"], nlohmann::json({1.0, nullptr}));
    EXPECT_EQ(j[1]["published_range"], nlohmann::json({nullptr, 0.5}));
}

// A row of a machine --config/--set changed keeps its published value but has no error: the
// table says "unscored", the JSON null, and the JSON says what changed.
TEST(PlatformExpRow, RowsOfAnotherMachineAreNotScored) {
    ExpRow r{"W.1", "Base-IO read bandwidth / PCIe bandwidth", 0.2, 0.78, "x"};
    r.paper_machine = false;
    EXPECT_FALSE(r.error_pct());
    std::ostringstream table;
    canopy::experiments::print_table({r}, table);
    EXPECT_NE(table.str().find("unscored"), std::string::npos) << table.str();
    ExpMeta meta{"willow-io", "0.1.0", 7, "abc", {"link.pcie.generation=4"}};
    const auto j = nlohmann::json::parse(canopy::experiments::to_json({r}, meta));
    EXPECT_EQ(j["experiment"], "willow-io");
    EXPECT_EQ(j["canopy"], "0.1.0");
    EXPECT_EQ(j["seed"], 7);
    EXPECT_EQ(j["config_sha256"], "abc");
    EXPECT_EQ(j["paper_machine"], false);
    EXPECT_EQ(j["changed"], nlohmann::json({"link.pcie.generation=4"}));
    EXPECT_EQ(j["rows"][0]["published"], 0.78);
    EXPECT_TRUE(j["rows"][0]["error_pct"].is_null());
    EXPECT_EQ(j["rows"][0]["paper_machine"], false);
}

// The table fits 100 columns: long quantities wrap under their column, a long id takes a line
// of its own; nothing is lost (every word of the quantity is in the table).
TEST(PlatformExpRow, TheTableFitsAHundredColumns) {
    const std::string q =
        "Direct-IO / Base-IO (file system) 512 B read throughput, 3 threads, with a much longer "
        "explanation than any column could hold in one line";
    const std::vector<ExpRow> rows = {{"E1.throughput_ratio.32768", q, 1.23456789, 1.66, "K IOPS"},
                                      {"W.4", q, 2.0, std::nullopt, "x"}};
    std::ostringstream table;
    canopy::experiments::print_table(rows, table);
    std::string words;
    for (const std::string& l : lines(table.str())) {
        EXPECT_LE(l.size(), 100u) << l;
        words += l + " ";
    }
    std::istringstream each(q);
    for (std::string w; each >> w;) EXPECT_NE(words.find(w), std::string::npos) << w;
    EXPECT_NE(table.str().find("\nE1.throughput_ratio.32768\n"), std::string::npos) << table.str();
}
