// `canopy sweep` (app/sweep.cpp, issue #29): a grid of configurations, each point its own canopy
// process and folder, merged into one table; locally in parallel and on a real one-node Slurm
// cluster (Debian's slurm-wlm and munge, started here on localhost), which must merge to the
// same bytes; failed points named while the others merge; --resume; bad input refused first.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "../canopy_process.hpp"
#include "../temp_dir.hpp"

namespace {

using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrid =
    "exp coherence --quick --vary host.home.snoop_ns=15,300 --vary link.ccix.ra.snoop_ns=40,300";

// The rows of `canopy exp coherence --quick` with these settings, run directly.
std::map<std::string, double> direct(const std::string& sets) {
    const std::string d = scratch("sweep-direct");
    auto r = run_canopy("exp coherence --quick --no-figures " + sets + " --out " + d, d);
    EXPECT_EQ(r.status, 0) << r.err;
    std::map<std::string, double> rows;
    const json j = json::parse(slurp(d + "/coherence.json"));
    for (const auto& row : j.at("rows")) rows[row.at("id")] = row.at("simulated").get<double>();
    return rows;
}

// Each point is what the command gives on its own with the point's settings; the merged table
// has a row per point per quantity with the settings beside it, in grid order (first key
// slowest); the plot is drawn.
TEST(Sweep, LocalGridMergesEveryPointsRowsWithItsSettings) {
    const std::string d = scratch("sweep-local");
    auto r = run_canopy("sweep " + kGrid + " -j 2 --plot E4.8 --out " + d + "/s", d);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("4 of 4 points merged"), std::string::npos) << r.out;
    const json j = json::parse(slurp(d + "/s/sweep.json"));
    ASSERT_EQ(j.at("points").size(), 4u);
    const std::vector<std::pair<std::string, std::string>> grid = {
        {"15", "40"}, {"15", "300"}, {"300", "40"}, {"300", "300"}};
    std::map<std::string, std::map<std::string, double>> merged;  // point -> id -> simulated
    for (const auto& row : j.at("rows"))
        merged[row.at("point")][row.at("id")] = row.at("simulated").get<double>();
    for (size_t i = 0; i < grid.size(); ++i) {
        const json& p = j["points"][i];
        const std::string name = p.at("point");
        EXPECT_EQ(p.at("status"), "ok");
        EXPECT_EQ(p["settings"]["host.home.snoop_ns"], grid[i].first);
        EXPECT_EQ(p["settings"]["link.ccix.ra.snoop_ns"], grid[i].second);
        EXPECT_TRUE(fs::exists(d + "/s/" + p.at("dir").get<std::string>() + "/coherence.json"));
        const auto want = direct("--set host.home.snoop_ns=" + grid[i].first +
                                 " --set link.ccix.ra.snoop_ns=" + grid[i].second);
        EXPECT_EQ(merged[name], want) << name;
    }
    // A slower home snoop lengthens the device's accesses that the host's cache holds.
    EXPECT_GT(merged["002"]["E4.8"], merged["000"]["E4.8"]);
    // The CSV: the varied keys as columns, a line per point per row.
    const std::string csv = slurp(d + "/s/sweep.csv");
    EXPECT_EQ(csv.rfind("point,host.home.snoop_ns,link.ccix.ra.snoop_ns,id,quantity,simulated,", 0),
              0u)
        << csv.substr(0, 200);
    EXPECT_EQ(canopy_test::count_lines(csv), 1 + int(j.at("rows").size()));
    EXPECT_NE(csv.find("\n003,300,300,E4.8,"), std::string::npos);
    const std::string svg = slurp(d + "/s/sweep.E4.8.svg");
    EXPECT_NE(svg.find("host.home.snoop_ns"), std::string::npos);
    EXPECT_NE(svg.find("link.ccix.ra.snoop_ns=300"), std::string::npos);
    EXPECT_TRUE(fs::exists(d + "/s/sweep.E4.8.png"));
}

// A point whose machine cannot be built fails on its own: named with its folder and why, the
// other merged, exit 1; --resume runs only what has no successful result.
TEST(Sweep, AFailedPointIsNamedTheOthersMergeAndResumeRunsOnlyWhatIsMissing) {
    const std::string d = scratch("sweep-fail");
    const std::string cmd =
        "sweep exp rpc-latency --quick --vary ssd.store.flash=false,true -j 2 "
        "--out " +
        d + "/s";
    auto r = run_canopy(cmd, d);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("point 001 (ssd.store.flash=true) failed: exit 2"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(d + "/s/points/001/"), std::string::npos) << r.err;
    json j = json::parse(slurp(d + "/s/sweep.json"));
    EXPECT_EQ(j["points"][0]["status"], "ok");
    EXPECT_EQ(j["points"][1]["status"], "failed");
    for (const auto& row : j.at("rows")) EXPECT_EQ(row.at("point"), "000");
    EXPECT_FALSE(j.at("rows").empty());

    // The good point's result stays as it was; only the failed one runs again.
    const auto before = fs::last_write_time(d + "/s/points/000/rpc-latency.json");
    r = run_canopy(cmd + " --resume", d);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("1 of 2 points done before, running 1"), std::string::npos) << r.err;
    EXPECT_EQ(fs::last_write_time(d + "/s/points/000/rpc-latency.json"), before);
    j = json::parse(slurp(d + "/s/sweep.json"));
    EXPECT_EQ(j["points"][0]["status"], "ok");
    EXPECT_FALSE(j.at("rows").empty());
}

// A quantity to plot that no point measured: status 2 with the closest one, the table kept.
TEST(Sweep, APlotOfAQuantityNoPointMeasuredIsRefusedWithTheClosest) {
    const std::string d = scratch("sweep-plot");
    auto r = run_canopy(
        "sweep exp atomics --quick --vary host.core.far_atomics=true,false --plot "
        "E5.3 --out " +
            d + "/s",
        d);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("--plot E5.3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'E5."), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(d + "/s/sweep.csv"));
}

// Bad input is refused before any point runs (status 2, naming it).
TEST(Sweep, BadInputIsRefusedBeforeAnythingRuns) {
    const std::string d = scratch("sweep-bad");
    std::string many;  // 22 values
    for (int i = 1; i <= 22; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
    struct Case {
        std::string args, names;
    };
    for (const Case& c : std::vector<Case>{
             {"exp coherence --quick --vary host.home.snoop_nss=1,2", "host.home.snoop_nss"},
             {"exp coherence --quick --vary host.home.snoop_ns=1,lots", "lots"},
             {"exp coherence --vary host.home.snoop_ns=1,2 --vary sim.seed=1 --zip", "--zip"},
             {"exp coherence --vary host.home.snoop_ns=1,,2", "an empty value"},
             {"exp nothing --vary host.home.snoop_ns=1,2", "exp nothing"},
             {"exp coherence", "nothing varies"},
             {"exp coherence --vary sim.seed=" + many + " --vary sim.quantum_ns=" + many +
                  " --vary host.home.snoop_ns=" + many,
              "more than 10000 points"},  // 22 x 22 x 22
             {"iss --vary sim.seed=1,2", "command iss"},
             {"exp coherence --vary sim.seed=1,2 -j 0", "-j 0"},
             {"exp coherence --vary sim.seed=1,2 --slurm --partition 'a;b'", "--partition a;b"},
             {"exp coherence --vary sim.seed=1,2 --time 10", "only for --slurm"},
             {"exp coherence --vary sim.seed=1,2 --gdb 0", "option --gdb"}}) {
        const std::string out = d + "/s";
        fs::remove_all(out);
        auto r = run_canopy("sweep " + c.args + " --out " + out, d);
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.names), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_FALSE(fs::exists(out + "/points")) << c.args;
    }
}

// A free TCP port on localhost (the kernel's choice; the daemons bind it right after).
int free_port() {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t n = sizeof a;
    getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
    const int port = ntohs(a.sin_port);
    close(s);
    return port;
}

// A throwaway one-node Slurm cluster on localhost: munged, slurmctld and slurmd with a config
// and a MUNGE key of their own in `dir`, stopped (by their pid files) when it goes.
class LocalSlurm {
  public:
    explicit LocalSlurm(const std::string& dir) : dir_(dir) {
        std::ofstream conf(dir + "/slurm.conf");
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        conf << "ClusterName=canopytest\nSlurmctldHost=localhost(127.0.0.1)\n"
             << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
             << "SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
             << "AuthInfo=socket=" << dir << "/munge.sock\n"
             << "StateSaveLocation=" << dir << "/state\nSlurmdSpoolDir=" << dir << "/spool\n"
             << "SlurmctldPidFile=" << dir << "/slurmctld.pid\nSlurmdPidFile=" << dir
             << "/slurmd.pid\nSlurmctldLogFile=" << dir << "/slurmctld.log\nSlurmdLogFile=" << dir
             << "/slurmd.log\n"
             << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
             << "JobAcctGatherType=jobacct_gather/none\n"
             << "AccountingStorageType=accounting_storage/none\nSelectType=select/cons_tres\n"
             << "SelectTypeParameters=CR_Core\nMpiDefault=none\nSwitchType=switch/none\n"
             << "ReturnToService=2\n"
             << "NodeName=canopy1 NodeAddr=127.0.0.1 CPUs=" << cpus << " State=UNKNOWN\n"
             << "PartitionName=debug Nodes=canopy1 Default=YES MaxTime=INFINITE State=UP\n";
        conf.close();
        fs::create_directories(dir + "/state");
        fs::create_directories(dir + "/spool");
        env_ = "SLURM_CONF=" + dir + "/slurm.conf ";
        run("mungekey --create --keyfile=" + dir + "/munge.key");
        run("munged --force --key-file=" + dir + "/munge.key --socket=" + dir +
            "/munge.sock --pid-file=" + dir + "/munged.pid --log-file=" + dir +
            "/munged.log --seed-file=" + dir + "/munge.seed");
        run(env_ + "slurmctld -f " + dir + "/slurm.conf");
        run(env_ + "slurmd -f " + dir + "/slurm.conf -N canopy1");
        // Up when the node is idle.
        for (int i = 0; i < 100 && !up(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ~LocalSlurm() {
        std::vector<pid_t> pids;
        for (const char* d : {"slurmd", "slurmctld", "munged"}) {
            std::ifstream f(dir_ + "/" + d + ".pid");
            pid_t pid = 0;
            if (f >> pid && pid > 0 && kill(pid, SIGTERM) == 0) pids.push_back(pid);
        }
        // Gone before the directory is removed: a daemon writing its log or state as it stops
        // would otherwise leave the directory behind.
        for (int i = 0; i < 100; ++i) {
            bool alive = false;
            for (pid_t p : pids) alive |= kill(p, 0) == 0;
            if (!alive) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    bool up() const {
        const std::string out = dir_ + "/sinfo.txt";
        return std::system((env_ + "sinfo -h -o %T >" + out + " 2>&1").c_str()) == 0 &&
               slurp(out).find("idle") != std::string::npos;
    }
    const std::string& env() const { return env_; }

  private:
    void run(const std::string& cmd) {
        const int s = std::system((cmd + " >>" + dir_ + "/start.log 2>&1").c_str());
        EXPECT_EQ(s, 0) << cmd << "\n" << slurp(dir_ + "/start.log");
    }
    std::string dir_, env_;
};

// The same sweep through a real Slurm job array (sbatch --array, --wait) merges to the same
// table, byte for byte, and the same plot data as the local run.
TEST(Sweep, ThroughARealSlurmClusterItMergesTheSameTableAsLocally) {
    if (geteuid() != 0) GTEST_SKIP() << "slurmd runs jobs as root here";
    canopy_test::TempDir tmp;
    const std::string cluster = tmp.path().string() + "/c";
    fs::create_directories(cluster);
    LocalSlurm slurm(cluster);
    ASSERT_TRUE(slurm.up()) << slurp(cluster + "/slurmctld.log") << slurp(cluster + "/slurmd.log");

    const std::string d = scratch("sweep-slurm");
    auto local = run_canopy("sweep " + kGrid + " -j 2 --plot E4.8 --out " + d + "/local", d);
    ASSERT_EQ(local.status, 0) << local.err;
    auto viaslurm = canopy_test::run_program(
        slurm.env() + CANOPY_BINARY_DIR + "/canopy",
        "sweep " + kGrid + " --slurm --partition debug --time 10 --plot E4.8 --out " + d + "/slurm",
        d);
    ASSERT_EQ(viaslurm.status, 0) << viaslurm.err;
    EXPECT_NE(viaslurm.err.find("as one job array"), std::string::npos) << viaslurm.err;
    const std::string script = slurp(d + "/slurm/sweep.sbatch");
    EXPECT_NE(script.find("#SBATCH --array=0,1,2,3\n"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --partition=debug\n"), std::string::npos) << script;
    EXPECT_EQ(slurp(d + "/slurm/sweep.csv"), slurp(d + "/local/sweep.csv"));
    EXPECT_EQ(slurp(d + "/slurm/sweep.json"), slurp(d + "/local/sweep.json"));
    EXPECT_EQ(slurp(d + "/slurm/sweep.E4.8.svg"), slurp(d + "/local/sweep.E4.8.svg"));
    // Every point ran as an array task of its own.
    for (int i = 0; i < 4; ++i)
        EXPECT_TRUE(fs::exists(d + "/slurm/points/slurm-" + std::to_string(i) + ".out")) << i;
}

}  // namespace
