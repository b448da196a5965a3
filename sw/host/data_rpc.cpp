#include "sw/host/data_rpc.hpp"

#include "sw/firmware/spu_os/spu_os_abi.h"

namespace canopy::sw {

Hre::Response call_with_data(Hre& hre, uint8_t node, uint16_t rpc_id, const void* payload,
                             uint32_t bytes, uint16_t data_rpc,
                             const std::function<bool(const Hre::Request&)>& take) {
    const uint16_t tag = hre.send(node, rpc_id, payload, bytes);
    for (;;) {
        if (auto r = hre.try_wait(tag)) return *r;
        if (auto req = hre.try_receive_in_place(data_rpc)) {
            const bool ours = take(*req);
            hre.release(*req);
            hre.respond(*req, ours ? 0 : SPU_OS_E_BAD_ARG);
            continue;
        }
        hre.idle();
    }
}

}  // namespace canopy::sw
