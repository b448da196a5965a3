// RPCs whose handler sends the data first (Willow Section 3.1 "Building an SSD App", Figure 3's
// bulk read): the handler opens a DATA request to the calling HRE with the bytes streamed from
// its store, waits for the host's answer, and only then responds, so a success means the host
// holds the data (Key-Value's GET, Caching's READ, VICTIM and WRITEBACK; block_io's READ keeps
// many in flight and has its own loop). One RPC at a time on the HRE.
#pragma once

#include <cstdint>
#include <functional>

#include "sw/host/hre.hpp"

namespace canopy::sw {

// Sends the RPC and, until its response comes, takes the DATA requests (RPC ID `data_rpc`) that
// arrive on the HRE, in place: `take` reads what it needs of each (Hre::copy_payload) and says
// whether it is the one this RPC awaited. Each is released and answered: 0 if so, else
// SPU_OS_E_BAD_ARG. Returns the response, its status unchecked.
Hre::Response call_with_data(Hre& hre, uint8_t node, uint16_t rpc_id, const void* payload,
                             uint32_t bytes, uint16_t data_rpc,
                             const std::function<bool(const Hre::Request&)>& take);

}  // namespace canopy::sw
