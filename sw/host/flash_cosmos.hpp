// The Flash-Cosmos host library (Flash-Cosmos Section 6.2): fc_write stores a bit vector as an
// operand, ESP-programmed and not randomised, optionally inverted, in a group the application
// names (a group's operands share blocks, so an AND over them is one intra-block sensing);
// fc_read names operands, the operation (AND, OR, NAND, NOR, XOR, XNOR, and AND-then-OR as in
// k-clique star listing) and gets the result. Vectors are cut into page-sized pieces spread over
// the SPUs and their planes (piece i on SPU i % spus, plane unit (i / spus) % units, row
// i / (spus x units)); piece i of every operand lands on the same plane, so every piece of a
// result is computed inside one plane by the Flash-Cosmos SSD App (sw/firmware/apps/
// flash_cosmos.c), which plans the MWS commands. One RPC per SPU is in flight at a time; SPUs
// work in parallel.
//
// The same library runs the three baselines on the same stored operands: ParaBit (the app senses
// one wordline at a time, accumulating in the latches), ISP (each operand page is read into the
// channel controller's bitwise accelerator, ssd/bitwise_accelerator, and folded there) and
// outside-storage processing (OSP: each operand page is read out raw and the host core computes
// the result with its own loads).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "host/host_core.hpp"
#include "sw/host/hre.hpp"

namespace canopy::sw {

struct FcGeometry {
    uint32_t spus = 8;
    uint32_t dies = 4, planes = 2;  // per channel (SPU)
    uint32_t page_bytes = 16384;
    uint32_t wordlines = 48;  // per block: operands per group block
    uint32_t units() const { return dies * planes; }
};

enum class FcOp { And, Or, Nand, Nor, Xor, Xnor, AndOr /* AND of all but the last, OR the last */ };
enum class FcSystem { FlashCosmos, ParaBit, Isp, Osp };
inline constexpr FcSystem kFcSystems[] = {FcSystem::FlashCosmos, FcSystem::ParaBit, FcSystem::Isp,
                                          FcSystem::Osp};
const char* fc_op_name(FcOp op);
const char* fc_system_name(FcSystem s);

class FlashCosmos {
  public:
    struct Operand {
        uint32_t group = 0, seq = 0;
        uint64_t bytes = 0;
        bool inverted = false;
    };
    struct Stats {
        uint64_t sensings = 0;    // MWS commands the SPUs issued
        uint64_t pages_read = 0;  // OSP: operand pages read out
        uint64_t bytes_in = 0;    // bytes the host received
        uint64_t host_words = 0;  // OSP: 64-bit words the host core combined
    };

    // `app` is the id the Flash-Cosmos app is installed as on every SPU.
    FlashCosmos(host::HostCore& cpu, Hre& hre, uint32_t app, FcGeometry g);

    // fc_write: `bytes` of `data` as the next operand of `group` (0..7 per row of pieces). All
    // operands of a group have the same size. With `inverted` the flash holds the complement.
    Operand write(uint32_t group, const void* data, uint64_t bytes, bool inverted = false);
    // fc_read: the operation over the operands (all of one size), computed by `system`.
    std::vector<uint8_t> read(FcOp op, const std::vector<Operand>& operands,
                              FcSystem system = FcSystem::FlashCosmos);
    // Frees every group's blocks on every SPU.
    void release_all();

    const Stats& stats() const { return stats_; }
    // The result of `op` over plain vectors: the reference the systems are checked against.
    static std::vector<uint8_t> reference(FcOp op, const std::vector<std::vector<uint8_t>>& in);

  private:
    struct Piece {
        uint32_t spu, unit, row, offset, bytes;
    };
    std::vector<Piece> pieces(uint64_t bytes) const;
    uint8_t fw_group(uint32_t group, uint32_t row);
    // The FC_READ request of piece `p`: its arguments for `code` and `n` operands.
    std::vector<uint8_t> read_request(uint8_t code, size_t n, const Piece& p) const;
    // One RPC per piece, at most one per SPU in flight; DATA requests land in `out`.
    void run(const std::vector<Piece>& ps, uint16_t handler,
             const std::vector<std::vector<uint8_t>>& payloads, std::vector<uint8_t>* out,
             const std::string& what);
    std::vector<uint8_t> osp(FcOp op, const std::vector<Operand>& operands);

    host::HostCore& cpu_;
    Hre& hre_;
    uint32_t app_;
    FcGeometry g_;
    std::map<std::pair<uint32_t, uint32_t>, uint8_t> groups_;  // (group, row) -> firmware group
    std::map<uint32_t, uint64_t> group_bytes_;
    std::map<uint8_t, uint32_t> next_seq_;  // per firmware group
    uint32_t next_cookie_ = 1;
    Stats stats_;
};

}  // namespace canopy::sw
