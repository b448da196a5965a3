// The forms of an experiment's result: the terminal table, CSV, JSON and SVG, histograms of
// latency as SVG, and writing an output file.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/experiment.hpp"

namespace canopy::experiments {

void print_table(const std::vector<ExpRow>& rows, std::ostream& os);
std::string to_csv(const std::vector<ExpRow>& rows);
std::string to_json(const std::vector<ExpRow>& rows);
std::string to_svg(const std::string& title, const std::vector<ExpRow>& rows);

// Histograms of latency for a plot: panels side by side, each overlaying its series (the
// Distribution's bins: lower edge, upper edge, samples) as shares of their samples on a log axis.
struct HistogramSeries {
    std::string label;
    std::vector<std::array<double, 3>> bins;  // lo, hi, count
};
struct HistogramPanel {
    std::string title;
    std::vector<HistogramSeries> series;
};
std::string histogram_svg(const std::string& title, const std::vector<HistogramPanel>& panels);

// Writes an output file; throws InputError naming the path when it cannot.
void write_output(const std::string& path, const std::string& text);

}  // namespace canopy::experiments
