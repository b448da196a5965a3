// The papers' figures of an experiment, drawn from its NAME.json by experiments/figures.py
// (matplotlib, on the system's python3; the script is built into canopy): NAME.<figure>.svg and
// .png beside the JSON; and the plots of a sweep's merged table.
#pragma once

#include <string>
#include <vector>

namespace canopy::experiments {

struct Figures {
    std::vector<std::string> files;  // written, SVG and PNG
    std::string error;               // why none were drawn ("" when they were)
};

// Runs the script on `json_path`, writing into `out_dir`. Never throws for the drawing itself:
// a missing python3 or matplotlib, or a script failure, comes back in `error`.
Figures draw_figures(const std::string& json_path, const std::string& out_dir);

// `canopy sweep --plot`: each quantity (a row id of the merged table) against the first varied
// key, a line per value of the others: OUT/sweep.<quantity>.svg and .png.
Figures draw_sweep_plots(const std::string& sweep_json, const std::string& out_dir,
                         const std::vector<std::string>& quantities);

}  // namespace canopy::experiments
