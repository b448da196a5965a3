// An experiment row's error against what the paper published: a single value, or a range such
// as the lock table's "200-250 ns" (experiments/report.hpp), and how the outputs show it.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "experiments/report.hpp"

using canopy::experiments::ExpRow;

TEST(PlatformExpRow, ErrorAgainstASingleValueIsRelative) {
    EXPECT_DOUBLE_EQ((ExpRow{"X.1", "q", 90.0, 100.0, "ns"}.error_pct()), -10.0);
    EXPECT_DOUBLE_EQ((ExpRow{"X.1", "q", 115.0, 100.0, "ns"}.error_pct()), 15.0);
    EXPECT_DOUBLE_EQ((ExpRow{"X.1", "q", 7.0, 0.0, "ns"}.error_pct()), 0.0);  // none published
}

TEST(PlatformExpRow, ErrorAgainstARangeIsToItsNearerEnd) {
    auto row = [](double sim) { return ExpRow{"DB.3", "q", sim, 225.0, "ns", 200.0, 250.0}; };
    EXPECT_DOUBLE_EQ(row(200.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(row(249.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(row(180.0).error_pct(), -10.0);  // 20 below 200
    EXPECT_DOUBLE_EQ(row(275.0).error_pct(), 10.0);   // 25 above 250
}

TEST(PlatformExpRow, OutputsShowTheRange) {
    const std::vector<ExpRow> rows = {{"A.1", "single", 90.0, 100.0, "ns"},
                                      {"A.2", "ranged", 180.0, 225.0, "ns", 200.0, 250.0}};
    std::ostringstream table;
    canopy::experiments::print_table(rows, table);
    EXPECT_NE(table.str().find("200-250"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("-10.00"), std::string::npos) << table.str();

    const auto j = nlohmann::json::parse(canopy::experiments::to_json(rows));
    EXPECT_FALSE(j[0].contains("published_range"));
    EXPECT_EQ(j[1]["published_range"], nlohmann::json({200.0, 250.0}));
    EXPECT_DOUBLE_EQ(j[1]["error_pct"].get<double>(), -10.0);

    const std::string csv = canopy::experiments::to_csv(rows);
    EXPECT_NE(csv.find("published_lo,published_hi\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("A.1,single,90,100,ns,-10,,\n"), std::string::npos) << csv;
    EXPECT_NE(csv.find("A.2,ranged,180,225,ns,-10,200,250\n"), std::string::npos) << csv;
}

TEST(PlatformExpRow, ABoundIsARangeWithAnOpenEnd) {
    const double inf = std::numeric_limits<double>::infinity();
    auto at_least = [&](double sim) { return ExpRow{"E2.13", "q", sim, 1.0, "x", 1.0, inf}; };
    EXPECT_DOUBLE_EQ(at_least(512.0).error_pct(), 0.0);
    EXPECT_DOUBLE_EQ(at_least(0.5).error_pct(), -50.0);
    const ExpRow at_most{"E2.17", "q", 0.6, 0.5, "x", -inf, 0.5};
    EXPECT_DOUBLE_EQ(at_most.error_pct(), 20.0);

    std::ostringstream table;
    canopy::experiments::print_table({at_least(512.0), at_most}, table);
    EXPECT_NE(table.str().find(">= 1 "), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("<= 0.5 "), std::string::npos) << table.str();
    const auto j = nlohmann::json::parse(canopy::experiments::to_json({at_least(512.0), at_most}));
    EXPECT_EQ(j[0]["published_range"], nlohmann::json({1.0, nullptr}));
    EXPECT_EQ(j[1]["published_range"], nlohmann::json({nullptr, 0.5}));
}
