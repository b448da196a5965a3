#include "sw/host/fc_workloads.hpp"

#include "core/rng.hpp"

namespace canopy::sw {

namespace {

// `bits` bits, each set with probability p.
std::vector<uint8_t> bits(core::Rng& rng, uint64_t n, double p) {
    std::vector<uint8_t> v((n + 7) / 8, 0);
    for (uint64_t i = 0; i < n; ++i)
        if (core::uniform01(rng) < p) v[i / 8] |= uint8_t(1u << (i % 8));
    return v;
}

}  // namespace

FcWorkload bmi_workload(uint64_t users, uint32_t days, uint64_t seed, double active) {
    FcWorkload w;
    w.name = "bmi";
    w.op = FcOp::And;
    w.bitcount = true;
    core::Rng rng(core::derive_seed(seed, "bmi"));
    for (uint32_t d = 0; d < days; ++d) {
        w.operands.push_back(bits(rng, users, active));
        w.group.push_back(0);  // one group: the days fill a block per plane, then the next
    }
    return w;
}

FcWorkload ims_workload(uint64_t pixels, uint64_t seed) {
    FcWorkload w;
    w.name = "ims";
    w.op = FcOp::And;
    core::Rng rng(core::derive_seed(seed, "ims"));
    for (int c = 0; c < 3; ++c) {
        w.operands.push_back(bits(rng, pixels, 0.5));
        w.group.push_back(0);
    }
    return w;
}

FcWorkload kcs_workload(uint64_t vertices, uint32_t k, uint64_t seed) {
    FcWorkload w;
    w.name = "kcs";
    w.op = FcOp::AndOr;
    core::Rng rng(core::derive_seed(seed, "kcs"));
    for (uint32_t i = 0; i < k; ++i) {
        w.operands.push_back(bits(rng, vertices, 0.5));
        w.group.push_back(0);
    }
    // The clique vector: its k vertices. In a group of its own, so that it is a block apart.
    std::vector<uint8_t> clique((vertices + 7) / 8, 0);
    for (uint32_t i = 0; i < k; ++i) {
        const uint64_t v = rng() % vertices;
        clique[v / 8] |= uint8_t(1u << (v % 8));
    }
    w.operands.push_back(std::move(clique));
    w.group.push_back(1);
    return w;
}

std::vector<FlashCosmos::Operand> store_workload(FlashCosmos& fc, const FcWorkload& w) {
    std::vector<FlashCosmos::Operand> v;
    for (size_t i = 0; i < w.operands.size(); ++i)
        v.push_back(fc.write(w.group[i], w.operands[i].data(), w.operands[i].size()));
    return v;
}

FcOutcome run_workload(host::HostCore& cpu, FlashCosmos& fc, const FcWorkload& w,
                       const std::vector<FlashCosmos::Operand>& stored, FcSystem system) {
    FcOutcome o;
    const FlashCosmos::Stats s0 = fc.stats();
    const double t0 = cpu.now_ns();
    o.result = fc.read(w.op, stored, system);
    if (w.bitcount) {
        for (uint8_t b : o.result) o.ones += uint64_t(__builtin_popcount(b));
        cpu.compute_cycles((o.result.size() + 7) / 8);
    }
    o.ns = cpu.now_ns() - t0;
    const FlashCosmos::Stats& s1 = fc.stats();
    o.stats = {s1.sensings - s0.sensings, s1.pages_read - s0.pages_read, s1.bytes_in - s0.bytes_in,
               s1.host_words - s0.host_words};
    return o;
}

}  // namespace canopy::sw
