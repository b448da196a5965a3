#include "sw/host/kv_store.hpp"

#include <cstring>

#include "sw/firmware/apps/kv_abi.h"
#include "sw/firmware/spu_os/spu_os_abi.h"
#include "sw/host/data_rpc.hpp"
#include "sw/host/willow_apps.hpp"

namespace canopy::sw {

namespace {

std::string result_name(uint32_t r) {
    switch (r) {
        case KV_E_ARGS:
            return "KV_E_ARGS";
        case KV_E_NOT_FOUND:
            return "KV_E_NOT_FOUND";
        case KV_E_FULL:
            return "KV_E_FULL (the SPU's table region is full)";
        case KV_E_STATE:
            return "KV_E_STATE (the table is not set up, or its region is corrupt)";
        default:
            return spu_os_result_name(r);
    }
}

}  // namespace

KvStore::KvStore(std::unique_ptr<Hre> hre, uint32_t app, uint32_t spus, uint32_t buckets)
    : hre_(std::move(hre)), app_(app), spus_(spus), buckets_(buckets) {
    if (spus_ == 0 || buckets_ == 0 || app_ == SPU_OS_KERNEL_APP || app_ > 0xFF)
        throw host::HostFault("Key-Value library: bad set-up (" + std::to_string(spus) + " SPUs, " +
                              std::to_string(buckets) + " buckets, app id " + std::to_string(app) +
                              ")");
}

uint64_t KvStore::hash(const std::string& key) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

uint32_t KvStore::call(uint16_t handler, const std::string& key, const std::vector<uint8_t>* value,
                       std::vector<uint8_t>* out) {
    if (key.empty() || key.size() > KV_MAX_KEY)
        throw host::HostFault("Key-Value: a key of " + std::to_string(key.size()) + " bytes (1.." +
                              std::to_string(KV_MAX_KEY) + ")");
    if (value && value->size() > KV_MAX_VALUE)
        throw host::HostFault("Key-Value: a value of " + std::to_string(value->size()) +
                              " bytes (at most " + std::to_string(KV_MAX_VALUE) + ")");
    const uint64_t h = hash(key);
    const uint8_t spu = uint8_t(h % spus_);
    kv_key_args a{};
    a.hash_lo = uint32_t(h);
    a.hash_hi = uint32_t(h >> 32);
    a.bucket = uint32_t((h / spus_) % buckets_);
    a.key_bytes = uint16_t(key.size());
    a.value_bytes = uint16_t(value ? value->size() : 0);
    a.cookie = next_cookie_++;
    std::vector<uint8_t> p(sizeof a + key.size() + a.value_bytes);
    std::memcpy(p.data(), &a, sizeof a);
    std::memcpy(p.data() + sizeof a, key.data(), key.size());
    if (a.value_bytes) std::memcpy(p.data() + sizeof a + key.size(), value->data(), a.value_bytes);
    const Hre::Response r = call_with_data(
        *hre_, spu, SPU_OS_RPC_ID(app_, handler), p.data(), uint32_t(p.size()),
        SPU_OS_RPC_ID(app_, KV_DATA), [&](const Hre::Request& req) {
            kv_data d{};
            if (req.length >= sizeof d) hre_->copy_payload(req, 0, &d, sizeof d);
            const bool ours = out && req.length >= sizeof d && d.cookie == a.cookie &&
                              req.length == sizeof d + d.value_bytes;
            if (ours) {
                out->resize(d.value_bytes);
                if (d.value_bytes) hre_->copy_payload(req, sizeof d, out->data(), d.value_bytes);
            }
            return ours;
        });
    if (!r.ok())
        throw host::HostFault("Key-Value: RPC to SPU " + std::to_string(spu) +
                              " failed: HRE status " + std::to_string(r.status));
    return r.result;
}

void KvStore::put(const std::string& key, const std::vector<uint8_t>& value) {
    const uint32_t r = call(KV_PUT, key, &value, nullptr);
    if (r != KV_OK)
        throw host::HostFault("Key-Value: PUT of '" + key + "' failed: " + result_name(r));
}

std::optional<std::vector<uint8_t>> KvStore::get(const std::string& key) {
    std::vector<uint8_t> v;
    const uint32_t r = call(KV_GET, key, nullptr, &v);
    if (r == KV_E_NOT_FOUND) return std::nullopt;
    if (r != KV_OK)
        throw host::HostFault("Key-Value: GET of '" + key + "' failed: " + result_name(r));
    return v;
}

bool KvStore::del(const std::string& key) {
    const uint32_t r = call(KV_DELETE, key, nullptr, nullptr);
    if (r == KV_E_NOT_FOUND) return false;
    if (r != KV_OK)
        throw host::HostFault("Key-Value: DELETE of '" + key + "' failed: " + result_name(r));
    return true;
}

}  // namespace canopy::sw
