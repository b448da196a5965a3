// SPU-OS's decoding of RPCs (sw/firmware/spu_os: the dispatch in main.c, the kernel RPCs of
// kernel_rpc.c, the apps' system calls of syscall.c), run as the real firmware on a simulated
// SPU: the rv32 build of SPU-OS boots on one SPU of a Willow SSD, with the Base-IO and Key-Value
// apps installed as the host kernel installs them, and a stand-in host on the ring sends each
// input's RPCs with the origin the input asks for (the kernel's HRE or a user process's), to
// any app id and handler, with any payload. SPU-OS must answer every RPC (any result code)
// within 500 ms simulated, never stop, and still answer PING with its ABI version after them;
// an app may fault, SPU-OS may not. Requests SPU-OS or an app sends the host (notices, data)
// are answered 0.
//
// Input: records of [flags, app, handler, length lo, length hi, payload...]; flags bit 0 says
// the kernel's HRE, else user process (flags >> 1) & 63. At most 8 records, 4 KiB each.
//
// The machine is elaborated once per process (SystemC) and each input continues the same
// simulation, so SPU-OS keeps what earlier inputs installed, as a running SSD does. A finding
// therefore writes the whole history (every input since start, each after its 4-byte length)
// to spu_os_rpc.history in $CANOPY_FUZZ_ARTIFACTS (`make fuzz`: build-asan/fuzz/crashes; else the
// current folder); CANOPY_FUZZ_HISTORY=FILE replays such a file before fuzzing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "platform/willow.hpp"
#include "platform/willow_stack.hpp"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/willow_apps.hpp"

using namespace canopy;

namespace {

constexpr uint32_t kKernelHre = 1;  // high bits zero: the host kernel
constexpr size_t kMaxRecords = 8, kMaxPayload = 4096;
const sc_core::sc_time kAnswerWithin(500, sc_core::SC_MS);

struct Rpc {
    uint32_t origin;
    unsigned app, handler;
    std::vector<uint8_t> payload;
};

std::vector<Rpc> records(const uint8_t* data, size_t size) {
    std::vector<Rpc> v;
    for (size_t i = 0; v.size() < kMaxRecords && i + 5 <= size;) {
        Rpc r;
        r.origin = data[i] & 1 ? kKernelHre : (((data[i] >> 1) & 63u) + 1) << SPU_OS_HRE_INDEX_BITS;
        r.app = data[i + 1];
        r.handler = data[i + 2];
        const size_t n =
            std::min<size_t>({size_t(data[i + 3] | data[i + 4] << 8), kMaxPayload, size - (i + 5)});
        r.payload.assign(data + i + 5, data + i + 5 + n);
        i += 5 + n;
        v.push_back(std::move(r));
    }
    return v;
}

// The host's network interface at the bridge's ring node, driven from one thread that serves
// a batch of RPCs each time the fuzzer resumes the simulation.
class Host : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name name, platform::Willow& ssd, core::Services& services)
        : sc_module(name),
          ni("ni", platform::WillowConfig::default_bridge_ni(), services),
          ssd_(ssd) {
        ssd.ring.attach(ssd::NodeId(ssd.spus.size()), ni);
        SC_THREAD(run);
    }

    // Runs `batch` to its end (the simulation pauses there); "" or what SPU-OS did wrong.
    std::string serve(std::vector<Rpc> batch) {
        batch_ = std::move(batch);
        failure_.clear();
        sc_core::sc_start();
        return failure_;
    }

    ssd::NetworkInterface ni;

  private:
    // Sends an RPC and waits for its result; "" or why none came.
    std::string call(const Rpc& r, uint32_t& result) {
        ni.set_origin(r.origin);
        const uint16_t tag = ++tag_;
        if (ni.begin_request(ssd::NodeId(0), SPU_OS_RPC_ID(r.app, r.handler), tag,
                             uint32_t(r.payload.size())) != ssd::NiStatus::Ok)
            return "";  // the host's own interface refused (no slot): nothing reached SPU-OS
        if (!r.payload.empty()) ni.append(r.payload.data(), r.payload.size());
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        if (ni.finish_request(d) != ssd::NiStatus::Ok) return "";
        wait(d);
        const sc_core::sc_time deadline = sc_core::sc_time_stamp() + kAnswerWithin;
        for (;;) {
            answer_requests();
            while (ni.has_response()) {
                const ssd::MessageHeader h = *ni.response_head();
                ni.pop_response();
                if (h.tag == tag) {
                    result = h.result;
                    return "";
                }
            }
            if (ssd_.spus[0]->exited()) return "SPU-OS stopped (the SPU exited)";
            if (sc_core::sc_time_stamp() >= deadline)
                return "no answer within " + kAnswerWithin.to_string();
            wait(deadline - sc_core::sc_time_stamp(), ni.arrival_event());
        }
    }
    // SPU-OS's notices and the apps' requests to the host: answered at once.
    void answer_requests() {
        while (ni.has_request()) {
            const ssd::MessageHeader h = *ni.request_head();
            ni.pop_request();
            sc_core::sc_time d = sc_core::SC_ZERO_TIME;
            ni.send_response(h.src, h.tag, 0, d);
            wait(d);
        }
    }
    std::string describe(const Rpc& r) const {
        std::ostringstream s;
        s << "RPC app " << r.app << " handler " << r.handler << " origin 0x" << std::hex << r.origin
          << std::dec << " with " << r.payload.size() << " B";
        return s.str();
    }
    void must(const Rpc& r, uint32_t expected) {
        uint32_t got = 0;
        const std::string why = call(r, got);
        if (!why.empty() || got != expected) {
            std::fprintf(stderr, "spu_os_rpc set-up: %s: %s (result 0x%x, expected 0x%x)\n",
                         describe(r).c_str(), why.c_str(), got, expected);
            std::abort();
        }
    }
    void run() {
        wait(sc_core::sc_time(10, sc_core::SC_US));  // SPU-OS boots
        // The apps a host kernel installs (platform/willow_stack), into their slots.
        const std::string dir = CANOPY_FUZZ_FIRMWARE_DIR;
        const std::pair<const char*, uint32_t> apps[] = {
            {"app_base_io", platform::WillowStack::kBaseIoSlot},
            {"app_kv", platform::WillowStack::kKvSlot}};
        uint32_t id = 1;
        for (const auto& [name, slot] : apps) {
            for (const sw::InstallRpc& i : sw::app_install_rpcs(dir + "/" + name + ".elf", slot))
                must({kKernelHre, SPU_OS_KERNEL_APP, i.handler, i.payload}, SPU_OS_OK);
            std::vector<uint8_t> activate(8);
            const uint32_t args[2] = {id++, slot};
            std::memcpy(activate.data(), args, 8);  // little-endian, as the SPU
            must({kKernelHre, SPU_OS_KERNEL_APP, SPU_OS_RPC_ACTIVATE, activate}, SPU_OS_OK);
        }
        for (;;) {
            sc_core::sc_pause();  // the fuzzer's turn: sc_start returns
            wait(sc_core::SC_ZERO_TIME);
            for (const Rpc& r : batch_) {
                uint32_t result = 0;
                const std::string why = call(r, result);
                if (!why.empty()) {
                    failure_ = describe(r) + ": " + why;
                    break;
                }
            }
            uint32_t version = 0;
            const Rpc ping{kKernelHre, SPU_OS_KERNEL_APP, SPU_OS_RPC_PING, {}};
            const std::string why = failure_.empty() ? call(ping, version) : "";
            if (failure_.empty() && (!why.empty() || version != SPU_OS_ABI_VERSION))
                failure_ = "PING after the input: " +
                           (why.empty() ? "answered " + std::to_string(version) : why);
        }
    }

    platform::Willow& ssd_;
    std::vector<Rpc> batch_;
    std::string failure_;
    uint16_t tag_ = 0;
};

struct Machine {
    core::Services services;
    std::ostringstream console;
    platform::Willow ssd;
    Host host;
    std::vector<std::vector<uint8_t>> history;
    static platform::WillowConfig config() {
        platform::WillowConfig c;
        c.spus = 1;
        c.firmware = std::string(CANOPY_FUZZ_FIRMWARE_DIR) + "/spu_os.elf";
        return c;
    }
    Machine() : ssd("ssd", config(), services, console, false), host("host", ssd, services) {
        host.serve({});  // boots SPU-OS and installs the apps
    }
    void run(const uint8_t* data, size_t size) {
        history.emplace_back(data, data + size);
        const std::string failure = host.serve(records(data, size));
        if (failure.empty()) return;
        const char* dir = std::getenv("CANOPY_FUZZ_ARTIFACTS");
        const std::string path = std::string(dir ? dir : ".") + "/spu_os_rpc.history";
        std::ofstream h(path, std::ios::binary);
        for (const auto& in : history) {
            const uint32_t n = uint32_t(in.size());
            h.write(reinterpret_cast<const char*>(&n), 4);
            h.write(reinterpret_cast<const char*>(in.data()), std::streamsize(n));
        }
        std::fprintf(stderr,
                     "SPU-OS failed at %s simulated: %s\nconsole:\n%s\nthe %zu inputs since start "
                     "are in %s (replay: CANOPY_FUZZ_HISTORY=%s)\n",
                     sc_core::sc_time_stamp().to_string().c_str(), failure.c_str(),
                     console.str().c_str(), history.size(), path.c_str(), path.c_str());
        std::abort();
    }
};

Machine& machine() {
    static Machine m;
    return m;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    Machine& m = machine();
    if (const char* path = std::getenv("CANOPY_FUZZ_HISTORY")) {
        std::ifstream f(path, std::ios::binary);
        const std::vector<uint8_t> h((std::istreambuf_iterator<char>(f)), {});
        for (size_t i = 0; i + 4 <= h.size();) {
            uint32_t n = 0;
            std::memcpy(&n, h.data() + i, 4);
            n = uint32_t(std::min<size_t>(n, h.size() - i - 4));
            m.run(h.data() + i + 4, n);
            i += 4 + n;
        }
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    machine().run(data, size);
    return 0;
}
