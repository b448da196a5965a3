// Runs the built `canopy` binary as a user would and captures what it prints.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace canopy_test {

struct Run {
    int status = -1;
    std::string out, err;
};

inline std::string slurp(const std::string& path) { return read_text(path); }

// Scratch directories are removed when the test process ends with every test passed (a run of
// the suite would otherwise leave gigabytes behind); a failure keeps them for a look.
class ScratchSweeper {
  public:
    static ScratchSweeper& instance() {
        // Constructed after gtest's UnitTest (first used inside a test), so destroyed before it.
        static ScratchSweeper s;
        return s;
    }
    void keep_until_exit(const std::filesystem::path& dir) { dirs_.push_back(dir); }
    ~ScratchSweeper() {
        if (!::testing::UnitTest::GetInstance()->Passed()) return;
        for (const auto& d : dirs_) {
            std::error_code ec;
            std::filesystem::remove_all(d, ec);
        }
    }

  private:
    std::vector<std::filesystem::path> dirs_;
};

// A fresh directory under the build tree, unique to this test process.
inline std::string scratch(const std::string& name) {
    auto dir = std::filesystem::path(CANOPY_BINARY_DIR) / "test-scratch" /
               (name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ScratchSweeper::instance().keep_until_exit(dir);
    return dir.string();
}

inline std::string source(const std::string& rel) {
    return std::string(CANOPY_SOURCE_DIR) + "/" + rel;
}

// `args` is passed to the shell after the binary's path; its outputs are kept in `dir`.
inline Run run_program(const std::string& binary, const std::string& args, const std::string& dir) {
    Run r;
    const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
    std::string cmd = binary + " " + args + " >" + out + " 2>" + err + " </dev/null";
    int s = std::system(cmd.c_str());
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

// The build's canopy.
inline Run run_canopy(const std::string& args, const std::string& dir) {
    return run_program(std::string(CANOPY_BINARY_DIR) + "/canopy", args, dir);
}

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

// A small array keeps platform tests fast, also under the sanitizers; two SPUs, one per channel,
// so that Willow still stores on the flash.
inline const char* kSmall =
    "--set nand.geometry.channels=2 --set nand.geometry.dies_per_channel=2 "
    "--set nand.geometry.blocks_per_plane=64 --set scenario.operands=16 --set ssd.spus=2";

// One row of an experiment's NAME.json.
struct ExpRow {
    double simulated = 0;
    std::optional<double> published, error_pct;  // null in the JSON: none
    double lo = 0, hi = 0;                       // the published range, where the paper gives one
    bool paper_machine = true;
};
// Runs `canopy exp NAME --quick [extra]` into `dir` and returns its rows by id; status 0
// expected.
inline std::map<std::string, ExpRow> run_experiment(const std::string& name, const std::string& dir,
                                                    const std::string& extra = "") {
    Run r = run_canopy("exp " + name + " --quick --out " + dir + " " + extra, dir);
    EXPECT_EQ(r.status, 0) << r.err;
    // Its figures were drawn (python3 with matplotlib is part of the set-up).
    EXPECT_EQ(r.err.find("no figures"), std::string::npos) << r.err;
    std::map<std::string, ExpRow> rows;
    const auto j = nlohmann::json::parse(slurp(dir + "/" + name + ".json"));
    auto value = [](const nlohmann::json& v) {
        return v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
    };
    for (const auto& row : j.at("rows")) {
        ExpRow& r = rows[row.at("id").get<std::string>()];
        r.simulated = row.at("simulated").get<double>();
        r.published = value(row.at("published"));
        r.error_pct = value(row.at("error_pct"));
        r.paper_machine = row.at("paper_machine").get<bool>();
        if (row.contains("published_range")) {  // null: an open end
            const auto& range = row["published_range"];
            const double inf = std::numeric_limits<double>::infinity();
            r.lo = range.at(0).is_null() ? -inf : range.at(0).get<double>();
            r.hi = range.at(1).is_null() ? inf : range.at(1).get<double>();
        }
    }
    return rows;
}

// Expects row `id` to be within `pct` percent of its published value, or of the nearer end of
// its published range.
inline void expect_within(const std::map<std::string, ExpRow>& rows, const std::string& id,
                          double pct) {
    ASSERT_TRUE(rows.count(id)) << id;
    const ExpRow& r = rows.at(id);
    if (r.hi > r.lo) {
        EXPECT_GE(r.simulated, r.lo * (1 - pct / 100.0)) << id;
        EXPECT_LE(r.simulated, r.hi * (1 + pct / 100.0)) << id;
        return;
    }
    ASSERT_TRUE(r.published) << id << ": nothing published";
    EXPECT_NEAR(r.simulated, *r.published, std::fabs(*r.published) * pct / 100.0) << id;
}

}  // namespace canopy_test
