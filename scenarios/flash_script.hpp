// The NAND command-script format replayed by `canopy flash --script FILE` (documented in
// traces/README.md). A script is parsed whole before anything runs; a bad line is an
// InputError naming the file and line.
#pragma once

#include <string>
#include <vector>

#include "nand/config.hpp"
#include "platform/flash_op.hpp"

namespace canopy::scenarios {

std::vector<platform::FlashOp> parse_flash_script(const std::string& path, const nand::Geometry& g);
// Parses script text; `name` is used in errors, `dir` resolves data=file: paths.
std::vector<platform::FlashOp> parse_flash_script_text(const std::string& text,
                                                       const std::string& name,
                                                       const std::string& dir,
                                                       const nand::Geometry& g);

}  // namespace canopy::scenarios
