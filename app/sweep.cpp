#include "app/sweep.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/process.hpp"
#include "core/user_files.hpp"
#include "experiments/figures.hpp"
#include "experiments/registry.hpp"
#include "platform/platform_config.hpp"

extern char** environ;

namespace canopy::app {

namespace fs = std::filesystem;
using core::last_line;
using core::shell_quote;
using nlohmann::ordered_json;

namespace {
constexpr size_t kMaxPoints = 10000;  // far above any grid a machine or a cluster runs
}

std::vector<SweepPoint> sweep_points(const SweepOptions& o) {
    std::set<std::string> keys;
    size_t product = 1;  // checked before anything is built: no grid of a billion points
    for (const auto& [key, values] : o.vary) {
        if (values.empty())
            throw InputError("canopy sweep", "--vary " + key, "no values (key=v1,v2,...)");
        if (!keys.insert(key).second)
            throw InputError("canopy sweep", "--vary " + key, "the key is varied twice");
        product = o.zip ? values.size() : std::min(product * values.size(), kMaxPoints + 1);
    }
    if (product > kMaxPoints)
        throw InputError("canopy sweep", "--vary",
                         "more than " + std::to_string(kMaxPoints) + " points in the grid");
    std::vector<SweepPoint> points;
    if (o.zip) {
        const size_t n = o.vary.empty() ? 0 : o.vary.front().second.size();
        for (const auto& [key, values] : o.vary)
            if (values.size() != n)
                throw InputError("canopy sweep", "--vary " + key,
                                 "--zip pairs the lists, so each needs " + std::to_string(n) +
                                     " values; this one has " + std::to_string(values.size()));
        for (size_t i = 0; i < n; ++i) {
            SweepPoint p;
            for (const auto& [key, values] : o.vary) p.settings.push_back({key, values[i]});
            points.push_back(std::move(p));
        }
    } else if (!o.vary.empty()) {
        // The product, the first key slowest: an odometer over the lists.
        std::vector<size_t> at(o.vary.size(), 0);
        for (;;) {
            SweepPoint p;
            for (size_t k = 0; k < o.vary.size(); ++k)
                p.settings.push_back({o.vary[k].first, o.vary[k].second[at[k]]});
            points.push_back(std::move(p));
            size_t k = o.vary.size();
            while (k > 0 && ++at[k - 1] == o.vary[k - 1].second.size()) at[--k] = 0;
            if (k == 0) break;
        }
    }
    for (size_t i = 0; i < points.size(); ++i) {
        char name[24];
        std::snprintf(name, sizeof name, "%03zu", i);
        points[i].name = name;
    }
    return points;
}

namespace {

// A point's own output (stderr.txt, its result): "" when it is not there.
std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string self_exe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("canopy sweep: cannot find its own binary (/proc/self/exe)");
    return p.string();
}

// The values of an option among the command's arguments ("--set x", "--set=x").
std::vector<std::string> option_values(const std::vector<std::string>& args,
                                       const std::string& name) {
    std::vector<std::string> v;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == name && i + 1 < args.size())
            v.push_back(args[++i]);
        else if (args[i].rfind(name + "=", 0) == 0)
            v.push_back(args[i].substr(name.size() + 1));
    }
    return v;
}

// Everything a point needs checked before any point runs: the command, the experiment's name,
// and every point's keys and values against the platform's configuration.
void check(const SweepOptions& o, const std::vector<SweepPoint>& points) {
    static const std::set<std::string> commands = {"exp", "run", "replay", "fio"};
    if (!commands.count(o.command))
        throw InputError("canopy sweep", o.command.empty() ? "" : "command " + o.command,
                         "sweeps one of exp, run, replay, fio: canopy sweep exp NAME --vary "
                         "key=v1,v2 ...");
    for (const char* own : {"--out", "--gdb"})
        if (!option_values(o.args, own).empty())
            throw InputError("canopy sweep", std::string("option ") + own,
                             "the sweep gives every point its own folder (OUT/points/NNN) and "
                             "runs them unattended");
    // They go into sbatch's directives: one word of the characters Slurm uses.
    auto word = [](const std::string& opt, const std::string& v, const char* allowed) {
        if (!v.empty() && v.find_first_not_of(allowed) != std::string::npos)
            throw InputError("canopy sweep", opt + " " + v,
                             std::string("expected only the characters ") + allowed);
    };
    word("--partition", o.partition,
         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-,");
    word("--time", o.time, "0123456789:-");
    if ((!o.partition.empty() || !o.time.empty()) && !o.slurm)
        throw InputError("canopy sweep", o.partition.empty() ? "--time" : "--partition",
                         "only for --slurm");
    if (o.command == "exp") {
        if (o.args.empty() || o.args.front().rfind("--", 0) == 0)
            throw InputError("canopy sweep", "exp", "name the experiment: canopy sweep exp NAME");
        bool known = false;
        for (const auto& e : experiments::experiments()) known |= e.name == o.args.front();
        if (!known)
            throw InputError("canopy sweep", "exp " + o.args.front(),
                             "no such experiment; see canopy exp --list");
    }
    if (points.empty())
        throw InputError("canopy sweep", "", "nothing varies: give --vary key=v1,v2,...");
    const std::vector<std::string> sets = option_values(o.args, "--set");
    const std::vector<std::string> files = option_values(o.args, "--config");
    for (const SweepPoint& p : points) {
        std::vector<std::string> all = sets;
        for (const auto& [k, v] : p.settings) all.push_back(k + "=" + v);
        platform::PlatformConfig cfg;
        platform::load_config(cfg, files.empty() ? "" : files.back(), all);
    }
}

std::vector<std::string> point_command(const SweepOptions& o, const SweepPoint& p,
                                       const std::string& exe, const std::string& dir) {
    std::vector<std::string> argv = {exe, o.command};
    argv.insert(argv.end(), o.args.begin(), o.args.end());
    for (const auto& [k, v] : p.settings) argv.insert(argv.end(), {"--set", k + "=" + v});
    argv.insert(argv.end(), {"--out", dir, "--quiet"});
    if (o.command == "exp") argv.push_back("--no-figures");  // the sweep plots what it merges
    return argv;
}

std::string describe(const SweepPoint& p) {
    std::string s;
    for (const auto& [k, v] : p.settings) s += (s.empty() ? "" : " ") + k + "=" + v;
    return s;
}

// A point's exit status as its folder records it; -1: it has not run (or was cut short).
int exit_code(const std::string& dir) {
    std::ifstream f(dir + "/exit_code");
    int code = -1;
    if (!(f >> code)) return -1;
    return code;
}

void write_exit_code(const std::string& dir, int code) {
    std::ofstream(dir + "/exit_code") << code << "\n";
}

// Runs the points locally, `jobs` at a time, each a canopy process with its output in its
// folder; a line on stderr as each ends.
void run_local(const SweepOptions& o, const std::vector<SweepPoint>& todo,
               const std::string& points_dir, const std::string& exe, size_t total) {
    const unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
    std::map<pid_t, std::pair<const SweepPoint*, std::chrono::steady_clock::time_point>> running;
    size_t next = 0, ended = total - todo.size();
    auto wait_one = [&] {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        auto it = running.find(pid);
        if (it == running.end()) return;
        const SweepPoint& p = *it->second.first;
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.second)
                .count();
        running.erase(it);
        const std::string dir = points_dir + "/" + p.name;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        write_exit_code(dir, code);
        char t[32];
        std::snprintf(t, sizeof t, "%.1f s", s);
        std::cerr << "sweep: [" << ++ended << "/" << total << "] " << p.name << " " << describe(p)
                  << ": "
                  << (code == 0 ? std::string("ok")
                                : "FAILED (exit " + std::to_string(code) +
                                      "): " + last_line(slurp(dir + "/stderr.txt")))
                  << " (" << t << ")" << std::endl;
    };
    while (next < todo.size() || !running.empty()) {
        if (next < todo.size() && running.size() < jobs) {
            const SweepPoint& p = todo[next++];
            const std::string dir = points_dir + "/" + p.name;
            fs::create_directories(dir);
            fs::remove(dir + "/exit_code");
            const std::vector<std::string> args = point_command(o, p, exe, dir);
            std::vector<char*> argv;
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            posix_spawn_file_actions_t fa;
            posix_spawn_file_actions_init(&fa);
            const std::string out = dir + "/stdout.txt", err = dir + "/stderr.txt";
            posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
            posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                             0644);
            posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                             0644);
            pid_t pid = 0;
            const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
            posix_spawn_file_actions_destroy(&fa);
            if (rc != 0) throw std::runtime_error("canopy sweep: cannot start " + exe);
            running[pid] = {&p, std::chrono::steady_clock::now()};
        } else {
            wait_one();
        }
    }
}

// Writes OUT/sweep.sbatch, a job array of the points, submits it with `sbatch --wait` and
// returns when every task has ended (each writes its folder's exit_code).
void run_slurm(const SweepOptions& o, const std::vector<SweepPoint>& todo,
               const std::string& points_dir, const std::string& exe, const std::string& out) {
    std::ostringstream s;
    s << "#!/bin/bash\n"
         "# Written by canopy sweep: one array task per point still to run.\n"
         "#SBATCH --job-name=canopy-sweep\n"
         "#SBATCH --array=";
    for (size_t i = 0; i < todo.size(); ++i) s << (i ? "," : "") << std::stoul(todo[i].name);
    s << "\n#SBATCH --output=" << points_dir << "/slurm-%a.out\n";
    if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
    if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
    s << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
    for (const SweepPoint& p : todo) {
        const std::string dir = points_dir + "/" + p.name;
        s << "  " << std::stoul(p.name) << ")\n    cd " << shell_quote(dir) << " || exit 1\n    ";
        for (const std::string& a : point_command(o, p, exe, dir)) s << shell_quote(a) << " ";
        s << "</dev/null >stdout.txt 2>stderr.txt\n    echo $? >exit_code ;;\n";
    }
    s << "esac\n";
    const std::string script = out + "/sweep.sbatch";
    std::ofstream(script) << s.str();
    for (const SweepPoint& p : todo) {
        fs::create_directories(points_dir + "/" + p.name);
        fs::remove(points_dir + "/" + p.name + "/exit_code");
    }
    std::cerr << "sweep: submitting " << todo.size() << " point" << (todo.size() == 1 ? "" : "s")
              << " as one job array: " << script << std::endl;
    const core::CommandResult r =
        core::run_command("sbatch --parsable --wait " + shell_quote(script) + " 2>&1");
    // sbatch --wait exits non-zero when a task failed; a job that never ran leaves no exit codes.
    bool any = false;
    for (const SweepPoint& p : todo) any |= exit_code(points_dir + "/" + p.name) >= 0;
    if (!any)
        throw InputError("canopy sweep", "--slurm",
                         "sbatch did not run the job array (status " + std::to_string(r.status) +
                             "): " + last_line(r.output));
    const std::string job = last_line(r.output);
    std::cerr << "sweep: job " << job.substr(0, job.find(';')) << " ended" << std::endl;
}

// A point's quantities: an experiment's rows, or else the numbers of its stats.json.
std::vector<ordered_json> point_rows(const SweepOptions& o, const std::string& dir) {
    std::vector<ordered_json> rows;
    if (o.command == "exp") {
        const auto j = nlohmann::json::parse(slurp(dir + "/" + o.args.front() + ".json"));
        for (const auto& r : j.at("rows"))
            rows.push_back({{"id", r.at("id")},
                            {"quantity", r.at("quantity")},
                            {"simulated", r.at("simulated")},
                            {"published", r.at("published")},
                            {"unit", r.at("unit")},
                            {"error_pct", r.at("error_pct")}});
        return rows;
    }
    const auto j = nlohmann::json::parse(slurp(dir + "/stats.json"));
    // modules.<module>.<stat>[.<field>]: counters, and a distribution's summary numbers.
    for (const auto& [module, stats] : j.at("modules").items())
        for (const auto& [stat, v] : stats.items()) {
            auto add = [&](const std::string& id, const nlohmann::json& x,
                           const std::string& unit) {
                rows.push_back({{"id", id},
                                {"quantity", id},
                                {"simulated", x},
                                {"published", nullptr},
                                {"unit", unit},
                                {"error_pct", nullptr}});
            };
            if (v.is_number()) add(module + "." + stat, v, "");
            if (v.is_object())
                for (const auto& [field, x] : v.items())
                    if (x.is_number() && field != "bins_per_decade")
                        add(module + "." + stat + "." + field, x,
                            field == "count" ? "" : v.value("unit", ""));
        }
    return rows;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string csv_value(const nlohmann::json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return csv_field(v.get<std::string>());
    return v.dump();
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    const std::vector<SweepPoint> points = sweep_points(o);
    check(o, points);
    core::prepare_output_dir(o.out_dir);
    const std::string out = fs::absolute(o.out_dir).lexically_normal().string();
    const std::string points_dir = out + "/points";
    fs::create_directories(points_dir);
    std::vector<SweepPoint> todo;
    for (const SweepPoint& p : points)
        if (!o.resume || exit_code(points_dir + "/" + p.name) != 0) todo.push_back(p);
    if (o.resume)
        std::cerr << "sweep: --resume: " << points.size() - todo.size() << " of " << points.size()
                  << " points done before, running " << todo.size() << std::endl;
    const std::string exe = self_exe();
    if (!todo.empty()) {
        if (o.slurm)
            run_slurm(o, todo, points_dir, exe, out);
        else
            run_local(o, todo, points_dir, exe, points.size());
    }

    // Merge: a row per point per quantity, the point's settings beside it.
    ordered_json doc = {{"command", o.command}, {"args", o.args}, {"zip", o.zip}};
    ordered_json vary = ordered_json::object();
    for (const auto& [k, values] : o.vary) vary[k] = values;
    doc["vary"] = vary;
    ordered_json pts = ordered_json::array(), rows = ordered_json::array();
    std::ostringstream csv;
    csv << "point";
    for (const auto& [k, values] : o.vary) csv << "," << csv_field(k);
    csv << ",id,quantity,simulated,published,unit,error_pct\n";
    unsigned failed = 0;
    for (const SweepPoint& p : points) {
        const std::string dir = points_dir + "/" + p.name;
        ordered_json settings = ordered_json::object();
        for (const auto& [k, v] : p.settings) settings[k] = v;
        ordered_json entry = {
            {"point", p.name}, {"dir", "points/" + p.name}, {"settings", settings}};
        const int code = exit_code(dir);
        std::vector<ordered_json> got;
        std::string error;
        if (code == 0) {
            try {
                got = point_rows(o, dir);
            } catch (const std::exception& e) {
                error = std::string("its result cannot be read: ") + e.what();
            }
        } else {
            error = code < 0 ? "it did not run to the end"
                             : "exit " + std::to_string(code) + ": " +
                                   last_line(slurp(dir + "/stderr.txt"));
        }
        entry["status"] = error.empty() ? "ok" : "failed";
        if (!error.empty()) {
            entry["error"] = error;
            ++failed;
            std::cerr << "sweep: point " << p.name << " (" << describe(p) << ") failed: " << error
                      << "; see " << dir << "/\n";
        }
        pts.push_back(entry);
        for (ordered_json& r : got) {
            csv << p.name;
            for (const auto& [k, v] : p.settings) csv << "," << csv_field(v);
            csv << "," << csv_value(r["id"]) << "," << csv_value(r["quantity"]) << ","
                << csv_value(r["simulated"]) << "," << csv_value(r["published"]) << ","
                << csv_value(r["unit"]) << "," << csv_value(r["error_pct"]) << "\n";
            ordered_json row = {{"point", p.name}, {"settings", settings}};
            for (auto& [k, v] : r.items()) row[k] = v;
            rows.push_back(std::move(row));
        }
    }
    doc["points"] = pts;
    doc["rows"] = rows;
    std::ofstream(out + "/sweep.csv") << csv.str();
    std::ofstream(out + "/sweep.json") << doc.dump(2) << "\n";
    std::cout << "sweep: " << points.size() - failed << " of " << points.size()
              << " points merged into " << out << "/sweep.csv and sweep.json\n";
    // A quantity to plot that no point measured: said with the closest that one did (the
    // table is written by now, so nothing is lost).
    std::set<std::string> ids;
    for (const auto& r : rows) ids.insert(r["id"].get<std::string>());
    for (const std::string& q : o.plots)
        if (!ids.count(q) && failed < points.size()) {
            const std::string hint = closest_match(q, {ids.begin(), ids.end()});
            throw InputError("canopy sweep", "--plot " + q,
                             "no point measured that quantity" +
                                 (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
        }
    if (!o.plots.empty()) {
        const experiments::Figures f =
            experiments::draw_sweep_plots(out + "/sweep.json", out, o.plots);
        if (!f.error.empty()) std::cerr << "canopy sweep: warning: no plots (" << f.error << ")\n";
        for (const auto& file : f.files) std::cout << "plot: " << file << "\n";
    }
    return failed ? 1 : 0;
}

}  // namespace canopy::app
