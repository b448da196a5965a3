// A GDB remote-serial-protocol stub on a localhost TCP port: every core is a GDB thread of one
// all-stop session. The cores are halted at reset until the debugger continues; when any core
// stops (breakpoint, watchpoint, step, Ctrl-C, exit) the stub serves the debugger from inside
// that core's SystemC thread, so no other process runs and simulated time stands still until
// the debugger resumes. Works with Debian's gdb-multiarch (set architecture riscv:rv32).
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <string>
#include <vector>
#include <systemc>

#include "cpu/rsp_framing.hpp"
#include "cpu/rv32_core.hpp"

namespace canopy::cpu {

class GdbStub : public sc_core::sc_module {
public:
    // Listens on 127.0.0.1:`port` (0: any free port; see port()). Throws InputError when the
    // port cannot be opened.
    GdbStub(sc_core::sc_module_name name, std::vector<Rv32Core*> cores, uint16_t port,
            std::ostream& log);
    ~GdbStub() override;

    uint16_t port() const { return port_; }
    // The debugger ended the run with `kill` (the simulation was stopped there).
    bool killed() const { return killed_; }

private:
    void start_of_simulation() override;
    void stopped(Rv32Core& core, StopReason why);  // a core's stop callback
    void watch_for_interrupt();                    // SC_THREAD: Ctrl-C while running

    // The command loop; returns when the debugger resumes the cores.
    void serve(const std::string& stop_reply);
    bool handle(const std::string& packet, std::string& reply);  // false: resume

    std::string read_packet();  // "" when the connection closed
    void send_packet(const std::string& data);
    void close_connection();
    bool receive(int timeout_ms);
    RspFramer::Event scan();
    void refuse_newcomer();

    size_t thread_index(const std::string& id) const;  // GDB thread ids are core index + 1
    std::string stop_reply(size_t core, StopReason why) const;
    std::string read_registers(Rv32Core& c) const;
    std::string target_xml() const;

    void resume_all();
    bool vcont(const std::string& actions, std::string& reply);  // false: the cores run
    void detach();

    std::vector<Rv32Core*> cores_;
    std::ostream& log_;
    int listen_fd_ = -1, fd_ = -1;
    uint16_t port_ = 0;
    bool ack_ = true, no_ack_next_ = false, detached_ = false, serving_ = false, resumed_ = false;
    bool killed_ = false;
    RspFramer framer_;
    std::string rx_;  // bytes received, framed from rx_at_ on
    size_t rx_at_ = 0;
    std::deque<std::string> pending_;  // packets framed, not yet served
    size_t g_thread_ = 0, c_thread_ = 0;  // selected by Hg / Hc
    std::string last_stop_;               // the answer to '?'
    struct Point {
        char type;  // '0'/'1' breakpoint, '2' write, '3' read, '4' access watchpoint
        uint32_t addr, len;
        bool operator==(const Point& o) const { return type == o.type && addr == o.addr && len == o.len; }
    };
    std::vector<Point> points_;  // installed on every core; removed on detach
};

}  // namespace canopy::cpu
