// The Flash-Cosmos paper's three workloads as host programs (Flash-Cosmos Section 7,
// "Workloads"), at sizes a platform run holds, on any of the four systems of sw/host/flash_cosmos:
//  - BMI, bitmap index: one bit vector per day of which users were active; "users active every
//    day for m months" is the AND of the days' vectors, whose ones the host then counts;
//  - IMS, image segmentation: a pixel belongs to the colour when its Y, U and V bits are all set,
//    the AND of three bit vectors;
//  - KCS, k-clique star listing: the vertices adjacent to all k vertices of a clique, ORed with
//    the clique's own vertices: (AND of k adjacency vectors) OR the clique vector.
// The data are random with a seed (the paper's come from real data sets it does not ship); each
// workload says which operands share a group (a block per plane on the flash) and the host's
// reference result, which every system must reproduce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/host_core.hpp"
#include "sw/host/flash_cosmos.hpp"

namespace canopy::sw {

struct FcWorkload {
    std::string name;  // "bmi", "ims", "kcs"
    FcOp op = FcOp::And;
    std::vector<std::vector<uint8_t>> operands;
    std::vector<uint32_t> group;  // per operand
    bool bitcount = false;        // BMI: the host counts the result's ones
    uint64_t bytes() const { return operands.empty() ? 0 : operands[0].size(); }
    std::vector<uint8_t> reference() const { return FlashCosmos::reference(op, operands); }
};

// `days` vectors of `users` bits, each user active on a day with probability `active`.
FcWorkload bmi_workload(uint64_t users, uint32_t days, uint64_t seed, double active = 0.9);
// Y, U and V vectors of `pixels` bits (a component in the colour's range with probability 1/2).
FcWorkload ims_workload(uint64_t pixels, uint64_t seed);
// k adjacency vectors of `vertices` bits (edge probability 1/2) and the clique's own vector.
FcWorkload kcs_workload(uint64_t vertices, uint32_t k, uint64_t seed);

struct FcOutcome {
    std::vector<uint8_t> result;
    uint64_t ones = 0;  // BMI: the host's bit count of the result
    double ns = 0;      // simulated time on the calling core, computation (and count) only
    FlashCosmos::Stats stats;
};

// fc_write of every operand into its group.
std::vector<FlashCosmos::Operand> store_workload(FlashCosmos& fc, const FcWorkload& w);
// The workload's query on `system`; the host counts ones when the workload asks for it (one
// cycle per 64-bit word, assumed: popcount).
FcOutcome run_workload(host::HostCore& cpu, FlashCosmos& fc, const FcWorkload& w,
                       const std::vector<FlashCosmos::Operand>& stored, FcSystem system);

}  // namespace canopy::sw
