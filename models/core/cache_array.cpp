#include "core/cache_array.hpp"

#include <cstring>

#include "core/error.hpp"

namespace canopy::core {

namespace {
bool power_of_two(uint64_t v) { return v && !(v & (v - 1)); }
}  // namespace

void CacheGeometry::validate(const std::string& scope) const {
    if (!power_of_two(line_bytes))
        throw InputError("config", scope + ".line_bytes",
                         "must be a power of two, not " + std::to_string(line_bytes));
    if (ways == 0 || size_bytes % (uint64_t(ways) * line_bytes) != 0)
        throw InputError("config", scope + ".size_bytes",
                         std::to_string(size_bytes) + " is not a multiple of ways x line_bytes (" +
                             std::to_string(ways) + " x " + std::to_string(line_bytes) + ")");
    if (!power_of_two(sets()))
        throw InputError(
            "config", scope + ".size_bytes",
            "gives " + std::to_string(sets()) + " sets; the set count must be a power of two");
}

CacheArray::CacheArray(const CacheGeometry& g, bool with_data)
    : geometry_(g),
      line_mask_(g.line_bytes - 1),
      line_shift_(unsigned(__builtin_ctzll(g.line_bytes))),
      sets_(g.sets()),
      lines_(g.sets() * g.ways),
      data_(with_data ? g.size_bytes : 0) {}

CacheArray::Line* CacheArray::find(uint64_t address) {
    const uint64_t a = line_of(address);
    Line* set = &lines_[set_index(a) * geometry_.ways];
    for (uint32_t w = 0; w < geometry_.ways; ++w) {
        if (is_valid(set[w].state) && set[w].address == a) {
            set[w].last_use = ++clock_;
            return &set[w];
        }
    }
    return nullptr;
}

const CacheArray::Line* CacheArray::peek(uint64_t address) const {
    const uint64_t a = line_of(address);
    const Line* set = &lines_[set_index(a) * geometry_.ways];
    for (uint32_t w = 0; w < geometry_.ways; ++w)
        if (is_valid(set[w].state) && set[w].address == a) return &set[w];
    return nullptr;
}

CacheArray::Line& CacheArray::victim(uint64_t address) {
    Line* set = &lines_[set_index(line_of(address)) * geometry_.ways];
    Line* v = &set[0];
    for (uint32_t w = 0; w < geometry_.ways; ++w) {
        if (!is_valid(set[w].state)) return set[w];
        if (set[w].last_use < v->last_use) v = &set[w];
    }
    return *v;
}

void CacheArray::fill(Line& line, uint64_t address, LineState state, const uint8_t* data) {
    line.address = line_of(address);
    line.state = state;
    line.last_use = ++clock_;
    if (data && !data_.empty()) std::memcpy(this->data(line), data, geometry_.line_bytes);
}

uint8_t* CacheArray::data(const Line& line) {
    if (data_.empty()) return nullptr;
    return &data_[size_t(&line - lines_.data()) * geometry_.line_bytes];
}

uint64_t CacheArray::valid_lines() const {
    uint64_t n = 0;
    for (const Line& l : lines_) n += is_valid(l.state);
    return n;
}

}  // namespace canopy::core
