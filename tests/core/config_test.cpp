// ConfigSource (JSON file + --set overrides, flattened to dotted keys) and the Params visitor
// that binds typed, range-checked fields, plus dump_params.
#include <gtest/gtest.h>

#include "../temp_dir.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using canopy::InputError;
using canopy::core::ConfigSource;
using canopy::core::dump_params;
using canopy::core::ParamInfo;
using canopy::core::Params;

using canopy_test::read_text;
using canopy_test::TempDir;

namespace {

// A config with one field of each kind, spread over nested scopes like a real model's.
struct TestConfig {
    double t_read_slc_us = 30.0;
    double t_prog_slc_us = 200.0;
    double scale = 1.0;
    uint32_t channels = 8;
    uint64_t capacity_bytes = 1ull << 30;
    uint64_t base_addr = 0;
    bool ecc = true;
    std::string name = "default";
    std::string mode = "pcie";

    void describe(Params& p) {
        Params timing = p.scope("nand").scope("timing");
        timing("t_read_slc_us", t_read_slc_us, "us", "page read tR, SLC", 0.001, 1e6);
        timing("t_prog_slc_us", t_prog_slc_us, "us", "program tPROG, SLC", 0.001, 1e7);
        Params geometry = p.scope("nand").scope("geometry");
        geometry("channels", channels, "", "flash channels", 1, 64);
        geometry("capacity_bytes", capacity_bytes, "B", "capacity");
        geometry("base_addr", base_addr, "", "base address");
        p.scope("nand")("ecc", ecc, "ECC enabled");
        p("scale", scale, "x", "a unitless factor");
        p.scope("run")("name", name, "run name");
        p.scope("link").choice("mode", mode, {"pcie", "ccix", "ccix-esm"}, "link protocol");
    }
};

// Binds a TestConfig from `src` and rejects unused keys, like the platform does.
TestConfig bind_config(const ConfigSource& src, std::vector<ParamInfo>* infos = nullptr) {
    TestConfig c;
    Params p(&src);
    c.describe(p);
    src.check_all_used(p.keys());
    if (infos) *infos = p.infos();
    return c;
}

// Runs `f`, which must throw InputError, and returns the error.
InputError expect_input_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw a different exception: " << e.what();
        return InputError("", "", "");
    }
    ADD_FAILURE() << "did not throw";
    return InputError("", "", "");
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

InputError set_error(const std::string& assignment) {
    return expect_input_error([&] {
        ConfigSource src;
        src.set(assignment);
        bind_config(src);
    });
}

}  // namespace

// ---- Loading and flattening ----

TEST(CoreConfig, NestedJsonFlattensToDottedKeys) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({
  "nand": {"timing": {"t_read_slc_us": 25.5}, "geometry": {"channels": 4}},
  "run": {"name": "exp1"},
  "scale": 2
})");
    ConfigSource src;
    src.load_file(path);
    ASSERT_NE(src.find("nand.timing.t_read_slc_us"), nullptr);
    EXPECT_EQ(src.find("nand.timing.t_read_slc_us")->text, "25.5");
    EXPECT_EQ(src.find("nand.timing.t_read_slc_us")->origin, path);
    EXPECT_EQ(src.find("nand.geometry.channels")->text, "4");
    EXPECT_EQ(src.find("run.name")->text, "exp1");
    EXPECT_EQ(src.find("scale")->text, "2");
    EXPECT_EQ(src.find("nand"), nullptr);
    EXPECT_EQ(src.find("nand.timing"), nullptr);

    TestConfig c = bind_config(src);
    EXPECT_DOUBLE_EQ(c.t_read_slc_us, 25.5);
    EXPECT_EQ(c.channels, 4u);
    EXPECT_EQ(c.name, "exp1");
    EXPECT_DOUBLE_EQ(c.scale, 2.0);
    // Untouched fields keep their defaults.
    EXPECT_DOUBLE_EQ(c.t_prog_slc_us, 200.0);
    EXPECT_EQ(c.capacity_bytes, 1ull << 30);
    EXPECT_TRUE(c.ecc);
    EXPECT_EQ(c.mode, "pcie");
}

TEST(CoreConfig, DottedKeysInFileEqualNestedOnes) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({"nand.geometry": {"channels": 2}, "link.mode": "ccix"})");
    ConfigSource src;
    src.load_file(path);
    TestConfig c = bind_config(src);
    EXPECT_EQ(c.channels, 2u);
    EXPECT_EQ(c.mode, "ccix");
}

TEST(CoreConfig, EmptyObjectSectionSetsNothing) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({"nand": {}, "run": {"name": "x"}})");
    ConfigSource src;
    src.load_file(path);
    EXPECT_EQ(src.find("nand"), nullptr);
    TestConfig c = bind_config(src);  // no "unknown key nand"
    EXPECT_EQ(c.name, "x");
    EXPECT_EQ(c.channels, 8u);
}

TEST(CoreConfig, EmptyFileObjectIsValid) {
    TempDir dir;
    ConfigSource src;
    src.load_file(dir.write("cfg.json", "  {}\n"));
    TestConfig c = bind_config(src);
    EXPECT_EQ(c.channels, 8u);
}

TEST(CoreConfig, JsonLiteralsBecomeText) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({"nand": {"ecc": false, "timing": {"t_read_slc_us": 1e1}},
        "nand.geometry.capacity_bytes": 18446744073709551615, "scale": -0.5})");
    ConfigSource src;
    src.load_file(path);
    TestConfig c = bind_config(src);
    EXPECT_FALSE(c.ecc);
    EXPECT_DOUBLE_EQ(c.t_read_slc_us, 10.0);
    EXPECT_EQ(c.capacity_bytes, UINT64_MAX);
    EXPECT_DOUBLE_EQ(c.scale, -0.5);
}

TEST(CoreConfig, SetOverridesFileValue) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({"nand": {"geometry": {"channels": 4}}, "scale": 3})");
    ConfigSource src;
    src.load_file(path);
    src.set("nand.geometry.channels=16");
    EXPECT_EQ(src.find("nand.geometry.channels")->text, "16");
    EXPECT_EQ(src.find("nand.geometry.channels")->origin, "--set");

    std::vector<ParamInfo> infos;
    TestConfig c = bind_config(src, &infos);
    EXPECT_EQ(c.channels, 16u);
    EXPECT_DOUBLE_EQ(c.scale, 3.0);
    for (const auto& i : infos) {
        if (i.key == "nand.geometry.channels") {
            EXPECT_EQ(i.origin, "--set");
            EXPECT_EQ(i.default_text, "8");
            EXPECT_EQ(i.value_text, "16");
        } else if (i.key == "scale") {
            EXPECT_EQ(i.origin, path);
            EXPECT_EQ(i.value_text, "3");
        } else {
            EXPECT_EQ(i.origin, "default") << i.key;
            EXPECT_EQ(i.value_text, i.default_text) << i.key;
        }
    }
}

TEST(CoreConfig, SetValueMayContainEqualsAndBeEmpty) {
    ConfigSource src;
    src.set("run.name=a=b");
    EXPECT_EQ(bind_config(src).name, "a=b");
    ConfigSource src2;
    src2.set("run.name=");
    EXPECT_EQ(bind_config(src2).name, "");
}

TEST(CoreConfig, LaterSetWins) {
    ConfigSource src;
    src.set("nand.geometry.channels=2");
    src.set("nand.geometry.channels=3");
    EXPECT_EQ(bind_config(src).channels, 3u);
}

TEST(CoreConfig, ScopesNestIntoDottedKeys) {
    TestConfig c;
    Params p;
    c.describe(p);
    const std::vector<std::string> expected = {"nand.timing.t_read_slc_us",
                                               "nand.timing.t_prog_slc_us",
                                               "nand.geometry.channels",
                                               "nand.geometry.capacity_bytes",
                                               "nand.geometry.base_addr",
                                               "nand.ecc",
                                               "scale",
                                               "run.name",
                                               "link.mode"};
    EXPECT_EQ(p.keys(), expected);
    ASSERT_EQ(p.infos().size(), expected.size());
    EXPECT_EQ(p.infos()[0].type, "number");
    EXPECT_EQ(p.infos()[0].unit, "us");
    EXPECT_EQ(p.infos()[0].description, "page read tR, SLC");
    EXPECT_EQ(p.infos()[2].type, "integer");
    EXPECT_EQ(p.infos()[5].type, "bool");
    EXPECT_EQ(p.infos()[7].type, "string");
    EXPECT_TRUE(contains(p.infos()[8].type, "pcie"));
    EXPECT_TRUE(contains(p.infos()[8].type, "ccix"));
    // Without a source every value is its default.
    for (const auto& i : p.infos()) {
        EXPECT_EQ(i.origin, "default");
        EXPECT_EQ(i.value_text, i.default_text);
    }
    EXPECT_EQ(c.channels, 8u);
}

// ---- File errors ----

TEST(CoreConfig, MalformedJsonNamesFileAndLine) {
    TempDir dir;
    // Line 3 lacks the ':' after the key.
    auto path = dir.write("bad.json", "{\n  \"a\": 1,\n  \"b\" 2\n}\n");
    auto e = expect_input_error([&] { ConfigSource().load_file(path); });
    EXPECT_EQ(e.input(), path);
    EXPECT_EQ(e.place().rfind("line 3", 0), 0u) << e.place();
    EXPECT_FALSE(e.message().empty());
    EXPECT_TRUE(contains(e.what(), path));
    EXPECT_TRUE(contains(e.what(), "line 3"));
}

TEST(CoreConfig, TrailingCommaAndTruncationAreErrors) {
    TempDir dir;
    auto p1 = dir.write("comma.json", "{\n\"a\": 1,\n\n}\n");
    auto e1 = expect_input_error([&] { ConfigSource().load_file(p1); });
    EXPECT_EQ(e1.input(), p1);
    EXPECT_EQ(e1.place().rfind("line 4", 0), 0u) << e1.place();

    auto p2 = dir.write("cut.json", "{\"a\": {\"b\": 1}");
    auto e2 = expect_input_error([&] { ConfigSource().load_file(p2); });
    EXPECT_EQ(e2.input(), p2);
    EXPECT_EQ(e2.place().rfind("line 1", 0), 0u) << e2.place();

    auto p3 = dir.write("empty.json", "");
    auto e3 = expect_input_error([&] { ConfigSource().load_file(p3); });
    EXPECT_EQ(e3.input(), p3);
}

TEST(CoreConfig, ArraysAreRejectedNamingTheKey) {
    TempDir dir;
    auto path = dir.write("arr.json", R"({"nand": {"geometry": {"channels": [1, 2]}}})");
    auto e = expect_input_error([&] { ConfigSource().load_file(path); });
    EXPECT_EQ(e.input(), path);
    EXPECT_TRUE(contains(e.place(), "nand.geometry.channels")) << e.place();
    EXPECT_TRUE(contains(e.message(), "array")) << e.message();

    auto p2 = dir.write("arr2.json", R"({"list": []})");
    auto e2 = expect_input_error([&] { ConfigSource().load_file(p2); });
    EXPECT_TRUE(contains(e2.place(), "list")) << e2.place();
    EXPECT_TRUE(contains(e2.message(), "array")) << e2.message();

    auto p3 = dir.write("arr3.json", R"({"list": [{"a": 1}]})");
    auto e3 = expect_input_error([&] { ConfigSource().load_file(p3); });
    EXPECT_TRUE(contains(e3.place(), "list")) << e3.place();
}

TEST(CoreConfig, TopLevelMustBeAnObject) {
    TempDir dir;
    for (const char* text : {"[1, 2]", "[]", "42", "\"text\"", "null", "true"}) {
        auto path = dir.write("top.json", text);
        auto e = expect_input_error([&] { ConfigSource().load_file(path); });
        EXPECT_EQ(e.input(), path) << text;
        EXPECT_EQ(e.place(), "top level") << text;
        EXPECT_FALSE(e.message().empty()) << text;
    }
}

TEST(CoreConfig, DuplicateKeyInFileIsAnError) {
    TempDir dir;
    auto p1 = dir.write("dup.json", R"({"scale": 1, "scale": 2})");
    auto e1 = expect_input_error([&] { ConfigSource().load_file(p1); });
    EXPECT_EQ(e1.input(), p1);
    EXPECT_EQ(e1.place(), "key scale");
    EXPECT_TRUE(contains(e1.message(), "more than once")) << e1.message();

    // The same key spelt nested and dotted.
    auto p2 = dir.write("dup2.json", R"({"nand": {"ecc": true}, "nand.ecc": false})");
    auto e2 = expect_input_error([&] { ConfigSource().load_file(p2); });
    EXPECT_EQ(e2.place(), "key nand.ecc");

    // A failed load leaves the source as it was.
    ConfigSource src;
    src.set("scale=5");
    EXPECT_THROW(src.load_file(p1), InputError);
    EXPECT_DOUBLE_EQ(bind_config(src).scale, 5.0);
}

TEST(CoreConfig, SecondFileOverridesFirst) {
    TempDir dir;
    ConfigSource src;
    src.load_file(dir.write("a.json", R"({"scale": 1, "nand": {"ecc": false}})"));
    src.load_file(dir.write("b.json", R"({"scale": 2})"));
    TestConfig c = bind_config(src);
    EXPECT_DOUBLE_EQ(c.scale, 2.0);
    EXPECT_FALSE(c.ecc);
    EXPECT_EQ(src.find("scale")->origin, dir.file("b.json"));
}

TEST(CoreConfig, NullValueIsRejectedNamingTheKey) {
    TempDir dir;
    auto path = dir.write("null.json", R"({"nand": {"timing": {"t_read_slc_us": null}}})");
    auto e = expect_input_error([&] {
        ConfigSource src;
        src.load_file(path);
        bind_config(src);
    });
    EXPECT_EQ(e.input(), path);
    EXPECT_TRUE(contains(e.place(), "nand.timing.t_read_slc_us")) << e.place();
}

TEST(CoreConfig, UnreadableFileNamesTheFile) {
    TempDir dir;
    auto missing = dir.file("does_not_exist.json");
    auto e = expect_input_error([&] { ConfigSource().load_file(missing); });
    EXPECT_EQ(e.input(), missing);
    EXPECT_FALSE(e.message().empty());

    // A directory is not a readable config either.
    auto e2 = expect_input_error([&] { ConfigSource().load_file(dir.path().string()); });
    EXPECT_EQ(e2.input(), dir.path().string());
    EXPECT_FALSE(e2.message().empty());
}

// ---- --set errors ----

TEST(CoreConfig, SetWithoutEqualsIsAnError) {
    for (const char* bad : {"nand.geometry.channels", "=5", ""}) {
        auto e = expect_input_error([&] { ConfigSource().set(std::string(bad)); });
        EXPECT_EQ(e.input(), "--set") << bad;
        EXPECT_EQ(e.place(), bad);
        EXPECT_TRUE(contains(e.message(), "key=value")) << e.message();
    }
}

// ---- Type and range errors ----

TEST(CoreConfig, WrongTypeForNumber) {
    for (const char* v : {"abc", "", "1.5x", "inf", "nan", "1e400", "true"}) {
        auto e = set_error(std::string("nand.timing.t_read_slc_us=") + v);
        EXPECT_EQ(e.input(), "--set") << v;
        EXPECT_EQ(e.place(), "key nand.timing.t_read_slc_us") << v;
        EXPECT_TRUE(contains(e.message(), "expected a number")) << e.message();
        EXPECT_TRUE(contains(e.message(), std::string("'") + v + "'")) << e.message();
    }
}

TEST(CoreConfig, WrongTypeFromFileNamesFileAndKey) {
    TempDir dir;
    auto path = dir.write("cfg.json", R"({"nand": {"geometry": {"channels": "four"}}})");
    auto e = expect_input_error([&] {
        ConfigSource src;
        src.load_file(path);
        bind_config(src);
    });
    EXPECT_EQ(e.input(), path);
    EXPECT_EQ(e.place(), "key nand.geometry.channels");
    EXPECT_TRUE(contains(e.message(), "integer")) << e.message();
    EXPECT_TRUE(contains(e.message(), "four")) << e.message();
}

TEST(CoreConfig, WrongTypeForInteger) {
    for (const char* v : {"4.5", "abc", "", "1e3", "0x", "0xg", " 4", "4 "}) {
        auto e = set_error(std::string("nand.geometry.channels=") + v);
        EXPECT_EQ(e.input(), "--set") << v;
        EXPECT_EQ(e.place(), "key nand.geometry.channels") << v;
        EXPECT_TRUE(contains(e.message(), "integer")) << v << ": " << e.message();
    }
}

TEST(CoreConfig, WrongTypeForBool) {
    for (const char* v : {"maybe", "", "2", "TRUE?"}) {
        auto e = set_error(std::string("nand.ecc=") + v);
        EXPECT_EQ(e.input(), "--set");
        EXPECT_EQ(e.place(), "key nand.ecc");
        EXPECT_TRUE(contains(e.message(), "true or false")) << e.message();
    }
}

TEST(CoreConfig, BoolSpellings) {
    for (const char* t : {"true", "1", "on", "yes"}) {
        ConfigSource src;
        src.set("nand.ecc", "false", "cfg.json");
        src.set(std::string("nand.ecc=") + t);
        EXPECT_TRUE(bind_config(src).ecc) << t;
    }
    for (const char* f : {"false", "0", "off", "no"}) {
        ConfigSource src;
        src.set(std::string("nand.ecc=") + f);
        EXPECT_FALSE(bind_config(src).ecc) << f;
    }
}

TEST(CoreConfig, OutOfRangeNamesTheRange) {
    auto e = set_error("nand.geometry.channels=65");
    EXPECT_EQ(e.place(), "key nand.geometry.channels");
    EXPECT_TRUE(contains(e.message(), "out of range [1, 64]")) << e.message();
    EXPECT_TRUE(contains(e.message(), "65")) << e.message();

    auto e0 = set_error("nand.geometry.channels=0");
    EXPECT_TRUE(contains(e0.message(), "out of range")) << e0.message();

    auto ed = set_error("nand.timing.t_read_slc_us=0");
    EXPECT_EQ(ed.place(), "key nand.timing.t_read_slc_us");
    EXPECT_TRUE(contains(ed.message(), "out of range")) << ed.message();
    EXPECT_TRUE(contains(ed.message(), "0.001")) << ed.message();

    auto eh = set_error("nand.timing.t_read_slc_us=1000000.5");
    EXPECT_TRUE(contains(eh.message(), "out of range")) << eh.message();

    // The bounds themselves are inside the range.
    ConfigSource src;
    src.set("nand.geometry.channels=64");
    src.set("nand.timing.t_read_slc_us=0.001");
    TestConfig c = bind_config(src);
    EXPECT_EQ(c.channels, 64u);
    EXPECT_DOUBLE_EQ(c.t_read_slc_us, 0.001);
}

TEST(CoreConfig, IntegerTooLargeForField) {
    auto e32 = set_error("nand.geometry.channels=4294967296");
    EXPECT_EQ(e32.place(), "key nand.geometry.channels");
    EXPECT_TRUE(contains(e32.message(), "too large")) << e32.message();
    auto e64 = set_error("nand.geometry.capacity_bytes=18446744073709551616");
    EXPECT_EQ(e64.place(), "key nand.geometry.capacity_bytes");
    EXPECT_TRUE(contains(e64.message(), "too large")) << e64.message();
}

TEST(CoreConfig, NegativeToUnsignedIsAnError) {
    auto e = set_error("nand.geometry.capacity_bytes=-5");
    EXPECT_EQ(e.place(), "key nand.geometry.capacity_bytes");
    EXPECT_TRUE(contains(e.message(), "non-negative")) << e.message();

    TempDir dir;
    auto path = dir.write("neg.json", R"({"nand": {"geometry": {"channels": -1}}})");
    auto e2 = expect_input_error([&] {
        ConfigSource src;
        src.load_file(path);
        bind_config(src);
    });
    EXPECT_EQ(e2.input(), path);
    EXPECT_EQ(e2.place(), "key nand.geometry.channels");
    EXPECT_TRUE(contains(e2.message(), "non-negative")) << e2.message();
}

TEST(CoreConfig, HexIntegersAccepted) {
    ConfigSource src;
    src.set("nand.geometry.channels=0x10");
    src.set("nand.geometry.base_addr=0XdeadBEEF00");
    src.set("nand.geometry.capacity_bytes=0xffffffffffffffff");
    TestConfig c = bind_config(src);
    EXPECT_EQ(c.channels, 16u);
    EXPECT_EQ(c.base_addr, 0xdeadbeef00ull);
    EXPECT_EQ(c.capacity_bytes, UINT64_MAX);

    // In a file hex must be a JSON string.
    TempDir dir;
    ConfigSource f;
    f.load_file(dir.write("hex.json", R"({"nand": {"geometry": {"base_addr": "0x1000"}}})"));
    EXPECT_EQ(bind_config(f).base_addr, 0x1000u);

    // Hex values are range-checked too.
    auto e = set_error("nand.geometry.channels=0x41");
    EXPECT_TRUE(contains(e.message(), "out of range")) << e.message();
}

// ---- Unknown keys and choices ----

TEST(CoreConfig, UnknownKeySuggestsClosest) {
    TempDir dir;
    auto path = dir.write("typo.json", R"({"nand": {"timing": {"t_raed_slc_us": 20}}})");
    auto e = expect_input_error([&] {
        ConfigSource src;
        src.load_file(path);
        bind_config(src);
    });
    EXPECT_EQ(e.input(), path);
    EXPECT_EQ(e.place(), "key nand.timing.t_raed_slc_us");
    EXPECT_TRUE(contains(e.message(), "unknown")) << e.message();
    EXPECT_TRUE(contains(e.message(), "did you mean 'nand.timing.t_read_slc_us'")) << e.message();
}

TEST(CoreConfig, UnknownSetKeyNamesSetAndSuggests) {
    auto e = set_error("nand.geometry.chanels=4");
    EXPECT_EQ(e.input(), "--set");
    EXPECT_EQ(e.place(), "key nand.geometry.chanels");
    EXPECT_TRUE(contains(e.message(), "'nand.geometry.channels'")) << e.message();
}

TEST(CoreConfig, UnknownFarKeyHasNoSuggestion) {
    auto e = set_error("zz=1");
    EXPECT_EQ(e.input(), "--set");
    EXPECT_EQ(e.place(), "key zz");
    EXPECT_TRUE(contains(e.message(), "unknown")) << e.message();
    EXPECT_FALSE(contains(e.message(), "did you mean")) << e.message();
}

TEST(CoreConfig, ChoiceAcceptsListedValues) {
    for (const char* m : {"pcie", "ccix", "ccix-esm"}) {
        ConfigSource src;
        src.set(std::string("link.mode=") + m);
        EXPECT_EQ(bind_config(src).mode, m);
    }
}

TEST(CoreConfig, InvalidChoiceSuggestsClosest) {
    auto e = set_error("link.mode=ccxi");
    EXPECT_EQ(e.input(), "--set");
    EXPECT_EQ(e.place(), "key link.mode");
    EXPECT_TRUE(contains(e.message(), "one of pcie, ccix, ccix-esm")) << e.message();
    EXPECT_TRUE(contains(e.message(), "did you mean 'ccix'")) << e.message();
    EXPECT_TRUE(contains(e.message(), "'ccxi'")) << e.message();

    auto far = set_error("link.mode=infiniband");
    EXPECT_FALSE(contains(far.message(), "did you mean")) << far.message();
    EXPECT_TRUE(contains(far.message(), "pcie")) << far.message();
}

TEST(CoreConfig, WorksThroughAConstSource) {
    ConfigSource src;
    src.set("nand.geometry.channels=5");
    const ConfigSource& c = src;
    EXPECT_FALSE(c.find("nand.geometry.channels")->used);
    EXPECT_EQ(bind_config(c).channels, 5u);
    EXPECT_TRUE(c.find("nand.geometry.channels")->used);
}

// ---- dump_params ----

TEST(CoreConfig, DumpTextShowsKeysValuesUnitsAndOrigins) {
    ConfigSource src;
    src.set("nand.geometry.channels=16");
    std::vector<ParamInfo> infos;
    bind_config(src, &infos);
    std::string text = dump_params(infos, false);
    // One line per parameter.
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), long(infos.size()));
    std::istringstream lines(text);
    std::string line;
    size_t n = 0;
    while (std::getline(lines, line)) {
        const ParamInfo& i = infos[n++];
        EXPECT_EQ(line.rfind(i.key, 0), 0u) << line;
        EXPECT_TRUE(contains(line, " = " + i.value_text)) << line;
        EXPECT_TRUE(contains(line, i.description)) << line;
        if (!i.unit.empty()) {
            EXPECT_TRUE(contains(line, i.unit)) << line;
        }
        if (i.key == "nand.geometry.channels") {
            EXPECT_TRUE(contains(line, "[default 8, from --set]")) << line;
        } else {
            EXPECT_FALSE(contains(line, "[default")) << line;
        }
    }
    // Values are aligned in one column.
    EXPECT_TRUE(contains(text, "nand.timing.t_read_slc_us    = 30"));
}

TEST(CoreConfig, DumpJsonReloadsToIdenticalValues) {
    // Non-default values of every kind, including ones that are easy to get wrong: a double
    // that is not exactly representable, extremes, and a string that needs escaping.
    ConfigSource src;
    src.set("nand.timing.t_read_slc_us", "0.1", "--set");
    src.set("nand.timing.t_prog_slc_us", "1234567.890123", "--set");
    src.set("scale", "-1e-300", "--set");
    src.set("nand.geometry.channels", "0x3f", "--set");
    src.set("nand.geometry.capacity_bytes", "18446744073709551615", "--set");
    src.set("nand.ecc", "off", "--set");
    src.set("run.name", "a \"quoted\" \\ name\twith\ncontrol \x01 and \xc3\xa9", "--set");
    src.set("link.mode", "ccix-esm", "--set");
    std::vector<ParamInfo> infos;
    TestConfig a = bind_config(src, &infos);
    const std::string json = dump_params(infos, true);

    TempDir dir;
    auto path = dir.write("dump.json", json);
    ConfigSource reloaded;
    reloaded.load_file(path);
    std::vector<ParamInfo> infos2;
    TestConfig b = bind_config(reloaded, &infos2);  // every key in the dump is a known key

    EXPECT_EQ(b.t_read_slc_us, a.t_read_slc_us);
    EXPECT_EQ(b.t_prog_slc_us, a.t_prog_slc_us);
    EXPECT_EQ(b.scale, a.scale);
    EXPECT_EQ(b.channels, 63u);
    EXPECT_EQ(b.capacity_bytes, UINT64_MAX);
    EXPECT_EQ(b.base_addr, a.base_addr);
    EXPECT_FALSE(b.ecc);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.mode, "ccix-esm");
    ASSERT_EQ(infos2.size(), infos.size());
    for (size_t i = 0; i < infos.size(); ++i) {
        EXPECT_EQ(infos2[i].value_text, infos[i].value_text) << infos[i].key;
        EXPECT_EQ(infos2[i].origin, path) << infos[i].key;
    }
    // Dumping the reloaded config gives the same text.
    EXPECT_EQ(dump_params(infos2, true), json);
}

TEST(CoreConfig, DumpJsonOfDefaultsReloads) {
    TestConfig d;
    Params p;
    d.describe(p);
    std::string json = dump_params(p.infos(), true);
    TempDir dir;
    ConfigSource src;
    src.load_file(dir.write("defaults.json", json));
    TestConfig b = bind_config(src);
    EXPECT_EQ(b.t_read_slc_us, d.t_read_slc_us);
    EXPECT_EQ(b.channels, d.channels);
    EXPECT_EQ(b.capacity_bytes, d.capacity_bytes);
    EXPECT_EQ(b.ecc, d.ecc);
    EXPECT_EQ(b.name, d.name);
    EXPECT_EQ(b.mode, d.mode);
    // Nested: the dump has the same structure a user would write.
    EXPECT_TRUE(contains(json, "\"nand\": {")) << json;
    EXPECT_TRUE(contains(json, "\"timing\": {")) << json;
    EXPECT_TRUE(contains(json, "\"channels\": 8")) << json;
    EXPECT_TRUE(contains(json, "\"ecc\": true")) << json;
    EXPECT_TRUE(contains(json, "\"mode\": \"pcie\"")) << json;
}
