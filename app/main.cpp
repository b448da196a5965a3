// The `canopy` command: run the platform, replay NAND command scripts, run experiments, show
// the configuration. Input errors print one line naming the input and exit with status 2.
#include <boost/program_options.hpp>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <systemc>

#include "app/fio.hpp"
#include "app/iss.hpp"
#include "app/replay.hpp"
#include "app/session.hpp"
#include "app/sweep.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "core/version.hpp"
#include "experiments/registry.hpp"
#include "platform/debugger.hpp"
#include "platform/iss_machine.hpp"
#include "platform/platform_config.hpp"
#include "platform/register_maps.hpp"

namespace po = boost::program_options;
using namespace canopy;

namespace {

// A whole-number option: digits only. Boost reads "-1" into an unsigned as 2^64-1; this refuses
// a sign, a fraction or a value past the type's range before anything runs.
template <class T>
struct Whole {
    T value;
};

template <class T>
void validate(boost::any& v, const std::vector<std::string>& values, Whole<T>*, int) {
    po::validators::check_first_occurrence(v);
    const std::string& s = po::validators::get_single_string(values);
    T x{};
    const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
        throw po::invalid_option_value(s);
    v = Whole<T>{x};
}

// The value of a Whole option, if given, checked against [min, max].
template <class T>
std::optional<T> whole(const po::variables_map& vm, const std::string& cmd, const char* name, T min,
                       T max) {
    if (!vm.count(name)) return std::nullopt;
    const T v = vm[name].as<Whole<T>>().value;
    if (v < min || v > max)
        throw InputError("canopy " + cmd, "option --" + std::string(name) + " " + std::to_string(v),
                         "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return v;
}

// SystemC prints its banner when the kernel starts, before sc_main; a static initialiser runs
// earlier still.
const bool kNoBanner = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;

const char* kUsage =
    "usage: canopy <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      elaborate the platform and run the default scenario\n"
    "  flash    replay a NAND command script against the flash array\n"
    "  replay   replay a block I/O trace through Base-IO or Direct-IO\n"
    "  fio      run an fio job file through Base-IO or Direct-IO\n"
    "  exp      run an experiment that reproduces published figures (exp --list)\n"
    "  sweep    run exp, run, replay or fio over a grid of configuration values, merge them\n"
    "  iss      run an RV32 program (ELF) on one SPU core\n"
    "  config   show the effective configuration (config --dump)\n"
    "  regs     register maps: C headers for firmware and drivers, tables for the docs\n"
    "\n"
    "canopy <command> --help shows the command's options; canopy --version its version.\n";

const std::vector<std::string> kCommands = {"run",   "flash", "replay", "fio", "exp",
                                            "sweep", "iss",   "config", "regs"};

void add_config_options(po::options_description& d, app::RunOptions& o) {
    d.add_options()("config", po::value(&o.config_file),
                    "JSON config file (see `canopy config --dump`)")(
        "set", po::value(&o.overrides)->composing(),
        "override one key: --set key=value (repeatable)");
}

// --model LIB.so (repeatable): TLM-2.0 models from outside, loaded before the configuration is
// read, since their keys (model.NAME.*) are part of it (platform/user_model.hpp).
void add_model_option(po::options_description& d, std::vector<std::string>& models) {
    d.add_options()("model", po::value(&models)->composing(),
                    "load a model library built against Canopy (docs/sdk.md): its TLM-2.0 "
                    "models join the platform where they attach, their keys as model.NAME.* "
                    "(repeatable)");
}
// `canopy replay` and `canopy fio`: the store brought to a written state before the run.
void add_precondition_option(po::options_description& d, app::RunOptions& o) {
    d.add_options()("precondition", po::value(&o.precondition),
                    "seq, rand or PERCENT: before the run, the flash store written as if the "
                    "host had (seq: the whole device in order; PERCENT: its first PERCENT; "
                    "rand: in order, then as many 4 KiB writes to random units, for GC's steady "
                    "state), worked out by the FTL without simulated time (docs/storage.md)");
}
void load_models(const std::vector<std::string>& models) {
    for (const std::string& m : models) platform::ModelRegistry::global().load(m);
}

const char* const kLogHelp =
    "log level of the modules a glob matches: PATTERN=LEVEL, LEVEL off|warning|info|debug, "
    "e.g. --log 'device.ssd.spu*=debug' --log 'device.ssd.flash0=debug' (repeatable, later "
    "rules win; default info, the SPU consoles' level)";

const std::string& trace_filter_help() {
    static const std::string help = [] {
        std::string h = "keep only this category in trace.json:";
        for (const std::string& c : core::TransactionTrace::categories()) h += " " + c;
        return h + " (repeatable; implies the trace)";
    }();
    return help;
}

// `trace_flag`: the option that writes trace.json (`replay` takes --trace for its input).
void add_output_options(po::options_description& d, app::RunOptions& o,
                        const char* trace_flag = "trace") {
    d.add_options()("out", po::value(&o.out_dir)->default_value("out"),
                    "directory for stats.json, waves.vcd, trace.json")(
        "vcd", po::bool_switch(&o.vcd), "write waves.vcd")(
        "vcd-filter", po::value(&o.vcd_filters)->composing(),
        "keep only the signals this glob matches, e.g. 'nand.ch0.*' (repeatable; implies --vcd)")(
        trace_flag, po::bool_switch(&o.trace), "write trace.json (Chrome/Perfetto trace events)")(
        "trace-filter", po::value(&o.trace_filters)->composing(), trace_filter_help().c_str())(
        "log", po::value(&o.log_rules)->composing(), kLogHelp)(
        "quiet", po::bool_switch(&o.quiet),
        "no progress line, no summary, and only warnings logged (the SPU consoles are still "
        "kept whole in OUT/console/)");
}

void add_run_options(po::options_description& d, app::RunOptions& o,
                     const char* trace_flag = "trace") {
    add_config_options(d, o);
    d.add_options()("seed", po::value<Whole<uint64_t>>(),
                    "seed of all random streams (overrides sim.seed)");
    add_output_options(d, o, trace_flag);
}

const char* const kGdbHelp =
    "serve GDB on TCP PORT (0: any free port, printed) with every SPU core a thread, halted at "
    "reset; writes OUT/gdbinit (gdb-multiarch -x OUT/gdbinit)";

// --gdb PORT, range-checked.
std::optional<uint16_t> gdb_port(const po::variables_map& vm, const std::string& cmd) {
    if (auto port = whole<uint32_t>(vm, cmd, "gdb", 0, 65535)) return uint16_t(*port);
    return std::nullopt;
}

// Parses `args` against `desc`, turning Boost's errors into InputErrors that name the command.
po::variables_map parse(const std::string& cmd, const std::vector<std::string>& args,
                        const po::options_description& desc,
                        const po::positional_options_description* pos = nullptr) {
    po::variables_map vm;
    try {
        po::command_line_parser p(args);
        p.options(desc);
        if (pos) p.positional(*pos);
        po::store(p.run(), vm);
        po::notify(vm);
    } catch (const po::invalid_option_value& e) {
        throw InputError("canopy " + cmd, "option --" + e.get_option_name(),
                         std::string(e.what()) + "; expected a whole number (digits only)");
    } catch (const po::unknown_option& e) {
        std::vector<std::string> names;
        for (const auto& o : desc.options()) names.push_back("--" + o->long_name());
        std::string hint = closest_match(e.get_option_name(), names);
        throw InputError(
            "canopy " + cmd, "option " + e.get_option_name(),
            "unknown option" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
    } catch (const po::error& e) {
        throw InputError("canopy " + cmd, "", e.what());
    }
    return vm;
}

bool wants_help(const std::vector<std::string>& args) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") return true;
    return false;
}

int cmd_run(const std::string& cmd, const std::vector<std::string>& args) {
    app::RunOptions o;
    po::options_description d(
        cmd == "run" ? "canopy run [options]: run the default scenario"
                     : "canopy flash --script FILE [options]: replay a NAND command script");
    if (cmd == "flash")
        d.add_options()("script", po::value(&o.script)->required(),
                        "the command script (format: traces/README.md)");
    add_run_options(d, o);
    add_model_option(d, o.models);
    if (cmd == "run") d.add_options()("gdb", po::value<Whole<uint32_t>>(), kGdbHelp);
    d.add_options()("host-program", po::value(&o.host_program),
                    "run a host program built outside Canopy: CORE=PATH.so[:SYMBOL], a shared "
                    "library against include/canopy/host_program.h, on a host core the scenario "
                    "leaves free (default entry canopy_host_main)")(
        "host-arg", po::value(&o.host_args)->composing(),
        "an argument for it (repeatable; argv[1], argv[2], ...)")(
        "app", po::value(&o.apps)->composing(),
        "NAME=PATH.elf: an SSD App built with the SDK (docs/sdk.md), installed by the host "
        "kernel on every SPU in the slot it is linked for (repeatable; adds to scenario.apps)")(
        "help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    po::positional_options_description pos;
    pos.add("script", 1);
    auto vm = parse(cmd, args, d, cmd == "flash" ? &pos : nullptr);
    load_models(o.models);
    o.seed = whole<uint64_t>(vm, cmd, "seed", 0, UINT64_MAX);
    o.gdb_port = gdb_port(vm, cmd);
    return app::run_session(o);
}

int cmd_replay(const std::vector<std::string>& args) {
    app::ReplayOptions o;
    po::options_description d(
        "canopy replay --trace FILE [options]: replay a block I/O trace (MSR Cambridge CSV, "
        "traces/block/README.md) through Willow's Base-IO or Direct-IO");
    d.add_options()("trace", po::value(&o.trace)->required(), "the trace file")(
        "path", po::value(&o.path)->default_value("base-io"),
        "base-io (the kernel's block device) or direct-io (libDirectIO on one file)")(
        "threads", po::value<Whole<uint32_t>>(), "host programs replaying (default 2)")(
        "iodepth", po::value<Whole<uint32_t>>(),
        "requests each thread keeps in flight, 1 to 1024 (default 1: one at a time; more "
        "through an asynchronous engine with HREs of its own)")(
        "disk", po::value<Whole<uint32_t>>(), "keep only this DiskNumber's requests")(
        "max", po::value<Whole<uint64_t>>(), "replay at most this many requests")(
        "timed", po::bool_switch(&o.timed),
        "issue each request no earlier than its timestamp (default: as fast as they complete)");
    add_run_options(d, o.run, "trace-json");
    add_model_option(d, o.run.models);
    add_precondition_option(d, o.run);
    d.add_options()("gdb", po::value<Whole<uint32_t>>(), kGdbHelp)("help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    po::positional_options_description pos;
    pos.add("trace", 1);
    auto vm = parse("replay", args, d, &pos);
    load_models(o.run.models);
    o.run.seed = whole<uint64_t>(vm, "replay", "seed", 0, UINT64_MAX);
    o.threads = whole<uint32_t>(vm, "replay", "threads", 1, UINT32_MAX).value_or(2);
    o.iodepth = whole<uint32_t>(vm, "replay", "iodepth", 1, 1024).value_or(1);
    o.disk = whole<uint32_t>(vm, "replay", "disk", 0, UINT32_MAX);
    o.max_requests = whole<uint64_t>(vm, "replay", "max", 0, UINT64_MAX);
    o.run.gdb_port = gdb_port(vm, "replay");
    return app::run_replay(o);
}

int cmd_fio(const std::vector<std::string>& args) {
    app::FioOptions o;
    po::options_description d(
        "canopy fio JOBFILE [options]: run an fio job file (the subset in traces/fio/README.md) "
        "through Willow's Base-IO or Direct-IO, firmware in the loop");
    d.add_options()("job-file", po::value(&o.job_file)->required(), "the fio job file")(
        "output-format", po::value(&o.output_format)->default_value("normal"),
        "normal (fio's text) or json (fio's JSON on stdout); OUT/fio.json is written either way");
    add_run_options(d, o.run, "trace-json");
    add_model_option(d, o.run.models);
    add_precondition_option(d, o.run);
    d.add_options()("gdb", po::value<Whole<uint32_t>>(), kGdbHelp)("help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    po::positional_options_description pos;
    pos.add("job-file", 1);
    auto vm = parse("fio", args, d, &pos);
    load_models(o.run.models);
    o.run.seed = whole<uint64_t>(vm, "fio", "seed", 0, UINT64_MAX);
    o.run.gdb_port = gdb_port(vm, "fio");
    return app::run_fio(o);
}

int cmd_exp(const std::vector<std::string>& args) {
    std::string name, out = "out";
    experiments::ExpOptions opt;
    bool list = false, quiet = false, no_figures = false;
    std::vector<std::string> log_rules, models;
    po::options_description d(
        "canopy exp NAME [--quick] [--no-figures] [--workload W] [--config FILE] [--set key=value "
        "...] [--model LIB.so ...] [--out DIR] | canopy exp --list");
    d.add_options()("name", po::value(&name), "experiment to run")("list", po::bool_switch(&list),
                                                                   "list the experiments")(
        "quick", po::bool_switch(&opt.quick), "fewer samples, for a fast look")(
        "no-figures", po::bool_switch(&no_figures),
        "do not draw the papers' figures (OUT/NAME.<figure>.svg and .png, matplotlib)")(
        "workload", po::value(&opt.workload),
        "run only this workload, for experiments that have workloads (flashcosmos: "
        "bmi|ims|kcs|all)")(
        "config", po::value(&opt.config_file),
        "JSON config file the experiment's machines start from (NAME.config.json of an "
        "earlier run is one)")("set", po::value(&opt.overrides)->composing(),
                               "override one key for them: --set key=value "
                               "(repeatable; see `canopy config --dump`)")(
        "out", po::value(&out)->default_value("out"),
        "directory for NAME.csv, NAME.json, NAME.config.json, the figures and the SPU consoles")(
        "log", po::value(&log_rules)->composing(), kLogHelp)(
        "quiet", po::bool_switch(&quiet),
        "no progress lines (one per configuration, on stderr); the SPU consoles are always in "
        "OUT/NAME.console/N/, and the log shows warnings unless --log says otherwise")(
        "gdb", po::value<Whole<uint32_t>>(),
        "for an experiment whose machines run SPU firmware: each machine serves GDB on TCP PORT "
        "in turn (0: any free port, printed), every SPU core a thread, halted at reset; writes "
        "OUT/NAME.gdbinit")("help", "this help");
    // The experiment's machines are built in child processes, which inherit the models.
    add_model_option(d, models);
    if (wants_help(args)) return std::cout << d << "\n", 0;
    po::positional_options_description pos;
    pos.add("name", 1);
    const auto vm = parse("exp", args, d, &pos);
    load_models(models);
    opt.debug.gdb_port = gdb_port(vm, "exp");
    opt.figures = !no_figures;
    // Every machine the experiment builds starts from these: warnings only, so that the SPU
    // consoles (in their files) stay off the terminal unless --log asks for them.
    core::Log::set_defaults(log_rules, core::LogLevel::Warning);
    if (list) {
        for (const auto& e : experiments::experiments())
            std::cout << e.name << "  " << e.description << "\n";
        return 0;
    }
    if (name.empty()) throw InputError("canopy exp", "", "name an experiment, or use --list");
    experiments::run_experiment(name, opt, out, std::cout, quiet ? nullptr : &std::cerr);
    return 0;
}

const char* const kSweepHelp =
    "canopy sweep COMMAND [COMMAND's options] --vary key=v1,v2,... [--vary key2=...] [--zip]\n"
    "             [-j N] [--out DIR] [--resume] [--plot QUANTITY ...]\n"
    "             [--slurm [--partition P] [--time T]]\n"
    "\n"
    "Runs COMMAND (exp NAME, run, replay, fio) once per point of the grid of the varied keys, "
    "each\n"
    "a canopy process with its output in DIR/points/NNN/, then merges every point's quantities\n"
    "into DIR/sweep.csv and DIR/sweep.json (one row per point per quantity: an experiment's rows,\n"
    "or the numbers of stats.json). A point that fails is named with its folder; the others are\n"
    "still merged (exit status 1).\n"
    "\n"
    "  --vary key=v1,v2,...  a configuration key and its values (repeatable; `canopy config\n"
    "                        --dump` lists the keys); the grid is their product\n"
    "  --zip                 pair the lists instead (all as long)\n"
    "  -j, --jobs N          points at once on this machine (default: its cores)\n"
    "  --out DIR             the sweep's folder (default sweep)\n"
    "  --resume              run only the points without a successful result in DIR\n"
    "  --plot QUANTITY       plot a quantity (a row id: E4.7, or a stats key) against the first\n"
    "                        varied key, a line per value of the others: DIR/sweep.QUANTITY.svg\n"
    "                        and .png (repeatable)\n"
    "  --slurm               run the points as one Slurm job array (DIR/sweep.sbatch, submitted\n"
    "                        with sbatch --wait), then merge; DIR must be on a file system the\n"
    "                        nodes share, canopy at the same path on them\n"
    "  --partition P, --time T  sbatch's --partition and --time\n";

int cmd_sweep(const std::vector<std::string>& args) {
    if (wants_help(args)) return std::cout << kSweepHelp, 0;
    app::SweepOptions o;
    // The sweep's own options; everything else is the command's.
    size_t i = 0;
    auto value = [&](const std::string& opt, const std::string& arg) -> std::string {
        const auto eq = arg.find('=');
        if (arg.rfind("--", 0) == 0 && eq != std::string::npos) return arg.substr(eq + 1);
        if (i + 1 >= args.size())
            throw InputError("canopy sweep", "option " + opt, "needs a value");
        return args[++i];
    };
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        const std::string name = a.substr(0, a.find('='));
        if (name == "--vary") {
            const std::string v = value("--vary", a);
            const auto eq = v.find('=');
            if (eq == std::string::npos || eq == 0)
                throw InputError("canopy sweep", "--vary " + v, "expected key=v1,v2,...");
            std::vector<std::string> values;
            std::string rest = v.substr(eq + 1);
            for (size_t at = 0; at <= rest.size();) {
                const size_t comma = std::min(rest.find(',', at), rest.size());
                const std::string one = rest.substr(at, comma - at);
                if (one.empty()) throw InputError("canopy sweep", "--vary " + v, "an empty value");
                values.push_back(one);
                at = comma + 1;
            }
            o.vary.push_back({v.substr(0, eq), values});
        } else if (a == "--zip") {
            o.zip = true;
        } else if (name == "-j" || name == "--jobs") {
            const std::string v = value(name, a);
            unsigned n = 0;
            const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
            if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 1 ||
                n > 1024)
                throw InputError("canopy sweep", "option " + name + " " + v,
                                 "expected a whole number in [1, 1024]");
            o.jobs = n;
        } else if (name == "--out") {
            o.out_dir = value("--out", a);
        } else if (a == "--resume") {
            o.resume = true;
        } else if (name == "--plot") {
            o.plots.push_back(value("--plot", a));
        } else if (a == "--slurm") {
            o.slurm = true;
        } else if (name == "--partition") {
            o.partition = value("--partition", a);
        } else if (name == "--time") {
            o.time = value("--time", a);
        } else if (o.command.empty() && a.rfind("-", 0) != 0) {
            o.command = a;
        } else {
            o.args.push_back(a);
        }
    }
    return app::run_sweep(o);
}

int cmd_iss(const std::vector<std::string>& args) {
    app::IssOptions o;
    po::options_description d(
        "canopy iss --elf FILE [options]: run an RV32 program on an SPU core");
    d.add_options()("elf", po::value(&o.elf)->required(),
                    "the program: an RV32 executable (ELF32, EM_RISCV)")(
        "max-instructions", po::value<Whole<uint64_t>>(),
        "stop after N instructions, exit status 3 (overrides iss.max_instructions)")(
        "gdb", po::value<Whole<uint32_t>>(),
        "serve GDB on TCP PORT (0: any free port, printed), the core halted at reset");
    add_config_options(d, o.run);
    add_output_options(d, o.run);
    d.add_options()("help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    po::positional_options_description pos;
    pos.add("elf", 1);
    auto vm = parse("iss", args, d, &pos);
    o.max_instructions = whole<uint64_t>(vm, "iss", "max-instructions", 0, UINT64_MAX);
    o.run.gdb_port = gdb_port(vm, "iss");
    return app::run_iss(o);
}

int cmd_config(const std::vector<std::string>& args) {
    app::RunOptions o;
    bool dump = false, json = false, iss = false;
    po::options_description d(
        "canopy config --dump [--json] [--iss] [--config FILE] [--set key=value ...]");
    add_config_options(d, o);
    add_model_option(d, o.models);
    d.add_options()("dump", po::bool_switch(&dump),
                    "print every key: value, unit, description, default")(
        "json", po::bool_switch(&json), "print the effective configuration as a JSON config file")(
        "iss", po::bool_switch(&iss), "the keys of `canopy iss` (iss.*) instead of the platform's")(
        "help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    parse("config", args, d);
    if (!dump && !json) throw InputError("canopy config", "", "say --dump or --json");
    load_models(o.models);
    platform::PlatformConfig cfg;
    platform::IssConfig iss_cfg;
    std::cout << core::dump_params(iss ? platform::load_config(iss_cfg, o.config_file, o.overrides)
                                       : platform::load_config(cfg, o.config_file, o.overrides),
                                   json);
    return 0;
}

int cmd_regs(const std::vector<std::string>& args) {
    bool list = false, markdown = false;
    std::string header, dir;
    po::options_description d("canopy regs --list | --header BLOCK | --c-headers DIR | --markdown");
    d.add_options()("list", po::bool_switch(&list), "list the register blocks")(
        "header", po::value(&header), "print BLOCK's C header")(
        "c-headers", po::value(&dir), "write every block's C header, <block>_regs.h, into DIR")(
        "markdown", po::bool_switch(&markdown), "print every block's tables (docs/registers.md)")(
        "help", "this help");
    if (wants_help(args)) return std::cout << d << "\n", 0;
    parse("regs", args, d);
    const auto& blocks = platform::register_blocks();
    if (list) {
        for (const auto& b : blocks) {
            const auto m = b.map();
            std::cout << m.block() << "  " << m.description() << "\n";
        }
        return 0;
    }
    if (markdown) {
        for (const auto& b : blocks) std::cout << b.map().markdown() << "\n";
        return 0;
    }
    if (!header.empty()) {
        std::vector<std::string> names;
        for (const auto& b : blocks) {
            const auto m = b.map();
            if (m.block() == header) return std::cout << m.c_header(b.source), 0;
            names.push_back(m.block());
        }
        const std::string hint = closest_match(header, names);
        throw InputError(
            "canopy regs", "--header " + header,
            "no such register block" +
                (hint.empty() ? "; see canopy regs --list" : "; did you mean '" + hint + "'?"));
    }
    if (!dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        for (const auto& b : blocks) {
            const auto m = b.map();
            const std::string path = dir + "/" + platform::header_name(m);
            const std::string text = m.c_header(b.source);
            std::ifstream old(path);
            const std::string before((std::istreambuf_iterator<char>(old)), {});
            if (before == text) continue;  // unchanged: keep its time stamp, no firmware rebuild
            std::ofstream out(path);
            if (!(out << text))
                throw InputError("canopy regs", "--c-headers " + dir, "cannot write " + path);
        }
        return 0;
    }
    throw InputError("canopy regs", "",
                     "say --list, --header BLOCK, --c-headers DIR or --markdown");
}

int canopy_main(int argc, char* argv[]) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) return std::cerr << kUsage, 2;
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--version" || cmd == "version")
        return std::cout << "canopy " << core::kVersion << "\n", 0;
    if (cmd == "--help" || cmd == "-h" || cmd == "help") return std::cout << kUsage, 0;
    if (cmd == "run" || cmd == "flash") return cmd_run(cmd, args);
    if (cmd == "replay") return cmd_replay(args);
    if (cmd == "fio") return cmd_fio(args);
    if (cmd == "exp") return cmd_exp(args);
    if (cmd == "sweep") return cmd_sweep(args);
    if (cmd == "iss") return cmd_iss(args);
    if (cmd == "config") return cmd_config(args);
    if (cmd == "regs") return cmd_regs(args);
    std::string hint = closest_match(cmd, kCommands);
    throw InputError("canopy", "command " + cmd,
                     "unknown command" + (hint.empty() ? std::string("; see canopy --help")
                                                       : "; did you mean '" + hint + "'?"));
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    (void)kNoBanner;
#ifdef __GLIBC__
    // One malloc arena for all threads: preconditioning programs the NAND's pages on a thread per
    // channel, and the pages later erases free (on the simulation's thread) would otherwise stay
    // in those threads' arenas while new pages grow the main one (peak RSS 2.0 GB instead of
    // 1.4 GB for --precondition rand and 100,000 random writes, at the same speed).
    mallopt(M_ARENA_MAX, 1);
#endif
    try {
        return canopy_main(argc, argv);
    } catch (const InputError& e) {
        // Errors about the command line already start with "canopy ..."; others get the prefix.
        std::cerr << (e.input().rfind("canopy", 0) == 0 ? "" : "canopy: ") << e.what() << "\n";
        return 2;
    } catch (const sc_core::sc_report& e) {
        std::cerr << "canopy: simulation error: " << e.what() << "\n";
        return 1;
    } catch (const SimulationError& e) {
        std::cerr << "canopy: simulation error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "canopy: internal error: " << e.what() << "\n";
        return 1;
    }
}
