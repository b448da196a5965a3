// A fake NAND channel for the FTL's host tests: it enforces the rules the real flash does (a page
// is programmed once between erases, the pages of a block strictly in order), keeps page bytes
// and the spare metadata words, counts P/E cycles, and injects faults: program failures on chosen
// blocks, failing erases, uncorrectable reads of chosen pages, and power cuts (after a number of
// programs and erases every command fails without effect, until the test mounts again).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "ftl.h"

namespace canopy::ftl_test {

class FakeNand {
  public:
    explicit FakeNand(const ftl_geometry& g)
        : g_(g),
          pages_(size_t(g.dies) * g.planes_per_die * g.blocks_per_plane * g.pages_per_block),
          data_(pages_.size() * g.page_bytes, 0xFF),
          next_(size_t(g.dies) * g.planes_per_die * g.blocks_per_plane, 0),
          pe_(next_.size(), 0) {
        ops_.program = [](void* c, const ftl_ppa* a, uint64_t buf, const uint32_t* meta,
                          uint32_t words) {
            return static_cast<FakeNand*>(c)->program(*a, buf, meta, words);
        };
        ops_.read = [](void* c, const ftl_ppa* a, uint64_t buf, uint32_t off, uint32_t len,
                       uint32_t* meta, uint32_t words) {
            return static_cast<FakeNand*>(c)->read(*a, buf, off, len, meta, words);
        };
        ops_.erase = [](void* c, uint32_t die, uint32_t plane, uint32_t block) {
            return static_cast<FakeNand*>(c)->erase(die, plane, block);
        };
        ops_.copy = [](void*, uint64_t dst, uint64_t src, uint32_t len) {
            std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), len);
        };
        ops_.fill = [](void*, uint64_t dst, uint8_t byte, uint32_t len) {
            std::memset(reinterpret_cast<void*>(dst), byte, len);
        };
    }

    const ftl_ops* ops() const { return &ops_; }

    // The FTL's tables behind the table callbacks, as on the SPU (SSD memory behind DMA): `bytes`
    // of them, which the FTL reaches only through table_read/write/fill (counted).
    void use_external_tables(uint32_t bytes) {
        tables.assign(bytes, 0);
        ops_.table_read = [](void* c, uint32_t off, void* dst, uint32_t n) {
            auto& t = static_cast<FakeNand*>(c)->table(off, n);
            std::memcpy(dst, &t[off], n);
        };
        ops_.table_write = [](void* c, uint32_t off, const void* src, uint32_t n) {
            auto& t = static_cast<FakeNand*>(c)->table(off, n);
            std::memcpy(&t[off], src, n);
        };
        ops_.table_fill = [](void* c, uint32_t off, uint8_t byte, uint32_t n) {
            auto& t = static_cast<FakeNand*>(c)->table(off, n);
            std::memset(&t[off], byte, n);
        };
    }
    std::vector<uint8_t> tables;
    uint64_t table_accesses = 0, table_out_of_range = 0;

    uint32_t block_index(uint32_t die, uint32_t plane, uint32_t block) const {
        return (die * g_.planes_per_die + plane) * g_.blocks_per_plane + block;
    }
    uint32_t page_index(const ftl_ppa& a) const {
        return block_index(a.die, a.plane, a.block) * g_.pages_per_block + a.page;
    }

    // Faults.
    std::map<uint32_t, uint32_t> fail_from_page;  // block index -> programs at pages >= fail
    std::set<uint32_t> fail_erase;                // block indexes whose erases fail
    std::set<uint32_t> uncorrectable;             // page indexes whose data reads fail
    int64_t ops_until_cut = -1;                   // programs + erases left before power dies
    bool tear_on_cut = false;  // the program the power dies in leaves its page torn (unreadable)
    bool dead = false;

    // Observations.
    uint64_t violations = 0;  // rule breaks by the FTL (each also fails the test)
    uint64_t programs = 0, erases = 0, reads = 0;
    // From the metadata of programs: the slot (page * units per page + slot) each LPN was last
    // programmed in (with a unit per page, its page).
    std::map<uint32_t, uint32_t> last_page_of_lpn;
    const std::vector<uint32_t>& pe() const { return pe_; }

    void restore_power() {
        dead = false;
        ops_until_cut = -1;
    }

  private:
    struct Page {
        bool written = false, torn = false;
        std::vector<uint32_t> meta;  // empty: erased (all ones)
    };

    bool tick(bool* now = nullptr) {
        if (dead) return false;
        if (ops_until_cut == 0) {
            dead = true;
            if (now) *now = true;
            return false;
        }
        if (ops_until_cut > 0) --ops_until_cut;
        return true;
    }

    bool valid(const ftl_ppa& a) const {
        return a.die < g_.dies && a.plane < g_.planes_per_die && a.block < g_.blocks_per_plane &&
               a.page < g_.pages_per_block;
    }

    int program(const ftl_ppa& a, uint64_t buf, const uint32_t* meta, uint32_t words) {
        bool now = false;
        if (!tick(&now)) {
            if (now && tear_on_cut && valid(a)) {  // power died during this program
                uint32_t b = block_index(a.die, a.plane, a.block), p = page_index(a);
                if (!pages_[p].written && next_[b] == a.page) {
                    ++next_[b];
                    pages_[p].written = pages_[p].torn = true;
                }
            }
            return FTL_E_IO;
        }
        if (!valid(a)) return violation();
        uint32_t b = block_index(a.die, a.plane, a.block), p = page_index(a);
        if (pages_[p].written || next_[b] != a.page) return violation();
        ++next_[b];
        pages_[p].written = true;
        auto f = fail_from_page.find(b);
        if (f != fail_from_page.end() && a.page >= f->second) {
            pages_[p].torn = true;  // the data did not make it
            pages_[p].meta.assign(words, 0x89abcdefu);
            return FTL_E_FAILED;
        }
        ++programs;
        pages_[p].torn = false;
        pages_[p].meta.assign(meta, meta + words);
        std::memcpy(&data_[size_t(p) * g_.page_bytes], reinterpret_cast<const void*>(buf),
                    g_.page_bytes);
        for (uint32_t s = 1; s < words; ++s)
            if (meta[s] != ~0u) last_page_of_lpn[meta[s]] = p * (words - 1) + (s - 1);
        return FTL_OK;
    }

    int read(const ftl_ppa& a, uint64_t buf, uint32_t off, uint32_t len, uint32_t* meta,
             uint32_t words) {
        if (dead) return FTL_E_IO;
        if (!valid(a) || off > g_.page_bytes || len > g_.page_bytes - off) return violation();
        uint32_t p = page_index(a);
        const Page& pg = pages_[p];
        ++reads;
        if (pg.torn) return FTL_E_UNCORRECTABLE;
        for (uint32_t w = 0; w < words; ++w) meta[w] = w < pg.meta.size() ? pg.meta[w] : ~0u;
        if (len) {
            std::memcpy(reinterpret_cast<void*>(buf), &data_[size_t(p) * g_.page_bytes + off], len);
            if (uncorrectable.count(p)) return FTL_E_UNCORRECTABLE;
        }
        return FTL_OK;
    }

    int erase(uint32_t die, uint32_t plane, uint32_t block) {
        if (!tick()) return FTL_E_IO;
        if (die >= g_.dies || plane >= g_.planes_per_die || block >= g_.blocks_per_plane)
            return violation();
        uint32_t b = block_index(die, plane, block);
        if (fail_erase.count(b)) return FTL_E_FAILED;  // the block keeps what it held
        ++erases;
        ++pe_[b];
        next_[b] = 0;
        for (uint32_t i = 0; i < g_.pages_per_block; ++i) {
            uint32_t p = b * g_.pages_per_block + i;
            pages_[p] = Page{};
            uncorrectable.erase(p);
        }
        std::memset(&data_[size_t(b) * g_.pages_per_block * g_.page_bytes], 0xFF,
                    size_t(g_.pages_per_block) * g_.page_bytes);
        return FTL_OK;
    }

    std::vector<uint8_t>& table(uint32_t off, uint32_t n) {
        ++table_accesses;
        if (off > tables.size() || n > tables.size() - off) {
            ++table_out_of_range;
            static std::vector<uint8_t> sink;
            sink.assign(size_t(off) + n, 0);
            return sink;
        }
        return tables;
    }

    int violation() {
        ++violations;
        return FTL_E_IO;
    }

    ftl_geometry g_;
    ftl_ops ops_{};
    std::vector<Page> pages_;
    std::vector<uint8_t> data_;
    std::vector<uint32_t> next_, pe_;
};

}  // namespace canopy::ftl_test
