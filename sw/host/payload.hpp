// RPC payloads as the host libraries build them: the ABI headers' plain structs appended as
// their bytes (little-endian, like the rv32 firmware that reads them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace canopy::sw {

template <class T>
void put(std::vector<uint8_t>& payload, const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "an ABI struct");
    // resize and copy: GCC 12 warns about insert() of a struct's bytes (a false -Wnonnull).
    const size_t at = payload.size();
    payload.resize(at + sizeof v);
    std::memcpy(payload.data() + at, &v, sizeof v);
}

}  // namespace canopy::sw
