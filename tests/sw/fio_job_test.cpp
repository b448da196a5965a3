// The fio job-file reader (sw/host/fio_job.hpp): fio's inheritance from [global], its number and
// time syntax (base 1024, seconds by default), bssplit's shares, and one InputError per kind of
// bad input naming the file, "line N" and the option; options fio has that Canopy does not
// model are refused by name.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"
#include "sw/host/fio_job.hpp"

namespace canopy::sw {
namespace {

FioJobFile parse(const std::string& text) {
    std::istringstream in(text);
    return parse_fio_job_file(in, "j.fio");
}

void expect_error(const std::string& text, const std::string& place, const std::string& words) {
    try {
        parse(text);
        ADD_FAILURE() << "no error for:\n" << text;
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "j.fio");
        EXPECT_EQ(e.place(), place) << e.what();
        EXPECT_NE(e.message().find(words), std::string::npos)
            << "'" << e.message() << "' does not mention '" << words << "'";
    }
}

TEST(FioJobFile, JobsInheritGlobalAndOverrideIt) {
    const FioJobFile f = parse(
        "; a comment\n"
        "[global]\n"
        "ioengine=libaio\n"
        "direct=1\n"
        "bs=4k\n"
        "size = 1g\n"
        "runtime=2\n"
        "time_based\n"
        "group_reporting\n"
        "\n"
        "[randread]\n"
        "rw=randread\n"
        "iodepth=32\n"
        "# another\n"
        "[mixed]\n"
        "rw=randrw\n"
        "rwmixwrite=30\n"
        "bs=16KiB\n"
        "numjobs=2\n"
        "random_distribution=zipf:1.2\n"
        "ioengine=libdirectio\n"
        "ramp_time=500ms\n");
    ASSERT_EQ(f.jobs.size(), 2u);
    EXPECT_TRUE(f.group_reporting);
    const FioJob& a = f.jobs[0];
    EXPECT_EQ(a.name, "randread");
    EXPECT_EQ(a.line, 11u);
    EXPECT_TRUE(a.read && !a.write && a.random);
    EXPECT_EQ(a.iodepth, 32u);
    EXPECT_EQ(a.bssplit, (std::vector<std::pair<uint64_t, uint32_t>>{{4096, 100}}));
    EXPECT_EQ(a.size_bytes, 1ull << 30);
    EXPECT_DOUBLE_EQ(a.runtime_ns, 2e9);
    EXPECT_TRUE(a.time_based);
    EXPECT_FALSE(a.direct_io);
    const FioJob& b = f.jobs[1];
    EXPECT_TRUE(b.read && b.write && b.random);
    EXPECT_EQ(b.rwmixread, 70u);
    EXPECT_EQ(b.min_bs(), 16384u);
    EXPECT_EQ(b.numjobs, 2u);
    EXPECT_DOUBLE_EQ(b.zipf_theta, 1.2);
    EXPECT_TRUE(b.direct_io);
    EXPECT_DOUBLE_EQ(b.ramp_ns, 500e6);
    EXPECT_EQ(b.iodepth, 1u);  // fio's default, not the other job's
}

TEST(FioJobFile, NumbersAndTimesTakeFiosSuffixes) {
    EXPECT_EQ(parse_fio_size("512", "f", "p", "bs", 1ull << 40), 512u);
    EXPECT_EQ(parse_fio_size("4k", "f", "p", "bs", 1ull << 40), 4096u);
    EXPECT_EQ(parse_fio_size("4K", "f", "p", "bs", 1ull << 40), 4096u);
    EXPECT_EQ(parse_fio_size("2MiB", "f", "p", "bs", 1ull << 40), 2u << 20);
    EXPECT_EQ(parse_fio_size("3g", "f", "p", "bs", 1ull << 40), 3ull << 30);
    EXPECT_EQ(parse_fio_size("1t", "f", "p", "bs", 1ull << 40), 1ull << 40);
    EXPECT_THROW(parse_fio_size("2t", "f", "p", "bs", 1ull << 40), InputError);  // above max
    EXPECT_THROW(parse_fio_size("-4k", "f", "p", "bs", 1ull << 40), InputError);
    EXPECT_THROW(parse_fio_size("4x", "f", "p", "bs", 1ull << 40), InputError);
    EXPECT_THROW(parse_fio_size("", "f", "p", "bs", 1ull << 40), InputError);
    EXPECT_THROW(parse_fio_size("99999999999999999999k", "f", "p", "bs", UINT64_MAX), InputError);
    EXPECT_DOUBLE_EQ(parse_fio_time("10", "f", "p", "runtime"), 10e9);
    EXPECT_DOUBLE_EQ(parse_fio_time("250ms", "f", "p", "runtime"), 250e6);
    EXPECT_DOUBLE_EQ(parse_fio_time("40us", "f", "p", "runtime"), 40e3);
    EXPECT_DOUBLE_EQ(parse_fio_time("2m", "f", "p", "runtime"), 120e9);
    EXPECT_THROW(parse_fio_time("25h", "f", "p", "runtime"), InputError);  // a day at most
    EXPECT_THROW(parse_fio_time("1.5s", "f", "p", "runtime"), InputError);
}

TEST(FioJobFile, BssplitSharesWhatTheOthersLeave) {
    const FioJob j = parse("[j]\nbssplit=4k/50:8k/30:64k/20\n").jobs[0];
    EXPECT_EQ(j.bssplit,
              (std::vector<std::pair<uint64_t, uint32_t>>{{4096, 50}, {8192, 30}, {65536, 20}}));
    EXPECT_EQ(j.max_bs(), 65536u);
    // As fio: a size without a share takes what the others leave.
    const FioJob k = parse("[j]\nbssplit=4k/60:8k:16k\n").jobs[0];
    EXPECT_EQ(k.bssplit,
              (std::vector<std::pair<uint64_t, uint32_t>>{{4096, 60}, {8192, 20}, {16384, 20}}));
    // The rounding's remainder goes to the last (a fuzzing finding: 61 + 19 + 19 made 99).
    const FioJob r = parse("[j]\nbssplit=4k/61:8k:64k\n").jobs[0];
    EXPECT_EQ(r.bssplit,
              (std::vector<std::pair<uint64_t, uint32_t>>{{4096, 61}, {8192, 19}, {65536, 20}}));
    expect_error("[j]\nbssplit=4k/50:8k/30\n", "line 2", "add up to 100");
    expect_error("[j]\nbssplit=4k/70:8k/40\n", "line 2", "add up to 100");
    expect_error("[j]\nbssplit=4k/50:1000/50\n", "line 2", "multiple of 512");
}

TEST(FioJobFile, BadValuesNameTheLineAndTheOption) {
    expect_error("[j]\nrw=sideways\n", "line 2", "rw=sideways: unknown");
    expect_error("[j]\nrw=trimwrite\n", "line 2", "rw=trimwrite: not modelled");
    expect_error("[j]\niodepth=0\n", "line 2", "iodepth=0");
    expect_error("[j]\niodepth=1025\n", "line 2", "from 1 to 1024");
    expect_error("[j]\niodepth=-1\n", "line 2", "iodepth=-1");
    expect_error("[j]\n\niodepth=4294967297\n", "line 3", "iodepth");
    expect_error("[j]\nnumjobs=65\n", "line 2", "numjobs");
    expect_error("[j]\nbs=4k,8k\n", "line 2", "separate read and write block sizes");
    expect_error("[j]\nbs=100\n", "line 2", "multiple of 512");
    expect_error("[j]\nbs=2m\n", "line 2", "bs=2m");
    expect_error("[j]\nrwmixread=101\n", "line 2", "rwmixread");
    expect_error("[j]\nsize=0\n", "line 2", "size=0");
    expect_error("[j]\nsize=101%\n", "line 2", "size");
    expect_error("[j]\nruntime=soon\n", "line 2", "runtime=soon");
    expect_error("[j]\nrandom_distribution=zipf:1\n", "line 2", "not 1");
    expect_error("[j]\nrandom_distribution=zipf:x\n", "line 2", "zipf");
    expect_error("[j]\nrandom_distribution=pareto:0.5\n", "line 2", "pareto");
    expect_error("[j]\ndirect=0\n", "line 2", "page cache is not modelled");
    expect_error("[j]\nioengine=mmap\n", "line 2", "ioengine=mmap");
    expect_error("[j]\nfilename=relative\n", "line 2", "absolute path");
    expect_error("[j]\niodepth\n", "line 2", "needs a value");
    expect_error("[j]\ntime_based=2\n", "line 2", "time_based");
    expect_error("[j]\nfsync=often\n", "line 2", "fsync=often");
    expect_error("[j]\nfsync=4294967296\n", "line 2", "fsync");
    expect_error("[j]\nend_fsync=2\n", "line 2", "end_fsync");
    expect_error("[j]\nfsync\n", "line 2", "needs a value");
    expect_error("[j]\nfdatasync=often\n", "line 2", "fdatasync=often");
    expect_error("[j]\nfdatasync=-1\n", "line 2", "fdatasync");
    expect_error("[j]\nsync=rsync\n", "line 2", "sync=rsync");
    expect_error("[global]\nbs=4k\nsync=2\n[j]\n", "line 3", "sync=2");
}

// sync: fio's none (0), sync (1) and dsync, or a bare flag; on a block device all but none mean
// the same, every write with FUA.
TEST(FioJobFile, SyncMakesEveryWriteDurable) {
    const FioJobFile f = parse(
        "[global]\nsync=1\n[a]\n[b]\nsync=none\n[c]\nsync=dsync\n[d]\nsync=0\n[e]\n"
        "sync=0\nsync\n[f]\nsync=SYNC\n");
    ASSERT_EQ(f.jobs.size(), 6u);
    const bool want[] = {true, false, true, false, true, true};
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(f.jobs[i].sync_writes, want[i]) << f.jobs[i].name;
    EXPECT_FALSE(parse("[j]\n").jobs[0].sync_writes);
}

// fsync and fdatasync are two periods, each of its own option (fio counts them apart).
TEST(FioJobFile, FsyncAndFdatasyncAreKeptApart) {
    const FioJobFile f = parse("[global]\nfdatasync=3\n[a]\nfsync=8\n[b]\nfdatasync=0\n");
    ASSERT_EQ(f.jobs.size(), 2u);
    EXPECT_EQ(f.jobs[0].fsync, 8u);
    EXPECT_EQ(f.jobs[0].fdatasync, 3u);
    EXPECT_EQ(f.jobs[1].fsync, 0u);
    EXPECT_EQ(f.jobs[1].fdatasync, 0u);
}

// fio's logs: a bare write_*_log takes the job's name as prefix (resolved when the files are
// written), a value is the prefix; the files go into the --out folder, so a prefix is a plain
// file name.
TEST(FioJobFile, LogsTakeAPrefixAWindowAndOffsets) {
    const FioJobFile f = parse(
        "[global]\nwrite_lat_log\nlog_avg_msec=250\n[a]\nwrite_bw_log=run-1.bw\nlog_offset\n"
        "[b]\nwrite_iops_log=i\nlog_avg_msec=0\nlog_offset=0\n");
    ASSERT_EQ(f.jobs.size(), 2u);
    for (const auto& j : f.jobs) {
        EXPECT_TRUE(j.lat_log.on) << j.name;
        EXPECT_EQ(j.lat_log.prefix, "") << j.name;
    }
    EXPECT_TRUE(f.jobs[0].bw_log.on);
    EXPECT_EQ(f.jobs[0].bw_log.prefix, "run-1.bw");
    EXPECT_FALSE(f.jobs[0].iops_log.on);
    EXPECT_EQ(f.jobs[0].log_avg_msec, 250u);
    EXPECT_TRUE(f.jobs[0].log_offset);
    EXPECT_FALSE(f.jobs[1].bw_log.on);
    EXPECT_EQ(f.jobs[1].iops_log.prefix, "i");
    EXPECT_EQ(f.jobs[1].log_avg_msec, 0u);
    EXPECT_FALSE(f.jobs[1].log_offset);
    EXPECT_FALSE(parse("[j]\n").jobs[0].lat_log.on);
    const std::pair<std::string, std::string> bad[] = {
        {"write_lat_log=../x", "write_lat_log=../x: a log's prefix"},
        {"write_bw_log=/tmp/x", "write_bw_log=/tmp/x: a log's prefix"},
        {"write_iops_log=.x", "not starting with '.'"},
        {"write_iops_log=" + std::string(65, 'x'), "at most 64"},
        {"log_avg_msec=86400001", "log_avg_msec"},  // more than a day
        {"log_avg_msec=-5", "log_avg_msec"},
        {"log_offset=2", "log_offset"}};
    for (const auto& [line, words] : bad) expect_error("[j]\n" + line + "\n", "line 2", words);
}

// rate_iops: one rate for every direction (fio's single value); per-direction lists refused.
TEST(FioJobFile, RateIopsIsOneRateForEachDirection) {
    EXPECT_EQ(parse("[j]\nrate_iops=2500\n").jobs[0].rate_iops, 2500u);
    EXPECT_EQ(parse("[j]\n").jobs[0].rate_iops, 0u);
    expect_error("[j]\nrate_iops=500,200\n", "line 2", "separate read, write and trim rates");
    expect_error("[j]\nrate_iops=0\n", "line 2", "rate_iops");
    expect_error("[j]\nrate_iops=10000001\n", "line 2", "rate_iops");
}

TEST(FioJobFile, OptionsCanopyDoesNotModelAreRefusedByName) {
    expect_error("[j]\nverify=crc32c\n", "line 2", "fio option verify is not modelled");
    expect_error("[global]\nrate=1m\n[j]\n", "line 2", "rate is not modelled");
    expect_error("[j]\nstonewall\n", "line 2", "stonewall is not modelled");
    expect_error("[j]\niodepht=4\n", "line 2",
                 "unknown fio option iodepht (did you mean iodepth?)");
}

TEST(FioJobFile, StructureErrors) {
    expect_error("bs=4k\n[j]\n", "line 1", "before any [section]");
    expect_error("[j\n", "line 1", "[name]");
    expect_error("[]\n", "line 1", "[name]");
    expect_error("[a b]\n", "line 1", "no spaces");
    expect_error("[j]\n[j]\n", "line 2", "given twice");
    expect_error("[j]\n[global]\n", "line 2", "[global] after a job");
    expect_error("[global]\nname=x\n[j]\n", "line 2", "name= in [global]");
    expect_error("[global]\nbs=4k\n", "", "no job");
    expect_error("", "", "no job");
    expect_error("[j]\n" + std::string(5000, 'x') + "\n", "line 2", "longer than 4096");
    expect_error("[j]\nbs=64k\nsize=16k\n", "line 1, job j", "smaller than the largest block");
    expect_error("[j]\ntime_based\n", "line 1, job j", "time_based needs a runtime");
}

TEST(FioJobFile, ShippedJobFilesParse) {
    for (const char* name : {"randread-qd32.fio", "randwrite-qd32.fio"}) {
        const FioJobFile f =
            read_fio_job_file(std::string(CANOPY_SOURCE_DIR) + "/traces/fio/" + name);
        ASSERT_EQ(f.jobs.size(), 1u) << name;
        EXPECT_EQ(f.jobs[0].iodepth, 32u) << name;
        EXPECT_EQ(f.jobs[0].bssplit[0].first, 4096u) << name;
        EXPECT_TRUE(f.jobs[0].random) << name;
    }
}

TEST(FioJobFile, FilesMustBeRegularAndSmall) {
    EXPECT_THROW(read_fio_job_file("/dev/zero"), InputError);
    EXPECT_THROW(read_fio_job_file(CANOPY_SOURCE_DIR), InputError);
    EXPECT_THROW(read_fio_job_file("/nonexistent.fio"), InputError);
}

}  // namespace
}  // namespace canopy::sw
