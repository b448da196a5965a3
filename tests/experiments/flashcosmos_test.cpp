// `canopy exp flashcosmos` (Flash-Cosmos Sections 7-8, experiments/flashcosmos.cpp): the
// trends the paper states for Figures 17 and 18 and the means it publishes, on the quick
// configuration, and the --workload option.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "../canopy_process.hpp"

namespace {

using canopy_test::expect_within;

class PlatformFlashcosmosExp : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        rows_ = canopy_test::run_experiment("flashcosmos", canopy_test::scratch("flashcosmos"));
    }
    static double sim(const std::string& id) {
        EXPECT_TRUE(rows_.count(id)) << id;
        return rows_.count(id) ? rows_.at(id).simulated : 0.0;
    }
    static std::map<std::string, canopy_test::ExpRow> rows_;
};
std::map<std::string, canopy_test::ExpRow> PlatformFlashcosmosExp::rows_;

// Section 8.1: on BMI FC beats PB, PB beats ISP and ISP beats OSP at every m; FC's gain grows
// with the operand count (30 operands at m = 1, 1,095 at m = 36) while PB's stays put.
TEST_F(PlatformFlashcosmosExp, BmiOrderingAndGrowthWithMonths) {
    for (const char* m : {"B1", "B6", "B12", "B36"}) {
        const std::string b = m;
        EXPECT_GT(sim(b + ".FC"), sim(b + ".PB")) << m;
        EXPECT_GT(sim(b + ".PB"), sim(b + ".ISP")) << m;
        EXPECT_GT(sim(b + ".ISP"), 1.0) << m;
    }
    EXPECT_LT(sim("B1.FC"), sim("B6.FC"));
    EXPECT_LT(sim("B6.FC"), sim("B12.FC"));
    EXPECT_LT(sim("B12.FC"), sim("B36.FC"));
    // At m = 36 FC senses 23 times per stripe where PB senses 1,095 times: an order of magnitude
    // and more between them (the paper: 198.4x against 14x over OSP).
    EXPECT_GT(sim("B36.FC"), 10 * sim("B36.PB"));
    // PB is bound by its serial sensing, linear in the operands like OSP's transfers: its
    // speed-up hardly moves from m = 1 to m = 36.
    EXPECT_NEAR(sim("B36.PB") / sim("B1.PB"), 1.0, 0.15);
}

// Section 8.1, sixth observation: on IMS the result transfer dominates, so FC and PB perform
// alike, both about 3x over OSP (three operands moved against one result) and 2.5x over ISP.
TEST_F(PlatformFlashcosmosExp, ImsFcAndPbAlikeBoundByTheResult) {
    for (const char* i : {"I10K", "I100K", "I200K"}) {
        const std::string p = i;
        EXPECT_NEAR(sim(p + ".FC") / sim(p + ".PB"), 1.0, 0.2) << i;
        EXPECT_GT(sim(p + ".FC"), sim(p + ".ISP")) << i;
        EXPECT_GT(sim(p + ".ISP"), 1.0) << i;
    }
}

// Section 8.1, fourth observation: PB stops improving for k > 16 while FC keeps improving.
TEST_F(PlatformFlashcosmosExp, KcsParabitFlatPast16FlashCosmosRising) {
    EXPECT_NEAR(sim("K32.PB") / sim("K16.PB"), 1.0, 0.1);
    EXPECT_NEAR(sim("K64.PB") / sim("K16.PB"), 1.0, 0.1);
    EXPECT_GT(sim("K32.FC"), 1.5 * sim("K16.FC"));
    EXPECT_GT(sim("K64.FC"), 1.5 * sim("K32.FC"));
    EXPECT_GE(sim("K8.FC"), sim("K8.PB") * 0.99);  // FC never behind PB
    EXPECT_GT(sim("K64.FC"), 3 * sim("K64.PB"));
}

// Section 8.2: FC is the most energy-efficient everywhere, and in-flash processing beats ISP,
// which beats OSP; on IMS FC still saves some energy over PB at the same speed.
TEST_F(PlatformFlashcosmosExp, EnergyOrdering) {
    for (const char* p : {"B1", "B12", "B36", "I10K", "I200K", "K8", "K64"}) {
        const std::string q = p;
        EXPECT_GT(sim(q + ".eFC"), sim(q + ".ePB")) << p;
        EXPECT_GT(sim(q + ".ePB"), sim(q + ".eISP")) << p;
        EXPECT_GT(sim(q + ".eISP"), 1.0) << p;
    }
    // The mean gains rank as published: over OSP > over ISP > over PB (95x, 13.4x, 3.3x).
    EXPECT_GT(sim("E.FC"), sim("E.FCi"));
    EXPECT_GT(sim("E.FCi"), sim("E.FCp"));
    EXPECT_GT(sim("E.FCp"), 1.0);
    // FC reduces sensing energy too, so its energy gain over OSP exceeds its speed-up (95x vs
    // 32x), and BMI at m = 36 is where it gains most (1,839x).
    EXPECT_GT(sim("E.FC"), sim("M.FC"));
    EXPECT_GT(sim("EB36.FC"), sim("E.FC"));
    EXPECT_GT(sim("EI.FCp"), 1.0);
}

// The published means the calibration reaches (geometric means over the points; see
// docs/flash_cosmos.md for the ones it does not reach and why).
TEST_F(PlatformFlashcosmosExp, PublishedMeansWithin15Percent) {
    for (const char* id : {"M.FC", "M.FCi", "M.FCp", "M.ISP", "B.FC", "B.FCi", "I.FC", "I.FCi",
                           "I.PB", "E.FCi", "EB36.FCp"})
        expect_within(rows_, id, 15);
    // The die model's sensing times the composition rests on (Table 1, ParaBit).
    expect_within(rows_, "D.tR", 1);
    expect_within(rows_, "D.tPB", 1);
    expect_within(rows_, "D.tMWS", 10);
}

// The experiment's machine is Table 1's SSD link, PCIe Gen4 x4, and --set widens it: eight
// lanes carry twice the payload (the same TLPs, each serialised over twice the lanes). OSP
// moves every operand over the link, FC only results, so FC's gain over OSP falls.
TEST(PlatformFlashcosmosExpCli, SetWidensTheSsdsLink) {
    const std::string dir = canopy_test::scratch("flashcosmos-x8");
    auto wide =
        canopy_test::run_experiment("flashcosmos", dir, "--workload bmi --set link.pcie.lanes=8");
    const auto cfg = nlohmann::json::parse(canopy_test::slurp(dir + "/flashcosmos.config.json"));
    EXPECT_EQ(cfg["link"]["pcie"]["lanes"].get<int>(), 8);
    auto table1 = canopy_test::run_experiment("flashcosmos", canopy_test::scratch("flashcosmos-x4"),
                                              "--workload bmi");
    EXPECT_NEAR(wide.at("D.link").simulated, 2 * table1.at("D.link").simulated, 1e-9);
    EXPECT_LT(wide.at("B1.FC").simulated, table1.at("B1.FC").simulated);
}

TEST(PlatformFlashcosmosExpCli, WorkloadOption) {
    const std::string dir = canopy_test::scratch("flashcosmos-cli");
    // One workload: only its points and means (not --quick: with the platform's rows).
    auto r = canopy_test::run_canopy("exp flashcosmos --workload kcs --out " + dir, dir);
    ASSERT_EQ(r.status, 0) << r.err;
    // Figures 17 and 18 for the one workload, beside the platform's rows.
    EXPECT_EQ(r.err.find("no figures"), std::string::npos) << r.err;
    const std::string svg = canopy_test::slurp(dir + "/flashcosmos.speedup.svg");
    EXPECT_NE(svg.find("Fig. 17"), std::string::npos);
    EXPECT_NE(svg.find("KCS: clique size k"), std::string::npos);
    EXPECT_EQ(svg.find("BMI: months m"), std::string::npos);  // not run
    EXPECT_NE(r.out.find("K64.FC"), std::string::npos);
    EXPECT_EQ(r.out.find("B36.FC"), std::string::npos);
    EXPECT_EQ(r.out.find("M.FC "), std::string::npos);
    // And KCS on the whole platform with real firmware: all four systems give the host's
    // result; Flash-Cosmos senses once per 48 operands, ParaBit once per operand, so it leads.
    const auto j = nlohmann::json::parse(canopy_test::slurp(dir + "/flashcosmos.json"));
    std::map<std::string, double> p;
    for (const auto& row : j.at("rows"))
        p[row.at("id").get<std::string>()] = row.at("simulated").get<double>();
    EXPECT_EQ(p["P.K.ok"], 4);
    EXPECT_GT(p["P.K.FC"], 1.5 * p["P.K.PB"]);
    EXPECT_GT(p["P.K.PB"], p["P.K.ISP"]);
    EXPECT_GT(p["P.K.ISP"], 1.0);
    EXPECT_EQ(p.count("P.B.FC"), 0u);
    // An unknown workload is refused, naming the option, the value and the allowed values.
    r = canopy_test::run_canopy("exp flashcosmos --quick --workload tpch --out " + dir, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--workload tpch"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bmi|ims|kcs|all"), std::string::npos) << r.err;
    // An experiment without workloads refuses the option.
    r = canopy_test::run_canopy("exp ftl --quick --workload bmi --out " + dir, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--workload bmi"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no workloads"), std::string::npos) << r.err;
}

}  // namespace
