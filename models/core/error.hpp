// Errors about the user's input: a config file, an option, an ELF, a trace, a command script.
// Every such error names the input, the place in it and what is wrong, so `canopy` can print
// one clear line and exit with status 2 instead of a stack trace or a silent default. And the
// simulated machine's own failures, which are neither.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace canopy {

class InputError : public std::runtime_error {
  public:
    InputError(std::string input, std::string place, std::string message);

    const std::string& input() const { return input_; }
    const std::string& place() const { return place_; }
    const std::string& message() const { return message_; }

  private:
    std::string input_, place_, message_;
};

// The simulated machine failed at run time (a host program's fault, the firmware refusing what
// the platform asked): neither the user's input nor a bug of Canopy's. `canopy` says
// "simulation error" and exits with status 1.
class SimulationError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The valid name closest to `word` by edit distance, or "" when nothing is reasonably close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace canopy
