// The Key-Value host library (Willow Section 4.5): PUT, GET and DELETE of byte-string keys and
// values on the Key-Value SSD App (sw/firmware/apps/kv.c, RPCs in kv_abi.h), from a user process
// on its own HRE, with no system call per operation. The library hashes the key (FNV-1a, 64 bit)
// and the hash picks the SPU (hash % spus) and the bucket there ((hash / spus) % buckets); the SPU
// walks the bucket's chain. The host kernel sets the app up on every SPU and grants the process
// the table's regions (platform/willow_stack: WillowStack::key_value).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sw/host/hre.hpp"

namespace canopy::sw {

class KvStore {
  public:
    // On the process's own HRE; `app`: the id the Key-Value app is installed as; the table has
    // `buckets` per SPU.
    KvStore(std::unique_ptr<Hre> hre, uint32_t app, uint32_t spus, uint32_t buckets);

    // Inserts or replaces. Throws HostFault for a key of 0 or more than 64 bytes, a value over
    // 8 KiB, or a full table (naming the SPU).
    void put(const std::string& key, const std::vector<uint8_t>& value);
    // The value, or nothing when the key is absent.
    std::optional<std::vector<uint8_t>> get(const std::string& key);
    // Whether the key was there.
    bool del(const std::string& key);

    static uint64_t hash(const std::string& key);

  private:
    // Sends the RPC, takes a GET's DATA into `value`; the app's result.
    uint32_t call(uint16_t handler, const std::string& key, const std::vector<uint8_t>* value,
                  std::vector<uint8_t>* out);

    std::unique_ptr<Hre> hre_;
    uint32_t app_, spus_, buckets_;
    uint32_t next_cookie_ = 1;
};

}  // namespace canopy::sw
