// Command sequences a flash controller drives into a die (models/nand/die.cpp): the die decodes
// each like the chip's command state machine (ONFI cycles, mode prefixes, Flash-Cosmos MWS, ESP,
// XOR) and runs or refuses it. Input: sequences of [n, n x (kind, value)], data-in bytes after
// them; each data cycle moves 64 x value bytes. A fresh die per input keeps memory bounded.
#include <systemc>
#include <vector>

#include "core/services.hpp"
#include "fuzz.hpp"
#include "nand/bus.hpp"
#include "nand/die.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const nand::NandConfig cfg = [] {
        nand::NandConfig c;
        c.geometry.blocks_per_plane = 8;  // small, so that addresses often land in the die
        return c;
    }();
    core::Services services;
    nand::ChannelBus bus("bus", cfg.timing, services);
    nand::Die die("die", cfg, services, bus, 0, 0);
    sc_core::sc_time at = sc_core::SC_ZERO_TIME;
    size_t i = 0;
    std::vector<uint8_t> buffer;
    for (int sequences = 0; sequences < 8 && i < size; ++sequences) {
        nand::CommandExt cmd;
        const size_t n = std::min<size_t>(data[i++], nand::CommandExt::kMaxCycles);
        for (size_t c = 0; c < n && i + 1 < size; ++c, i += 2) {
            const auto kind = nand::Cycle::Kind(data[i] & 3);
            const uint8_t v = data[i + 1];
            cmd.cycles[cmd.n_cycles++] = {kind, v, kind >= nand::Cycle::DataIn ? 64u * v : 0u};
        }
        buffer.assign(cmd.data_bytes(), 0);
        for (size_t b = 0; b < buffer.size() && i < size; ++b) buffer[b] = data[i++];
        // A refusal is the die's answer (the FAIL bit and the error), not an exception.
        at = die.execute(cmd, buffer.data(), uint32_t(buffer.size()), at);
    }
    return 0;
}
