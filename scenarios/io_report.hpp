// What the storage runs (`canopy replay`, `canopy fio`) report alike: latency percentiles as
// storage benchmarks give them (nearest rank over every sample, not a histogram's
// approximation), and the flash store's write amplification and GC between two reads of its
// counters; and what preconditioning wrote before the run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "platform/willow_stack.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::scenarios {

// Nearest-rank percentile `p` (0 ... 100) of sorted values; 0 for none.
inline double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Sets j["write_amplification"] (units written for the host, pages programmed, flash units
// programmed per unit written, bytes programmed per byte written) and j["gc"] (victims, copies,
// erases) from the store's counters before and after a run that wrote `bytes_written` host
// bytes.
inline void add_flash_report(nlohmann::json& j, const sw::StoreStats& before,
                             const sw::StoreStats& after, uint32_t page_bytes,
                             double bytes_written) {
    const uint64_t units = after.host_writes - before.host_writes,
                   programs = after.programs - before.programs;
    j["write_amplification"] = {
        {"host_unit_writes", units},
        {"flash_programs", programs},
        {"units_per_page", after.units_per_page},
        {"padded_units", after.padded_units - before.padded_units},
        {"buffer_hits", after.buffer_hits - before.buffer_hits},
        {"buffered_units_start", before.buffered_units},
        {"buffered_units_end", after.buffered_units},
        {"trim_records", after.trim_records - before.trim_records},
        {"fua_syncs", after.syncs - before.syncs},
        {"per_unit", units ? double(programs) * after.units_per_page / double(units) : 0.0},
        {"per_byte", bytes_written > 0 ? double(programs) * page_bytes / bytes_written : 0.0}};
    j["gc"] = {{"victims", after.gc_victims - before.gc_victims},
               {"copies", after.gc_copies - before.gc_copies},
               {"erases", after.erases - before.erases}};
}

// One line on what add_flash_report() put in `j`, or why it was not measured (`why_not`).
inline void print_flash_report(std::ostream& out, const nlohmann::json& j,
                               const std::string& indent, const std::string& why_not) {
    if (j["write_amplification"].is_null()) {
        out << indent << "write amplification and GC: not measured (" << why_not << ")\n";
        return;
    }
    const nlohmann::json& wa = j["write_amplification"];
    const nlohmann::json& gc = j["gc"];
    char line[320];
    const uint64_t trims = wa["trim_records"].get<uint64_t>();
    const std::string trimmed =
        trims ? " and " + std::to_string(trims) + " TRIM records" : std::string();
    std::snprintf(line, sizeof line,
                  "flash: %llu pages programmed for %llu unit writes%s (%.2f units per unit, %.2f "
                  "bytes per byte written); GC %llu victims, %llu copies, %llu erases\n",
                  (unsigned long long)wa["flash_programs"].get<uint64_t>(),
                  (unsigned long long)wa["host_unit_writes"].get<uint64_t>(), trimmed.c_str(),
                  wa["per_unit"].get<double>(), wa["per_byte"].get<double>(),
                  (unsigned long long)gc["victims"].get<uint64_t>(),
                  (unsigned long long)gc["copies"].get<uint64_t>(),
                  (unsigned long long)gc["erases"].get<uint64_t>());
    out << indent << line;
}

// j["precondition"]: what --precondition wrote before the run (null: nothing).
inline void add_precondition_report(nlohmann::json& j, const platform::WillowStack& stack) {
    j["precondition"] = nullptr;
    if (!stack.preconditioned) return;
    const platform::WillowStack::PreconditionSummary& p = *stack.preconditioned;
    j["precondition"] = {{"fill", p.fill},
                         {"unit_writes", p.units},
                         {"flash_programs", p.programs},
                         {"gc_victims", p.gc_victims},
                         {"gc_copies", p.gc_copies},
                         {"erases", p.erases}};
}

// One line on what add_precondition_report() put in `j` (none when nothing was written).
inline void print_precondition_report(std::ostream& out, const nlohmann::json& j,
                                      const std::string& indent) {
    const nlohmann::json& p = j["precondition"];
    if (p.is_null()) return;
    out << indent << "preconditioned (" << p["fill"].get<std::string>()
        << ", no simulated time): " << p["unit_writes"].get<uint64_t>() << " unit writes, "
        << p["flash_programs"].get<uint64_t>() << " pages programmed; GC "
        << p["gc_victims"].get<uint64_t>() << " victims, " << p["gc_copies"].get<uint64_t>()
        << " copies, " << p["erases"].get<uint64_t>() << " erases\n";
}

}  // namespace canopy::scenarios
