#include "nand/plane.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace canopy::nand {

static constexpr uint64_t kOnes = ~0ull;

Plane::Plane(const NandConfig& cfg, const ReliabilityModel& model, uint64_t scramble_key)
    : cfg_(cfg),
      model_(model),
      scramble_key_(scramble_key),
      words_(cfg.geometry.page_words()),
      page_bits_(uint64_t(cfg.geometry.page_total_bytes()) * 8),
      functional_(cfg.functional) {}

const BlockState* Plane::block(uint32_t b) const {
    auto it = blocks_.find(b);
    return it == blocks_.end() ? nullptr : &it->second;
}

const PageState* Plane::page(uint32_t b, uint32_t wl) const {
    const BlockState* bs = block(b);
    return bs ? &bs->pages[wl] : nullptr;
}

uint32_t Plane::pe_cycles(uint32_t b) const {
    const BlockState* bs = block(b);
    return cfg_.reliability.initial_pe_cycles + (bs ? bs->pe_cycles : 0);
}

BlockState& Plane::touch(uint32_t b) {
    auto [it, added] = blocks_.try_emplace(b);
    if (added) it->second.pages.resize(cfg_.geometry.wordlines_per_block);
    return it->second;
}

uint64_t* Plane::cells(Latch l) {
    if (!functional_) return nullptr;
    auto& p = latches_[l];
    if (!p) {
        p.reset(new uint64_t[words_]);
        // Power-on contents: each latch as its init leaves it (S = 1, C = 0), data latches 1.
        std::fill_n(p.get(), words_, l == C ? 0ull : kOnes);
    }
    return p.get();
}

uint64_t* Plane::latch(Latch l) {
    flips_[l].known = false;
    return cells(l);
}

static bool slc_like(CellMode m) { return m == CellMode::Slc || m == CellMode::Esp; }

std::string Plane::check_program(uint32_t b, uint32_t wl, CellMode mode) const {
    const BlockState* bs = block(b);
    if (!bs) return {};
    const PageState& p = bs->pages[wl];
    if (p.mode != CellMode::Erased)
        return "wordline " + std::to_string(wl) + " of block " + std::to_string(b) +
               " is not erased (programmed " + mode_name(p.mode) + ")";
    // SLC and ESP pages may share a block (both one bit per cell); otherwise every page of a
    // block takes the mode of its first program since the erase.
    if (bs->mode != CellMode::Erased && bs->mode != mode && !(slc_like(bs->mode) && slc_like(mode)))
        return "block " + std::to_string(b) + " holds " + mode_name(bs->mode) +
               " pages since its erase; erase it before programming " + mode_name(mode);
    if ((mode == CellMode::Mlc || mode == CellMode::Tlc) && int32_t(wl) <= bs->last_programmed)
        return std::string(mode_name(mode)) + " programs wordlines in order: wordline " +
               std::to_string(wl) + " after " + std::to_string(bs->last_programmed) + " in block " +
               std::to_string(b);
    return {};
}

void Plane::scramble(uint64_t* w, uint32_t b, uint32_t wl) const {
    uint64_t key = core::splitmix64(scramble_key_ ^ (uint64_t(b) << 16 | wl));
    for (uint32_t i = 0; i < words_; ++i) w[i] ^= core::splitmix64(key + i);
}

PageState& Plane::mark_programmed(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble,
                                  double esp_factor, double now_s) {
    BlockState& bs = touch(b);
    PageState& p = bs.pages[wl];
    p.mode = mode;
    p.scramble = scramble;
    p.esp_factor = mode == CellMode::Esp ? esp_factor : 0.0;
    p.programmed_s = now_s;
    if (bs.mode == CellMode::Erased) bs.mode = mode;
    bs.last_programmed = std::max(bs.last_programmed, int32_t(wl));
    return p;
}

void Plane::program(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble, double esp_factor,
                    double now_s) {
    PageState& p = mark_programmed(b, wl, mode, scramble, esp_factor, now_s);
    if (!functional_) return;
    // The cache register hands the page to a data latch that drives the program (two for the
    // multi-level modes, which keep the page while the other levels are placed).
    uint64_t* c = cells(C);
    uint64_t* d1 = cells(D1);
    std::memcpy(d1, c, words_ * 8);
    if (!slc_like(mode)) std::memcpy(cells(D2), c, words_ * 8);
    if (scramble == Scramble::Controller && source_ && source_->keep_programmed(b, wl, d1)) {
        p.from_source = true;
        return;
    }
    p.data.reset(new uint64_t[words_]);
    std::memcpy(p.data.get(), d1, words_ * 8);
    if (scramble == Scramble::OnDie) this->scramble(p.data.get(), b, wl);
}

void Plane::program_image(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble,
                          const uint8_t* bytes, size_t n, double now_s) {
    load_begin();
    data_in(0, bytes, uint32_t(std::min<size_t>(n, size_t(words_) * 8)));
    program(b, wl, mode, scramble, 0.0, now_s);
}

void Plane::set_source(std::shared_ptr<PageSource> source) {
    if (!functional_ || !source || (source_ && source_ != source))
        throw std::logic_error(
            "nand: a page from a source needs a functional plane and one source");
    source_ = std::move(source);
}

void Plane::program_from(std::shared_ptr<PageSource> source, uint32_t b, uint32_t wl, CellMode mode,
                         Scramble scramble, double now_s) {
    set_source(std::move(source));
    mark_programmed(b, wl, mode, scramble, 0.0, now_s).from_source = true;
}

bool Plane::stored_cells(uint32_t b, uint32_t wl, uint64_t* words) const {
    const PageState* p = page(b, wl);
    if (!p || p->mode == CellMode::Erased || !functional_) return false;
    if (p->from_source)
        source_->cells(b, wl, words);
    else
        std::memcpy(words, p->data.get(), words_ * 8);
    return true;
}

void Plane::erase(uint32_t b) {
    BlockState& bs = touch(b);
    ++bs.pe_cycles;
    bs.last_programmed = -1;
    bs.mode = CellMode::Erased;
    bool from_source = false;
    for (auto& p : bs.pages) {
        from_source |= p.from_source;
        p = PageState{};
    }
    if (from_source) source_->erased(b);
}

void Plane::load_begin() {
    flips_[C].known = false;
    if (uint64_t* c = cells(C)) std::fill_n(c, words_, kOnes);
}

void Plane::cache_from_sense() {
    flips_[C] = flips_[S];
    if (functional_) std::memcpy(cells(C), cells(S), words_ * 8);
}

void Plane::data_in(uint32_t column, const uint8_t* src, uint32_t n) {
    // New bytes over whatever the latch held: no longer one sensing's result.
    if (uint64_t* c = latch(C)) std::memcpy(reinterpret_cast<uint8_t*>(c) + column, src, n);
}

bool Plane::data_out(uint32_t column, uint8_t* dst, uint32_t n,
                     std::vector<uint64_t>* flipped) const {
    if (!functional_) return false;
    const uint64_t* c = latches_[C].get();
    if (!c) {  // never used: as power-on leaves it
        std::memset(dst, 0, n);
        return false;
    }
    std::memcpy(dst, reinterpret_cast<const uint8_t*>(c) + column, n);
    const Flips& f = flips_[C];
    if (!f.known || !flipped) return false;
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "bit i of the latch is byte i / 8");
    const auto from = std::lower_bound(f.bits.begin(), f.bits.end(), uint64_t(column) * 8);
    const auto to = std::lower_bound(from, f.bits.end(), (uint64_t(column) + n) * 8);
    flipped->insert(flipped->end(), from, to);
    return true;
}

std::string Plane::check_sense(const SenseSlot* slots, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < i; ++j)
            if (slots[j].block == slots[i].block)
                return "block " + std::to_string(slots[i].block) + " appears in two MWS slots";
        if (slots[i].pbm == 0)
            return "slot " + std::to_string(i) + " (block " + std::to_string(slots[i].block) +
                   ") selects no wordline";
        const BlockState* bs = block(slots[i].block);
        if (!bs) continue;
        for (uint64_t m = slots[i].pbm; m; m &= m - 1) {
            uint32_t wl = uint32_t(__builtin_ctzll(m));
            CellMode mode = bs->pages[wl].mode;
            if (mode == CellMode::Mlc || mode == CellMode::Tlc)
                if (__builtin_popcountll(slots[i].pbm) > 1 || n > 1)
                    return "wordline " + std::to_string(wl) + " of block " +
                           std::to_string(slots[i].block) + " is " + mode_name(mode) +
                           "; multi-wordline sensing needs SLC or ESP pages";
        }
    }
    return {};
}

// The cells of one wordline as the sense amplifiers see them this time: the stored (possibly
// randomised) bits with this sensing's raw bit errors, in `into` (or, without it, the page
// itself when there are none). Null for an erased page (all ones).
const uint64_t* Plane::sensed_page(const PageState& p, uint32_t b, uint32_t wl, double now_s,
                                   core::Rng& rng, bool inject, SenseResult& r,
                                   std::vector<uint64_t>* flipped, uint64_t* into) {
    r.bits_sensed += page_bits_;
    if (p.mode == CellMode::Erased) return nullptr;
    double p_err = 0;
    if (inject) {
        double days = (now_s - p.programmed_s) / 86400.0 + cfg_.reliability.retention_days;
        p_err = model_.rber(p.mode, pe_cycles(b), days, p.randomised(), p.esp_factor);
    }
    if (!into) {
        if (!(p_err > 0) && !p.from_source) return p.data.get();
        noisy_.resize(words_);
        into = noisy_.data();
    }
    if (p.from_source)
        source_->cells(b, wl, into);
    else
        std::memcpy(into, p.data.get(), words_ * 8);
    if (p_err > 0) r.bit_errors += inject_bit_errors(rng, into, page_bits_, p_err, flipped);
    return into;
}

SenseResult Plane::sense(const SenseSlot* slots, size_t n, const SenseFlags& f, double now_s,
                         core::Rng& rng, bool inject) {
    SenseResult r;
    for (size_t i = 0; i < n; ++i) r.wordlines += uint64_t(__builtin_popcountll(slots[i].pbm));
    if (!functional_) {
        r.bits_sensed = r.wordlines * page_bits_;
        return r;
    }
    const bool single = n == 1 && r.wordlines == 1;
    // One wordline sensed afresh, not inverted: the S-latch's raw bit errors are this sensing's
    // flips, relative to the controller's codewords when the controller programmed the page
    // (prefix 9Bh), or to an erased page.
    Flips sensed;
    sensed.known = single && f.init_s && !f.inverse;
    if (sensed.known)
        if (const PageState* p = page(slots[0].block, uint32_t(__builtin_ctzll(slots[0].pbm))))
            sensed.known = p->mode == CellMode::Erased || p->scramble == Scramble::Controller;
    std::vector<uint64_t>* flipped = sensed.known ? &sensed.bits : nullptr;
    uint64_t* s = cells(S);
    uint64_t* c = cells(C);
    // The bitlines' result (before an inverse read's inversion) goes into `res`: the S-latch
    // itself for one wordline that initialises it (a read: no passes over the page but a copy),
    // else scratch to combine with it.
    uint64_t* res = s;
    if (single && f.init_s) {
        const uint32_t wl = uint32_t(__builtin_ctzll(slots[0].pbm));
        const BlockState* bs = block(slots[0].block);
        if (!bs) r.bits_sensed += page_bits_;
        if (!bs ||
            !sensed_page(bs->pages[wl], slots[0].block, wl, now_s, rng, inject, r, flipped, s))
            std::fill_n(s, words_, kOnes);
        else if (bs->pages[wl].scramble == Scramble::OnDie)
            scramble(s, slots[0].block, wl);
    } else {
        // OR over blocks (NOR-like strings in parallel) of the AND within each block (cells in
        // series). Erased cells conduct (read 1), so they are the identity of the AND.
        scratch_.assign(words_, 0);
        res = scratch_.data();
        acc_.resize(words_);
        for (size_t i = 0; i < n; ++i) {
            std::fill(acc_.begin(), acc_.end(), kOnes);
            const BlockState* bs = block(slots[i].block);
            for (uint64_t m = slots[i].pbm; m; m &= m - 1) {
                uint32_t wl = uint32_t(__builtin_ctzll(m));
                if (!bs) {
                    r.bits_sensed += page_bits_;
                    continue;
                }
                const uint64_t* page_cells =
                    sensed_page(bs->pages[wl], slots[i].block, wl, now_s, rng, inject, r, flipped);
                if (!page_cells) continue;
                uint64_t* a = acc_.data();
                for (uint32_t w = 0; w < words_; ++w) a[w] &= page_cells[w];
                if (single && bs->pages[wl].scramble == Scramble::OnDie)
                    scramble(a, slots[i].block, wl);
            }
            for (uint32_t w = 0; w < words_; ++w) res[w] |= acc_[w];
        }
    }
    flips_[S] = std::move(sensed);
    if (f.init_c)
        flips_[C] = f.transfer ? flips_[S] : Flips{};
    else if (f.transfer)
        flips_[C].known = false;
    // An inverse read initialises the S-latch by construction (Section 2.1), so it never
    // accumulates; callers refuse inverse without init_s.
    if (f.inverse)
        for (uint32_t w = 0; w < words_; ++w) res[w] = ~res[w];
    if (res != s) {
        if (f.init_s)
            std::memcpy(s, res, words_ * 8);
        else
            for (uint32_t w = 0; w < words_; ++w) s[w] &= res[w];
    }
    if (f.init_c && f.transfer)
        std::memcpy(c, s, words_ * 8);
    else if (f.init_c)
        std::fill_n(c, words_, 0ull);
    else if (f.transfer)
        for (uint32_t w = 0; w < words_; ++w) c[w] |= s[w];
    return r;
}

void Plane::xor_latches() {
    if (!functional_) return;
    uint64_t* s = cells(S);
    uint64_t* c = latch(C);
    for (uint32_t w = 0; w < words_; ++w) c[w] ^= s[w];
}

}  // namespace canopy::nand
