// The MSR Cambridge block-trace reader (sw/host/block_trace.hpp): units (FILETIME and response
// ticks of 100 ns), filters, one InputError per kind of malformed line naming "line N" and the
// problem, and the synthetic examples in traces/block, whose counts this test tallies itself
// with a plain loop over the file rather than trusting the reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "sw/host/block_trace.hpp"

namespace canopy::sw {
namespace {

BlockTrace parse(const std::string& text, const MsrOptions& opt = {}) {
    std::istringstream in(text);
    return parse_msr_trace(in, "t.csv", opt);
}

// Parses `text`, expecting an InputError at `place` whose message contains `words`.
void expect_error(const std::string& text, const std::string& place, const std::string& words,
                  const MsrOptions& opt = {}) {
    try {
        parse(text, opt);
        ADD_FAILURE() << "no error for:\n" << text;
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "t.csv");
        EXPECT_EQ(e.place(), place) << e.what();
        EXPECT_NE(e.message().find(words), std::string::npos)
            << "'" << e.message() << "' does not mention '" << words << "'";
    }
}

const std::string kGood =
    "128166372003061629,usr,0,Read,7014609920,24576,41286\n"
    "# a comment\n"
    "\n"
    "128166372003062629,usr,0,Write,4096,512,100\n"
    "128166372003062629,usr,1,write,0,8192,7\r\n"  // equal time, lower-case type, CRLF
    " 128166372013061629 , usr , 0 , READ , 8192 , 4096 , 0 \n";

TEST(MsrTrace, ParsesFieldsAndUnits) {
    BlockTrace t = parse(kGood);
    EXPECT_EQ(t.source, "t.csv");
    ASSERT_EQ(t.requests.size(), 4u);
    const BlockRequest& a = t.requests[0];
    EXPECT_EQ(a.time_ns, 0u);
    EXPECT_FALSE(a.write);
    EXPECT_EQ(a.offset_bytes, 7014609920u);
    EXPECT_EQ(a.size_bytes, 24576u);
    EXPECT_EQ(a.response_ns, 4128600u);  // 41286 ticks of 100 ns
    EXPECT_EQ(a.line, 1u);
    const BlockRequest& b = t.requests[1];
    EXPECT_EQ(b.time_ns, 100000u);  // 1000 ticks later
    EXPECT_TRUE(b.write);
    EXPECT_EQ(b.line, 4u);  // the comment and the blank line count
    EXPECT_EQ(t.requests[2].time_ns, 100000u);
    EXPECT_TRUE(t.requests[2].write);
    EXPECT_EQ(t.requests[2].line, 5u);
    EXPECT_EQ(t.requests[3].time_ns, 1000000000u);  // 10^7 ticks: one second
    EXPECT_FALSE(t.requests[3].write);
    EXPECT_EQ(t.requests[3].response_ns, 0u);

    EXPECT_EQ(t.reads(), 2u);
    EXPECT_EQ(t.writes(), 2u);
    EXPECT_EQ(t.read_bytes(), 24576u + 4096u);
    EXPECT_EQ(t.write_bytes(), 512u + 8192u);
    EXPECT_EQ(t.span_bytes(), 7014609920u + 24576u);
}

TEST(MsrTrace, DiskFilterKeepsOneVolumeAndTimesFromItsFirstRequest) {
    MsrOptions opt;
    opt.disk = 1;
    BlockTrace t = parse(kGood, opt);
    ASSERT_EQ(t.requests.size(), 1u);
    EXPECT_EQ(t.requests[0].time_ns, 0u);
    EXPECT_EQ(t.requests[0].line, 5u);
    opt.disk = 0;
    EXPECT_EQ(parse(kGood, opt).requests.size(), 3u);
}

TEST(MsrTrace, MaxRequestsStopsEarly) {
    MsrOptions opt;
    opt.max_requests = 2;
    BlockTrace t = parse(kGood + "garbage after the limit is not read\n", opt);
    ASSERT_EQ(t.requests.size(), 2u);
    EXPECT_EQ(t.requests[1].line, 4u);
}

TEST(MsrTrace, MalformedLinesNameTheLineAndTheProblem) {
    const std::string ok = "128166372003061629,usr,0,Read,4096,4096,10\n";
    const std::string line2 = "line 2";
    expect_error(ok + "128166372003061629,usr,0,Read,4096,4096\n", line2, "expected 7 fields");
    expect_error(ok + "128166372003061629,usr,0,Read,4096,4096,10,9\n", line2, "found 8");
    expect_error(ok + "12816637200306162x,usr,0,Read,4096,4096,10\n", line2,
                 "Timestamp '12816637200306162x' is not a decimal number");
    expect_error(ok + "128166372003061629,usr,0,Read,0x10,4096,10\n", line2, "Offset");
    expect_error(ok + "128166372003061629,usr,0,Read,4096,,10\n", line2, "Size is empty");
    expect_error(ok + "128166372003061629,usr,-1,Read,4096,4096,10\n", line2,
                 "DiskNumber '-1' is negative");
    expect_error(ok + "128166372003061629,usr,0,Read,-4096,4096,10\n", line2, "negative");
    expect_error(ok + "128166372003061629,usr,4294967296,Read,4096,4096,10\n", line2,
                 "DiskNumber '4294967296' is out of range");
    expect_error(ok + "128166372003061629,usr,0,Read,18446744073709551616,4096,10\n", line2,
                 "Offset '18446744073709551616' is out of range");
    expect_error(ok + "128166372003061629,usr,0,Read,18446744073709551615,4096,10\n", line2,
                 "past 2^64");
    expect_error(ok + "128166372003061629,usr,0,Read,4096,4096,1844674407370955162\n", line2,
                 "ResponseTime '1844674407370955162' is out of range");
    expect_error(ok + "128166372003061629,usr,0,Trim,4096,4096,10\n", line2,
                 "Type 'Trim' is neither Read nor Write");
    expect_error(ok + "128166372003061629,usr,0,Read,4096,0,10\n", line2, "Size is 0");
    expect_error(ok + "128166372003061629,,0,Read,4096,4096,10\n", line2, "Hostname is empty");
    expect_error(ok + "128166372003061628,usr,0,Read,4096,4096,10\n", line2,
                 "before the previous request's (128166372003061629, line 1)");
    // The line number counts comments and blank lines, and order is checked across disks even
    // when a filter drops the earlier line.
    MsrOptions disk1;
    disk1.disk = 1;
    expect_error(
        "# header\n\n128166372003061629,usr,0,Read,4096,4096,10\n"
        "128166372003061628,usr,1,Read,4096,4096,10\n",
        "line 4", "before the previous request's", disk1);
    // A timestamp so far after the first that its nanoseconds overflow 64 bits, and one that
    // fits 64 bits of ns but not SystemC's 64 bits of ps (200 days of 100 ns ticks and one).
    expect_error("1,usr,0,Read,0,1,0\n18446744073709551615,usr,0,Read,0,1,0\n", line2,
                 "more than 200 days after the first request's");
    expect_error("0,usr,0,Read,0,1,0\n172800000000001,usr,0,Read,0,1,0\n", line2,
                 "beyond the simulated clock's reach");
    EXPECT_EQ(parse("0,usr,0,Read,0,1,0\n172800000000000,usr,0,Read,0,1,0\n").requests[1].time_ns,
              200ull * 24 * 3600 * 1000'000'000);
}

TEST(MsrTrace, EmptyTracesAndUnreadableFilesAreErrors) {
    expect_error("", "", "no requests");
    expect_error("# only a comment\n\n", "", "no requests");
    MsrOptions disk7;
    disk7.disk = 7;
    expect_error(kGood, "", "no requests for disk 7 (disks in the trace: 0, 1)", disk7);
    MsrOptions none;
    none.max_requests = 0;
    expect_error(kGood, "", "limit is 0", none);
    try {
        read_msr_trace("/nonexistent/trace.csv");
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "/nonexistent/trace.csv");
        EXPECT_NE(e.message().find("cannot open for reading"), std::string::npos);
    }
}

// What a plain loop over the file finds, independently of the reader.
struct Tally {
    size_t reads = 0, writes = 0;
    uint64_t read_bytes = 0, write_bytes = 0, span = 0;
};

Tally tally(const std::string& path) {
    Tally t;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream ss(line);
        std::string field[7];
        for (auto& s : field) std::getline(ss, s, ',');
        uint64_t off = std::stoull(field[4]), size = std::stoull(field[5]);
        (field[3] == "Write" ? t.writes : t.reads)++;
        (field[3] == "Write" ? t.write_bytes : t.read_bytes) += size;
        t.span = std::max(t.span, off + size);
    }
    return t;
}

TEST(MsrTrace, ExampleTracesParse) {
    struct Example {
        const char* file;
        size_t reads, writes;  // as generated (traces/block/README.md)
    };
    for (const Example& x : {Example{"random_4k.csv", 214, 86}, Example{"sequential.csv", 128, 128},
                             Example{"mixed_sizes.csv", 103, 97}}) {
        SCOPED_TRACE(x.file);
        const std::string path = std::string(CANOPY_SOURCE_DIR) + "/traces/block/" + x.file;
        BlockTrace t = read_msr_trace(path);
        Tally want = tally(path);
        EXPECT_EQ(t.source, path);
        EXPECT_EQ(t.reads(), x.reads);
        EXPECT_EQ(t.writes(), x.writes);
        EXPECT_EQ(want.reads, x.reads);
        EXPECT_EQ(want.writes, x.writes);
        EXPECT_EQ(t.read_bytes(), want.read_bytes);
        EXPECT_EQ(t.write_bytes(), want.write_bytes);
        EXPECT_EQ(t.span_bytes(), want.span);
        EXPECT_LE(t.span_bytes(), 64u << 20);
        EXPECT_EQ(t.requests.front().time_ns, 0u);
        for (size_t i = 1; i < t.requests.size(); ++i)
            EXPECT_GE(t.requests[i].time_ns, t.requests[i - 1].time_ns);
        EXPECT_EQ(t.requests.back().line, x.reads + x.writes);  // no blank or comment lines
    }
}

TEST(MsrTrace, SequentialExampleIsReadsThenWritesOf64KiB) {
    BlockTrace t = read_msr_trace(std::string(CANOPY_SOURCE_DIR) + "/traces/block/sequential.csv");
    ASSERT_EQ(t.requests.size(), 256u);
    for (size_t i = 0; i < 256; ++i) {
        EXPECT_EQ(t.requests[i].write, i >= 128);
        EXPECT_EQ(t.requests[i].size_bytes, 65536u);
        EXPECT_EQ(t.requests[i].offset_bytes,
                  (i < 128 ? 0 : (32u << 20) - 128 * 65536) + i * 65536);
    }
}

TEST(MsrTrace, ExampleDiskFilter) {
    const std::string path = std::string(CANOPY_SOURCE_DIR) + "/traces/block/mixed_sizes.csv";
    MsrOptions opt;
    opt.disk = 0;
    size_t d0 = read_msr_trace(path, opt).requests.size();
    opt.disk = 1;
    size_t d1 = read_msr_trace(path, opt).requests.size();
    EXPECT_EQ(d0, 107u);
    EXPECT_EQ(d1, 93u);
}

}  // namespace
}  // namespace canopy::sw
