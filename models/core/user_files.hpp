// Files the user names. Inputs (a config, a command script, a data file, an ELF, a block trace):
// only a regular file or a pipe, and never more than the input may sensibly hold, so that
// `--config /dev/zero` or a directory is one clear error (InputError, exit 2) instead of a read
// that exhausts memory or an empty input taken at its word. Output directories: made and tried
// before a run, so that one the run cannot write costs no simulation.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

namespace canopy::core {

inline constexpr uint64_t kMiB = 1024 * 1024;

// Throws InputError naming `path` unless it is a regular file or a pipe that can be opened for
// reading; `what` says what it should have been ("a config file").
void check_input_file(const std::string& path, const std::string& what);

// The whole file, at most `max_bytes` long; InputError when it is longer, unreadable, or not a
// regular file or a pipe.
std::string read_input_file(const std::string& path, uint64_t max_bytes, const std::string& what);

// Creates `dir` (and its parents) and checks that a file can be written in it; InputError naming
// `option` (--out) and the directory otherwise.
void prepare_output_dir(const std::string& dir, const std::string& option = "--out");

}  // namespace canopy::core
