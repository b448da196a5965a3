/* The flash translation layer (docs/ftl.md). Blocks are numbered densely,
 * b = (die * planes_per_die + plane) * blocks_per_plane + block, and physical pages p = b *
 * pages_per_block + page (32-bit; the divisions that split them are 32-bit, which rv32im has).
 * Tables, all in the caller's memory and reached only through the accessors below (on the SPU
 * they may move to SSD memory behind DMA):
 *   map[lpn]   physical page of the LPN, NONE, or TRIMMED | p: trimmed, TRIM record at p;
 *   rmap[p]    the LPN whose current copy p holds (TRIMMED | lpn for a TRIM record,
 *              TRIMMED | (lpns + b) for block b's bad-block record), or NONE;
 *   pe[b], valid[b] (pages referenced by rmap), state[b];
 *   frb/frp[k] the open block and next page of write frontier k: one per (die, plane) unit for
 *              host writes, used round-robin (die fastest), one for GC copies, one for static
 *              wear-levelling migrations;
 *   ufree[u]   free blocks per unit.
 * Page metadata word: bits 0-31 LPN, 32-62 write sequence, 63 record flag (TRIM or bad block);
 * erased = all ones. */
#include "ftl.h"

#include <string.h>

#define NONE 0xFFFFFFFFu
#define TRIMMED 0x80000000u
#define SEQ_MASK 0x7FFFFFFFu
#define META_TRIM 0x8000000000000000ull

enum { BLK_FREE = 0, BLK_OPEN, BLK_FULL, BLK_BAD, BLK_ESP_FREE, BLK_ESP_USED };
enum { SRC_BUF, SRC_RMW, SRC_COPY, SRC_TRIM };

/* ---- table accessors (the only code that touches the tables) ---- */

/* The tables are bytes at offsets of cfg.mem, or behind the caller's table callbacks (SSD
 * memory reached by DMA on the SPU). */
static inline void tbl_read(const struct ftl* f, uint32_t off, void* p, uint32_t n) {
    if (f->cfg.ops->table_read)
        f->cfg.ops->table_read(f->cfg.ctx, off, p, n);
    else
        memcpy(p, f->mem + off, n);
}
static inline void tbl_write(struct ftl* f, uint32_t off, const void* p, uint32_t n) {
    if (f->cfg.ops->table_write)
        f->cfg.ops->table_write(f->cfg.ctx, off, p, n);
    else
        memcpy(f->mem + off, p, n);
}
static void tbl_fill(struct ftl* f, uint32_t off, uint8_t byte, uint32_t n) {
    if (f->cfg.ops->table_fill)
        f->cfg.ops->table_fill(f->cfg.ctx, off, byte, n);
    else
        memset(f->mem + off, byte, n);
}
static inline uint32_t get32(const struct ftl* f, uint32_t off, uint32_t i) {
    uint32_t v;
    tbl_read(f, off + i * 4, &v, 4);
    return v;
}
static inline void set32(struct ftl* f, uint32_t off, uint32_t i, uint32_t v) {
    tbl_write(f, off + i * 4, &v, 4);
}
static inline uint32_t map_get(const struct ftl* f, uint32_t lpn) {
    return get32(f, f->lay.off_map, lpn);
}
static inline void map_set(struct ftl* f, uint32_t lpn, uint32_t v) {
    set32(f, f->lay.off_map, lpn, v);
}
static inline uint32_t rmap_get(const struct ftl* f, uint32_t p) {
    return get32(f, f->lay.off_rmap, p);
}
static inline void rmap_set(struct ftl* f, uint32_t p, uint32_t v) {
    set32(f, f->lay.off_rmap, p, v);
}
static inline uint32_t pe_get(const struct ftl* f, uint32_t b) {
    return get32(f, f->lay.off_pe, b);
}
static inline void pe_set(struct ftl* f, uint32_t b, uint32_t v) { set32(f, f->lay.off_pe, b, v); }
static inline uint32_t frb_get(const struct ftl* f, uint32_t k) {
    return get32(f, f->lay.off_frb, k);
}
static inline void frb_set(struct ftl* f, uint32_t k, uint32_t v) {
    set32(f, f->lay.off_frb, k, v);
}
static inline uint32_t frp_get(const struct ftl* f, uint32_t k) {
    return get32(f, f->lay.off_frp, k);
}
static inline void frp_set(struct ftl* f, uint32_t k, uint32_t v) {
    set32(f, f->lay.off_frp, k, v);
}
static inline uint32_t ufree_get(const struct ftl* f, uint32_t u) {
    return get32(f, f->lay.off_ufree, u);
}
static inline void ufree_set(struct ftl* f, uint32_t u, uint32_t v) {
    set32(f, f->lay.off_ufree, u, v);
}
static inline uint32_t valid_get(const struct ftl* f, uint32_t b) {
    uint16_t v;
    tbl_read(f, f->lay.off_valid + b * 2, &v, 2);
    return v;
}
static inline void valid_set(struct ftl* f, uint32_t b, uint32_t v) {
    uint16_t x = (uint16_t)v;
    tbl_write(f, f->lay.off_valid + b * 2, &x, 2);
}
static inline uint32_t state_get(const struct ftl* f, uint32_t b) {
    uint8_t v;
    tbl_read(f, f->lay.off_state + b, &v, 1);
    return v;
}
static inline void state_set(struct ftl* f, uint32_t b, uint32_t s) {
    uint8_t x = (uint8_t)s;
    tbl_write(f, f->lay.off_state + b, &x, 1);
}

/* ---- geometry ---- */

/* a += n * size, failing (returning 0) past 2^31 bytes. */
static int grow(uint32_t* a, uint32_t n, uint32_t size) {
    if (n > (0x80000000u - *a) / size) return 0;
    *a += n * size;
    return 1;
}

static int layout_of(const struct ftl_config* c, struct ftl_layout* l) {
    const struct ftl_geometry* g = &c->geo;
    if (!g->dies || !g->planes_per_die || !g->blocks_per_plane || !g->pages_per_block ||
        !g->page_bytes || g->pages_per_block > 0xFFFFu || c->op_permille >= 1000 ||
        c->gc_free_blocks < 2)
        return 0;
    if (g->dies > 0xFFFFu / g->planes_per_die) return 0;
    l->units = g->dies * g->planes_per_die;
    if (g->blocks_per_plane > 0x7FFFFFFFu / l->units) return 0;
    l->blocks = l->units * g->blocks_per_plane;
    if (g->pages_per_block > 0x7FFFFFFFu / l->blocks) return 0;
    l->pages = l->blocks * g->pages_per_block;
    l->esp = c->esp_blocks;
    if (l->esp >= g->blocks_per_plane) return 0;
    /* Blocks that never hold user data at steady state: a host frontier per unit, the GC and
     * wear-levelling frontiers, the GC reserve, the ESP region. */
    uint32_t reserved = l->units + 2 + c->gc_free_blocks;
    uint32_t data_blocks = l->blocks - l->esp * l->units;
    if (data_blocks <= reserved) return 0;
    uint32_t usable = (data_blocks - reserved) * g->pages_per_block;
    uint32_t op = usable / 1000 * c->op_permille + usable % 1000 * c->op_permille / 1000;
    l->lpns = usable - op;
    if (l->lpns == 0 || l->lpns > 0x7FFFFFFFu - l->blocks) return 0; /* bad-block records */
    uint32_t a = 0;
    l->off_map = a;
    if (!grow(&a, l->lpns, 4)) return 0;
    l->off_rmap = a;
    if (!grow(&a, l->pages, 4)) return 0;
    l->off_pe = a;
    if (!grow(&a, l->blocks, 4)) return 0;
    l->off_frb = a;
    if (!grow(&a, l->units + 2, 4)) return 0;
    l->off_frp = a;
    if (!grow(&a, l->units + 2, 4)) return 0;
    l->off_ufree = a;
    if (!grow(&a, l->units, 4)) return 0;
    l->off_valid = a;
    if (!grow(&a, l->blocks, 2)) return 0;
    l->off_state = a;
    if (!grow(&a, l->blocks, 1)) return 0;
    if (!grow(&a, 1, 3)) return 0;
    l->bytes = a & ~3u;
    return 1;
}

uint32_t ftl_mem_bytes(const struct ftl_config* cfg) {
    struct ftl_layout l;
    return layout_of(cfg, &l) ? l.bytes : 0;
}

uint32_t ftl_config_capacity_pages(const struct ftl_config* cfg) {
    struct ftl_layout l;
    return layout_of(cfg, &l) ? l.lpns : 0;
}

static inline uint32_t ppb(const struct ftl* f) { return f->cfg.geo.pages_per_block; }
static inline uint32_t gc_frontier(const struct ftl* f) { return f->lay.units; }
static inline uint32_t wl_frontier(const struct ftl* f) { return f->lay.units + 1; }
static inline uint32_t unit_of(const struct ftl* f, uint32_t b) {
    return b / f->cfg.geo.blocks_per_plane;
}
static inline int is_esp(const struct ftl* f, uint32_t b) {
    return b - unit_of(f, b) * f->cfg.geo.blocks_per_plane >=
           f->cfg.geo.blocks_per_plane - f->lay.esp;
}

static void split(const struct ftl* f, uint32_t p, struct ftl_ppa* a) {
    uint32_t b = p / ppb(f);
    uint32_t u = unit_of(f, b);
    a->page = p - b * ppb(f);
    a->block = b - u * f->cfg.geo.blocks_per_plane;
    a->die = u / f->cfg.geo.planes_per_die;
    a->plane = u - a->die * f->cfg.geo.planes_per_die;
}

/* ---- flash access ---- */

static int rc_of(int rc) {
    return rc == FTL_OK || rc == FTL_E_UNCORRECTABLE || rc == FTL_E_FAILED ? rc : FTL_E_IO;
}

static int fl_read(struct ftl* f, uint32_t p, uint64_t buf, uint32_t off, uint32_t len,
                   uint64_t* meta) {
    struct ftl_ppa a;
    split(f, p, &a);
    return rc_of(f->cfg.ops->read(f->cfg.ctx, &a, buf, off, len, meta));
}

static int fl_program(struct ftl* f, uint32_t p, uint64_t buf, uint64_t meta) {
    struct ftl_ppa a;
    split(f, p, &a);
    int rc = rc_of(f->cfg.ops->program(f->cfg.ctx, &a, buf, meta));
    if (rc == FTL_OK) ++f->st.flash_programs;
    if (rc == FTL_E_FAILED) ++f->st.program_failures;
    return rc;
}

static void make_free(struct ftl* f, uint32_t b) {
    state_set(f, b, BLK_FREE);
    ++f->free_blocks;
    uint32_t u = unit_of(f, b);
    ufree_set(f, u, ufree_get(f, u) + 1);
}

/* Erases data block b: it becomes free, or bad when the erase fails. */
static int fl_erase(struct ftl* f, uint32_t b) {
    struct ftl_ppa a;
    split(f, b * ppb(f), &a);
    int rc = rc_of(f->cfg.ops->erase(f->cfg.ctx, a.die, a.plane, a.block));
    if (rc == FTL_E_FAILED) { /* nothing lost: the block held nothing valid */
        ++f->st.erase_failures;
        ++f->st.bad_blocks;
        state_set(f, b, BLK_BAD); /* the caller writes its bad-block record */
        return FTL_OK;
    }
    if (rc != FTL_OK) return rc;
    uint32_t pe = pe_get(f, b) + 1;
    pe_set(f, b, pe);
    if (pe > f->pe_max) f->pe_max = pe;
    ++f->st.erases;
    make_free(f, b);
    return FTL_OK;
}

static inline uint64_t meta_make(uint32_t lpn, uint32_t seq, int trim) {
    return (uint64_t)lpn | (uint64_t)(seq & SEQ_MASK) << 32 | (trim ? META_TRIM : 0);
}

/* ---- mapping ---- */

static void invalidate(struct ftl* f, uint32_t p) {
    rmap_set(f, p, NONE);
    uint32_t b = p / ppb(f);
    valid_set(f, b, valid_get(f, b) - 1);
}

/* The free block of unit u (or, when u has none, of the unit with most) with the fewest P/E
 * cycles: dynamic wear levelling; with `hottest`, the free block with the most, anywhere (it is
 * to hold cold data). It becomes open. NONE when no block is free. */
static uint32_t take_free(struct ftl* f, uint32_t u, int hottest) {
    if (!f->free_blocks) return NONE;
    if (u >= f->lay.units || !ufree_get(f, u)) {
        uint32_t most = 0;
        for (uint32_t v = 0; v < f->lay.units; ++v)
            if (ufree_get(f, v) > most) most = ufree_get(f, v), u = v;
    }
    uint32_t bpp = f->cfg.geo.blocks_per_plane, best = NONE, best_pe = NONE;
    if (hottest) {
        for (uint32_t b = 0; b < f->lay.blocks; ++b)
            if (state_get(f, b) == BLK_FREE && (best == NONE || pe_get(f, b) > best_pe))
                best = b, best_pe = pe_get(f, b);
        u = unit_of(f, best);
    } else {
        for (uint32_t b = u * bpp; b < (u + 1) * bpp; ++b)
            if (state_get(f, b) == BLK_FREE && pe_get(f, b) < best_pe)
                best = b, best_pe = pe_get(f, b);
    }
    state_set(f, best, BLK_OPEN);
    --f->free_blocks;
    ufree_set(f, u, ufree_get(f, u) - 1);
    return best;
}

static int ensure_free(struct ftl* f);
static int put_page(struct ftl* f, uint32_t k, uint32_t tag, int src, uint64_t buf, uint32_t off,
                    uint32_t len);

/* The next page of frontier *k, opening a block if needed (host frontiers run GC first). When
 * no block is free (program failures in a row can use up the GC reserve), the page comes from
 * another frontier's open block, and *k names that frontier. */
static uint32_t frontier_page(struct ftl* f, uint32_t* k, int* rc) {
    uint32_t b = frb_get(f, *k);
    *rc = FTL_OK;
    if (b == NONE) {
        if (*k < f->lay.units) *rc = ensure_free(f);
        if (*rc != FTL_OK && *rc != FTL_E_NOSPACE) return NONE;
        b = take_free(f, *k < f->lay.units ? *k : NONE, *k == wl_frontier(f));
        if (b == NONE) {
            for (uint32_t j = 0; j <= wl_frontier(f); ++j) {
                if (frb_get(f, j) == NONE) continue;
                *k = j;
                *rc = FTL_OK;
                return frb_get(f, j) * ppb(f) + frp_get(f, j);
            }
            *rc = FTL_E_NOSPACE;
            return NONE;
        }
        *rc = FTL_OK;
        frb_set(f, *k, b);
        frp_set(f, *k, 0);
    }
    return b * ppb(f) + frp_get(f, *k);
}

/* Moves every valid page of block b to frontier k. Returns the number of pages left behind
 * because they read uncorrectable (they stay mapped: reads keep reporting the error), or an
 * error code. */
static int relocate(struct ftl* f, uint32_t b, uint32_t k) {
    int unreadable = 0;
    for (uint32_t p = b * ppb(f), end = p + ppb(f); p < end; ++p) {
        uint32_t tag = rmap_get(f, p);
        if (tag == NONE) continue;
        int rc = put_page(f, k, tag, (tag & TRIMMED) ? SRC_TRIM : SRC_COPY, 0, 0, 0);
        if (rc == FTL_E_UNCORRECTABLE) {
            ++unreadable;
            continue;
        }
        if (rc != FTL_OK) return rc;
        if ((tag & ~TRIMMED) >= f->lay.lpns)
            invalidate(f, p); /* a bad-block record: no map entry */
        ++f->st.gc_copies;
    }
    return unreadable;
}

/* Block b is bad: it is never erased or written again, and a bad-block record (a page flagged
 * like a TRIM record, LPN field lpns + b) keeps it so across power loss. Best effort: without
 * room for the record, the block is found bad again when it next fails. */
static void mark_bad(struct ftl* f, uint32_t b) {
    if (state_get(f, b) != BLK_BAD) {
        state_set(f, b, BLK_BAD);
        ++f->st.bad_blocks;
    }
    if (put_page(f, gc_frontier(f), TRIMMED | (f->lay.lpns + b), SRC_TRIM, 0, 0, 0) == FTL_OK)
        ++f->st.bad_records;
}

/* Frontier k's block failed a program: retire it. What it holds stays readable there; the next
 * ensure_free moves it, once GC has made room (moving it now could exhaust the free blocks when
 * failures come in a row). */
static void retire(struct ftl* f, uint32_t k) {
    uint32_t b = frb_get(f, k);
    frb_set(f, k, NONE);
    if (valid_get(f, b)) ++f->pending;
    mark_bad(f, b);
}

/* Empties block b (full) through frontier k and erases it; a block with unreadable pages is
 * retired instead. */
static int reclaim(struct ftl* f, uint32_t b, uint32_t k) {
    int rc = relocate(f, b, k);
    if (rc < 0) return rc;
    if (rc == 0) {
        rc = fl_erase(f, b);
        if (rc != FTL_OK || state_get(f, b) != BLK_BAD) return rc;
    }
    mark_bad(f, b); /* unreadable pages, or the erase failed */
    return FTL_OK;
}

/* Programs one logical page (tag = lpn, or TRIMMED | lpn for a TRIM record) at frontier k and
 * maps it; the source is buf (SRC_BUF), buf's len bytes at off merged into the current page
 * (SRC_RMW), the current page (SRC_COPY) or nothing (SRC_TRIM). A program failure retires the
 * block and tries again at the frontier's next block; the scratch buffer is filled after the
 * page is found, and again each try, since opening a block may run GC, which uses it. */
static int put_page(struct ftl* f, uint32_t frontier, uint32_t tag, int src, uint64_t buf,
                    uint32_t off, uint32_t len) {
    const struct ftl_ops* ops = f->cfg.ops;
    uint32_t lpn = tag & ~TRIMMED, pb = f->cfg.geo.page_bytes;
    uint64_t scratch = f->cfg.scratch, meta;
    int record = lpn >= f->lay.lpns; /* a bad-block record: outside the map */
    for (;;) {
        int rc;
        uint32_t k = frontier;
        uint32_t p = frontier_page(f, &k, &rc);
        if (p == NONE) return rc;
        uint32_t old = record ? NONE : map_get(f, lpn);
        uint64_t from = scratch;
        if (src == SRC_BUF) {
            from = buf;
        } else if (src == SRC_RMW || src == SRC_COPY) {
            if (old != NONE && !(old & TRIMMED)) {
                rc = fl_read(f, old, scratch, 0, pb, &meta);
                if (rc != FTL_OK) return rc;
            } else {
                ops->fill(f->cfg.ctx, scratch, 0xFF, pb);
            }
            if (src == SRC_RMW) ops->copy(f->cfg.ctx, scratch + off, buf, len);
        }
        rc = fl_program(f, p, from, meta_make(lpn, f->seq++, src == SRC_TRIM));
        if (rc == FTL_E_FAILED) {
            retire(f, k);
            continue;
        }
        if (rc != FTL_OK) return rc;
        if (!record) {
            old = map_get(f, lpn); /* unchanged: nothing else ran since the read */
            if (old != NONE) invalidate(f, old & ~TRIMMED);
            map_set(f, lpn, src == SRC_TRIM ? (p | TRIMMED) : p);
        }
        rmap_set(f, p, tag);
        uint32_t b = p / ppb(f);
        valid_set(f, b, valid_get(f, b) + 1);
        uint32_t next = frp_get(f, k) + 1;
        frp_set(f, k, next);
        if (next == ppb(f)) {
            state_set(f, b, BLK_FULL);
            frb_set(f, k, NONE);
        }
        return FTL_OK;
    }
}

/* Greedy GC until enough blocks are free; then the data of a retired block, if any waits; then
 * at most one static wear-levelling migration. */
static int ensure_free(struct ftl* f) {
    while (f->free_blocks < f->cfg.gc_free_blocks) {
        uint32_t victim = NONE, least = NONE;
        for (uint32_t b = 0; b < f->lay.blocks; ++b)
            if (state_get(f, b) == BLK_FULL && valid_get(f, b) < least)
                victim = b, least = valid_get(f, b);
        if (victim == NONE || least >= ppb(f)) return FTL_E_NOSPACE; /* no progress possible */
        ++f->st.gc_victims;
        int rc = reclaim(f, victim, gc_frontier(f));
        if (rc != FTL_OK) return rc;
    }
    if (f->pending) { /* one retired block per call; those with unreadable pages are passed */
        uint32_t b = 0;
        for (; b < f->lay.blocks; ++b) {
            if (state_get(f, b) != BLK_BAD || !valid_get(f, b)) continue;
            int rc = relocate(f, b, gc_frontier(f));
            if (rc < 0) return rc;
            if (rc == 0) break;
        }
        f->pending = b == f->lay.blocks ? 0 : f->pending - 1;
    }
    if (f->cfg.wl_threshold && f->pe_max > f->cfg.wl_threshold) {
        /* The coldest block: if it sits full of (static) data, free it so it gets used. */
        uint32_t cold = NONE, least = NONE, most = 0;
        for (uint32_t b = 0; b < f->lay.blocks; ++b) {
            uint32_t s = state_get(f, b), pe = pe_get(f, b);
            if (s != BLK_FREE && s != BLK_OPEN && s != BLK_FULL) continue;
            if (pe < least) cold = b, least = pe;
            if (pe > most) most = pe;
        }
        if (cold == NONE || most - least <= f->cfg.wl_threshold) return FTL_OK;
        if (cold == frb_get(f, wl_frontier(f))) {
            /* The WL frontier's own block is the coldest (it opened when nothing free was worn):
             * only migrations fill it, so close it and migrate it like any other. */
            frb_set(f, wl_frontier(f), NONE);
            state_set(f, cold, BLK_FULL);
        }
        if (state_get(f, cold) == BLK_FULL) {
            /* Its data goes to the most worn free block, which rests while holding it. */
            ++f->st.wl_migrations;
            return reclaim(f, cold, wl_frontier(f));
        }
    }
    return FTL_OK;
}

/* ---- format and mount ---- */

static int setup(struct ftl* f, const struct ftl_config* cfg) {
    struct ftl_layout l;
    const int external =
        cfg && cfg->ops && cfg->ops->table_read && cfg->ops->table_write && cfg->ops->table_fill;
    if (!cfg || !cfg->ops || !layout_of(cfg, &l) || cfg->mem_bytes < l.bytes ||
        (external && cfg->mem) ||
        (!external && (!cfg->mem || ((uintptr_t)cfg->mem & 3) || cfg->ops->table_read ||
                       cfg->ops->table_write || cfg->ops->table_fill)))
        return FTL_E_ARG;
    memset(f, 0, sizeof *f);
    f->cfg = *cfg;
    f->mem = external ? 0 : (uint8_t*)cfg->mem;
    f->lay = l;
    /* map and rmap NONE (all ones), P/E counts, frontier pages, free counts and valid counts 0;
     * one fill each, since behind DMA a table is filled in bulk. */
    tbl_fill(f, f->lay.off_map, 0xFF, f->lay.off_pe - f->lay.off_map);
    tbl_fill(f, f->lay.off_pe, 0, f->lay.off_state - f->lay.off_pe);
    for (uint32_t b = 0; b < f->lay.blocks; ++b)
        state_set(f, b, is_esp(f, b) ? BLK_ESP_FREE : BLK_FULL);
    for (uint32_t k = 0; k <= wl_frontier(f); ++k) frb_set(f, k, NONE);
    return FTL_OK;
}

int ftl_format(struct ftl* f, const struct ftl_config* cfg) {
    int rc = setup(f, cfg);
    if (rc != FTL_OK) return rc;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        if (is_esp(f, b)) continue; /* erased when handed out */
        rc = fl_erase(f, b);
        if (rc != FTL_OK) return rc;
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) pe_set(f, b, 0); /* format's erase is not wear */
    f->pe_max = 0;
    for (uint32_t b = 0; b < f->lay.blocks; ++b)
        if (state_get(f, b) == BLK_BAD) mark_bad(f, b);
    uint32_t bad = f->st.bad_blocks, records = f->st.bad_records;
    memset(&f->st, 0, sizeof f->st);
    f->st.bad_blocks = bad;
    f->st.bad_records = records;
    return FTL_OK;
}

/* Every written page's metadata is read; per LPN the copy (data or TRIM record) with the highest
 * sequence wins. While scanning, rmap[p] holds page p's sequence (and TRIMMED for a record),
 * valid[b] the count of block b's written pages, and pe[b] 1 + the page of b's newest bad-block
 * record; afterwards all three are rebuilt. A block's written part ends at its first erased page
 * (a page torn by the power cut reads uncorrectable: it counts as written and holds nothing). */
int ftl_mount(struct ftl* f, const struct ftl_config* cfg) {
    int rc = setup(f, cfg);
    if (rc != FTL_OK) return rc;
    uint32_t max_seq = 0;
    int any = 0;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        if (is_esp(f, b)) continue;
        uint32_t written = 0;
        for (uint32_t i = 0; i < ppb(f); ++i) {
            uint32_t p = b * ppb(f) + i;
            uint64_t meta = 0;
            rc = fl_read(f, p, f->cfg.scratch, 0, 0, &meta);
            if (rc == FTL_E_UNCORRECTABLE) { /* a torn or worn page: holds nothing */
                ++written;
                continue;
            }
            if (rc != FTL_OK) return rc;
            if (meta == ~(uint64_t)0) break;
            ++written;
            uint32_t lpn = (uint32_t)meta, seq = (uint32_t)(meta >> 32) & SEQ_MASK;
            int flag = (meta & META_TRIM) != 0;
            if (lpn >= f->lay.lpns && !(flag && lpn - f->lay.lpns < f->lay.blocks))
                continue; /* garbage */
            rmap_set(f, p, seq | (flag ? TRIMMED : 0));
            if (!any || seq > max_seq) max_seq = seq, any = 1;
            if (lpn >= f->lay.lpns) { /* a bad-block record */
                uint32_t x = lpn - f->lay.lpns, cur = pe_get(f, x);
                if (cur == 0 || seq > (rmap_get(f, cur - 1) & SEQ_MASK)) pe_set(f, x, p + 1);
                continue;
            }
            uint32_t cur = map_get(f, lpn);
            if (cur == NONE || seq > (rmap_get(f, cur) & SEQ_MASK)) map_set(f, lpn, p);
        }
        valid_set(f, b, written);
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        if (is_esp(f, b)) continue;
        uint32_t written = valid_get(f, b);
        valid_set(f, b, 0);
        if (pe_get(f, b)) {
            state_set(f, b, BLK_BAD);
            ++f->st.bad_blocks;
        } else if (written == 0) {
            make_free(f, b);
        } else if (written < ppb(f)) {
            /* Partly written (open at the crash): it becomes a frontier again, its unit's host
             * frontier if free, else the GC or WL one; else it stays closed, its rest unused
             * until GC erases it. */
            uint32_t k = unit_of(f, b);
            if (frb_get(f, k) != NONE) k = gc_frontier(f);
            if (frb_get(f, k) != NONE) k = wl_frontier(f);
            if (frb_get(f, k) == NONE) {
                frb_set(f, k, b);
                frp_set(f, k, written);
                state_set(f, b, BLK_OPEN);
            }
        }
    }
    for (uint32_t lpn = 0; lpn < f->lay.lpns; ++lpn) {
        uint32_t p = map_get(f, lpn);
        if (p != NONE && (rmap_get(f, p) & TRIMMED)) map_set(f, lpn, p | TRIMMED);
    }
    for (uint32_t p = 0; p < f->lay.pages; ++p) rmap_set(f, p, NONE);
    for (uint32_t lpn = 0; lpn < f->lay.lpns; ++lpn) {
        uint32_t m = map_get(f, lpn);
        if (m == NONE) continue;
        uint32_t p = m & ~TRIMMED;
        rmap_set(f, p, lpn | (m & TRIMMED));
        uint32_t b = p / ppb(f);
        valid_set(f, b, valid_get(f, b) + 1);
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) { /* the newest record of each bad block stays */
        uint32_t r = pe_get(f, b);
        if (!r) continue;
        pe_set(f, b, 0);
        rmap_set(f, r - 1, TRIMMED | (f->lay.lpns + b));
        valid_set(f, (r - 1) / ppb(f), valid_get(f, (r - 1) / ppb(f)) + 1);
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) /* what bad blocks hold moves out, one per GC */
        if (state_get(f, b) == BLK_BAD && valid_get(f, b)) ++f->pending;
    f->seq = any ? max_seq + 1 : 0;
    return FTL_OK;
}

/* ---- the API ---- */

uint32_t ftl_capacity_pages(const struct ftl* f) { return f->lay.lpns; }

static int in_page(const struct ftl* f, uint32_t lpn, uint32_t offset, uint32_t len) {
    uint32_t pb = f->cfg.geo.page_bytes;
    return lpn < f->lay.lpns && offset <= pb && len <= pb - offset;
}

int ftl_read(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len) {
    if (!in_page(f, lpn, offset, len)) return FTL_E_RANGE;
    ++f->st.host_reads;
    uint32_t m = map_get(f, lpn);
    if (m == NONE || (m & TRIMMED)) {
        f->cfg.ops->fill(f->cfg.ctx, buf, 0xFF, len);
        return FTL_OK;
    }
    uint64_t meta = 0;
    int rc = fl_read(f, m, buf, offset, len, &meta);
    if (rc == FTL_OK && (uint32_t)meta != lpn) return FTL_E_IO; /* the map is wrong */
    return rc;
}

int ftl_write(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len) {
    if (!in_page(f, lpn, offset, len) || len == 0) return FTL_E_RANGE;
    uint32_t k = f->rr;
    f->rr = k + 1 == f->lay.units ? 0 : k + 1;
    int whole = offset == 0 && len == f->cfg.geo.page_bytes;
    int rc = put_page(f, k, lpn, whole ? SRC_BUF : SRC_RMW, buf, offset, len);
    if (rc == FTL_OK) ++f->st.host_writes;
    return rc;
}

int ftl_trim(struct ftl* f, uint32_t lpn, uint32_t count) {
    if (lpn >= f->lay.lpns || count > f->lay.lpns - lpn) return FTL_E_RANGE;
    for (uint32_t i = lpn; i < lpn + count; ++i) {
        uint32_t m = map_get(f, i);
        if (m == NONE || (m & TRIMMED)) continue; /* no copy to hide, or hidden already */
        uint32_t k = f->rr;
        f->rr = k + 1 == f->lay.units ? 0 : k + 1;
        int rc = put_page(f, k, i | TRIMMED, SRC_TRIM, 0, 0, 0);
        if (rc != FTL_OK) return rc;
        ++f->st.trim_records;
    }
    return FTL_OK;
}

void ftl_stats(const struct ftl* f, struct ftl_stats* out) {
    *out = f->st;
    out->free_blocks = f->free_blocks;
    out->wa_num = f->st.flash_programs;
    out->wa_den = f->st.host_writes;
    out->pe_min = NONE;
    out->pe_max = 0;
    out->pe_sum = 0;
    out->pe_blocks = 0;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        uint32_t s = state_get(f, b);
        if (s != BLK_FREE && s != BLK_OPEN && s != BLK_FULL) continue;
        uint32_t pe = pe_get(f, b);
        if (pe < out->pe_min) out->pe_min = pe;
        if (pe > out->pe_max) out->pe_max = pe;
        out->pe_sum += pe;
        ++out->pe_blocks;
    }
    if (!out->pe_blocks) out->pe_min = 0;
}

/* Cross-checks the tables: map and rmap agree, valid counts match rmap, free counts match the
 * states, frontiers are open blocks. 0, or a positive number naming the first broken rule. */
int ftl_check(const struct ftl* f) {
    uint32_t free_blocks = 0;
    for (uint32_t u = 0; u < f->lay.units; ++u) {
        uint32_t n = 0;
        for (uint32_t b = u * f->cfg.geo.blocks_per_plane;
             b < (u + 1) * f->cfg.geo.blocks_per_plane; ++b)
            n += state_get(f, b) == BLK_FREE;
        if (n != ufree_get(f, u)) return 1;
        free_blocks += n;
    }
    if (free_blocks != f->free_blocks) return 2;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        uint32_t n = 0;
        for (uint32_t p = b * ppb(f); p < (b + 1) * ppb(f); ++p) {
            uint32_t tag = rmap_get(f, p);
            if (tag == NONE) continue;
            ++n;
            uint32_t lpn = tag & ~TRIMMED;
            if (lpn >= f->lay.lpns) {
                if (!(tag & TRIMMED) || lpn - f->lay.lpns >= f->lay.blocks ||
                    state_get(f, lpn - f->lay.lpns) != BLK_BAD)
                    return 3;
            } else if (map_get(f, lpn) != (p | (tag & TRIMMED))) {
                return 4;
            }
        }
        if (n != valid_get(f, b) || n > ppb(f)) return 5;
        uint32_t s = state_get(f, b);
        if ((s == BLK_FREE || s == BLK_ESP_FREE || s == BLK_ESP_USED) && n) return 6;
    }
    for (uint32_t lpn = 0; lpn < f->lay.lpns; ++lpn) {
        uint32_t m = map_get(f, lpn);
        if (m == NONE) continue;
        uint32_t p = m & ~TRIMMED;
        if (p >= f->lay.pages || rmap_get(f, p) != (lpn | (m & TRIMMED))) return 7;
    }
    for (uint32_t k = 0; k <= wl_frontier(f); ++k) {
        uint32_t b = frb_get(f, k);
        if (b != NONE &&
            (b >= f->lay.blocks || state_get(f, b) != BLK_OPEN || frp_get(f, k) >= ppb(f)))
            return 8;
    }
    return 0;
}

/* ---- the ESP region ---- */

static uint32_t esp_block(const struct ftl* f, uint32_t die, uint32_t plane, uint32_t block) {
    const struct ftl_geometry* g = &f->cfg.geo;
    if (die >= g->dies || plane >= g->planes_per_die || block >= g->blocks_per_plane ||
        block < g->blocks_per_plane - f->lay.esp)
        return NONE;
    return (die * g->planes_per_die + plane) * g->blocks_per_plane + block;
}

int ftl_esp_alloc(struct ftl* f, uint32_t die, uint32_t plane, uint32_t* block) {
    const struct ftl_geometry* g = &f->cfg.geo;
    for (uint32_t i = g->blocks_per_plane - f->lay.esp; i < g->blocks_per_plane; ++i) {
        uint32_t b = esp_block(f, die, plane, i);
        if (b == NONE) return FTL_E_RANGE;
        if (state_get(f, b) != BLK_ESP_FREE) continue;
        int rc = rc_of(f->cfg.ops->erase(f->cfg.ctx, die, plane, i));
        if (rc == FTL_E_FAILED) {
            state_set(f, b, BLK_BAD);
            ++f->st.bad_blocks;
            ++f->st.erase_failures;
            continue;
        }
        if (rc != FTL_OK) return rc;
        pe_set(f, b, pe_get(f, b) + 1);
        state_set(f, b, BLK_ESP_USED);
        *block = i;
        return FTL_OK;
    }
    return FTL_E_NOSPACE;
}

int ftl_esp_used(const struct ftl* f, uint32_t die, uint32_t plane, uint32_t block) {
    const uint32_t b = esp_block(f, die, plane, block);
    return b != NONE && state_get(f, b) == BLK_ESP_USED;
}

int ftl_esp_release(struct ftl* f, uint32_t die, uint32_t plane, uint32_t block) {
    uint32_t b = esp_block(f, die, plane, block);
    if (b == NONE || state_get(f, b) != BLK_ESP_USED) return FTL_E_RANGE;
    state_set(f, b, BLK_ESP_FREE);
    return FTL_OK;
}
