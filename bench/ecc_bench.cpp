// BCH ECC speed (models/ssd/ecc_engine.hpp): encode and decode of one 1 KiB codeword with t = 72
// over GF(2^14), the flash controller's default, in data bytes per second. Every flash read in
// the simulator decodes 16 such codewords per 16 KiB page, so the clean decode (the remainder
// check) is the one that matters: target well over 500 MB/s in a Release build. Decoding with
// errors runs Berlekamp-Massey and a Chien search; it is shown for 1 error (the common case at
// realistic raw bit error rates) and for t errors (the worst case).
#include <benchmark/benchmark.h>

#include <systemc>  // declares sc_main extern "C"

#include <random>
#include <vector>

#include "ssd/ecc_engine.hpp"

using canopy::ssd::BchCode;

namespace {

constexpr uint32_t kBytes = 1024, kT = 72;

struct Codeword {
    BchCode code{kBytes, kT};
    std::vector<uint8_t> data, parity;
    Codeword() : data(kBytes), parity(code.parity_bytes()) {
        std::mt19937_64 rng(42);
        for (auto& b : data) b = uint8_t(rng());
        code.encode(data.data(), data.size(), parity.data());
    }
};

void BM_Encode(benchmark::State& state) {
    Codeword cw;
    for (auto _ : state) {
        cw.code.encode(cw.data.data(), cw.data.size(), cw.parity.data());
        benchmark::DoNotOptimize(cw.parity.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * kBytes);
}

void BM_DecodeClean(benchmark::State& state) {
    Codeword cw;
    for (auto _ : state) {
        auto r = cw.code.decode(cw.data.data(), cw.data.size(), cw.parity.data());
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * kBytes);
}

// Each iteration flips state.range(0) distinct bits (fixed positions) and decodes them away.
void BM_DecodeErrors(benchmark::State& state) {
    Codeword cw;
    const uint32_t errors = uint32_t(state.range(0));
    std::mt19937_64 rng(7);
    std::vector<uint32_t> pos;
    const uint32_t nbits = kBytes * 8 + cw.code.parity_bits();
    while (pos.size() < errors) {
        const uint32_t q = uint32_t(rng() % nbits);
        bool dup = false;
        for (uint32_t p : pos) dup |= p == q;
        if (!dup) pos.push_back(q);
    }
    for (auto _ : state) {
        for (uint32_t q : pos) {
            if (q < kBytes * 8) {
                cw.data[q / 8] ^= uint8_t(0x80 >> (q % 8));
            } else {
                cw.parity[(q - kBytes * 8) / 8] ^= uint8_t(0x80 >> ((q - kBytes * 8) % 8));
            }
        }
        auto r = cw.code.decode(cw.data.data(), cw.data.size(), cw.parity.data());
        if (r.uncorrectable || r.corrected != errors) state.SkipWithError("not corrected");
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * kBytes);
}

}  // namespace

BENCHMARK(BM_Encode);
BENCHMARK(BM_DecodeClean);
BENCHMARK(BM_DecodeErrors)->Arg(1)->Arg(8)->Arg(kT);

// Debian's libsystemc.so holds main() and calls sc_main(); the bench links it through canopy_ssd.
int sc_main(int argc, char* argv[]) {
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
