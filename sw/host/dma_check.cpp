#include "sw/host/dma_check.hpp"

namespace canopy::sw {

namespace {
uint64_t pattern(uint64_t i) { return i * 0x9e3779b97f4a7c15ull ^ 0x5a5a5a5a5a5a5a5aull; }
}  // namespace

host::HostProgram dma_check(const DmaCheckParams& params, DmaCheckResult& result) {
    return [params, &result](host::HostCore& cpu) {
        const uint64_t n = params.bytes;
        const uint64_t src = cpu.mmap(n, host::kPage2M), dst = cpu.mmap(n, host::kPage2M);
        cpu.pin(src, n);
        cpu.pin(dst, n);
        for (uint64_t off = 0; off + 8 <= n; off += 8) cpu.store<uint64_t>(src + off, pattern(off));
        DmaDriver dma(cpu, params.bar0_address);
        const uint64_t src_bus = params.translate ? src : cpu.physical(src);
        const uint64_t dst_bus = params.translate ? dst : cpu.physical(dst);
        result.to_device = dma.copy_to_device(src_bus, 0, uint32_t(n), params.translate);
        result.to_host = dma.copy_to_host(dst_bus, 0, uint32_t(n), params.translate);
        for (uint64_t off = 0; off + 8 <= n; off += 8) {
            const uint64_t got = cpu.load<uint64_t>(dst + off), want = pattern(off);
            for (int b = 0; b < 8; ++b)
                result.mismatched_bytes += ((got >> (8 * b)) & 0xff) != ((want >> (8 * b)) & 0xff);
        }
        result.ran = true;
    };
}

}  // namespace canopy::sw
