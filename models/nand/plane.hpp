// One plane of a die (Flash-Cosmos Section 2.1): blocks of wordlines sharing the plane's
// bitlines, and the page buffer latches that sense them (Section 3.1, Figure 6): the sensing
// latch (S-latch), the cache latch (C-latch) that faces the channel, and two data latches that
// hold a page while it is programmed. Data is sparse: a block takes memory on its first program
// or erase, a page on its program; latches on first use. In timing-only mode no data is kept,
// only the per-page metadata that decides whether a command is legal. Pages preconditioning puts
// in keep no bytes either: their source makes them whenever they are sensed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/rng.hpp"
#include "nand/config.hpp"
#include "nand/reliability.hpp"

namespace canopy::nand {

struct PageState {
    CellMode mode = CellMode::Erased;
    Scramble scramble = Scramble::None;
    bool randomised() const { return scramble != Scramble::None; }
    double esp_factor = 0;             // tESP/tPROG; double so that 1.9 stays >= esp_zero_factor
    bool from_source = false;          // cells made by the plane's PageSource (data null)
    double programmed_s = 0;           // simulated time of the program, for retention age
    std::unique_ptr<uint64_t[]> data;  // null when erased, from a source or in timing-only mode
};

// Whoever put pages into a plane without their bytes (preconditioning, which knows each page as
// a few tokens) makes their cells again when they are sensed, so the simulator's memory grows
// with the pages programmed in time, not with the pages written before.
class PageSource {
  public:
    virtual ~PageSource() = default;
    // The cells of page (block, wordline) as stored (data and spare: page_words words).
    virtual void cells(uint32_t block, uint32_t wl, uint64_t* words) const = 0;
    // Block `block` was erased: the source need keep nothing of its pages any longer.
    virtual void erased(uint32_t block) = 0;
    // A page programmed in time, randomised by the controller, offered as its cells (page_words):
    // true when the source keeps it, so that the plane keeps none of its bytes. cells() must then
    // give back exactly these words.
    virtual bool keep_programmed(uint32_t block, uint32_t wl, const uint64_t* words) {
        (void)block, (void)wl, (void)words;
        return false;
    }
};

struct BlockState {
    uint32_t pe_cycles = 0;
    int32_t last_programmed = -1;      // highest programmed wordline since the erase
    CellMode mode = CellMode::Erased;  // set by the first program after an erase
    std::vector<PageState> pages;
};

// One block slot of a multi-wordline sensing: a block and the page bitmap (PBM) of the
// wordlines to apply VREF to.
struct SenseSlot {
    uint32_t block;
    uint64_t pbm;
};

// Latch functions of one sensing (the ISCM flags of Figure 15a).
struct SenseFlags {
    bool inverse = false, init_s = true, init_c = true, transfer = true;
};

struct SenseResult {
    uint64_t bits_sensed = 0, bit_errors = 0, wordlines = 0;
};

class Plane {
  public:
    enum Latch { S, C, D1, D2, kLatches };

    Plane(const NandConfig& cfg, const ReliabilityModel& model, uint64_t scramble_key);

    const BlockState* block(uint32_t b) const;
    const PageState* page(uint32_t b, uint32_t wl) const;
    uint32_t pe_cycles(uint32_t b) const;

    // Checks a program without changing anything; "" when legal.
    std::string check_program(uint32_t b, uint32_t wl, CellMode mode) const;
    // Programs the C-latch's content (moved through D1, and D2 for MLC/TLC) into the page.
    void program(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble, double esp_factor,
                 double now_s);
    void erase(uint32_t b);
    // Preconditioning's way in (no time, no bus): the page image `bytes` (data and spare, as
    // the channel would move it) programmed as a program sequence leaves it; in timing-only
    // mode only the page's state (its bytes are not kept).
    void program_image(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble,
                       const uint8_t* bytes, size_t n, double now_s);
    // The same without the bytes: `source` makes the page's cells when it is sensed (one source
    // per plane; the latches stay as they are). Functional mode only.
    void program_from(std::shared_ptr<PageSource> source, uint32_t b, uint32_t wl, CellMode mode,
                      Scramble scramble, double now_s);
    // The cells a programmed page holds, without any sensing's errors, into `words` (page_words);
    // false for an erased page or in timing-only mode.
    bool stored_cells(uint32_t b, uint32_t wl, uint64_t* words) const;
    // The plane's PageSource (one at most; program_from sets it too), offered every page the
    // controller randomised and programs in time. Throws std::logic_error on a timing-only plane
    // or when another source is set.
    void set_source(std::shared_ptr<PageSource> source);
    const std::shared_ptr<PageSource>& source() const { return source_; }

    // Checks the wordlines an MWS would sense; "" when legal.
    std::string check_sense(const SenseSlot* slots, size_t n) const;
    // Senses: per slot the AND of its wordlines, OR across slots, optionally inverted; then the
    // latch functions. A single-wordline read of a page scrambled on the die is de-randomised
    // there.
    SenseResult sense(const SenseSlot* slots, size_t n, const SenseFlags& f, double now_s,
                      core::Rng& rng, bool inject);
    // C-latch = S-latch XOR C-latch.
    void xor_latches();
    // C-latch reset to all ones at the start of a program's data load (ONFI cache register).
    void load_begin();
    // C-latch = S-latch (a cache read hands the page sensed before to the cache latch).
    void cache_from_sense();
    // Data in: `n` bytes into the C-latch at `column`.
    void data_in(uint32_t column, const uint8_t* src, uint32_t n);
    // Data out: `n` bytes of the C-latch from `column`. When the die knows which of those bits
    // its sensing flipped (the latch holds one wordline's sensing, moved whole), appends their
    // positions in the page image (increasing) to `flipped` and returns true.
    bool data_out(uint32_t column, uint8_t* dst, uint32_t n, std::vector<uint64_t>* flipped) const;

    // Allocated on first use; null in timing-only mode. Whoever writes through it makes the
    // latch's raw bit errors unknown (data_out then reports none).
    uint64_t* latch(Latch l);
    uint32_t page_words() const { return words_; }
    size_t blocks_in_use() const { return blocks_.size(); }

  private:
    // Raw bit errors a latch holds, relative to the page the flash controller programmed (its
    // codewords): known after a single-wordline sensing of such a page (or an erased one) and
    // while its result only moves between S and C.
    struct Flips {
        bool known = false;
        std::vector<uint64_t> bits;  // positions, increasing
    };
    uint64_t* cells(Latch l);  // latch() without forgetting the latch's flips
    BlockState& touch(uint32_t b);
    // A program's effect on the page's and block's state (not on its cells).
    PageState& mark_programmed(uint32_t b, uint32_t wl, CellMode mode, Scramble scramble,
                               double esp_factor, double now_s);
    void scramble(uint64_t* w, uint32_t b, uint32_t wl) const;
    const uint64_t* sensed_page(const PageState& p, uint32_t b, uint32_t wl, double now_s,
                                core::Rng& rng, bool inject, SenseResult& r,
                                std::vector<uint64_t>* flipped, uint64_t* into = nullptr);

    const NandConfig& cfg_;
    const ReliabilityModel& model_;
    uint64_t scramble_key_;
    uint32_t words_;
    uint64_t page_bits_;  // cells per wordline (data + spare), without the padding of the last word
    bool functional_;
    std::unordered_map<uint32_t, BlockState> blocks_;
    std::shared_ptr<PageSource> source_;
    std::unique_ptr<uint64_t[]> latches_[kLatches];
    Flips flips_[kLatches];
    std::vector<uint64_t> scratch_, acc_, noisy_;
};

}  // namespace canopy::nand
