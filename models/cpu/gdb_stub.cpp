#include "cpu/gdb_stub.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ostream>

#include "core/error.hpp"

namespace canopy::cpu {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The registers GDB sees beyond x0-x31 and pc, numbered as GDB's RISC-V target numbers them:
// a CSR is 65 + its address (org.gnu.gdb.riscv.csr), the privilege mode 65 + 4096
// (org.gnu.gdb.riscv.virtual); the SPU's segment registers follow it (org.canopy.spu).
struct CsrReg {
    const char* name;
    uint16_t addr;
};
constexpr CsrReg kCsrs[] = {{"mstatus", 0x300}, {"misa", 0x301},          {"mie", 0x304},
                            {"mtvec", 0x305},   {"mcountinhibit", 0x320}, {"mscratch", 0x340},
                            {"mepc", 0x341},    {"mcause", 0x342},        {"mtval", 0x343},
                            {"mip", 0x344},     {"mcycle", 0xB00},        {"minstret", 0xB02},
                            {"mcycleh", 0xB80}, {"minstreth", 0xB82},     {"mvendorid", 0xF11},
                            {"marchid", 0xF12}, {"mimpid", 0xF13},        {"mhartid", 0xF14}};
constexpr unsigned kFirstCsrReg = 65, kPrivReg = kFirstCsrReg + 4096, kFirstSegReg = kPrivReg + 1;
constexpr const char* kSegRegs[] = {"seg_code_base", "seg_code_size", "seg_data_base",
                                    "seg_data_size"};

uint32_t segment_reg(const Segments& s, unsigned i) {
    const uint32_t v[] = {s.code_base, s.code_size, s.data_base, s.data_size};
    return v[i];
}

// GDB's signal numbers (gdb/signals.def) for an exception cause, as a Unix host would raise.
unsigned trap_signal(uint32_t mcause) {
    switch (mcause) {
        case cause::kIllegalInstr:
            return 4;  // SIGILL
        case cause::kInstrMisaligned:
        case cause::kLoadMisaligned:
        case cause::kStoreMisaligned:
            return 10;  // SIGBUS
        case cause::kBreakpoint:
        case cause::kEcallU:
        case cause::kEcallM:
            return 5;  // SIGTRAP
        default:
            return 11;  // SIGSEGV: access faults
    }
}

std::string hex_bytes(const uint8_t* p, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += kHex[p[i] >> 4], s += kHex[p[i] & 15];
    return s;
}

// A 32-bit register as GDB wants it: target (little-endian) byte order.
std::string hex_le32(uint32_t v) {
    uint8_t b[4] = {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    return hex_bytes(b, 4);
}

int nibble(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool parse_hex(const std::string& s, uint64_t& v) {
    if (s.empty() || s.size() > 16) return false;  // more digits than 64 bits hold
    v = 0;
    for (char c : s) {
        int n = nibble(c);
        if (n < 0) return false;
        v = v << 4 | uint64_t(n);
    }
    return true;
}

bool decode_bytes(const std::string& s, std::vector<uint8_t>& out) {
    if (s.size() % 2) return false;
    out.clear();
    for (size_t i = 0; i < s.size(); i += 2) {
        int a = nibble(s[i]), b = nibble(s[i + 1]);
        if (a < 0 || b < 0) return false;
        out.push_back(uint8_t(a << 4 | b));
    }
    return true;
}

uint32_t le32(const std::vector<uint8_t>& b, size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
           uint32_t(b[at + 3]) << 24;
}

std::string hex_size(size_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "%zx", v);
    return b;
}

// `$data#cc`: a packet with its checksum.
std::string frame(const std::string& data) {
    uint8_t sum = 0;
    for (char d : data) sum = uint8_t(sum + uint8_t(d));
    return "$" + data + "#" + kHex[sum >> 4] + kHex[sum & 15];
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> v;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) v.push_back(s.substr(start, i - start)), start = i + 1;
    return v;
}

// The answer to qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH (`range` is "OFFSET,LENGTH").
std::string xfer(const std::string& range, const std::string& object) {
    auto f = split(range, ',');
    uint64_t a = 0, n = 0;
    if (f.size() != 2 || !parse_hex(f[0], a) || !parse_hex(f[1], n)) return "E01";
    return a >= object.size() ? "l" : (a + n >= object.size() ? "l" : "m") + object.substr(a, n);
}

}  // namespace

GdbStub::GdbStub(std::vector<Rv32Core*> cores, uint16_t port, std::ostream& log,
                 std::vector<std::string> names)
    : cores_(std::move(cores)), names_(std::move(names)), log_(log) {
    if (names_.size() != cores_.size()) {
        names_.clear();
        for (auto* c : cores_) names_.push_back(c->name());
    }
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 1) != 0)
        throw InputError("--gdb", std::to_string(port),
                         std::string("cannot listen on this port: ") + std::strerror(errno));
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    // Halted at reset: nothing runs until the debugger says so.
    held_.assign(cores_.size(), true);
    for (auto* c : cores_) {
        c->set_debugger_attached(true);
        c->on_stop([this](Rv32Core& core, StopReason why) { stopped(core, why); });
        c->halt();
    }
}

GdbStub::~GdbStub() {
    close_connection();
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

void GdbStub::close_connection() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    rx_.clear(), rx_at_ = 0;
    pending_.clear();
    framer_ = RspFramer();
}

void GdbStub::poll() {
    // Before the reset stop has connected a debugger there is nothing to hear.
    if (detached_ || serving_ || fd_ < 0) return;
    if (!receive(0)) {
        detach();  // the debugger went away while the program ran: let it run on
        return;
    }
    if (scan() == RspFramer::Event::Interrupt)
        for (auto* core : cores_) core->halt();
}

bool GdbStub::wait_for_interrupt() {
    while (!detached_ && fd_ >= 0 && !serving_) {
        if (!receive(-1)) {
            detach();
            return false;
        }
        if (scan() == RspFramer::Event::Interrupt) {
            for (auto* core : cores_) core->halt();
            return true;
        }
    }
    return false;
}

void GdbStub::end(int status) {
    if (detached_ || fd_ < 0) return;
    char reply[8];
    std::snprintf(reply, sizeof reply, "W%02x", unsigned(status) & 0xFF);
    send_packet(reply);
    close_connection();
    detached_ = true;
}

// One debugger at a time: a second is told so and let go, the first keeps its session.
void GdbStub::refuse_newcomer() {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    const std::string no = frame("E.canopy: another debugger is attached to this target");
    ::send(fd, no.data(), no.size(), MSG_NOSIGNAL);
    ::close(fd);
    log_ << "canopy: refused a second GDB connection: one debugger at a time" << std::endl;
}

// Waits up to `timeout_ms` (-1: for ever) for bytes from the debugger and appends them to rx_;
// refuses any other debugger meanwhile. False when the connection closed or broke.
bool GdbStub::receive(int timeout_ms) {
    for (;;) {
        pollfd p[2] = {{fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
        const int n = ::poll(p, 2, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n == 0;
        if (p[1].revents & POLLIN) refuse_newcomer();
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[65536];
            const ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
            if (r <= 0) return false;
            if (rx_at_ == rx_.size()) rx_.clear(), rx_at_ = 0;
            rx_.append(buf, size_t(r));
            return true;
        }
        if (!(p[1].revents & POLLIN)) return true;
    }
}

// Frames the received bytes until an event: a packet goes to pending_ (answered with '+'), a
// bad checksum is answered with '-', an oversized packet ends the connection.
RspFramer::Event GdbStub::scan() {
    while (rx_at_ < rx_.size()) {
        RspFramer::Event e;
        rx_at_ += framer_.feed(rx_.data() + rx_at_, rx_.size() - rx_at_, e);
        switch (e) {
            case RspFramer::Event::Packet:
                if (ack_) ::send(fd_, "+", 1, MSG_NOSIGNAL);
                pending_.push_back(framer_.packet());
                return e;
            case RspFramer::Event::BadChecksum:
                if (ack_) ::send(fd_, "-", 1, MSG_NOSIGNAL);
                break;
            case RspFramer::Event::TooLong:
                log_ << "canopy: GDB sent a packet longer than the " << RspFramer::kMaxPacketBytes
                     << " bytes the stub accepts (PacketSize); connection closed" << std::endl;
                close_connection();
                return e;
            case RspFramer::Event::Interrupt:
                return e;
            case RspFramer::Event::None:
                break;
        }
    }
    return RspFramer::Event::None;
}

void GdbStub::stopped(Rv32Core& core, StopReason why) {
    if (detached_ || serving_) return;
    size_t index = 0;
    while (index < cores_.size() && cores_[index] != &core) ++index;
    // A core the debugger keeps stopped (at reset, or not named by a vCont) parks without a
    // word: GDB already counts it stopped. The reset stop itself is told, to the debugger that
    // connects.
    if (why == StopReason::Halted && fd_ >= 0 && index < held_.size() && held_[index]) return;
    g_thread_ = c_thread_ = stopped_core_ = index;
    if (fd_ < 0) {  // the first stop (reset) waits for the debugger to connect
        // Said only now, with the machine built (and its gdbinit written): a script that reads
        // the port from this line may start GDB at once.
        if (before_waiting_) before_waiting_();
        log_ << "canopy: GDB stub listening on localhost:" << port_
             << "; cores halted at reset, waiting for GDB" << std::endl;
        fd_ = ::accept(listen_fd_, nullptr, nullptr);
        int one = 1;
        if (fd_ >= 0) ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    // While this core's thread serves the debugger no other process runs: all-stop for free.
    serve(stop_reply(index, why));
}

std::string GdbStub::stop_reply(size_t core, StopReason why) const {
    const Rv32Core& c = *cores_[core];
    char buf[64];
    const unsigned tid = unsigned(core + 1);
    switch (why) {
        case StopReason::Exit:
            std::snprintf(buf, sizeof buf, "W%02x", c.exit_code() & 0xFF);
            break;
        case StopReason::Breakpoint:
            std::snprintf(buf, sizeof buf, "T05thread:%x;swbreak:;", tid);
            break;
        case StopReason::Watchpoint:
            std::snprintf(buf, sizeof buf, "T05thread:%x;watch:%x;", tid, c.watch_hit_address());
            break;
        case StopReason::Halted:
            std::snprintf(buf, sizeof buf, "T02thread:%x;", tid);
            break;
        case StopReason::TrapLoop:  // the signal a host would raise for that fault
            std::snprintf(buf, sizeof buf, "T%02xthread:%x;", trap_signal(c.csr(0x342)), tid);
            break;
        default:
            std::snprintf(buf, sizeof buf, "T05thread:%x;", tid);
    }
    return buf;
}

void GdbStub::serve(const std::string& reply_to_stop) {
    serving_ = true;
    last_stop_ = reply_to_stop;
    // A stop that ends a 'c' or 's' is reported at once; the reset stop is asked for with '?'.
    if (resumed_) send_packet(reply_to_stop), resumed_ = false;
    for (;;) {
        std::string p = read_packet();
        if (fd_ < 0) {  // the debugger went away: let the program run on
            detach();
            break;
        }
        std::string reply;
        if (!handle(p, reply)) break;
        send_packet(reply);
        if (no_ack_next_) ack_ = false, no_ack_next_ = false;  // after GDB acked the OK
    }
    serving_ = false;
}

// vCont;ACTION[:THREAD];...: the first action that names a thread, or has none, applies to
// it (GDB's rule); a thread no action names stays stopped. At most one core steps.
bool GdbStub::vcont(const std::string& actions, std::string& reply) {
    std::vector<char> what(cores_.size(), 0);
    for (const std::string& a : split(actions, ';')) {
        if (a.empty()) return reply = "E01", true;
        const char kind = a[0] == 'C' ? 'c' : a[0] == 'S' ? 's' : a[0];
        if (kind != 'c' && kind != 's') return reply = "E01", true;
        const auto colon = a.find(':');
        if (colon == std::string::npos) {
            for (char& w : what)
                if (!w) w = kind;
            continue;
        }
        const std::string tid = a.substr(colon + 1);
        if (tid == "-1" || tid == "0") {
            for (char& w : what)
                if (!w) w = kind;
            continue;
        }
        const size_t t = thread_index(tid);
        if (t == SIZE_MAX) return reply = "E01", true;
        if (!what[t]) what[t] = kind;
    }
    if (std::count(what.begin(), what.end(), 's') > 1) return reply = "E01", true;
    if (std::count(what.begin(), what.end(), 0) == long(what.size())) return reply = "E01", true;
    for (size_t i = 0; i < cores_.size(); ++i) {
        held_[i] = !what[i];
        if (what[i] == 'c') cores_[i]->resume();
        if (what[i] == 's') cores_[i]->step(), c_thread_ = g_thread_ = i;
        if (!what[i]) cores_[i]->halt();  // scheduler locking: it stops, silently (stopped())
    }
    resumed_ = true;
    return false;
}

void GdbStub::resume_all() {
    held_.assign(cores_.size(), false);
    for (auto* c : cores_) c->resume();
}

void GdbStub::detach() {
    for (const auto& p : points_)
        for (auto* c : cores_) {
            if (p.type == '0' || p.type == '1')
                c->remove_breakpoint(p.addr);
            else
                c->remove_watchpoint(p.addr, p.len, Rv32Core::Watch(p.type - '1'));
        }
    points_.clear();
    for (auto* c : cores_) c->set_debugger_attached(false);
    detached_ = true;
    resume_all();
}

size_t GdbStub::thread_index(const std::string& id) const {
    uint64_t v = 0;
    if (id == "-1" || id == "0" || !parse_hex(id, v) || v == 0 || v > cores_.size())
        return SIZE_MAX;
    return size_t(v - 1);
}

std::string GdbStub::read_registers(Rv32Core& c) const {
    std::string s;
    for (unsigned i = 0; i < 32; ++i) s += hex_le32(c.reg(i));
    return s + hex_le32(c.pc());
}

// What `info threads` shows beside a core's name: why it stopped, or what it was doing when
// another core stopped the platform.
std::string GdbStub::thread_state(size_t i) const {
    const Rv32Core& c = *cores_[i];
    std::string s =
        names_[i] + ", " + (c.privilege() == Privilege::User ? "user" : "machine") + " mode, ";
    if (c.exited()) return s + "exited";
    if (i == stopped_core_) {
        switch (c.stop_reason()) {
            case StopReason::Breakpoint:
                return s + "at a breakpoint";
            case StopReason::Watchpoint:
                return s + "at a watchpoint";
            case StopReason::Step:
                return s + "stepped";
            case StopReason::TrapLoop:
                return s + "in a trap loop";
            default:
                return s + "stopped";
        }
    }
    if (held_[i]) return s + "stopped";
    return s + (c.sleeping() ? "waiting in wfi" : "running");
}

std::string GdbStub::threads_xml() const {
    std::string x = "<?xml version=\"1.0\"?><threads>";
    for (size_t i = 0; i < cores_.size(); ++i)
        x += "<thread id=\"" + hex_size(i + 1) + "\" core=\"" + std::to_string(i) + "\" name=\"" +
             names_[i] + "\">" + thread_state(i) + "</thread>";
    return x + "</threads>";
}

std::string GdbStub::target_xml() const {
    static const char* names[] = {"zero", "ra", "sp",  "gp",  "tp", "t0", "t1", "t2",
                                  "fp",   "s1", "a0",  "a1",  "a2", "a3", "a4", "a5",
                                  "a6",   "a7", "s2",  "s3",  "s4", "s5", "s6", "s7",
                                  "s8",   "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
    std::string x =
        "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\"><target>"
        "<architecture>riscv:rv32</architecture>"
        // Bare metal: without it Debian's GDB takes the host's GNU/Linux ABI, which steps by
        // planting breakpoints where it guesses the next pc is (wrong after an mret).
        "<osabi>none</osabi><feature name=\"org.gnu.gdb.riscv.cpu\">";
    for (int i = 0; i < 32; ++i)
        x += std::string("<reg name=\"") + names[i] + "\" bitsize=\"32\" regnum=\"" +
             std::to_string(i) + "\" type=\"" +
             (i == 1 || i == 8 ? "code_ptr\""
              : i == 2         ? "data_ptr\""
                               : "int\"") +
             "/>";
    x += "<reg name=\"pc\" bitsize=\"32\" regnum=\"32\" type=\"code_ptr\"/></feature>";
    auto reg = [&](const std::string& name, unsigned regnum) {
        x += "<reg name=\"" + name + "\" bitsize=\"32\" regnum=\"" + std::to_string(regnum) +
             "\" type=\"int\" group=\"system\"/>";
    };
    x += "<feature name=\"org.gnu.gdb.riscv.csr\">";
    for (const CsrReg& c : kCsrs) reg(c.name, kFirstCsrReg + c.addr);
    x += "</feature><feature name=\"org.gnu.gdb.riscv.virtual\">";
    reg("priv", kPrivReg);
    // The segments a user-mode app runs in (Willow 3.1), set through the SPU's control
    // registers: read-only here.
    x += "</feature><feature name=\"org.canopy.spu\">";
    for (unsigned i = 0; i < 4; ++i) reg(kSegRegs[i], kFirstSegReg + i);
    return x + "</feature></target>";
}

// Answers one packet in `reply`; returns false when the cores are to run (c, s, D, k).
bool GdbStub::handle(const std::string& p, std::string& reply) {
    reply.clear();
    if (p.empty()) return true;
    Rv32Core& g = *cores_[g_thread_];
    uint64_t a = 0, n = 0;
    switch (p[0]) {
        case '?':
            reply = last_stop_;
            return true;
        case 'g':
            reply = read_registers(g);
            return true;
        case 'G': {
            std::vector<uint8_t> b;
            if (!decode_bytes(p.substr(1), b) || b.size() < 33 * 4) return reply = "E01", true;
            for (unsigned i = 1; i < 32; ++i) g.set_reg(i, le32(b, i * 4));
            g.set_pc(le32(b, 32 * 4));
            reply = "OK";
            return true;
        }
        case 'p':
            if (!parse_hex(p.substr(1), n)) return reply = "E01", true;
            if (n < 32)
                reply = hex_le32(g.reg(unsigned(n)));
            else if (n == 32)
                reply = hex_le32(g.pc());
            else if (n >= kFirstCsrReg && n < kPrivReg)
                reply = hex_le32(g.csr(uint16_t(n - kFirstCsrReg)));
            else if (n == kPrivReg)
                reply = hex_le32(uint32_t(g.privilege()));
            else if (n >= kFirstSegReg && n < kFirstSegReg + 4)
                reply = hex_le32(segment_reg(g.segments(), unsigned(n - kFirstSegReg)));
            else
                reply = "E01";
            return true;
        case 'P': {
            auto eq = p.find('=');
            std::vector<uint8_t> b;
            if (eq == std::string::npos || !parse_hex(p.substr(1, eq - 1), n) ||
                !decode_bytes(p.substr(eq + 1), b) || b.size() != 4)
                return reply = "E01", true;
            const uint32_t v = le32(b, 0);
            if (n < 32)
                g.set_reg(unsigned(n), v);
            else if (n == 32)
                g.set_pc(v);
            else if (n >= kFirstCsrReg && n < kPrivReg) {
                if (!g.debug_set_csr(uint16_t(n - kFirstCsrReg), v)) return reply = "E01", true;
            } else if (n == kPrivReg && (v == 0 || v == 3)) {
                g.debug_set_privilege(Privilege(v));  // user or machine: the SPU has no other
            } else
                return reply = "E01", true;
            reply = "OK";
            return true;
        }
        case 'm': {
            auto f = split(p.substr(1), ',');
            if (f.size() != 2 || !parse_hex(f[0], a) || !parse_hex(f[1], n) || n > 0x1000)
                return reply = "E01", true;
            std::vector<uint8_t> b(n);
            reply =
                g.debug_read(uint32_t(a), b.data(), uint32_t(n)) ? hex_bytes(b.data(), n) : "E14";
            return true;
        }
        case 'M': {
            auto colon = p.find(':');
            auto f = split(p.substr(1, colon - 1), ',');
            std::vector<uint8_t> b;
            if (colon == std::string::npos || f.size() != 2 || !parse_hex(f[0], a) ||
                !parse_hex(f[1], n) || !decode_bytes(p.substr(colon + 1), b) || b.size() != n)
                return reply = "E01", true;
            reply = g.debug_write(uint32_t(a), b.data(), uint32_t(n)) ? "OK" : "E14";
            return true;
        }
        case 'Z':
        case 'z': {
            auto f = split(p.substr(1), ',');
            if (f.size() < 3 || f[0].size() != 1 || f[0][0] < '0' || f[0][0] > '4' ||
                !parse_hex(f[1], a) || !parse_hex(f[2], n))
                return reply = "E01", true;
            Point pt{f[0][0], uint32_t(a), uint32_t(n)};
            const bool add = p[0] == 'Z';
            for (auto* c : cores_) {
                if (pt.type <= '1')
                    add ? c->add_breakpoint(pt.addr) : c->remove_breakpoint(pt.addr);
                else {
                    auto kind = Rv32Core::Watch(pt.type - '1');  // 2 write, 3 read, 4 access
                    add ? c->add_watchpoint(pt.addr, pt.len, kind)
                        : c->remove_watchpoint(pt.addr, pt.len, kind);
                }
            }
            if (add)
                points_.push_back(pt);
            else
                for (auto it = points_.begin(); it != points_.end(); ++it)
                    if (*it == pt) {
                        points_.erase(it);
                        break;
                    }
            reply = "OK";
            return true;
        }
        case 'H': {
            if (p.size() < 2) return reply = "E01", true;
            size_t t = thread_index(p.substr(2));
            if (t != SIZE_MAX) (p[1] == 'g' ? g_thread_ : c_thread_) = t;
            reply = "OK";
            return true;
        }
        case 'T':
            reply = thread_index(p.substr(1)) != SIZE_MAX ? "OK" : "E01";
            return true;
        case 'c':
        case 's': {
            Rv32Core& c = *cores_[c_thread_];
            if (p.size() > 1 && parse_hex(p.substr(1), a)) c.set_pc(uint32_t(a));
            resume_all();
            if (p[0] == 's') c.step();
            resumed_ = true;
            return false;
        }
        case 'C':  // continue or step with a signal: there are no signals to deliver
        case 'S': {
            auto semi = p.find(';');
            return handle(std::string(1, char(p[0] - 'C' + 'c')) +
                              (semi == std::string::npos ? "" : p.substr(semi + 1)),
                          reply);
        }
        case 'v':
            if (p == "vCont?") {
                reply = "vCont;c;C;s;S";  // GDB then steps here, never by breakpoints of its own
                return true;
            }
            if (p.rfind("vCont;", 0) == 0) return vcont(p.substr(6), reply);
            return true;  // vMustReplyEmpty, vFile...: unsupported
        case 'D':
            send_packet("OK");
            close_connection();
            detach();
            return false;
        case 'k':
            killed_ = true;
            close_connection();
            detach();
            sc_core::sc_stop();
            return false;
        case 'q':
            if (p.rfind("qSupported", 0) == 0)
                reply = "PacketSize=" + hex_size(RspFramer::kMaxPacketBytes) +
                        ";vContSupported+;QStartNoAckMode+;swbreak+;hwbreak+;qXfer:features:read+;"
                        "qXfer:threads:read+";
            else if (p == "qfThreadInfo") {
                reply = "m";
                for (size_t i = 0; i < cores_.size(); ++i) {
                    char b[24];
                    std::snprintf(b, sizeof b, "%s%zx", i ? "," : "", i + 1);
                    reply += b;
                }
            } else if (p == "qsThreadInfo")
                reply = "l";
            else if (p == "qC") {
                char b[24];
                std::snprintf(b, sizeof b, "QC%zx", g_thread_ + 1);
                reply = b;
            } else if (p == "qAttached")
                reply = "1";
            else if (p.rfind("qThreadExtraInfo,", 0) == 0) {
                size_t t = thread_index(p.substr(17));
                std::string state = t == SIZE_MAX ? "?" : thread_state(t);
                reply = hex_bytes(reinterpret_cast<const uint8_t*>(state.data()), state.size());
            } else if (p.rfind("qXfer:features:read:target.xml:", 0) == 0) {
                reply = xfer(p.substr(31), target_xml());
            } else if (p.rfind("qXfer:threads:read::", 0) == 0) {
                reply = xfer(p.substr(20), threads_xml());
            }
            return true;
        case 'Q':
            if (p == "QStartNoAckMode") reply = "OK", no_ack_next_ = true;
            return true;
        default:
            return true;  // unsupported: the empty reply tells GDB so
    }
}

std::string GdbStub::read_packet() {
    while (fd_ >= 0) {
        if (!pending_.empty()) {
            std::string p = std::move(pending_.front());
            pending_.pop_front();
            return p;
        }
        scan();  // a stray interrupt byte while stopped means nothing
        if (pending_.empty() && fd_ >= 0 && rx_at_ == rx_.size() && !receive(-1))
            close_connection();
    }
    return {};
}

void GdbStub::send_packet(const std::string& data) {
    if (fd_ < 0) return;
    const std::string pkt = frame(data);
    for (int tries = 0; tries < 3; ++tries) {
        if (::send(fd_, pkt.data(), pkt.size(), MSG_NOSIGNAL) != ssize_t(pkt.size())) {
            close_connection();
            return;
        }
        if (!ack_) return;
        while (rx_at_ == rx_.size())
            if (!receive(-1)) {
                close_connection();
                return;
            }
        const char c = rx_[rx_at_];
        if (c == '+' || c == '-') ++rx_at_;
        if (c != '-') return;  // '+', or GDB went on without acknowledging
    }
}

}  // namespace canopy::cpu
