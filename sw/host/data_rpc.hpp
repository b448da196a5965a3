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

// A request the ring dropped (NACK: the SPU had no room) is sent again, up to 32 times, and so is
// one SPU-OS refused for want of a permission entry (SPU_OS_E_PERMISSION: its table may have
// evicted the entry; the kernel's notice thread grants it again), up to 8 times, as
// libDirectIO's retries; each after a pause that doubles from 2 us up to 1 ms.
constexpr uint32_t kNackRetries = 32, kPermissionRetries = 8;
bool rpc_retryable(const Hre::Response& r, uint32_t tries);
double rpc_retry_pause_ns(uint32_t tries);

// Sends the RPC and, until its response comes, takes the DATA requests (RPC ID `data_rpc`) that
// arrive on the HRE, in place: `take` reads what it needs of each (Hre::copy_payload) and says
// whether it is the one this RPC awaited. Each is released and answered: 0 if so, else
// SPU_OS_E_BAD_ARG. Retries as rpc_retryable says; returns the last response, its status
// unchecked.
Hre::Response call_with_data(Hre& hre, uint8_t node, uint16_t rpc_id, const void* payload,
                             uint32_t bytes, uint16_t data_rpc,
                             const std::function<bool(const Hre::Request&)>& take);

}  // namespace canopy::sw
