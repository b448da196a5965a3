// Block I/O traces of real servers, to drive the SSD with a host's request stream: the MSR
// Cambridge traces (Narayanan et al., "Write off-loading", FAST 2008; SNIA IOTTA repository), one
// week of block requests to 36 volumes of 13 enterprise servers. Each file is CSV, one request a
// line, no header:
//   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//   128166372003061629,usr,0,Read,7014609920,24576,41286
// Timestamp is a Windows FILETIME (100 ns ticks since 1601-01-01), Type is Read or Write, Offset
// and Size are bytes, ResponseTime is the time the original system took, in 100 ns ticks.
// traces/block/README.md describes the format and the synthetic examples there.
//
// The reader checks every line and stops at the first bad one with an InputError naming the file
// and "line N". The traces are sorted by timestamp, so a timestamp earlier than the line before
// is reported as an error (equal timestamps are fine) rather than silently reordered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace canopy::sw {

struct BlockRequest {
    uint64_t time_ns = 0;  // since the trace's first (kept) request
    bool write = false;
    uint64_t offset_bytes = 0, size_bytes = 0;
    uint64_t response_ns = 0;  // as recorded on the original system (for comparison)
    uint32_t line = 0;         // in the file, for messages
};

struct BlockTrace {
    std::string source;  // file name
    std::vector<BlockRequest> requests;

    uint64_t read_bytes() const;
    uint64_t write_bytes() const;
    size_t reads() const;
    size_t writes() const;
    uint64_t span_bytes() const;  // the highest offset + size: the capacity the trace touches
};

struct MsrOptions {
    // Keep only this DiskNumber's requests (a file may hold several volumes of one server).
    std::optional<uint32_t> disk;
    // Stop after this many kept requests; lines after the last one are not read (nor checked).
    std::optional<size_t> max_requests;
};

// Throws canopy::InputError(path, "line N", reason) for a malformed line (field count, a field
// that is not a number or out of range, an unknown Type, Size 0, Offset + Size past 2^64, a
// timestamp before the previous line's), and InputError(path, "", reason) for a file that cannot
// be read or a trace with no (kept) requests. Blank lines and lines starting with '#' are
// skipped; a trailing '\r' (CRLF files) and spaces around fields are ignored.
BlockTrace read_msr_trace(const std::string& path, const MsrOptions& opt = {});
BlockTrace parse_msr_trace(std::istream& in, const std::string& source, const MsrOptions& opt = {});

}  // namespace canopy::sw
