// A stand-in for the host on the Willow SSD, for SPU-OS's tests (Willow Section 3.1;
// sw/firmware/spu_os, docs/spu_os.md): a network interface of the test's own at the bridge's ring
// node sends kernel RPCs (origin HRE with zero high bits) to install SSD Apps from their ELF
// images and grant permissions, user RPCs (a process's HRE) to run them, and answers the notices
// SPU-OS sends the host kernel (faults, permission misses). Each TEST elaborates once (its own
// process).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "../../sw/firmware/spu_os/spu_os_abi.h"
#include "core/services.hpp"
#include "nand/channel.hpp"
#include "platform/willow.hpp"
#include "sw/host/willow_apps.hpp"

#ifdef CANOPY_FIRMWARE_DIR
namespace canopy::platform::spu_os_host {

inline std::string firmware(const std::string& name) {
    return std::string(CANOPY_FIRMWARE_DIR) + "/" + name + ".elf";
}

constexpr uint32_t kKernelHre = 1;                   // high bits zero: the host kernel
constexpr uint32_t kProcess = 7;                     // a user process ...
constexpr uint32_t kUserHre = (kProcess << 10) | 3;  // ... and one of its HREs
constexpr unsigned kStoreApp = 1, kRogueApp = 2;     // app ids the tests give the two test apps

// A request SPU-OS sent to the host kernel.
struct Notice {
    unsigned src = 0;
    uint16_t rpc_id = 0;
    std::vector<uint32_t> words;
};

using Words = std::vector<uint32_t>;

// The host side: an interface on the ring at the bridge's node, driven from a thread.
class Host : public sc_core::sc_module {
  public:
    SC_HAS_PROCESS(Host);
    Host(sc_core::sc_module_name name, Willow& ssd, core::Services& services,
         std::function<void(Host&)> script)
        : sc_module(name),
          ni("ni", ssd::NiConfig(), services),
          script_(std::move(script)) {
        ssd.ring.attach(ssd::NodeId(ssd.spus.size()), ni);
        SC_THREAD(run);
    }

    // Sends a request; returns its tag for result().
    uint16_t send(unsigned spu, unsigned app, unsigned handler, const std::vector<uint8_t>& payload,
                  uint32_t origin) {
        ni.set_origin(origin);
        const uint16_t tag = ++tag_;
        EXPECT_EQ(ni.begin_request(ssd::NodeId(spu), SPU_OS_RPC_ID(app, handler), tag,
                                   uint32_t(payload.size())),
                  ssd::NiStatus::Ok)
            << ni.last_error();
        if (!payload.empty()) ni.append(payload.data(), payload.size());
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        EXPECT_EQ(ni.finish_request(d), ssd::NiStatus::Ok) << ni.last_error();
        wait(d);
        return tag;
    }
    // How long result() waits for a response.
    sc_core::sc_time timeout{100, sc_core::SC_MS};
    // The result of the response to `tag` (~0u when none came within `timeout`).
    uint32_t result(uint16_t tag) {
        const sc_core::sc_time deadline = sc_core::sc_time_stamp() + timeout;
        for (;;) {
            serve_notices();
            while (ni.has_response()) {
                const ssd::MessageHeader h = *ni.response_head();
                ni.pop_response();
                results_[h.tag] = h.result;
            }
            const auto it = results_.find(tag);
            if (it != results_.end()) {
                const uint32_t r = it->second;
                results_.erase(it);
                return r;
            }
            if (sc_core::sc_time_stamp() >= deadline) return ~0u;
            wait(deadline - sc_core::sc_time_stamp(), ni.arrival_event());
        }
    }
    bool has_result(uint16_t tag) {
        while (ni.has_response()) {
            results_[ni.response_head()->tag] = ni.response_head()->result;
            ni.pop_response();
        }
        return results_.count(tag) != 0;
    }
    // Sends a request and returns its response's result.
    uint32_t call(unsigned spu, unsigned app, unsigned handler, const std::vector<uint8_t>& payload,
                  uint32_t origin) {
        return result(send(spu, app, handler, payload, origin));
    }
    uint32_t call(unsigned spu, unsigned app, unsigned handler, const Words& words,
                  uint32_t origin) {
        return call(spu, app, handler, bytes(words), origin);
    }
    uint32_t kernel(unsigned spu, unsigned rpc, const Words& words) {
        return call(spu, SPU_OS_KERNEL_APP, rpc, words, kKernelHre);
    }
    uint32_t stat(unsigned spu, uint32_t which) { return kernel(spu, SPU_OS_RPC_STAT, {which}); }

    // Installs an app's ELF (linked for `slot`) on `spu` in pieces (the host driver's own
    // pieces, sw/host/willow_apps) and activates it as `app`.
    void install(unsigned spu, const std::string& name, unsigned app, unsigned slot) {
        for (const sw::InstallRpc& r : sw::app_install_rpcs(firmware(name), slot, kPiece))
            ASSERT_EQ(call(spu, SPU_OS_KERNEL_APP, r.handler, r.payload, kKernelHre), SPU_OS_OK)
                << name << " at 0x" << std::hex << r.address;
        ASSERT_EQ(kernel(spu, SPU_OS_RPC_ACTIVATE, {app, slot}), SPU_OS_OK) << name;
    }

    // Requests to the host with this RPC ID are kept unanswered until answer().
    void hold(uint16_t rpc_id) { held_rpc_ = rpc_id; }
    const std::vector<ssd::MessageHeader>& held(size_t n) {
        notices(notices_.size());
        const sc_core::sc_time deadline =
            sc_core::sc_time_stamp() + sc_core::sc_time(10, sc_core::SC_MS);
        for (serve_notices(); held_.size() < n && sc_core::sc_time_stamp() < deadline;
             serve_notices())
            wait(deadline - sc_core::sc_time_stamp(), ni.arrival_event());
        return held_;
    }
    void answer(size_t i, uint32_t result) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        ni.send_response(held_[i].src, held_[i].tag, result, d);
        wait(d);
    }

    // Waits (up to 10 ms) until `n` notices arrived.
    const std::vector<Notice>& notices(size_t n) {
        const sc_core::sc_time deadline =
            sc_core::sc_time_stamp() + sc_core::sc_time(10, sc_core::SC_MS);
        for (serve_notices(); notices_.size() < n && sc_core::sc_time_stamp() < deadline;
             serve_notices())
            wait(deadline - sc_core::sc_time_stamp(), ni.arrival_event());
        return notices_;
    }

    static std::vector<uint8_t> bytes(const Words& words) {
        std::vector<uint8_t> b(words.size() * 4);
        if (!b.empty()) std::memcpy(b.data(), words.data(), b.size());
        return b;
    }

    ssd::NetworkInterface ni;

  private:
    static constexpr uint32_t kPiece = 512;

    // SPU-OS's requests to the kernel HRE: recorded and acknowledged.
    void serve_notices() {
        while (ni.has_request()) {
            const ssd::MessageHeader h = *ni.request_head();
            Notice n{h.src, h.rpc_id, std::vector<uint32_t>(h.length / 4)};
            ni.read_request(reinterpret_cast<uint8_t*>(n.words.data()), n.words.size() * 4);
            ni.pop_request();
            if (h.rpc_id == held_rpc_) {
                held_.push_back(h);
                continue;
            }
            EXPECT_EQ(h.dst_hre, 0u);
            notices_.push_back(n);
            sc_core::sc_time d = sc_core::SC_ZERO_TIME;
            ni.send_response(h.src, h.tag, 0, d);
            wait(d);
        }
    }
    void run() {
        wait(sc_core::sc_time(10, sc_core::SC_US));  // SPU-OS boots
        script_(*this);
        done = true;
        sc_core::sc_stop();
    }

    std::function<void(Host&)> script_;
    std::vector<Notice> notices_;
    std::vector<ssd::MessageHeader> held_;
    uint16_t held_rpc_ = 0xffff;
    std::map<uint16_t, uint32_t> results_;
    uint16_t tag_ = 0;

  public:
    bool done = false;
};

// Elaborates an SSD of `spus` SPUs running SPU-OS and the host script; returns the console.
// With `nand`, SPU i drives channel i of a flash array of that configuration.
inline std::string run_ssd(unsigned spus, const std::function<void(Host&, Willow&)>& script,
                           const nand::NandConfig* nand = nullptr) {
    core::Services services;
    WillowConfig cfg;
    cfg.spus = spus;
    cfg.firmware = firmware("spu_os");
    std::ostringstream console;
    std::unique_ptr<nand::FlashArray> array;
    if (nand) array = std::make_unique<nand::FlashArray>("nand", *nand, services);
    Willow ssd("ssd", cfg, services, console, false, nand);
    for (size_t c = 0; c < ssd.flash.size(); ++c) ssd.flash[c]->nand.bind(array->channel(c).target);
    Host host("host", ssd, services, [&](Host& h) { script(h, ssd); });
    sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
    EXPECT_TRUE(host.done) << console.str();
    for (const auto& spu : ssd.spus) EXPECT_FALSE(spu->exited()) << spu->name();
    if (::testing::Test::HasFailure()) {  // what the SPUs were doing
        std::cout << "console:\n" << console.str();
        std::vector<std::string> nis = {"host.ni"};
        for (const auto& spu : ssd.spus) nis.push_back(std::string(spu->name()) + ".ni");
        for (const std::string& m : nis)
            for (const char* c : {"requests_sent", "responses_sent", "requests_received",
                                  "responses_received", "responses_dropped", "rx_dropped"})
                if (auto* k = dynamic_cast<const core::Counter*>(services.stats.find(m, c)))
                    std::cout << m << "." << c << " = " << k->value() << "\n";
        for (const auto& spu : ssd.spus)
            std::cout << spu->name() << " pc 0x" << std::hex << spu->core.pc() << std::dec << "\n";
    }
    return console.str();
}

// The store app's checksum (sw/firmware/apps/store.c).
inline uint32_t checksum(const std::vector<uint8_t>& b) {
    uint32_t s = 0;
    for (uint8_t c : b) s = s * 31 + c;
    return s;
}

}  // namespace canopy::platform::spu_os_host
#endif
