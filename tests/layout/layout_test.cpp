// The house rules of the source tree (README "Layout"): every include points down the layers
//   app -> experiments, scenarios -> platform -> sw/host -> models (ssd -> cpu, link, nand -> core)
// an experiment uses the machine and the shared experiment code, never another experiment; each
// experiment of `canopy exp` lives in experiments/<its command name>.cpp; no model source file is
// longer than 800 lines; every folder of a layer says in a README what lives there.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/registry.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = CANOPY_SOURCE_DIR;

// Each folder and the folders its files may include (besides its own). Models are included as
// "part/file.hpp" (models/ is on the include path), everything else by its path from the root.
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"include/canopy", {}},  // the public interfaces: C, on their own
    {"models/core", {}},
    {"models/nand", {"models/core"}},
    {"models/cpu", {"models/core"}},
    {"models/link", {"models/core"}},
    {"models/host", {"models/core"}},
    {"models/ssd", {"models/core", "models/cpu", "models/link", "models/nand"}},
    {"sw/host",
     {"models/core", "models/cpu", "models/host", "models/link", "models/nand", "models/ssd",
      "sw/firmware"}},
    {"platform",
     {"models/core", "models/cpu", "models/host", "models/link", "models/nand", "models/ssd",
      "sw/host", "sw/firmware"}},
    {"experiments",
     {"models/core", "models/cpu", "models/host", "models/link", "models/nand", "models/ssd",
      "sw/host", "sw/firmware", "platform"}},
    {"scenarios",
     {"models/core", "models/cpu", "models/host", "models/link", "models/nand", "models/ssd",
      "sw/host", "sw/firmware", "platform", "include/canopy"}},
    {"app",
     {"models/core", "models/cpu", "models/host", "models/link", "models/nand", "models/ssd",
      "sw/host", "sw/firmware", "platform", "experiments", "scenarios", "include/canopy"}},
};

// The folder an include names, seen from `folder`; empty for a file of the folder itself.
std::string folder_of(const std::string& inc, const std::string& folder) {
    for (const char* part : {"core", "nand", "cpu", "link", "host", "ssd"})
        if (inc.rfind(std::string(part) + "/", 0) == 0) return std::string("models/") + part;
    if (inc.rfind("canopy/", 0) == 0) return "include/canopy";  // <canopy/...> as users write it
    for (const char* layer :
         {"sw/host", "sw/firmware", "platform", "experiments", "scenarios", "app"})
        if (inc.rfind(std::string(layer) + "/", 0) == 0) return layer;
    if (inc.find('/') == std::string::npos) return folder;
    return "?";  // a relative path up the tree: never allowed
}

struct Source {
    fs::path path;  // from the root
    std::string folder;
};

std::vector<Source> sources() {
    std::vector<Source> out;
    for (const auto& [folder, allowed] : kMayInclude)
        for (const auto& e : fs::directory_iterator(kRoot / folder)) {
            const std::string ext = e.path().extension().string();
            if (ext == ".cpp" || ext == ".hpp" || ext == ".h")
                out.push_back({fs::relative(e.path(), kRoot), folder});
        }
    return out;
}

std::vector<std::string> includes(const fs::path& file) {
    std::ifstream in(kRoot / file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    static const std::regex re(R"re(^\s*#\s*include\s+"([^"]+)")re", std::regex::multiline);
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1]);
    return out;
}

std::set<std::string> experiment_names() {
    std::set<std::string> names;
    for (const auto& e : canopy::experiments::experiments()) names.insert(e.name);
    return names;
}

}  // namespace

TEST(Layout, IncludesPointDownTheLayers) {
    const auto all = sources();
    ASSERT_GT(all.size(), 100u);  // the walk found the tree
    for (const Source& s : all)
        for (const std::string& inc : includes(s.path)) {
            const std::string to = folder_of(inc, s.folder);
            if (to == s.folder) continue;
            EXPECT_TRUE(kMayInclude.at(s.folder).count(to))
                << s.path.string() << " includes \"" << inc << "\" (" << to << "): " << s.folder
                << " may not include it";
        }
}

// experiments/<name>.cpp may include the shared experiment code and its own header only.
TEST(Layout, AnExperimentNeverUsesAnother) {
    const auto names = experiment_names();
    for (const Source& s : sources()) {
        if (s.folder != "experiments") continue;
        const std::string stem = s.path.stem().string();
        for (const std::string& inc : includes(s.path)) {
            const fs::path p(inc);
            if (p.parent_path() != "experiments") continue;
            const std::string other = p.stem().string();
            if (names.count(other)) {
                EXPECT_EQ(other, stem) << s.path.string() << " uses the experiment " << other;
            }
        }
    }
}

TEST(Layout, EachExperimentIsFoundFromItsCommandName) {
    const auto names = experiment_names();
    ASSERT_GE(names.size(), 13u);
    for (const std::string& name : names)
        EXPECT_TRUE(fs::is_regular_file(kRoot / "experiments" / (name + ".cpp")))
            << "canopy exp " << name << " has no experiments/" << name << ".cpp";
    // And the other way: every source there is an experiment or the code they share.
    const std::set<std::string> shared = {"experiment", "registry", "report", "isolated",
                                          "figures"};
    for (const auto& e : fs::directory_iterator(kRoot / "experiments")) {
        const std::string ext = e.path().extension().string();
        if (ext != ".cpp" && ext != ".hpp") continue;
        const std::string stem = e.path().stem().string();
        EXPECT_TRUE(names.count(stem) || shared.count(stem))
            << "experiments/" << e.path().filename().string()
            << " is neither an experiment of `canopy exp` nor code they share";
    }
}

TEST(Layout, NoModelSourceIsLongerThan800Lines) {
    for (const Source& s : sources()) {
        if (s.folder.rfind("models/", 0) != 0) continue;
        std::ifstream in(kRoot / s.path);
        size_t lines = 0;
        for (std::string line; std::getline(in, line);) ++lines;
        EXPECT_LE(lines, 800u) << s.path.string() << " has " << lines << " lines";
    }
}

TEST(Layout, EveryFolderSaysWhatLivesThere) {
    for (const auto& [folder, allowed] : kMayInclude)
        EXPECT_TRUE(fs::is_regular_file(kRoot / folder / "README.md")) << folder << "/README.md";
    for (const char* other :
         {"models", "sw/firmware", "tests", "bench", "traces", "docs", "cmake", "examples"})
        EXPECT_TRUE(fs::is_regular_file(kRoot / other / "README.md")) << other << "/README.md";
}
