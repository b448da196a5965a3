// One NAND command ready to send to the array: the sequence, where its data comes from, and
// what to report about it. Command scripts (`canopy flash`) and the built-in scenarios both
// produce these; the FlashPlayer sends them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nand/command.hpp"

namespace canopy::platform {

// The bytes of a data-in phase: a page pattern, generated when the command is sent.
struct DataSpec {
    enum Kind { None, Hex, Random, Fill, File } kind = None;
    std::vector<uint8_t> bytes;  // Hex and File: the bytes; Fill: one byte
    uint64_t seed = 0;           // Random
    double density = 0.5;        // Random: probability of a 1 bit
    bool invert = false;         // store the bitwise NOT of the pattern ("~" prefix)

    // Fills `out` (one page data phase) with the pattern. Hex/File bytes shorter than the
    // phase are kept as given; the phase is then that long.
    void generate(std::vector<uint8_t>& out, uint32_t length) const;
};

struct FlashOp {
    enum Kind { Command, Sync } kind = Command;
    int line = 0;       // script line (0 for generated ops)
    std::string label;  // e.g. "MWS ch0.die0.plane0"
    uint32_t channel = 0;
    nand::CommandExt cmd;
    std::vector<DataSpec> data_in;  // one per data-in phase, in order
    bool expect_fail = false;
    bool report = true;    // print a line when it completes
    bool capture = false;  // keep the data-out bytes for the caller
    std::string tag;       // for callers that look results up
};

// What happened to an op.
struct FlashResult {
    uint64_t issue_ps = 0, done_ps = 0;
    double energy_pj = 0;
    uint8_t status = 0;
    std::string error;
    std::vector<uint8_t> out;  // data-out bytes when captured
};

}  // namespace canopy::platform
