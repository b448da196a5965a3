// The Willow part of `canopy run` (Willow Sections 3.1, 4.1-4.2): with scenario.willow, every SPU
// boots SPU-OS from its ELF, a kernel program on host.core1 installs the Base-IO and Direct-IO
// apps and formats the file system (platform/willow_stack), and a user program on host.core2
// writes a file through the file system (system calls, Base-IO) and reads it back through
// libDirectIO (OS bypass), then the other way round, timing each access. With the Flash-Cosmos app
// installed (the store on the flash with an ESP region) it then stores a month of a bitmap index
// (BMI, 30 daily user vectors) with fc_write and asks which users were active every day on the
// four systems of sw/host/flash_cosmos, checking each against the host's own result. Last, a
// key-value session: pairs put, read back, some deleted, through the Key-Value app.
#pragma once

#include <memory>
#include <ostream>

#include "core/stats.hpp"
#include "platform/platform.hpp"
#include "platform/platform_config.hpp"
#include "platform/willow_stack.hpp"

namespace canopy::scenarios {

class WillowScenario {
  public:
    // The host cores it runs on: the host kernel's (installs the apps, serves notices) and the
    // user program's.
    static constexpr unsigned kKernelCore = 1, kUserCore = 2;
    // Points ssd.firmware at SPU-OS when the scenario runs (before the platform is built).
    // Returns false, with the reason in `why`, when it cannot run because this build has no
    // firmware; throws InputError when the configuration stands in its way.
    static bool prepare(platform::PlatformConfig& cfg, std::string& why);
    // The firmware part of prepare, for every user of the Willow stack: points ssd.firmware at
    // SPU-OS; false when this build has none, InputError when scenario.firmware_dir is wrong.
    static bool find_firmware(platform::PlatformConfig& cfg, std::string& why);
    // Starts the kernel and the user program (before sc_start).
    WillowScenario(const platform::PlatformConfig& cfg, platform::Platform& platform);
    // The stack, for other programs on the platform (a host program from outside), which hold a
    // WillowStack::User(stack(), users()) while they use it.
    platform::WillowStack& stack() { return *stack_; }
    unsigned& users() { return users_; }
    // Prints the outcome, records it under "scenario.willow" and returns whether it succeeded.
    bool report(std::ostream& out, core::StatsRegistry& stats) const;

    struct Result {
        bool ran = false;
        uint64_t bytes = 0, wrong_bytes = 0;
        double fs_write_ns = 0, dio_read_ns = 0, dio_write_ns = 0, fs_read_ns = 0;  // per 4 KiB
        // The BMI query, per system (sw::FcSystem order): its time, whether it was right.
        bool bmi_ran = false;
        uint64_t bmi_users = 0, bmi_active = 0;
        double bmi_ns[4] = {};
        bool bmi_right[4] = {};
        // The key-value session: pairs put, gets that returned what was put, mean times.
        bool kv_ran = false;
        uint64_t kv_pairs = 0, kv_right = 0;
        double kv_put_ns = 0, kv_get_ns = 0;
        // The atomic transfers: committed and aborted transactions, whether every balance is
        // what they make it, mean times of a LOGWRITE and of a COMMIT across SPUs.
        bool aw_ran = false, aw_right = false;
        uint64_t aw_commits = 0, aw_aborts = 0;
        double aw_log_ns = 0, aw_commit_ns = 0;
    };

  private:
    void bmi(host::HostCore& cpu);
    void key_value(host::HostCore& cpu);
    void transfers(host::HostCore& cpu);
    // The key-value session's and the transfers' lines and statistics.
    bool report_apps(std::ostream& out, core::StatsRegistry& stats) const;
    // Whether what is read back can be checked: not from a store on a timing-only array, which
    // reads as zeros (its data is then reported kNotChecked).
    bool data_kept() const { return platform_.cfg.nand.functional || !stack_->on_flash; }
    static constexpr const char* kNotChecked =
        "not checked (timing-only array: nand.functional=false keeps no data)";
    // What a check's line says: `good` or `bad`, or kNotChecked when nothing could be checked.
    const char* verdict(bool right, const char* good, const char* bad) const {
        return !data_kept() ? kNotChecked : right ? good : bad;
    }

    platform::Platform& platform_;
    std::unique_ptr<platform::WillowStack> stack_;
    unsigned users_ = 0;  // programs using the stack: the kernel serves notices until none is left
    Result result_;
};

}  // namespace canopy::scenarios
