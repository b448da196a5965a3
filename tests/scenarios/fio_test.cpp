// `canopy fio` (scenarios/fio_run, sw/host/io_engine): fio job files run on the whole platform
// with SPU-OS and its FTL as firmware. Checked from first principles: the bridge sees exactly
// iodepth x numjobs requests in flight at most, and reaches it; by Little's law the mean number
// of I/Os in flight (IOPS x mean latency) is close to that depth; the counts are what the job
// file asked for; each Base-IO submission costs the driver's system call; the same seed gives
// the same fio.json; bad job files and jobs the machine cannot run exit 2 naming the place.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../canopy_process.hpp"

namespace canopy::platform {
namespace {

using canopy_test::kSmall;
using canopy_test::run_canopy;
using canopy_test::scratch;
using canopy_test::slurp;
using nlohmann::json;

std::string write_job(const std::string& dir, const std::string& text) {
    const std::string path = dir + "/job.fio";
    std::ofstream(path) << text;
    return path;
}

#ifdef CANOPY_FIRMWARE_DIR
struct FioResult {
    json fio, stats;
    canopy_test::Run run;
    std::string dir;  // the run's --out folder
};

FioResult run_fio(const std::string& name, const std::string& job, const std::string& extra = "") {
    const std::string d = scratch(name);
    FioResult r;
    r.dir = d;
    r.run = run_canopy(
        "fio " + write_job(d, job) + " " + kSmall + " --quiet --out " + d + " " + extra, d);
    EXPECT_EQ(r.run.status, 0) << r.run.out << r.run.err;
    if (r.run.status != 0) return r;
    r.fio = json::parse(slurp(d + "/fio.json"));
    r.stats = json::parse(slurp(d + "/stats.json"));
    return r;
}

double in_flight_max(const json& stats) {
    return stats["modules"]["device.ssd.bridge"]["in_flight"]["max"].get<double>();
}

TEST(Fio, IodepthTimesNumjobsIsTheDevicesQueueDepth) {
    const FioResult r = run_fio("fio-qd",
                                "[global]\nioengine=libaio\nbs=4k\nsize=16m\ngroup_reporting\n"
                                "[randread]\nrw=randread\niodepth=8\nnumjobs=2\nnumber_ios=400\n");
    ASSERT_TRUE(r.fio.is_object());
    EXPECT_EQ(in_flight_max(r.stats), 16.0);  // never more, and reached
    ASSERT_EQ(r.fio["jobs"].size(), 1u);
    const json& rd = r.fio["jobs"][0]["read"];
    EXPECT_EQ(rd["total_ios"], 800);
    EXPECT_EQ(rd["io_bytes"], 800 * 4096);
    EXPECT_EQ(r.fio["jobs"][0]["write"]["total_ios"], 0);
    // Little's law over the measured time: IOPS x mean latency is the mean number in flight,
    // which a closed loop of depth 16 keeps at most 16, and below it only while a job's core
    // turns completions into the next submissions (copying each read's 4 KiB out of the receive
    // buffer first): well above half.
    const double in_flight = rd["iops"].get<double>() * rd["lat_ns"]["mean"].get<double>() / 1e9;
    EXPECT_LE(in_flight, 16.0 * 1.01);
    EXPECT_GE(in_flight, 8.0);
    // Each Base-IO submission is one system call of the driver (1 us).
    EXPECT_EQ(rd["slat_ns"]["min"], 1000);
    EXPECT_EQ(rd["slat_ns"]["max"], 1000);
    const json& p = rd["clat_ns"]["percentile"];
    EXPECT_LE(p["50.000000"].get<double>(), p["99.000000"].get<double>());
    EXPECT_LE(p["99.000000"].get<double>(), rd["clat_ns"]["max"].get<double>());
    // At least a round trip over PCIe and the ring to an SPU.
    EXPECT_GT(rd["clat_ns"]["min"].get<double>(), 5000.0);
}

TEST(Fio, DeepQueuesSpanSeveralHres) {
    // 40 in flight: two HREs (32 RPCs each at most), the bridge still sees all 40.
    const FioResult r =
        run_fio("fio-qd40", "[j]\nrw=randread\nbs=4k\nsize=8m\niodepth=40\nnumber_ios=300\n");
    ASSERT_TRUE(r.fio.is_object());
    EXPECT_EQ(in_flight_max(r.stats), 40.0);
    EXPECT_EQ(r.fio["jobs"][0]["read"]["total_ios"], 300);
}

TEST(Fio, DirectIoJobsRunOnAFileAndRepeatWithTheSeed) {
    const std::string job =
        "[mixed]\nioengine=libdirectio\nrw=randrw\nrwmixread=60\nbs=4k\nsize=2m\niodepth=8\n"
        "number_ios=240\n";
    const FioResult a = run_fio("fio-dio-a", job, "--seed 5");
    const FioResult b = run_fio("fio-dio-b", job, "--seed 5");
    ASSERT_TRUE(a.fio.is_object() && b.fio.is_object());
    const json& j = a.fio["jobs"][0];
    EXPECT_EQ(j["error"], 0) << j["canopy_error"];
    EXPECT_EQ(j["read"]["total_ios"].get<int>() + j["write"]["total_ios"].get<int>(), 240);
    EXPECT_GT(j["read"]["total_ios"].get<int>(), 100);  // about 60% of 240
    EXPECT_GT(j["write"]["total_ios"].get<int>(), 60);
    EXPECT_EQ(j["read"]["slat_ns"]["max"], 0);  // OS bypass: no system call per submission
    EXPECT_EQ(in_flight_max(a.stats), 8.0);
    json fa = a.fio, fb = b.fio;
    fa["canopy"].erase("job_file"), fb["canopy"].erase("job_file");  // in their own scratch dirs
    EXPECT_EQ(fa.dump(), fb.dump());
    EXPECT_EQ(a.stats["modules"].dump(), b.stats["modules"].dump());
}

TEST(Fio, JsonOutputIsFiosOnStdout) {
    const std::string d = scratch("fio-json");
    const auto r = run_canopy("fio " + write_job(d, "[w]\nrw=write\nbs=8k\nsize=1m\niodepth=4\n") +
                                  " " + kSmall + " --quiet --output-format=json --out " + d,
                              d);
    ASSERT_EQ(r.status, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out, json::parse(slurp(d + "/fio.json")));
    // Without number_ios the job does size bytes: 1 MiB of 8 KiB writes.
    EXPECT_EQ(out["jobs"][0]["write"]["total_ios"], 128);
    EXPECT_EQ(out["jobs"][0]["write"]["io_kbytes"], 1024);
    EXPECT_GE(out["canopy"]["write_amplification"]["host_unit_writes"].get<int>(), 128);
}
#endif

// fsync=N and end_fsync: the writes issued complete, then the SSD's write cache goes to the
// flash (STORE_FLUSH on every SPU). 2,000 writes, a sync after every 500 and one at the end:
// five, as fio reports them, and nothing left in the write buffer. Every slot programmed holds a
// unit written, one buffered at the start, or padding of a flush.
TEST(Fio, FsyncFlushesTheWriteCache) {
    const FioResult r =
        run_fio("fio-fsync",
                "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=2000\nfsync=500\nend_fsync=1\n");
    if (r.fio.is_null()) return;
    const json& sync = r.fio["jobs"][0]["sync"];
    EXPECT_EQ(sync["total_ios"], 5);
    EXPECT_EQ(sync["lat_ns"]["N"], 5);
    EXPECT_GT(sync["lat_ns"]["max"].get<double>(), 0.0);
    const json& wa = r.fio["canopy"]["write_amplification"];
    EXPECT_EQ(wa["buffered_units_end"], 0);
    EXPECT_EQ(wa["host_unit_writes"], 2000);
    EXPECT_EQ(wa["flash_programs"].get<uint64_t>() * wa["units_per_page"].get<uint64_t>(),
              wa["buffered_units_start"].get<uint64_t>() + 2000 -
                  wa["buffer_hits"].get<uint64_t>() + wa["padded_units"].get<uint64_t>());
    EXPECT_NE(r.run.out.find("sync (usec)"), std::string::npos) << r.run.out;
    // fdatasync=N counts its own writes: 1,200 writes, fsync at 500 and 1,000, fdatasync at
    // 300, 600, 900 and 1,200.
    const FioResult d =
        run_fio("fio-fdatasync",
                "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=1200\nfsync=500\nfdatasync=300\n");
    if (d.fio.is_null()) return;
    EXPECT_EQ(d.fio["jobs"][0]["sync"]["total_ios"], 6);
    EXPECT_EQ(d.fio["canopy"]["write_amplification"]["buffered_units_end"], 0);
    // Without them nothing is padded and what no page took stays in the buffer (2,001 + the
    // units at the start, less the replaced, is not a multiple of four here).
    const FioResult n =
        run_fio("fio-nosync", "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=2001\n");
    if (n.fio.is_null()) return;
    EXPECT_EQ(n.fio["jobs"][0]["sync"]["total_ios"], 0);
    const json& nw = n.fio["canopy"]["write_amplification"];
    EXPECT_EQ(nw["padded_units"], 0);
    const uint64_t kept =
        nw["buffered_units_start"].get<uint64_t>() + 2001 - nw["buffer_hits"].get<uint64_t>();
    EXPECT_EQ(nw["flash_programs"].get<uint64_t>() * 4 + nw["buffered_units_end"].get<uint64_t>(),
              kept);
    if (kept % 4) {
        EXPECT_GT(nw["buffered_units_end"].get<uint64_t>(), 0u);
    }
}

// sync=1: the device is opened O_SYNC, so every write carries NVMe's FUA and completes only once
// its data is on the flash: one range flush per 4 KiB write on the SPU that holds it, nothing
// left in the write buffer, and no write completes faster than a TLC page program (700 us,
// Flash-Cosmos Table 1), since each waits for the page holding its unit. Without it, writes are
// acknowledged from the buffer: one at a time, three in four complete before any program.
TEST(Fio, SyncWritesAreOnTheFlashWhenTheyComplete) {
    const std::string job = "[w]\nrw=randwrite\nbs=4k\nnumber_ios=400\n";
    const FioResult s = run_fio("fio-sync", job + "iodepth=4\nsync=1\n");
    const FioResult n = run_fio("fio-sync-off", job + "iodepth=1\n");
    if (s.fio.is_null() || n.fio.is_null()) return;
    const json& wa = s.fio["canopy"]["write_amplification"];
    EXPECT_EQ(wa["fua_syncs"], 400);
    EXPECT_EQ(wa["buffered_units_end"], 0);
    EXPECT_EQ(wa["flash_programs"].get<uint64_t>() * wa["units_per_page"].get<uint64_t>(),
              wa["buffered_units_start"].get<uint64_t>() + 400 - wa["buffer_hits"].get<uint64_t>() +
                  wa["padded_units"].get<uint64_t>());
    EXPECT_EQ(s.fio["jobs"][0]["job options"]["sync"], "1");
    EXPECT_GE(s.fio["jobs"][0]["write"]["clat_ns"]["min"].get<double>(), 700e3);
    EXPECT_EQ(s.fio["jobs"][0]["sync"]["total_ios"], 0);  // FUA writes, no fsync calls
    EXPECT_EQ(n.fio["canopy"]["write_amplification"]["fua_syncs"], 0);
    const json& p = n.fio["jobs"][0]["write"]["clat_ns"]["percentile"];
    EXPECT_LT(p["70.000000"].get<double>(), 700e3);
}

// --precondition rand writes the whole device in order, then as many units at random, through
// the FTL without simulated time: the job then finds a store with no free space to spare, so
// its writes need GC, where the same writes to the fresh store need none.
TEST(Fio, PreconditioningLeavesAFullStoreThatNeedsGc) {
    const std::string job = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=4000\n";
    const FioResult r = run_fio("fio-precondition", job, "--precondition rand");
    if (r.fio.is_null()) return;
    const json& c = r.fio["canopy"];
    const uint64_t units = c["device_bytes"].get<uint64_t>() / 4096;
    const json& pre = c["precondition"];
    EXPECT_EQ(pre["fill"], "rand");
    EXPECT_EQ(pre["unit_writes"].get<uint64_t>(), 2 * units);
    EXPECT_GT(pre["gc_victims"].get<uint64_t>(), 0u);
    EXPECT_GE(pre["flash_programs"].get<uint64_t>() * 4, 2 * units);
    EXPECT_NE(r.run.out.find("preconditioned (rand"), std::string::npos) << r.run.out;
    EXPECT_GT(c["gc"]["victims"].get<uint64_t>(), 0u);
    // The random units come from the run's seed: the same seed, the same report.
    const FioResult again = run_fio("fio-precondition-again", job, "--precondition rand");
    if (again.fio.is_null()) return;
    json a = again.fio, b = r.fio;
    a["canopy"].erase("job_file");  // each run's own scratch folder
    b["canopy"].erase("job_file");
    EXPECT_EQ(a.dump(), b.dump());
    const FioResult fresh = run_fio("fio-fresh", job);
    if (fresh.fio.is_null()) return;
    EXPECT_TRUE(fresh.fio["canopy"]["precondition"].is_null());
    EXPECT_EQ(fresh.fio["canopy"]["gc"]["victims"], 0);
}

// rw=trim: each 4 KiB TRIM goes through Base-IO to the SPU whose stripe holds it, and its FTL
// unmaps the unit with one TRIM record. On a store written in full every unit trimmed once costs
// exactly one record and no unit write; on a fresh store there is nothing to unmap (the job
// trims from 16 MiB of the 53 MiB device on: the file system's blocks lie at its start).
TEST(Fio, TrimsUnmapEveryUnitTheyCoverWithOneRecordEach) {
    const std::string job = "[t]\nrw=trim\nbs=4k\noffset=16m\niodepth=8\nnumber_ios=1000\n";
    const FioResult r = run_fio("fio-trim", job, "--precondition seq");
    if (r.fio.is_null()) return;
    const json& t = r.fio["jobs"][0]["trim"];
    EXPECT_EQ(t["total_ios"], 1000);
    EXPECT_EQ(t["io_bytes"], 1000 * 4096);
    EXPECT_GT(t["clat_ns"]["mean"].get<double>(), 0);
    EXPECT_EQ(r.fio["jobs"][0]["read"]["total_ios"], 0);
    EXPECT_EQ(r.fio["jobs"][0]["write"]["total_ios"], 0);
    const json& wa = r.fio["canopy"]["write_amplification"];
    EXPECT_EQ(wa["trim_records"], 1000);
    EXPECT_EQ(wa["host_unit_writes"], 0);
    // The records fill pages as writes do (four to a page; the rest still buffered).
    EXPECT_EQ(wa["flash_programs"].get<uint64_t>() * 4 + wa["buffered_units_end"].get<uint64_t>(),
              1000 + wa["buffered_units_start"].get<uint64_t>() +
                  wa["padded_units"].get<uint64_t>() - wa["buffer_hits"].get<uint64_t>());
    EXPECT_NE(r.run.out.find("trim: IOPS="), std::string::npos) << r.run.out;
    EXPECT_NE(r.run.out.find("and 1000 TRIM records"), std::string::npos) << r.run.out;
    const FioResult fresh = run_fio("fio-trim-fresh", job);
    if (fresh.fio.is_null()) return;
    EXPECT_EQ(fresh.fio["jobs"][0]["trim"]["total_ios"], 1000);
    EXPECT_EQ(fresh.fio["canopy"]["write_amplification"]["trim_records"], 0);
    EXPECT_EQ(fresh.fio["canopy"]["write_amplification"]["flash_programs"], 0);
}

// A TRIM of many stripes is one request per SPU (an SPU's stripes of the range lie back to back
// in its NVM): eight more 1 MiB trims add eight RPCs per SPU to the host bridge's requests, not
// 128 each, and unmap every unit they cover, as 4 KiB trims do.
TEST(Fio, ATrimOfManyStripesIsOneRequestPerSpu) {
    auto run = [](const std::string& name, unsigned ios) {
        return run_fio(
            name,
            "[t]\nrw=trim\nbs=1m\noffset=16m\niodepth=4\nnumber_ios=" + std::to_string(ios) + "\n",
            "--precondition seq");
    };
    const FioResult a = run("fio-trim-1m-8", 8), b = run("fio-trim-1m-16", 16);
    if (a.fio.is_null() || b.fio.is_null()) return;
    auto sent = [](const FioResult& r) {
        return r.stats["modules"]["device.ssd.bridge_ni"]["requests_sent"].get<uint64_t>();
    };
    const uint64_t spus = std::stoul(b.stats["config"]["ssd.spus"].get<std::string>());
    ASSERT_GE(spus, 2u);
    EXPECT_EQ(sent(b) - sent(a), 8u * spus);
    const json& wa = b.fio["canopy"]["write_amplification"];
    EXPECT_EQ(wa["trim_records"], 16 * 256);  // every 4 KiB unit of 16 MiB, written before
}

// The FTL decides from the pages' metadata alone, which a timing-only array still keeps: at
// queue depth 1 (the same order of writes) it programs, collects and copies exactly what it
// does on the functional array, while no page data is kept.
TEST(Fio, TimingOnlyArrayRunsTheSameFtl) {
    const std::string job = "[w]\nrw=randwrite\nbs=4k\niodepth=1\nnumber_ios=3000\n";
    const FioResult f = run_fio("fio-functional", job, "--precondition rand");
    const FioResult t =
        run_fio("fio-timing", job, "--precondition rand --set nand.functional=false");
    if (f.fio.is_null() || t.fio.is_null()) return;
    EXPECT_EQ(t.stats["functional"], false);
    EXPECT_EQ(t.fio["canopy"]["precondition"], f.fio["canopy"]["precondition"]);
    EXPECT_EQ(t.fio["canopy"]["write_amplification"], f.fio["canopy"]["write_amplification"]);
    EXPECT_EQ(t.fio["canopy"]["gc"], f.fio["canopy"]["gc"]);
    EXPECT_GT(t.fio["canopy"]["gc"]["victims"].get<uint64_t>(), 0u);
}

// The ECC's shortcut (ssd.flash.ecc.known_error_shortcut: the die's raw bit errors undone
// instead of decoded when there are at most t) is for speed only: on worn flash, where every read
// corrects bits, reads and writes after preconditioning give the same fio.json and statistics
// with it and without it (the config's record of it aside).
TEST(Fio, TheEccShortcutChangesNoResult) {
    const std::string job = "[rw]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nnumber_ios=1500\n";
    const std::string worn = "--precondition seq --set nand.reliability.initial_pe_cycles=3000";
    const FioResult fast = run_fio("fio-ecc-shortcut", job, worn);
    const FioResult full =
        run_fio("fio-ecc-decoder", job, worn + " --set ssd.flash.ecc.known_error_shortcut=false");
    if (fast.fio.is_null() || full.fio.is_null()) return;
    // Everything but the job file's path (two scratch directories) and the setting itself.
    json a = {fast.fio, fast.stats}, b = {full.fio, full.stats};
    EXPECT_EQ(a[1]["config"]["ssd.flash.ecc.known_error_shortcut"], "true");
    for (json* j : {&a, &b}) {
        (*j)[0]["canopy"].erase("job_file");
        (*j)[1].erase("scenario");
        (*j)[1]["config"].erase("ssd.flash.ecc.known_error_shortcut");
    }
    EXPECT_EQ(json::diff(a, b), json::array());
    uint64_t corrected = 0;
    for (const auto& [name, m] : a[1]["modules"].items())
        if (m.contains("corrected_bits")) corrected += m["corrected_bits"].get<uint64_t>();
    EXPECT_GT(corrected, 1000u);  // the reads had errors to correct
}

// rate_iops: a direction's k-th I/O goes no earlier than k / rate s after the start, so 400 reads
// at 2,000 per second take 399 / 2,000 s plus the last one's latency: 2,000 IOPS less a fraction
// of a percent (the same reads at iodepth 8 uncapped run at tens of thousands per second). In a
// 50/50 mix each direction is capped on its own.
TEST(Fio, RateIopsCapsEachDirection) {
    const FioResult r =
        run_fio("fio-rate", "[j]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=400\nrate_iops=2000\n");
    const FioResult m = run_fio(
        "fio-rate-mix", "[j]\nrw=randrw\nbs=4k\niodepth=8\nnumber_ios=400\nrate_iops=1000\n");
    if (r.fio.is_null() || m.fio.is_null()) return;
    const json& rd = r.fio["jobs"][0]["read"];
    EXPECT_EQ(rd["total_ios"], 400);
    EXPECT_LE(rd["iops"].get<double>(), 400 / 0.1995);
    EXPECT_GE(rd["iops"].get<double>(), 1980.0);
    const double ri = m.fio["jobs"][0]["read"]["iops"].get<double>(),
                 wi = m.fio["jobs"][0]["write"]["iops"].get<double>();
    EXPECT_LE(std::max(ri, wi), 1000 * 1.006);
    EXPECT_GE(std::max(ri, wi), 990.0);
    EXPECT_EQ(m.fio["jobs"][0]["read"]["total_ios"].get<int>() +
                  m.fio["jobs"][0]["write"]["total_ios"].get<int>(),
              400);
}

// A log file's lines: each "time, value, ddir, bs[, offset], prio" as numbers.
std::vector<std::vector<uint64_t>> log_lines(const std::string& path) {
    std::vector<std::vector<uint64_t>> lines;
    std::istringstream in(slurp(path));
    for (std::string l; std::getline(in, l);) {
        std::vector<uint64_t> v;
        std::istringstream fields(l);
        for (std::string f; std::getline(fields, f, ',');) v.push_back(std::stoull(f));
        lines.push_back(v);
    }
    return lines;
}

// fio's logs, checked against the run's own report and against each other: a clat line per I/O
// whose extremes are fio.json's; lat - clat of each completion is that I/O's slat, which the slat
// log holds in issue order; bw is bytes over clat; iops 1. Logging changes nothing: the same run
// without logs gives the same fio.json. Windows of log_avg_msec: iops x window adds up to the
// I/Os done.
TEST(Fio, LogsHoldEveryIoAndChangeNothing) {
    const std::string job =
        "[global]\nbs=4k\niodepth=4\nnumber_ios=300\n[w]\nrw=randwrite\n[r]\nrw=randread\n";
    const std::string logs = "write_lat_log\nwrite_bw_log=b\nwrite_iops_log=i\nlog_offset=1\n";
    const FioResult plain = run_fio("fio-nologs", job);
    const FioResult r = run_fio("fio-logs", "[global]\n" + logs + job.substr(9));
    if (plain.fio.is_null() || r.fio.is_null()) return;
    json a = plain.fio, b = r.fio;
    a["canopy"].erase("job_file"), b["canopy"].erase("job_file");
    EXPECT_EQ(a.dump(), b.dump());
    const std::string& d = r.dir;
    const uint64_t device = r.fio["canopy"]["device_bytes"].get<uint64_t>();
    for (unsigned n = 1; n <= 2; ++n) {  // fio's thread numbers: w is 1, r is 2
        const std::string name = n == 1 ? "w" : "r";
        const json& io = r.fio["jobs"][n - 1][n == 1 ? "write" : "read"];
        const auto clat = log_lines(d + "/" + name + "_clat." + std::to_string(n) + ".log");
        const auto lat = log_lines(d + "/" + name + "_lat." + std::to_string(n) + ".log");
        const auto slat = log_lines(d + "/" + name + "_slat." + std::to_string(n) + ".log");
        const auto bw = log_lines(d + "/b_bw." + std::to_string(n) + ".log");
        const auto iops = log_lines(d + "/i_iops." + std::to_string(n) + ".log");
        ASSERT_EQ(clat.size(), 300u) << name;
        ASSERT_EQ(lat.size(), 300u);
        ASSERT_EQ(slat.size(), 300u);
        ASSERT_EQ(bw.size(), 300u);
        ASSERT_EQ(iops.size(), 300u);
        uint64_t lo = UINT64_MAX, hi = 0, last_ms = 0;
        std::multiset<uint64_t> slat_from_lat, slat_logged;
        for (size_t i = 0; i < 300; ++i) {
            ASSERT_EQ(clat[i].size(), 6u);  // time, value, ddir, bs, offset, prio
            EXPECT_EQ(clat[i][2], n == 1 ? 1u : 0u);
            EXPECT_EQ(clat[i][3], 4096u);
            EXPECT_EQ(clat[i][4] % 4096, 0u);
            EXPECT_LT(clat[i][4], device);
            EXPECT_EQ(clat[i][5], 0u);
            EXPECT_GE(clat[i][0], last_ms);  // in the order they completed
            last_ms = clat[i][0];
            lo = std::min(lo, clat[i][1]), hi = std::max(hi, clat[i][1]);
            EXPECT_EQ(lat[i][0], clat[i][0]);
            EXPECT_EQ(lat[i][4], clat[i][4]);
            slat_from_lat.insert(lat[i][1] - clat[i][1]);
            slat_logged.insert(slat[i][1]);
            EXPECT_EQ(bw[i][1], clat[i][3] * 1000000 / clat[i][1]);  // bytes per ms
            EXPECT_EQ(iops[i][1], 1u);
            EXPECT_EQ(iops[i][4], clat[i][4]);
        }
        EXPECT_EQ(lo, io["clat_ns"]["min"].get<uint64_t>());
        EXPECT_EQ(hi, io["clat_ns"]["max"].get<uint64_t>());
        EXPECT_LE(last_ms, r.fio["jobs"][n - 1]["job_runtime"].get<uint64_t>());
        // Each value rounded to the ns on its own: lat - clat may be off by one.
        auto s = slat_logged.begin();
        for (uint64_t v : slat_from_lat) EXPECT_LE(v > *s ? v - *s : *s - v, 1u), ++s;
    }
    // Windows: 2 ms. Each direction's iops line covers a window (the last one its rest), and
    // iops x window adds up to the I/Os done, less what the integer rates drop (< 1 I/O each).
    const FioResult w = run_fio("fio-logs-avg",
                                "[global]\nwrite_lat_log=l\nwrite_iops_log=i\n"
                                "log_avg_msec=2\n" +
                                    job.substr(9));
    if (w.fio.is_null()) return;
    const std::string& dw = w.dir;
    for (unsigned n = 1; n <= 2; ++n) {
        const auto iops = log_lines(dw + "/i_iops." + std::to_string(n) + ".log");
        const uint64_t end = w.fio["jobs"][n - 1]["job_runtime"].get<uint64_t>();
        double done = 0;
        uint64_t prev = 0;
        for (const auto& l : iops) {
            ASSERT_EQ(l.size(), 5u);
            EXPECT_EQ(l[3], 4096u);
            EXPECT_TRUE(l[0] % 2 == 0 || l[0] == end) << l[0];
            done += double(l[1]) * double(l[0] - prev) / 1000.0;
            prev = l[0];
        }
        EXPECT_LE(done, 300.0);
        EXPECT_GT(done, 300.0 - double(iops.size())) << iops.size() << " windows";
        for (const auto& l : log_lines(dw + "/l_clat." + std::to_string(n) + ".log")) {
            EXPECT_EQ(l[3], 0u);  // a window's mean has no block size
            EXPECT_GT(l[1], 0u);
        }
    }
}

TEST(Fio, BadJobFilesAndUnrunnableJobsExitTwoNamingThePlace) {
    const std::string d = scratch("fio-bad");
    auto expect = [&](const std::string& job, const std::string& words,
                      const std::string& extra = "") {
        const auto r = run_canopy("fio " + write_job(d, job) + " --out " + d + " " + extra, d);
        EXPECT_EQ(r.status, 2) << job << r.err;
        EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    };
    expect("[j]\nrw=randread\nverify=md5\n", "job.fio: line 3: fio option verify is not modelled");
    expect("[j]\niodepth=2000\n", "job.fio: line 2: iodepth=2000");
    expect("[j]\nrw=read\n", "--output-format xml", "--output-format xml");
#ifdef CANOPY_FIRMWARE_DIR
    expect("[j]\nnumjobs=16\n", "16 job instances");
    expect("[j]\noffset=1t\n", "line 1, job j: offset");
    expect("[a]\n[b]\nioengine=libdirectio\nsize=1m\n", "line 2, job b: Base-IO and Direct-IO");
    expect("[a]\nioengine=libdirectio\n", "needs size=");
    expect("[j]\nrw=write\n", "--precondition: '0' is not seq, rand or a percentage",
           "--precondition 0");
    expect("[j]\nrw=write\n", "--precondition: 'half' is not", "--precondition half");
    expect("[j]\nrw=write\n", "--precondition: '101%' is not", "--precondition 101%");
    expect("[j]\nrw=write\n", "ssd.store.flash: --precondition fills the store on the flash",
           "--precondition seq --set ssd.store.flash=false");
    expect("[j]\nrw=write\n", "ssd.store.format: true erases",
           "--precondition seq --set ssd.store.format=true");
#endif
    const auto r = run_canopy("fio /nonexistent.fio --out " + d, d);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent.fio"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace canopy::platform
