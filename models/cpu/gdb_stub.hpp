// A GDB remote-serial-protocol stub on a localhost TCP port: every core is a GDB thread of one
// all-stop session. The cores are halted at reset until the debugger continues; when any core
// stops (breakpoint, watchpoint, step, Ctrl-C, exit) the stub serves the debugger from inside
// that core's SystemC thread, so no other process runs and simulated time stands still until
// the debugger resumes. The stub has no process of its own: whoever drives the kernel calls
// poll() between slices to hear a Ctrl-C, so a debugger that is not stopping leaves the kernel's
// schedule, and every result, as it was. Works with Debian's gdb-multiarch.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "cpu/rsp_framing.hpp"
#include "cpu/rv32_core.hpp"

namespace canopy::cpu {

class GdbStub {
  public:
    // Listens on 127.0.0.1:`port` (0: any free port; see port()) and halts the cores, which
    // must not have started. `names` names the threads (default: the cores' module names).
    // Throws InputError when the port cannot be opened.
    GdbStub(std::vector<Rv32Core*> cores, uint16_t port, std::ostream& log,
            std::vector<std::string> names = {});
    ~GdbStub();
    GdbStub(const GdbStub&) = delete;
    GdbStub& operator=(const GdbStub&) = delete;

    // Between kernel slices, never from a SystemC process: a Ctrl-C from the debugger halts
    // every core; a debugger that went away lets the program run on.
    void poll();
    // The simulation went quiet with the program unfinished (a core asleep that nothing wakes):
    // waits for the debugger's Ctrl-C (true: the cores are halted, the kernel has work again) or
    // its going away (false). False at once when no debugger is attached.
    bool wait_for_interrupt();
    // The run is over (the platform went quiet: no program exit a core saw): the debugger
    // hears that the program exited with `status`, and the connection closes.
    void end(int status);
    // Called once, with the machine built, just before the stub says where it listens and waits
    // for the debugger (the platform writes its gdbinit there).
    void before_waiting(std::function<void()> f) { before_waiting_ = std::move(f); }

    uint16_t port() const { return port_; }
    // The debugger ended the run with `kill` (the simulation was stopped there).
    bool killed() const { return killed_; }

  private:
    void stopped(Rv32Core& core, StopReason why);  // a core's stop callback

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
    std::string thread_state(size_t core) const;  // for info threads
    std::string threads_xml() const;              // qXfer:threads:read

    void resume_all();
    bool vcont(const std::string& actions, std::string& reply);  // false: the cores run
    void detach();

    std::vector<Rv32Core*> cores_;
    std::vector<std::string> names_;
    // Cores the debugger keeps stopped while others run (reset; threads a vCont does not name).
    std::vector<bool> held_;
    std::function<void()> before_waiting_;
    std::ostream& log_;
    int listen_fd_ = -1, fd_ = -1;
    uint16_t port_ = 0;
    bool ack_ = true, no_ack_next_ = false, detached_ = false, serving_ = false, resumed_ = false;
    bool killed_ = false;
    RspFramer framer_;
    std::string rx_;  // bytes received, framed from rx_at_ on
    size_t rx_at_ = 0;
    std::deque<std::string> pending_;     // packets framed, not yet served
    size_t g_thread_ = 0, c_thread_ = 0;  // selected by Hg / Hc
    size_t stopped_core_ = 0;             // the core whose stop is being served
    std::string last_stop_;               // the answer to '?'
    struct Point {
        char type;  // '0'/'1' breakpoint, '2' write, '3' read, '4' access watchpoint
        uint32_t addr, len;
        bool operator==(const Point& o) const {
            return type == o.type && addr == o.addr && len == o.len;
        }
    };
    std::vector<Point> points_;  // installed on every core; removed on detach
};

}  // namespace canopy::cpu
