// Shared bench of the ring and network-interface tests: Willow's prototype ring of 8 SPUs (nodes
// 0..7) and the PCIe bridge (node 8), each with its network interface, at the defaults (128 bit,
// 250 MHz: 4 ns per cycle, 1 cycle per hop, so one revolution of the token is 9 hops = 36 ns).
//
// Each TEST runs in its own process (gtest_discover_tests): a Bench finishes elaboration with
// sc_start(SC_ZERO_TIME); tests then call the interfaces from sc_main's context (the models never
// wait()) and advance time with run_until(). Before any message the token leaves node 8 at time
// zero, so it passes node k at (k + 1) x 4 ns + a multiple of 36 ns.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "ssd/network_interface.hpp"
#include "ssd/ring.hpp"

namespace canopy::ssd::test {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

constexpr unsigned kSpus = 8;
constexpr NodeId kBridge = kSpus;
constexpr unsigned kNodes = kSpus + 1;
constexpr double kCycleNs = 4.0;  // 250 MHz

inline double ns(const sc_time& t) { return t.to_seconds() * 1e9; }
inline sc_time at_ns(double v) { return sc_time(v, SC_NS); }

// `n` bytes of a recognisable pattern that differs with `seed`.
inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 131 + seed * 17 + (i >> 8));
    return v;
}

struct BenchOptions {
    NiConfig ni;
    RingConfig ring;
    std::string waves_path;  // "": no waves
    bool start = true;       // finish elaboration (else the test adds modules, then start())
};

struct Bench {
    core::Services services;
    struct OpenWaves {
        OpenWaves(core::Services& s, const std::string& path) {
            if (!path.empty()) s.waves.open(path);
        }
    } open_waves;
    Ring ring;
    std::vector<std::unique_ptr<NetworkInterface>> ni;

    explicit Bench(const BenchOptions& o)
        : open_waves(services, o.waves_path), ring("ring", o.ring, services) {
        for (unsigned i = 0; i < kNodes; ++i) {
            const std::string name = i == kBridge ? "bridge_ni" : "spu" + std::to_string(i) + "_ni";
            ni.push_back(std::make_unique<NetworkInterface>(name.c_str(), o.ni, services));
            ring.attach(NodeId(i), *ni.back());
        }
        if (o.start) start();
    }
    explicit Bench(const NiConfig& ni_cfg = NiConfig(), const RingConfig& ring_cfg = RingConfig())
        : Bench(BenchOptions{ni_cfg, ring_cfg, "", true}) {}

    static void start() { sc_core::sc_start(SC_ZERO_TIME); }

    NetworkInterface& at(unsigned node) { return *ni[node]; }

    // Sends a request of `payload` from `src` to `dst`, asked at now + delay (one append).
    NiStatus request(unsigned src, unsigned dst, const std::vector<uint8_t>& payload, uint16_t tag,
                     sc_time& delay, uint16_t rpc_id = 0x0102) {
        NetworkInterface& n = at(src);
        if (NiStatus s = n.begin_request(NodeId(dst), rpc_id, tag, uint32_t(payload.size()));
            s != NiStatus::Ok)
            return s;
        if (NiStatus s = n.append(payload.data(), payload.size()); s != NiStatus::Ok) return s;
        return n.finish_request(delay);
    }

    // Runs the kernel up to absolute time `t`, including what happens at `t` (sc_start(d)
    // stops before the events due at its end time: one more zero-time run takes them).
    static void run_until(const sc_time& t) {
        const sc_time now = sc_core::sc_time_stamp();
        if (t > now) sc_core::sc_start(t - now);
        sc_core::sc_start(SC_ZERO_TIME);
    }
    static void run_until_ns(double t) { run_until(at_ns(t)); }

    const core::Stat* stat(const std::string& module, const std::string& name) const {
        return services.stats.find(module, name);
    }
    uint64_t count(const std::string& module, const std::string& name) const {
        auto* c = dynamic_cast<const core::Counter*>(stat(module, name));
        return c ? c->value() : ~0ull;
    }
};

}  // namespace canopy::ssd::test
