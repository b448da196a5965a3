#include "platform/store_precondition.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "sw/firmware/ftl/ftl.h"

namespace canopy::platform {

namespace {
// The FTL's mapping unit in bytes (ssd.store.unit_bytes; 0: a page).
uint32_t store_unit_bytes(const PlatformConfig& cfg) {
    const uint32_t unit = cfg.ssd.store.unit_bytes;
    return unit ? unit : cfg.nand.geometry.page_bytes;
}

// Bytes of memory as tokens, one per unit: what SSD memory holds before anything is written
// there (zeros), a fill with 0xFF, or a device unit's bytes (kUnit + unit).
constexpr uint64_t kZero = 0, kOnes = 1, kUnit = 2;
// Where the FTL's write buffer and the host's staging unit sit in the token memory: apart,
// and unit-aligned like SPU-OS's (any addresses do: the FTL only passes them back).
constexpr uint64_t kBuffers = uint64_t(1) << 40, kStaging = uint64_t(1) << 41;

// One channel's flash and SSD memory as the FTL sees them, a unit's bytes kept as a token.
// Anything but whole units at unit offsets is a logic error: preconditioning writes whole units,
// so the FTL never merges part of one.
struct TokenFlash {
    const ftl_geometry& g;
    uint32_t ub, upp;
    ChannelImage& img;
    std::unordered_map<uint64_t, uint64_t> mem;  // by unit-aligned address

    // The FTL's numbering: block b = (die * planes + plane) * blocks + block, page b * pages + p.
    uint32_t block_of(uint32_t die, uint32_t plane, uint32_t block) const {
        return (die * g.planes_per_die + plane) * g.blocks_per_plane + block;
    }
    uint64_t page_of(const ftl_ppa& a) const {
        return uint64_t(block_of(a.die, a.plane, a.block)) * g.pages_per_block + a.page;
    }
    uint64_t unit_at(uint64_t addr) const {
        if (addr % ub) throw std::logic_error("preconditioning: a buffer off a unit boundary");
        return addr;
    }
    uint64_t token(uint64_t addr) const {
        auto it = mem.find(unit_at(addr));
        return it == mem.end() ? kZero : it->second;
    }
    void units(uint32_t len) const {
        if (len % ub) throw std::logic_error("preconditioning: a transfer of part of a unit");
    }
    int program(const ftl_ppa& a, uint64_t buf, const uint32_t* meta, uint32_t words) {
        ChannelImage::Page& p = img.pages[page_of(a)];
        if (!p.meta.empty()) throw std::logic_error("preconditioning: a page programmed twice");
        p.meta.assign(meta, meta + words);
        for (uint32_t s = 0; s < upp; ++s) p.tokens.push_back(token(buf + uint64_t(s) * ub));
        ++img.programs;
        return FTL_OK;
    }
    int read(const ftl_ppa& a, uint64_t buf, uint32_t off, uint32_t len, uint32_t* meta,
             uint32_t words) {
        auto it = img.pages.find(page_of(a));
        if (it == img.pages.end()) {
            std::fill_n(meta, words, 0xFFFFFFFFu);  // erased
        } else {
            std::copy_n(it->second.meta.begin(), words, meta);
        }
        units(off);
        units(len);
        for (uint32_t s = off / ub; s < (off + len) / ub; ++s)
            mem[unit_at(buf + uint64_t(s - off / ub) * ub)] =
                it == img.pages.end() ? kOnes : it->second.tokens.at(s);
        return FTL_OK;
    }
    int erase(uint32_t die, uint32_t plane, uint32_t block) {
        const uint32_t b = block_of(die, plane, block);
        const uint64_t first = uint64_t(b) * g.pages_per_block;
        img.pages.erase(img.pages.lower_bound(first),
                        img.pages.lower_bound(first + g.pages_per_block));
        ++img.erases[b];
        return FTL_OK;
    }
    void copy(uint64_t dst, uint64_t src, uint32_t len) {
        units(len);
        for (uint32_t i = 0; i < len; i += ub) mem[unit_at(dst + i)] = token(src + i);
    }
    void fill(uint64_t dst, uint8_t byte, uint32_t len) {
        units(len);
        if (byte != 0xFF) throw std::logic_error("preconditioning: a fill other than 0xFF");
        for (uint32_t i = 0; i < len; i += ub) mem[unit_at(dst + i)] = kOnes;
    }
};

TokenFlash& of(void* ctx) { return *static_cast<TokenFlash*>(ctx); }

const ftl_ops kTokenOps = {
    [](void* c, const ftl_ppa* a, uint64_t buf, const uint32_t* meta, uint32_t words) {
        return of(c).program(*a, buf, meta, words);
    },
    [](void* c, const ftl_ppa* a, uint64_t buf, uint32_t off, uint32_t len, uint32_t* meta,
       uint32_t words) { return of(c).read(*a, buf, off, len, meta, words); },
    [](void* c, uint32_t die, uint32_t plane, uint32_t block) {
        return of(c).erase(die, plane, block);
    },
    [](void* c, uint64_t dst, uint64_t src, uint32_t len) { of(c).copy(dst, src, len); },
    [](void* c, uint64_t dst, uint8_t byte, uint32_t len) { of(c).fill(dst, byte, len); },
    nullptr,
    nullptr,
    nullptr,
};

// fn(c) for every channel c < n, on as many threads as the host has cores: the channels share
// nothing (each its FTL, image, controller and dies), so the result is the same in any order.
void for_each_channel(uint32_t n, const std::function<void(uint32_t)>& fn) {
    std::atomic<uint32_t> next{0};
    std::vector<std::exception_ptr> failed(n);
    auto work = [&] {
        for (uint32_t c = next++; c < n; c = next++) {
            try {
                fn(c);
            } catch (...) {
                failed[c] = std::current_exception();
            }
        }
    };
    const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads(n > 1 ? std::min(n, cores) - 1 : 0);
    for (std::thread& t : threads) t = std::thread(work);
    work();
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
}

// A page's units' bytes from their tokens: `upp` units of `ub` bytes into `out`.
void fill_units(const uint64_t* tokens, uint32_t upp, uint32_t ub, uint8_t* out) {
    for (uint32_t s = 0; s < upp; ++s, out += ub) {
        if (tokens[s] == kZero || tokens[s] == kOnes)
            std::memset(out, tokens[s] == kZero ? 0x00 : 0xFF, ub);
        else
            precondition_bytes((tokens[s] - kUnit) * ub, out, ub);
    }
}

// The token of a unit's bytes when fill_units would make them again (zeros, 0xFF, or what
// preconditioning wrote at some device offset), else kPooled (no token).
constexpr uint64_t kPooled = uint64_t(1) << 63;  // | an index into a KeptPlane's pool
uint64_t token_of(const uint8_t* unit, uint32_t ub) {
    uint64_t w0;
    std::memcpy(&w0, unit, 8);
    const uint64_t zero = 0, ones = ~uint64_t(0);
    // Preconditioning's: word k holds w0 + 8k, w0 a multiple of ub (little-endian, as written).
    const uint64_t step = (w0 == zero || w0 == ones || w0 % ub) ? 0 : 8;
    for (uint32_t k = 1; k < ub / 8; ++k) {
        uint64_t w;
        std::memcpy(&w, unit + 8 * k, 8);
        if (w != w0 + step * k) return kPooled;
    }
    return w0 == zero ? kZero : w0 == ones ? kOnes : step ? kUnit + w0 / ub : kPooled;
}

// One plane's pages as its NAND keeps them, without their bytes: per page its units' tokens and
// its encoded spare area (parity, metadata: costly to compute, an eighth of the page); the data
// area is made again whenever a page is sensed (the units' bytes, randomised as the controller
// does). Preconditioning puts its pages here (keep); with nand.compact_pages the plane offers
// every page the controller programs in time too (keep_programmed), whose units that have no
// token (a host's data) go to a pool that holds each distinct unit once, shared by every page
// of the plane that holds it (fio writes the same few buffers over and over). An erased block's
// pages are dropped. The cells are the same words either way, so no result changes.
class KeptPlane : public nand::PageSource {
  public:
    struct Shape {
        uint32_t upp, ub, page_bytes, spare_bytes, pages_per_block;
        bool compact;  // nand.compact_pages: keep the pages programmed in time too
    };
    KeptPlane(const ssd::FlashController& ctl, uint32_t die, uint32_t plane, Shape shape)
        : ctl_(ctl), die_(die), plane_(plane), k_(shape) {}
    // Page (block, wl): its units' tokens (upp) and its encoded page (spare area from page_bytes).
    void keep(uint32_t block, uint32_t wl, const uint64_t* tokens, const uint8_t* page) {
        Block& b = block_at(block);
        std::copy_n(tokens, k_.upp, &b.tokens[size_t(wl) * k_.upp]);
        std::memcpy(&b.spare[size_t(wl) * k_.spare_bytes], page + k_.page_bytes, k_.spare_bytes);
        b.kept[wl] = true;
    }
    void cells(uint32_t block, uint32_t wl, uint64_t* words) const override {
        const Block& b = blocks_.at(block);
        uint8_t* bytes = reinterpret_cast<uint8_t*>(words);
        const uint64_t* t = &b.tokens[size_t(wl) * k_.upp];
        for (uint32_t s = 0; s < k_.upp; ++s) {
            uint8_t* out = bytes + size_t(s) * k_.ub;
            if (t[s] & kPooled)
                std::memcpy(out, pool_[t[s] & ~kPooled].bytes.get(), k_.ub);
            else
                fill_units(&t[s], 1, k_.ub, out);
        }
        ctl_.randomise_page(die_, plane_, block, wl, bytes);
        std::memcpy(bytes + k_.page_bytes, &b.spare[size_t(wl) * k_.spare_bytes], k_.spare_bytes);
        // The padding of the last word, as a program's data load leaves it.
        std::memset(bytes + total(), 0xFF, padded() - total());
    }
    void erased(uint32_t block) override {
        auto it = blocks_.find(block);
        if (it == blocks_.end()) return;
        for (uint32_t wl = 0; wl < k_.pages_per_block; ++wl)
            if (it->second.kept[wl])
                for (uint32_t s = 0; s < k_.upp; ++s)
                    release(it->second.tokens[size_t(wl) * k_.upp + s]);
        blocks_.erase(it);
    }
    bool keep_programmed(uint32_t block, uint32_t wl, const uint64_t* words) override {
        if (!k_.compact) return false;
        const uint8_t* bytes = reinterpret_cast<const uint8_t*>(words);
        for (size_t i = total(); i < padded(); ++i)
            if (bytes[i] != 0xFF) return false;  // not as cells() would make it
        plain_.assign(bytes, bytes + k_.page_bytes);
        ctl_.randomise_page(die_, plane_, block, wl, plain_.data());  // a keystream: undone
        uint64_t tokens[8];
        for (uint32_t s = 0; s < k_.upp; ++s) {
            const uint8_t* unit = plain_.data() + size_t(s) * k_.ub;
            tokens[s] = token_of(unit, k_.ub);
            if (tokens[s] == kPooled) tokens[s] = pooled(unit);
        }
        keep(block, wl, tokens, bytes);
        return true;
    }

  private:
    struct Block {
        std::vector<uint64_t> tokens;      // upp per page
        std::unique_ptr<uint8_t[]> spare;  // spare_bytes per page
        std::vector<bool> kept;            // per page: this source holds it
    };
    struct Pooled {
        std::unique_ptr<uint8_t[]> bytes;  // ub
        uint64_t refs = 0;                 // tokens that name it; 0: free, on free_
    };
    std::string_view view(const uint8_t* unit) const {
        return {reinterpret_cast<const char*>(unit), k_.ub};
    }
    size_t total() const { return size_t(k_.page_bytes) + k_.spare_bytes; }
    size_t padded() const { return (total() + 7) / 8 * 8; }
    Block& block_at(uint32_t block) {
        Block& b = blocks_[block];
        if (!b.spare) {
            b.tokens.assign(size_t(k_.pages_per_block) * k_.upp, 0);
            b.spare.reset(new uint8_t[size_t(k_.pages_per_block) * k_.spare_bytes]);
            b.kept.assign(k_.pages_per_block, false);
        }
        return b;
    }
    // The pool's token for a unit's bytes, added if no page holds them yet.
    uint64_t pooled(const uint8_t* unit) {
        if (auto it = index_.find(view(unit)); it != index_.end()) {
            ++pool_[it->second].refs;
            return kPooled | it->second;
        }
        uint32_t i;
        if (free_.empty()) {
            i = uint32_t(pool_.size());
            pool_.emplace_back();
        } else {
            i = free_.back();
            free_.pop_back();
        }
        Pooled& p = pool_[i];
        p.bytes.reset(new uint8_t[k_.ub]);
        std::memcpy(p.bytes.get(), unit, k_.ub);
        p.refs = 1;
        index_.emplace(view(p.bytes.get()), i);
        return kPooled | i;
    }
    void release(uint64_t token) {
        if (!(token & kPooled)) return;
        const uint32_t i = uint32_t(token & ~kPooled);
        Pooled& p = pool_[i];
        if (--p.refs) return;
        index_.erase(view(p.bytes.get()));
        p.bytes.reset();
        free_.push_back(i);
    }

    const ssd::FlashController& ctl_;
    uint32_t die_, plane_;
    Shape k_;
    std::unordered_map<uint32_t, Block> blocks_;  // by the plane's block
    std::vector<Pooled> pool_;
    std::vector<uint32_t> free_;
    std::unordered_map<std::string_view, uint32_t> index_;  // by the pooled bytes (views of them)
    std::vector<uint8_t> plain_;                            // keep_programmed's page, de-randomised
};

// The plane's KeptPlane: the one it has, else a new one it is given.
std::shared_ptr<KeptPlane> kept_plane(Platform& p, uint32_t channel, uint32_t die, uint32_t plane) {
    nand::Plane& pl = p.nand.die(channel, die).plane(plane);
    if (auto k = std::dynamic_pointer_cast<KeptPlane>(pl.source())) return k;
    const nand::Geometry& g = p.cfg.nand.geometry;
    const uint32_t ub = store_unit_bytes(p.cfg);
    auto k = std::make_shared<KeptPlane>(
        *p.device.ssd.flash.at(channel), die, plane,
        KeptPlane::Shape{g.page_bytes / ub, ub, g.page_bytes, g.spare_bytes, g.wordlines_per_block,
                         p.cfg.nand.compact_pages});
    pl.set_source(k);
    return k;
}

void check_ftl(int rc, uint32_t channel, const char* what) {
    if (rc != FTL_OK)
        throw std::runtime_error("preconditioning: channel " + std::to_string(channel) +
                                 "'s FTL failed its " + what + " (" + std::to_string(rc) + ")");
}
}  // namespace

Precondition Precondition::parse(const std::string& text, const std::string& input) {
    Precondition p;
    if (text == "seq") return p;
    if (text == "rand") {
        p.fill = Fill::Random;
        return p;
    }
    std::string digits = text;
    if (!digits.empty() && digits.back() == '%') digits.pop_back();
    const bool number =
        !digits.empty() && digits.size() <= 3 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    const unsigned v = number ? unsigned(std::stoul(digits)) : 0;
    if (!number || v < 1 || v > 100)
        throw InputError(input, "--precondition",
                         "'" + text + "' is not seq, rand or a percentage from 1 to 100");
    p.percent = v;
    return p;
}

std::string Precondition::name() const {
    if (fill == Fill::Random) return "rand";
    return percent == 100 ? "seq" : std::to_string(percent) + "%";
}

std::vector<uint64_t> Precondition::units(uint64_t device_units, uint64_t seed) const {
    const uint64_t n = fill == Fill::Random ? device_units : device_units * percent / 100;
    std::vector<uint64_t> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = i;
    if (fill == Fill::Random) {
        core::Rng rng(core::derive_seed(seed, "precondition"));
        // uniform01, not a std:: distribution: the same units on every standard library.
        for (uint64_t i = 0; i < device_units; ++i)
            v.push_back(
                std::min(device_units - 1, uint64_t(core::uniform01(rng) * double(device_units))));
    }
    return v;
}

void precondition_bytes(uint64_t offset, uint8_t* out, uint32_t n) {
    for (uint32_t i = 0; i + 8 <= n; i += 8) {
        const uint64_t w = offset + i;
        for (int b = 0; b < 8; ++b) out[i + b] = uint8_t(w >> (8 * b));  // little-endian
    }
}

StorePreconditioner::StorePreconditioner(Platform& p, const sw::BlockGeometry& geo)
    : platform_(p), geo_(geo) {
    unit_bytes_ = store_unit_bytes(p.cfg);
    upp_ = p.cfg.nand.geometry.page_bytes / unit_bytes_;
    pages_per_block_ = p.cfg.nand.geometry.wordlines_per_block;
}

void compact_nand_pages(Platform& p) {
    if (!p.cfg.nand.functional || !p.cfg.nand.compact_pages || !p.cfg.ssd.store.flash) return;
    const nand::Geometry& g = p.cfg.nand.geometry;
    for (uint32_t c = 0; c < p.device.ssd.flash.size(); ++c)
        for (uint32_t die = 0; die < g.dies_per_channel; ++die)
            for (uint32_t plane = 0; plane < g.planes_per_die; ++plane)
                kept_plane(p, c, die, plane);
}

uint64_t StorePreconditioner::device_units() const { return geo_.device_bytes() / unit_bytes_; }

std::vector<ChannelImage> StorePreconditioner::run(const std::vector<uint64_t>& units,
                                                   size_t flush_after) const {
    const nand::Geometry& n = platform_.cfg.nand.geometry;
    const sw::StoreConfig& store = platform_.cfg.ssd.store;
    std::vector<ChannelImage> images(geo_.spus);
    // Each SPU's writes in the order the sequence gives them (its FTL sees only its own), and
    // how many of them come before the flush after the first flush_after.
    std::vector<std::vector<std::pair<uint32_t, uint64_t>>> writes(geo_.spus);  // (lpn, unit)
    std::vector<size_t> before_flush(geo_.spus, SIZE_MAX);
    for (size_t i = 0; i < units.size(); ++i) {
        if (i == flush_after)
            for (uint32_t c = 0; c < geo_.spus; ++c) before_flush[c] = writes[c].size();
        const sw::BlockGeometry::Location l = geo_.locate(units[i] * unit_bytes_);
        const uint64_t x = l.nvm - uint64_t(l.spu) * geo_.bank_bytes;
        writes[l.spu].emplace_back(uint32_t(x / unit_bytes_), units[i]);
    }
    for_each_channel(geo_.spus, [&](uint32_t c) {
        ftl_config cfg = store.ftl(n.dies_per_channel, n.planes_per_die, n.wordlines_per_block,
                                   n.page_bytes, geo_.bank_bytes);
        TokenFlash flash{cfg.geo, unit_bytes_, upp_, images[c], {}};
        std::vector<uint32_t> tables((ftl_mem_bytes(&cfg) + 3) / 4);
        cfg.ops = &kTokenOps;
        cfg.ctx = &flash;
        cfg.mem = tables.data();
        cfg.mem_bytes = uint32_t(tables.size() * 4);
        cfg.buffers = kBuffers;
        struct ftl f;
        // What SPU-OS does at STORE_ATTACH on a fresh channel, then for each 4 KiB NVM write.
        check_ftl(store.format ? ftl_format(&f, &cfg) : ftl_mount(&f, &cfg), c, "mount");
        for (size_t i = 0; i < writes[c].size(); ++i) {
            if (i == before_flush[c]) check_ftl(ftl_flush(&f), c, "flush");
            flash.mem[kStaging] = kUnit + writes[c][i].second;
            check_ftl(ftl_write(&f, writes[c][i].first, kStaging, 0, unit_bytes_), c, "write");
            if (!store.write_cache) check_ftl(ftl_flush(&f), c, "flush");
        }
        check_ftl(ftl_flush(&f), c, "flush");
        check_ftl(ftl_save(&f), c, "save");
        struct ftl_stats st;
        ftl_stats(&f, &st);
        images[c].host_writes = st.host_writes;
        images[c].gc_victims = st.gc_victims;
        images[c].gc_copies = st.gc_copies;
        images[c].tables = std::move(tables);
    });
    return images;
}

void StorePreconditioner::locate(uint32_t b, uint32_t& die, uint32_t& plane,
                                 uint32_t& block) const {
    const nand::Geometry& n = platform_.cfg.nand.geometry;
    const uint32_t bpp = platform_.cfg.ssd.store.blocks_per_plane;
    block = b % bpp;
    plane = (b / bpp) % n.planes_per_die;
    die = b / bpp / n.planes_per_die;
}

std::vector<uint8_t> StorePreconditioner::image_bytes(uint32_t channel,
                                                      const ChannelImage::Page& img) const {
    const ssd::FlashController& ctl = *platform_.device.ssd.flash.at(channel);
    std::vector<uint8_t> bytes(platform_.cfg.nand.geometry.page_total_bytes(), 0xFF);
    if (img.tokens.size() != upp_) throw std::logic_error("preconditioning: a page's units");
    fill_units(img.tokens.data(), upp_, unit_bytes_, bytes.data());
    uint8_t* meta = bytes.data() + ctl.meta_offset();
    std::memset(meta, 0, ctl.meta_bytes());
    std::memcpy(meta, img.meta.data(), std::min<size_t>(img.meta.size() * 4, ctl.meta_bytes()));
    return bytes;
}

std::vector<uint8_t> StorePreconditioner::page_bytes(uint32_t channel, uint64_t page,
                                                     const ChannelImage::Page& img) const {
    std::vector<uint8_t> bytes = image_bytes(channel, img);
    uint32_t die, plane, block;
    locate(uint32_t(page / pages_per_block_), die, plane, block);
    platform_.device.ssd.flash.at(channel)->encode_page(
        die, plane, block, uint32_t(page % pages_per_block_), bytes.data());
    return bytes;
}

void StorePreconditioner::apply(const std::vector<ChannelImage>& images) const {
    static const nand::CellMode kModes[] = {nand::CellMode::Slc, nand::CellMode::Mlc,
                                            nand::CellMode::Tlc};
    const nand::CellMode mode = kModes[platform_.cfg.ssd.store.attach(geo_.bank_bytes).cell_mode];
    for_each_channel(uint32_t(images.size()), [&](uint32_t c) {
        uint32_t die, plane, block;
        for (const auto& [b, times] : images[c].erases) {
            locate(b, die, plane, block);
            nand::Plane& pl = platform_.nand.die(c, die).plane(plane);
            for (uint32_t i = 0; i < times; ++i) pl.erase(block);
        }
        // Where SPU-OS keeps the FTL's tables: the start of the SPU's bank (spu_os_abi.h).
        const std::vector<uint32_t>& t = images[c].tables;
        platform_.device.ssd.dram.write(uint64_t(c) * geo_.bank_bytes,
                                        reinterpret_cast<const uint8_t*>(t.data()), t.size() * 4);
        ssd::FlashController& ctl = *platform_.device.ssd.flash.at(c);
        // A functional array's planes keep these pages' bytes in KeptPlanes, not as pages.
        const nand::Geometry& g = platform_.cfg.nand.geometry;
        std::vector<std::shared_ptr<KeptPlane>> kept(g.dies_per_channel * g.planes_per_die);
        for (const auto& [page, img] : images[c].pages) {
            locate(uint32_t(page / pages_per_block_), die, plane, block);
            const uint32_t wl = uint32_t(page % pages_per_block_);
            std::shared_ptr<KeptPlane>& k = kept[die * g.planes_per_die + plane];
            if (platform_.cfg.nand.functional && !k) k = kept_plane(platform_, c, die, plane);
            std::vector<uint8_t> bytes = image_bytes(c, img);
            ctl.preload_page(platform_.nand.die(c, die).plane(plane), die, plane, block, wl, mode,
                             bytes.data(), k);
            if (k) k->keep(block, wl, img.tokens.data(), bytes.data());
        }
    });
}

}  // namespace canopy::platform
