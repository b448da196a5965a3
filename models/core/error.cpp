#include "core/error.hpp"

#include <algorithm>

namespace canopy {

static std::string format(const std::string& input, const std::string& place,
                          const std::string& message) {
    std::string s = input;
    if (!place.empty()) s += ": " + place;
    return s + ": " + message;
}

InputError::InputError(std::string input, std::string place, std::string message)
    : std::runtime_error(format(input, place, message)),
      input_(std::move(input)),
      place_(std::move(place)),
      message_(std::move(message)) {}

static size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::string::npos;
    for (const auto& c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    // Farther than half the word away is a different word, not a typo.
    return best_d <= std::max<size_t>(2, word.size() / 2) ? best : std::string();
}

}  // namespace canopy
