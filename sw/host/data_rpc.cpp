#include "sw/host/data_rpc.hpp"

#include <algorithm>
#include <optional>

#include "ssd/hre_queue.h"
#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::sw {

bool rpc_retryable(const Hre::Response& r, uint32_t tries) {
    if (r.status == HRE_STATUS_NACK) return tries < kNackRetries;
    return r.ok() && r.result == SPU_OS_E_PERMISSION && tries < kPermissionRetries;
}

double rpc_retry_pause_ns(uint32_t tries) {
    return std::min(1e6, 2000.0 * double(1ull << std::min(tries, 20u)));
}

Hre::Response call_with_data(Hre& hre, uint8_t node, uint16_t rpc_id, const void* payload,
                             uint32_t bytes, uint16_t data_rpc,
                             const std::function<bool(const Hre::Request&)>& take) {
    for (uint32_t tries = 0;; ++tries) {
        const uint16_t tag = hre.send(node, rpc_id, payload, bytes);
        std::optional<Hre::Response> r;
        while (!(r = hre.try_wait(tag))) {
            if (auto req = hre.try_receive_in_place(data_rpc)) {
                const bool ours = take(*req);
                hre.release(*req);
                hre.respond(*req, ours ? 0 : SPU_OS_E_BAD_ARG);
                continue;
            }
            hre.idle();
        }
        if (!rpc_retryable(*r, tries)) return *r;
        const double until = hre.now_ns() + rpc_retry_pause_ns(tries);
        while (hre.now_ns() < until) hre.idle(until);
    }
}

}  // namespace canopy::sw
