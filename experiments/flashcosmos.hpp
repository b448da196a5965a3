// `canopy exp flashcosmos` (Flash-Cosmos, MICRO'22, Sections 7-8, Table 1, Figures 17-18): the
// speed-up and the energy efficiency of Flash-Cosmos (FC), ParaBit (PB) and in-storage processing
// (ISP) over outside-storage processing (OSP) on the paper's three workloads (BMI, IMS, KCS) at
// full scale. A system-level, timing-only model: one page-stripe of each system's sensing
// pattern is run on the NAND die model (models/nand) for its array times and energies, and the
// full-scale run is composed from the stripe count, plane parallelism, the channels, the PCIe
// link, the host and the ISP accelerator as overlapping pipeline stages. docs/flash_cosmos.md
// describes the model, every parameter and the results. Then the same workloads, small, on the
// whole platform with real firmware (rows P.*, flashcosmos.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/experiment.hpp"
#include "nand/config.hpp"
#include "ssd/bitwise_accelerator.hpp"

namespace canopy::experiments {

// Every parameter of the model, with its source: "Table 1" (the paper's evaluation set-up, see
// CALIBRATION.md), a section of the paper, or "assumed" with the reason. There is no config-key
// mechanism for experiment parameters (`canopy exp` takes none), so this struct with its
// defaults is the configuration.
struct FlashCosmosExpConfig {
    // The SSD's NAND: Table 1 geometry (8 channels x 8 dies x 2 planes, 16 KiB pages, 48
    // wordlines per string), 1.2 GB/s channels, tR(SLC) = 22.5 us, MWS and power from Section 5.
    // The die model runs with `functional = false` (timing-only) on a one-die array.
    nand::NandConfig nand;

    // External link, Table 1: PCIe Gen4 x4 = 8 GB/s raw (16 GT/s x 4 lanes). The payload rate
    // comes from the link model's TLP accounting (models/link/tlp.hpp): 128b/130b, framing,
    // sequence number, 4DW header and LCRC per max-payload TLP.
    uint32_t pcie_generation = 4;           // Table 1
    uint32_t pcie_lanes = 4;                // Table 1
    uint32_t pcie_max_payload_bytes = 256;  // assumed: the common root-port MPS
    // assumed: the host buffers lie above 4 GiB (a 64 GB host), so DMA writes carry 4DW headers
    uint64_t host_buffer_address = 1ull << 32;

    // Host, Table 1: 8 cores at 3.6 GHz, DDR4-3600, 4 channels. Bulk AND/OR and bit counting
    // are memory-bandwidth bound: every operand byte is written by the SSD's DMA and read once
    // by the cores, every result byte written once (and read once more to count its ones).
    double host_dram_mts = 3600;        // Table 1: DDR4-3600
    uint32_t host_dram_channels = 4;    // Table 1
    double host_dram_efficiency = 0.7;  // assumed: sustained streaming share of the peak
    // assumed (calibrated): package + DRAM power the paper's RAPL would see while the OSP host
    // program streams operands in and ANDs them; charged for OSP's whole run, and for the
    // bit count of BMI's result in the other systems (their host otherwise only waits).
    double host_active_w = 35.0;
    double dram_pj_per_byte = 160.0;  // assumed: DDR4 ~20 pJ/bit per access, I/O included

    // ISP accelerator: the platform's own (ssd/bitwise_accelerator: Table 1's 93 pJ per 64 B
    // operation and 256 KiB SRAM per channel, room for the channel's 16 planes x 16 KiB partial
    // results of one stripe, so nothing spills; its assumed 8 B/ns is well above the channel's
    // 1.2 GB/s, so the accelerator never bounds ISP).
    ssd::BitwiseAcceleratorConfig isp;

    // SSD energy outside the dies (which the die model charges: array + channel I/O).
    // assumed (calibrated): controller + DRAM of a Samsung 980 Pro (the paper's SSD power
    // source) while active; its NAND and I/O are modelled separately.
    double ssd_controller_w = 6.0;
    double pcie_pj_per_byte = 40.0;  // assumed: ~5 pJ/bit for a 16 GT/s SerDes link

    // In-flash baselines.
    double parabit_sense_us = 25.0;  // ParaBit (CALIBRATION.md): 25 us per sensing
    // Section 5.2: capping inter-block MWS at 4 blocks lets the chip run every MWS at one fixed
    // tMWS (1.033 tR); false: each MWS takes its characterised latency.
    bool fc_fixed_tmws = true;

    // Workloads (Section 7, "Workloads"). The ranges are the paper's; its sweep points (the
    // x-axes of Figures 17 and 18) are not in the seed's text, so the points between the ends
    // are ours. `--quick` runs the *_quick lists, chosen so that the means stay close to the
    // full sweep's. BMI m months of daily login bit vectors of 800 M
    // users (d = floor(365 m / 12) days: 30 at m = 1, 1,095 at m = 36), AND then bit count.
    uint64_t bmi_users = 800000000;
    std::vector<uint32_t> bmi_months = {1, 3, 6, 12, 24, 36};
    std::vector<uint32_t> bmi_months_quick = {1, 6, 12, 36};
    // IMS: I images of 800 x 600 pixels and 4 colours; AND of the Y, U and V bit vectors.
    uint32_t ims_width = 800, ims_height = 600, ims_colours = 4;
    std::vector<uint32_t> ims_images = {10000, 50000, 100000, 150000, 200000};
    std::vector<uint32_t> ims_images_quick = {10000, 100000, 200000};
    // KCS: 32 M vertices (2^25 bits = 4 MiB per adjacency vector), 1,024 cliques; per clique
    // the AND of its k vertices' adjacency vectors, ORed with the clique's own vector.
    uint64_t kcs_vertices = 1ull << 25;
    uint32_t kcs_cliques = 1024;
    std::vector<uint32_t> kcs_k = {8, 16, 32, 64};
    std::vector<uint32_t> kcs_k_quick = {8, 16, 32, 64};
};

// The values `--workload` accepts: bmi, ims, kcs, all.
const std::vector<std::string>& flashcosmos_workloads();

// The machine `canopy exp flashcosmos` starts from: the platform's defaults on Table 1's PCIe
// Gen4 x4. --config/--set change it; its `nand.*`, `link.pcie.generation`, `.lanes`,
// `.max_payload_bytes` and `ssd.flash.isp.*` become the model's (from_machine), and the
// platform rows run on it.
PlatformConfig flashcosmos_machine();
// The model's configuration with those parts taken from `m`.
FlashCosmosExpConfig from_machine(const PlatformConfig& m);

// The model's rows (F.*) on `options.platform()`.
std::vector<ExpRow> flashcosmos_model_rows(const ExpOptions& options);
// The same with another configuration. Throws InputError for an unknown workload.
std::vector<ExpRow> flashcosmos_rows(const ExpOptions& options, const FlashCosmosExpConfig& cfg);

}  // namespace canopy::experiments
