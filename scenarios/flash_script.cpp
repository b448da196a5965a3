#include "scenarios/flash_script.hpp"

#include <charconv>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/user_files.hpp"
#include "nand/address.hpp"
#include "nand/sequence.hpp"

namespace canopy::scenarios {

using namespace platform;

namespace {

using nand::CellMode;
using nand::PageAddress;

// Far above any real script (a program line with a whole page of hex for four planes is under
// 200 KB), low enough that a wrong file is refused at once.
constexpr uint64_t kMaxScriptBytes = 64 * core::kMiB;
constexpr size_t kMaxLineBytes = 1 << 20;

const std::vector<std::string> kCommands = {
    "program", "read",  "cache-read",  "cache-read-end", "erase", "mws",  "xor",        "dout",
    "status",  "reset", "set-feature", "get-feature",    "raw",   "sync", "expect-fail"};

class LineParser {
  public:
    LineParser(const std::string& name, int line, const std::string& dir, const nand::Geometry& g)
        : name_(name), line_(line), dir_(dir), g_(g), rc_(g) {}

    [[noreturn]] void fail(const std::string& msg) const {
        throw InputError(name_, "line " + std::to_string(line_), msg);
    }

    uint64_t number(const std::string& t, const std::string& what,
                    uint64_t max = UINT64_MAX) const {
        uint64_t v = 0;
        int base = 10;
        const char* b = t.data();
        const char* e = t.data() + t.size();
        if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, b += 2;
        auto r = std::from_chars(b, e, v, base);
        if (t.empty() || r.ec != std::errc() || r.ptr != e)
            fail(what + ": '" + t + "' is not a number");
        if (v > max) fail(what + " " + t + " out of range (0.." + std::to_string(max) + ")");
        return v;
    }

    // "ch0.die1.plane0.block3.wl5", as deep as `depth` fields (2: die, 3: plane, 4: block, 5:
    // page).
    PageAddress address(const std::string& t, int depth) const {
        static const char* names[] = {"ch", "die", "plane", "block", "wl"};
        const uint64_t limits[] = {g_.channels, g_.dies_per_channel, g_.planes_per_die,
                                   g_.blocks_per_plane, g_.wordlines_per_block};
        static const char* forms[] = {"",
                                      "",
                                      "chC.dieD",
                                      "chC.dieD.planeP",
                                      "chC.dieD.planeP.blockB",
                                      "chC.dieD.planeP.blockB.wlW"};
        uint32_t f[5] = {0, 0, 0, 0, 0};
        std::stringstream ss(t);
        std::string part;
        int i = 0;
        while (std::getline(ss, part, '.')) {
            if (i >= depth)
                fail("address '" + t + "' has too many fields; expected " + forms[depth]);
            std::string n = names[i];
            if (part.compare(0, n.size(), n) != 0)
                fail("address '" + t + "': expected '" + n + "' in field " + std::to_string(i + 1) +
                     " (form " + forms[depth] + ")");
            uint64_t v = number(part.substr(n.size()), std::string("address ") + n);
            if (v >= limits[i])
                fail("address '" + t + "': " + n + " " + std::to_string(v) + " out of range (0.." +
                     std::to_string(limits[i] - 1) + ")");
            f[i++] = uint32_t(v);
        }
        if (i != depth) fail("address '" + t + "' is incomplete; expected " + forms[depth]);
        return PageAddress{f[0], f[1], f[2], f[3], f[4]};
    }

    DataSpec data_spec(std::string t) const {
        DataSpec d;
        if (!t.empty() && t[0] == '~') d.invert = true, t = t.substr(1);
        auto colon = t.find(':');
        std::string kind = t.substr(0, colon),
                    arg = colon == std::string::npos ? "" : t.substr(colon + 1);
        if (kind == "hex") {
            d.kind = DataSpec::Hex;
            if (arg.empty() || arg.size() % 2) fail("data=hex: needs an even number of hex digits");
            if (arg.size() / 2 > g_.page_total_bytes())
                fail("data=hex: " + std::to_string(arg.size() / 2) + " bytes, more than a page (" +
                     std::to_string(g_.page_total_bytes()) + ")");
            for (size_t i = 0; i < arg.size(); i += 2)
                d.bytes.push_back(uint8_t(number("0x" + arg.substr(i, 2), "hex byte")));
        } else if (kind == "random") {
            d.kind = DataSpec::Random;
            auto c2 = arg.find(':');
            d.seed = number(arg.substr(0, c2), "random seed");
            if (c2 != std::string::npos) {
                std::string ds = arg.substr(c2 + 1);
                char* end = nullptr;
                d.density = std::strtod(ds.c_str(), &end);
                if (ds.empty() || *end || !(d.density >= 0 && d.density <= 1))
                    fail("random density '" + ds + "' must be a number in [0, 1]");
            }
        } else if (kind == "fill") {
            d.kind = DataSpec::Fill;
            d.bytes.push_back(
                uint8_t(number(arg.rfind("0x", 0) == 0 ? arg : "0x" + arg, "fill byte", 255)));
        } else if (kind == "file") {
            d.kind = DataSpec::File;
            std::string path =
                !arg.empty() && arg[0] != '/' && !dir_.empty() ? dir_ + "/" + arg : arg;
            std::string bytes;
            try {
                bytes = core::read_input_file(path, g_.page_total_bytes(), "a page's data");
            } catch (const InputError& e) {  // said at the script's line
                fail(std::string("data file ") + e.what());
            }
            d.bytes.assign(bytes.begin(), bytes.end());
        } else {
            fail("data='" + t +
                 "': expected hex:BYTES, random:SEED[:DENSITY], fill:XX or file:PATH");
        }
        return d;
    }

    uint64_t wordline_list(const std::string& list, const std::string& what) const {
        if (list == "all")
            return g_.wordlines_per_block >= 64 ? ~0ull : (1ull << g_.wordlines_per_block) - 1;
        uint64_t pbm = 0;
        std::stringstream ss(list);
        std::string item;
        while (std::getline(ss, item, ',')) {
            auto dash = item.find('-');
            uint64_t lo = number(item.substr(0, dash), what, g_.wordlines_per_block - 1);
            uint64_t hi = dash == std::string::npos
                              ? lo
                              : number(item.substr(dash + 1), what, g_.wordlines_per_block - 1);
            if (hi < lo) fail(what + ": range " + item + " is backwards");
            for (uint64_t w = lo; w <= hi; ++w) pbm |= 1ull << w;
        }
        if (!pbm) fail(what + ": no wordlines");
        return pbm;
    }

    void op(const std::vector<std::string>& tok, size_t at, FlashOp& o) {
        if (at >= tok.size()) fail("expect-fail needs a command after it");
        const std::string& c = tok[at];
        auto need = [&](size_t n, const char* usage) {
            if (tok.size() < at + 1 + n) fail(c + ": usage: " + usage);
        };
        auto no_more = [&](size_t n) {  // a command of n arguments
            if (tok.size() > at + 1 + n) fail(c + ": unexpected '" + tok[at + 1 + n] + "'");
        };
        auto set_die = [&](const PageAddress& a) { o.channel = a.channel; };
        nand::CommandExt& x = o.cmd;
        std::string where;
        if (c == "program") {
            need(1, "program ADDR [data=SPEC] [ADDR [data=SPEC]] [mode=slc|mlc|tlc|esp] [rand]");
            std::vector<PageAddress> planes;
            CellMode mode = CellMode::Tlc;
            bool rand = false;
            for (size_t i = at + 1; i < tok.size(); ++i) {
                const std::string& t = tok[i];
                if (t.rfind("data=", 0) == 0) {
                    if (planes.size() != o.data_in.size() + 1)
                        fail("data= must follow the address it is for");
                    o.data_in.push_back(data_spec(t.substr(5)));
                } else if (t.rfind("mode=", 0) == 0) {
                    std::string m = t.substr(5);
                    mode = m == "slc"   ? CellMode::Slc
                           : m == "mlc" ? CellMode::Mlc
                           : m == "tlc" ? CellMode::Tlc
                           : m == "esp" ? CellMode::Esp
                                        : (fail("mode '" + m + "': expected slc, mlc, tlc or esp"),
                                           CellMode::Tlc);
                } else if (t == "rand") {
                    rand = true;
                } else {
                    if (planes.size() > o.data_in.size()) o.data_in.push_back(DataSpec{});
                    planes.push_back(address(t, 5));
                }
            }
            if (planes.empty()) fail("program: no page address");
            if (planes.size() > o.data_in.size()) o.data_in.push_back(DataSpec{});
            nand::seq::program(x, rc_, planes, mode, rand, g_.page_total_bytes());
            set_die(planes[0]);
            where = nand::to_string(planes[0]);
        } else if (c == "read") {
            need(1, "read ADDR [ADDR ...]");
            std::vector<PageAddress> planes;
            for (size_t i = at + 1; i < tok.size(); ++i) planes.push_back(address(tok[i], 5));
            nand::seq::read(x, rc_, planes);
            set_die(planes[0]);
            where = nand::to_string(planes[0]);
        } else if (c == "cache-read") {
            need(1, "cache-read ADDR");
            no_more(1);
            auto a = address(tok[at + 1], 5);
            nand::seq::cache_read(x, rc_, a);
            set_die(a), where = nand::to_string(a);
        } else if (c == "erase") {
            need(1, "erase chC.dieD.planeP.blockB [...]");
            std::vector<PageAddress> planes;
            for (size_t i = at + 1; i < tok.size(); ++i) planes.push_back(address(tok[i], 4));
            nand::seq::erase(x, rc_, planes);
            set_die(planes[0]);
            where = tok[at + 1];
        } else if (c == "mws") {
            need(2, "mws chC.dieD.planeP [inv] [sinit] [cinit] [xfer] blockB:WLS [blockB:WLS ...]");
            auto a = address(tok[at + 1], 3);
            uint8_t flags = 0;
            std::vector<nand::seq::MwsOperand> blocks;
            for (size_t i = at + 2; i < tok.size(); ++i) {
                const std::string& t = tok[i];
                if (t == "inv")
                    flags |= nand::iscm::kInverse;
                else if (t == "sinit")
                    flags |= nand::iscm::kInitS;
                else if (t == "cinit")
                    flags |= nand::iscm::kInitC;
                else if (t == "xfer")
                    flags |= nand::iscm::kTransfer;
                else if (t.rfind("block", 0) == 0 && t.find(':') != std::string::npos) {
                    auto colon = t.find(':');
                    uint64_t b =
                        number(t.substr(5, colon - 5), "mws block", g_.blocks_per_plane - 1);
                    blocks.push_back(
                        {uint32_t(b), wordline_list(t.substr(colon + 1), "mws wordlines")});
                } else
                    fail("mws: '" + t +
                         "' is neither a flag (inv sinit cinit xfer) nor blockB:WORDLINES");
            }
            if (blocks.empty()) fail("mws: no blockB:WORDLINES operand");
            nand::seq::mws(x, rc_, a.die, a.plane, flags, blocks);
            set_die(a), where = tok[at + 1];
        } else if (c == "xor") {
            need(1, "xor chC.dieD.planeP");
            no_more(1);
            auto a = address(tok[at + 1], 3);
            nand::seq::xor_latches(x, rc_, a.die, a.plane);
            set_die(a), where = tok[at + 1];
        } else if (c == "dout") {
            need(1, "dout chC.dieD.planeP [col=N] [bytes=N]");
            auto a = address(tok[at + 1], 3);
            uint64_t col = 0, bytes = g_.page_total_bytes();
            bool bytes_given = false;
            for (size_t i = at + 2; i < tok.size(); ++i) {
                if (tok[i].rfind("col=", 0) == 0)
                    col = number(tok[i].substr(4), "col", g_.page_total_bytes() - 1);
                else if (tok[i].rfind("bytes=", 0) == 0)
                    bytes = number(tok[i].substr(6), "bytes", g_.page_total_bytes()),
                    bytes_given = true;
                else
                    fail("dout: unexpected '" + tok[i] + "'");
            }
            if (!bytes_given) bytes -= col;
            nand::seq::data_out(x, rc_, a.die, a.plane, uint32_t(col), uint32_t(bytes));
            set_die(a), where = tok[at + 1];
        } else if (c == "status" || c == "reset" || c == "cache-read-end") {
            need(1, (c + " chC.dieD").c_str());
            no_more(1);
            auto a = address(tok[at + 1], 2);
            if (c == "status")
                nand::seq::read_status(x, a.die);
            else if (c == "reset")
                nand::seq::reset(x, a.die);
            else
                nand::seq::cache_read_end(x, a.die);
            set_die(a), where = tok[at + 1];
        } else if (c == "set-feature" || c == "get-feature") {
            const bool set = c == "set-feature";
            need(set ? 3 : 2, set ? "set-feature chC.dieD FEATURE P1 [P2 P3 P4]"
                                  : "get-feature chC.dieD FEATURE");
            auto a = address(tok[at + 1], 2);
            uint8_t fa = uint8_t(number(tok[at + 2], "feature address", 255));
            if (set) {
                DataSpec d;
                d.kind = DataSpec::Hex;
                for (size_t i = at + 3; i < at + 7; ++i)
                    d.bytes.push_back(
                        i < tok.size() ? uint8_t(number(tok[i], "feature parameter", 255)) : 0);
                if (tok.size() > at + 7) fail("set-feature takes at most 4 parameters");
                o.data_in.push_back(d);
                nand::seq::set_features(x, a.die, fa);
            } else {
                no_more(2);
                nand::seq::get_features(x, a.die, fa);
            }
            set_die(a), where = tok[at + 1];
        } else if (c == "raw") {
            need(2, "raw chC.dieD c:XX|a:XX|di:N|do:N ...");
            auto a = address(tok[at + 1], 2);
            x.clear();
            x.chip_enable = uint8_t(a.die);
            for (size_t i = at + 2; i < tok.size(); ++i) {
                const std::string& t = tok[i];
                auto colon = t.find(':');
                std::string k = t.substr(0, colon),
                            v = colon == std::string::npos ? "" : t.substr(colon + 1);
                if (x.n_cycles >= nand::CommandExt::kMaxCycles)
                    fail("raw: more than " + std::to_string(nand::CommandExt::kMaxCycles) +
                         " cycles");
                if (k == "c")
                    x.cmd(uint8_t(number("0x" + v, "command byte", 255)));
                else if (k == "a")
                    x.addr(uint8_t(number("0x" + v, "address byte", 255)));
                else if (k == "di")
                    x.data_in(uint32_t(number(v, "data-in bytes", 1u << 20))),
                        o.data_in.push_back(DataSpec{});
                else if (k == "do")
                    x.data_out(uint32_t(number(v, "data-out bytes", 1u << 20)));
                else
                    fail("raw: '" + t + "': expected c:XX, a:XX, di:N or do:N");
            }
            set_die(a), where = tok[at + 1];
        } else {
            std::string hint = closest_match(c, kCommands);
            fail("unknown command '" + c + "'" +
                 (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
        }
        o.label = c + " " + where;
    }

  private:
    std::string name_;
    int line_;
    std::string dir_;
    const nand::Geometry& g_;
    nand::RowCodec rc_;
};

}  // namespace

std::vector<FlashOp> parse_flash_script_text(const std::string& text, const std::string& name,
                                             const std::string& dir, const nand::Geometry& g) {
    std::vector<FlashOp> ops;
    std::stringstream in(text);
    std::string raw;
    int line = 0;
    while (std::getline(in, raw)) {
        ++line;
        if (raw.size() > kMaxLineBytes)
            throw InputError(
                name, "line " + std::to_string(line),
                "longer than " + std::to_string(kMaxLineBytes) + " characters; no command is");
        if (auto hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
        std::stringstream ls(raw);
        std::vector<std::string> tok;
        for (std::string t; ls >> t;) tok.push_back(t);
        if (tok.empty()) continue;
        LineParser p(name, line, dir, g);
        FlashOp o;
        o.line = line;
        if (tok[0] == "sync") {
            if (tok.size() > 1) p.fail("sync takes no arguments");
            o.kind = FlashOp::Sync;
            o.label = "sync";
        } else {
            o.expect_fail = tok[0] == "expect-fail";
            try {
                p.op(tok, o.expect_fail ? 1 : 0, o);
            } catch (const std::length_error& e) {  // more operands than one sequence holds
                p.fail(tok[o.expect_fail ? 1 : 0] +
                       ": too many operands for one command: " + e.what());
            }
        }
        ops.push_back(std::move(o));
    }
    return ops;
}

std::vector<FlashOp> parse_flash_script(const std::string& path, const nand::Geometry& g) {
    const std::string text = core::read_input_file(path, kMaxScriptBytes, "a command script");
    auto slash = path.rfind('/');
    return parse_flash_script_text(text, path,
                                   slash == std::string::npos ? "." : path.substr(0, slash), g);
}

}  // namespace canopy::scenarios
