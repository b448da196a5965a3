/* The flash translation layer (docs/ftl.md). Blocks are numbered densely,
 * b = (die * planes_per_die + plane) * blocks_per_plane + block, physical pages p = b *
 * pages_per_block + page and physical units (slots) pu = p * units_per_page + slot (32-bit; the
 * divisions that split them are 32-bit, which rv32im has).
 * Tables, all in the caller's memory and reached only through the accessors below (on the SPU
 * they may move to SSD memory behind DMA):
 *   map[lpn]   physical unit of the LPN, NONE, or TRIMMED | pu: trimmed, TRIM record at pu;
 *   rmap[pu]   the LPN whose current copy pu holds (TRIMMED | lpn for a TRIM record,
 *              TRIMMED | (lpns + b) for block b's bad-block record), or NONE;
 *   pe[b], age[b] (the sequence when b was last filled), valid[b] (units rmap references),
 *   state[b];
 *   frb/frp/fsl[k] the open block, its next page and the slots of that page filled in frontier
 *              k's page buffer: one frontier per (die, plane) unit for host writes, used
 *              round-robin page by page (die fastest), one for GC copies, one for static
 *              wear-levelling migrations;
 *   ufree[u]   free blocks per unit.
 * A unit in a page buffer is mapped already to the slot it will be programmed in; its page is
 * the frontier's next page, programmed when its slots are full or at a flush. The GC and WL
 * frontiers' buffers are programmed before their victim is erased, so they are empty between
 * calls.
 * Page metadata: word 0 the write sequence (31 bits), word 1 + s slot s's tag (NONE: empty);
 * erased = all ones. */
#include "ftl.h"

#include <string.h>

#define NONE 0xFFFFFFFFu
#define TRIMMED 0x80000000u
#define SEQ_MASK 0x7FFFFFFFu

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
#define TABLE32(name, field)                                               \
    static inline uint32_t name##_get(const struct ftl* f, uint32_t i) {   \
        return get32(f, f->lay.field, i);                                  \
    }                                                                      \
    static inline void name##_set(struct ftl* f, uint32_t i, uint32_t v) { \
        set32(f, f->lay.field, i, v);                                      \
    }
TABLE32(map, off_map)
TABLE32(rmap, off_rmap)
TABLE32(pe, off_pe)
TABLE32(age, off_age)
TABLE32(frb, off_frb)
TABLE32(frp, off_frp)
TABLE32(fsl, off_fsl)
TABLE32(ufree, off_ufree)
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

static uint32_t units_per_page(const struct ftl_geometry* g) {
    if (g->unit_bytes == 0) return 1;
    if (g->page_bytes % g->unit_bytes) return 0;
    uint32_t n = g->page_bytes / g->unit_bytes;
    return n <= FTL_MAX_UNITS_PER_PAGE ? n : 0;
}

/* ftl_save's record after the tables: a magic word, the layout it belongs to, the state. */
enum {
    SAVED_MAGIC,
    SAVED_LPNS,
    SAVED_SLOTS,
    SAVED_BLOCKS,
    SAVED_SEQ,
    SAVED_FREE,
    SAVED_RR,
    SAVED_PE_MAX,
    SAVED_PENDING,
    SAVED_BAD_BLOCKS,
    SAVED_BAD_RECORDS,
    SAVED_GC_VICTIM,
    SAVED_GC_NEXT,
    SAVED_GC_RATE,
    SAVED_GC_UNREADABLE,
    SAVED_WORDS
};
#define SAVED_IS 0x534C5446u /* "FTLS" */

static int layout_of(const struct ftl_config* c, struct ftl_layout* l) {
    const struct ftl_geometry* g = &c->geo;
    if (!g->dies || !g->planes_per_die || !g->blocks_per_plane || !g->pages_per_block ||
        !g->page_bytes || g->pages_per_block > 0xFFFFu || c->op_permille >= 1000 ||
        c->gc_free_blocks < 2 || c->gc_policy > (FTL_GC_COST_BENEFIT | FTL_GC_PACED) ||
        c->write_cache > 1)
        return 0;
    l->upp = units_per_page(g);
    if (!l->upp || g->pages_per_block * l->upp > 0xFFFFu) return 0; /* valid[] is 16-bit */
    if (g->dies > 0xFFFFu / g->planes_per_die) return 0;
    l->units = g->dies * g->planes_per_die;
    if (g->blocks_per_plane > 0x3FFFFFFFu / l->units) return 0;
    l->blocks = l->units * g->blocks_per_plane;
    if (g->pages_per_block > 0x3FFFFFFFu / l->blocks) return 0;
    l->pages = l->blocks * g->pages_per_block;
    if (l->pages > 0x3FFFFFFFu / l->upp) return 0;
    l->slots = l->pages * l->upp;
    l->esp = c->esp_blocks;
    if (l->esp >= g->blocks_per_plane) return 0;
    /* Blocks that never hold user data at steady state: a host frontier per unit, the GC and
     * wear-levelling frontiers, the GC reserve, the ESP region. */
    uint32_t reserved = l->units + 2 + c->gc_free_blocks;
    uint32_t data_blocks = l->blocks - l->esp * l->units;
    if (data_blocks <= reserved) return 0;
    uint32_t usable = (data_blocks - reserved) * g->pages_per_block * l->upp;
    uint32_t op = usable / 1000 * c->op_permille + usable % 1000 * c->op_permille / 1000;
    l->lpns = usable - op;
    if (l->lpns == 0 || l->lpns > 0x7FFFFFFFu - l->blocks) return 0; /* bad-block records */
    uint32_t a = 0, fronts = l->units + 2;
    l->off_map = a;
    if (!grow(&a, l->lpns, 4)) return 0;
    l->off_rmap = a;
    if (!grow(&a, l->slots, 4)) return 0;
    l->off_pe = a;
    if (!grow(&a, l->blocks, 4)) return 0;
    l->off_age = a;
    if (!grow(&a, l->blocks, 4)) return 0;
    l->off_frb = a;
    if (!grow(&a, fronts, 4)) return 0;
    l->off_frp = a;
    if (!grow(&a, fronts, 4)) return 0;
    l->off_fsl = a;
    if (!grow(&a, fronts, 4)) return 0;
    l->off_ufree = a;
    if (!grow(&a, l->units, 4)) return 0;
    l->off_valid = a;
    if (!grow(&a, l->blocks, 2)) return 0;
    l->off_state = a;
    if (!grow(&a, l->blocks, 1)) return 0;
    if (!grow(&a, 1, 3)) return 0;
    l->off_saved = a & ~3u;
    a = l->off_saved;
    if (!grow(&a, SAVED_WORDS, 4)) return 0;
    l->bytes = a;
    return 1;
}

uint32_t ftl_mem_bytes(const struct ftl_config* cfg) {
    struct ftl_layout l;
    return layout_of(cfg, &l) ? l.bytes : 0;
}

uint32_t ftl_buffer_bytes(const struct ftl_config* cfg) {
    struct ftl_layout l;
    if (!layout_of(cfg, &l) || l.units + 2 > 0xFFFFFFFFu / cfg->geo.page_bytes) return 0;
    return (l.units + 2) * cfg->geo.page_bytes;
}

uint32_t ftl_config_capacity_units(const struct ftl_config* cfg) {
    struct ftl_layout l;
    return layout_of(cfg, &l) ? l.lpns : 0;
}

static inline uint32_t ppb(const struct ftl* f) { return f->cfg.geo.pages_per_block; }
static inline uint32_t upp(const struct ftl* f) { return f->lay.upp; }
static inline uint32_t unit_bytes(const struct ftl* f) {
    return f->cfg.geo.page_bytes / f->lay.upp;
}
static inline uint32_t frontiers(const struct ftl* f) { return f->lay.units + 2; }
static inline uint32_t gc_frontier(const struct ftl* f) { return f->lay.units; }
static inline uint32_t wl_frontier(const struct ftl* f) { return f->lay.units + 1; }
static inline uint32_t unit_of(const struct ftl* f, uint32_t b) {
    return b / f->cfg.geo.blocks_per_plane;
}
static inline uint32_t block_of(const struct ftl* f, uint32_t pu) { return pu / upp(f) / ppb(f); }
static inline int is_esp(const struct ftl* f, uint32_t b) {
    return b - unit_of(f, b) * f->cfg.geo.blocks_per_plane >=
           f->cfg.geo.blocks_per_plane - f->lay.esp;
}
/* Frontier k's page buffer, slot s. */
static inline uint64_t slot_buf(const struct ftl* f, uint32_t k, uint32_t s) {
    return f->cfg.buffers + (uint64_t)k * f->cfg.geo.page_bytes + (uint64_t)s * unit_bytes(f);
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
                   uint32_t* meta) {
    struct ftl_ppa a;
    uint32_t ignored[FTL_META_WORDS(FTL_MAX_UNITS_PER_PAGE)];
    split(f, p, &a);
    return rc_of(f->cfg.ops->read(f->cfg.ctx, &a, buf, off, len, meta ? meta : ignored,
                                  FTL_META_WORDS(upp(f))));
}

static int fl_program(struct ftl* f, uint32_t p, uint64_t buf, const uint32_t* meta) {
    struct ftl_ppa a;
    split(f, p, &a);
    int rc = rc_of(f->cfg.ops->program(f->cfg.ctx, &a, buf, meta, FTL_META_WORDS(upp(f))));
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

/* ---- mapping ---- */

static void invalidate(struct ftl* f, uint32_t pu) {
    rmap_set(f, pu, NONE);
    uint32_t b = block_of(f, pu);
    valid_set(f, b, valid_get(f, b) - 1);
}

static void map_unit(struct ftl* f, uint32_t pu, uint32_t tag) {
    rmap_set(f, pu, tag);
    uint32_t b = block_of(f, pu);
    valid_set(f, b, valid_get(f, b) + 1);
}

/* The frontier whose page buffer holds physical unit pu (mapped there, not programmed yet), or
 * NONE. */
static uint32_t buffered_in(const struct ftl* f, uint32_t pu) {
    uint32_t p = pu / upp(f), b = p / ppb(f);
    if (state_get(f, b) != BLK_OPEN) return NONE;
    for (uint32_t k = 0; k < frontiers(f); ++k)
        if (frb_get(f, k) == b)
            return frp_get(f, k) == p - b * ppb(f) && pu % upp(f) < fsl_get(f, k) ? k : NONE;
    return NONE;
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
static int put_unit(struct ftl* f, uint32_t frontier, uint32_t tag, int src, uint64_t buf,
                    uint32_t off, uint32_t len);
static int commit(struct ftl* f, uint32_t k);

/* The page frontier *k fills, opening a block if needed (host frontiers run GC first). When no
 * block is free (program failures in a row can use up the GC reserve), the page is another
 * frontier's (its buffer then takes the unit), *k names that frontier, and f->borrowed is set so
 * that the GC round that borrowed programs it. */
static uint32_t frontier_page(struct ftl* f, uint32_t* k, int* rc) {
    uint32_t b = frb_get(f, *k);
    *rc = FTL_OK;
    if (b == NONE) {
        if (*k < f->lay.units) *rc = ensure_free(f);
        if (*rc != FTL_OK && *rc != FTL_E_NOSPACE) return NONE;
        b = take_free(f, *k < f->lay.units ? *k : NONE, *k == wl_frontier(f));
        if (b == NONE) {
            for (uint32_t j = 0; j < frontiers(f); ++j) {
                if (frb_get(f, j) == NONE) continue;
                *k = j;
                *rc = FTL_OK;
                f->borrowed = 1;
                return frb_get(f, j) * ppb(f) + frp_get(f, j);
            }
            *rc = FTL_E_NOSPACE;
            return NONE;
        }
        *rc = FTL_OK;
        frb_set(f, *k, b);
        frp_set(f, *k, 0);
        fsl_set(f, *k, 0);
    }
    return b * ppb(f) + frp_get(f, *k);
}

/* Takes the next slot of frontier *k's page buffer: its physical unit, or NONE with *rc. */
static uint32_t reserve(struct ftl* f, uint32_t* k, int* rc) {
    uint32_t p = frontier_page(f, k, rc);
    if (p == NONE) return NONE;
    uint32_t s = fsl_get(f, *k);
    fsl_set(f, *k, s + 1);
    return p * upp(f) + s;
}

/* Programs every page buffer that holds units. */
static int flush_all(struct ftl* f) {
    for (uint32_t k = 0; k < frontiers(f); ++k) {
        int rc = commit(f, k);
        if (rc != FTL_OK) return rc;
    }
    return FTL_OK;
}

/* Programs frontier k's buffer, and those a GC round borrowed pages of: the copies are on the
 * flash before their victim is erased. */
static int settle(struct ftl* f, uint32_t k) {
    int rc = commit(f, k);
    if (rc == FTL_OK && f->borrowed) {
        f->borrowed = 0;
        rc = flush_all(f);
    }
    return rc;
}

/* Block b is bad: it is never erased or written again, and a bad-block record (a unit flagged
 * like a TRIM record, LPN field lpns + b) keeps it so across power loss. Best effort: without
 * room for the record, the block is found bad again when it next fails. */
static void mark_bad(struct ftl* f, uint32_t b) {
    if (state_get(f, b) != BLK_BAD) {
        state_set(f, b, BLK_BAD);
        ++f->st.bad_blocks;
    }
    if (put_unit(f, gc_frontier(f), TRIMMED | (f->lay.lpns + b), SRC_TRIM, 0, 0, 0) == FTL_OK &&
        settle(f, gc_frontier(f)) == FTL_OK)
        ++f->st.bad_records;
}

/* Frontier k's page failed to program: its block is retired (what its earlier pages hold stays
 * readable there; the next ensure_free moves it, once GC has made room, since moving it now could
 * exhaust the free blocks when failures come in a row) and the page's units go to the next page
 * the frontier gets, from the same buffer. */
static int rehome(struct ftl* f, uint32_t k) {
    uint32_t tags[FTL_MAX_UNITS_PER_PAGE], n = fsl_get(f, k);
    uint32_t b = frb_get(f, k), p = b * ppb(f) + frp_get(f, k);
    for (uint32_t s = 0; s < n; ++s) {
        tags[s] = rmap_get(f, p * upp(f) + s);
        invalidate(f, p * upp(f) + s);
    }
    fsl_set(f, k, 0);
    frb_set(f, k, NONE);
    if (valid_get(f, b)) ++f->pending;
    if (state_get(f, b) != BLK_BAD) {
        state_set(f, b, BLK_BAD);
        ++f->st.bad_blocks;
    }
    for (uint32_t s = 0; s < n; ++s) {
        int rc;
        uint32_t j = k, pu = reserve(f, &j, &rc);
        if (pu == NONE) return rc;
        if (j != k || pu % upp(f) != s)
            f->cfg.ops->copy(f->cfg.ctx, slot_buf(f, j, pu % upp(f)), slot_buf(f, k, s),
                             unit_bytes(f));
        uint32_t lpn = tags[s] & ~TRIMMED;
        if (lpn < f->lay.lpns) map_set(f, lpn, pu | (tags[s] & TRIMMED));
        map_unit(f, pu, tags[s]);
        if (j != k && fsl_get(f, j) == upp(f) && (rc = commit(f, j)) != FTL_OK) return rc;
    }
    mark_bad(f, b);
    return FTL_OK;
}

/* Programs frontier k's page from its buffer, the slots not filled padded. */
static int commit(struct ftl* f, uint32_t k) {
    uint32_t meta[FTL_META_WORDS(FTL_MAX_UNITS_PER_PAGE)];
    for (;;) {
        uint32_t n = fsl_get(f, k);
        if (n == 0) return FTL_OK;
        uint32_t b = frb_get(f, k), p = b * ppb(f) + frp_get(f, k);
        meta[0] = f->seq++ & SEQ_MASK;
        for (uint32_t s = 0; s < upp(f); ++s)
            meta[1 + s] = s < n ? rmap_get(f, p * upp(f) + s) : NONE;
        int rc = fl_program(f, p, slot_buf(f, k, 0), meta);
        if (rc == FTL_E_FAILED) {
            rc = rehome(f, k);
            if (rc != FTL_OK) return rc;
            continue;
        }
        if (rc != FTL_OK) return rc;
        f->st.padded_units += upp(f) - n;
        fsl_set(f, k, 0);
        uint32_t next = frp_get(f, k) + 1;
        frp_set(f, k, next);
        if (next == ppb(f)) {
            state_set(f, b, BLK_FULL);
            age_set(f, b, f->seq & SEQ_MASK);
            frb_set(f, k, NONE);
        }
        if (k == f->rr) f->rr = k + 1 == f->lay.units ? 0 : k + 1; /* host writes stripe */
        return FTL_OK;
    }
}

/* Puts one unit (tag = lpn, TRIMMED | lpn for a TRIM record, TRIMMED | (lpns + b) for a bad-block
 * record) in frontier `frontier`'s page buffer and maps it there; its bytes come from buf
 * (SRC_BUF, a whole unit), buf's len bytes at off merged into the unit's current bytes (SRC_RMW),
 * the current copy on the flash (SRC_COPY), or nothing (SRC_TRIM). A unit whose current copy
 * still waits in a page buffer is replaced there (host writes and TRIMs). The page is programmed
 * when its slots are full. */
static int put_unit(struct ftl* f, uint32_t frontier, uint32_t tag, int src, uint64_t buf,
                    uint32_t off, uint32_t len) {
    const struct ftl_ops* ops = f->cfg.ops;
    uint32_t lpn = tag & ~TRIMMED, ub = unit_bytes(f);
    int record = lpn >= f->lay.lpns; /* a bad-block record: outside the map */
    uint32_t old = record ? NONE : map_get(f, lpn);
    uint32_t k = old == NONE || src == SRC_COPY ? NONE : buffered_in(f, old & ~TRIMMED);
    if (k != NONE) {
        uint32_t pu = old & ~TRIMMED;
        uint64_t at = slot_buf(f, k, pu % upp(f));
        if (src == SRC_BUF) ops->copy(f->cfg.ctx, at, buf, ub);
        if (src == SRC_RMW && (old & TRIMMED)) ops->fill(f->cfg.ctx, at, 0xFF, ub);
        if (src == SRC_RMW) ops->copy(f->cfg.ctx, at + off, buf, len);
        map_set(f, lpn, src == SRC_TRIM ? (pu | TRIMMED) : pu);
        rmap_set(f, pu, src == SRC_TRIM ? tag : lpn);
        ++f->st.buffer_hits;
        return FTL_OK;
    }
    int rc;
    k = frontier;
    uint32_t pu = reserve(f, &k, &rc);
    if (pu == NONE) return rc;
    uint64_t at = slot_buf(f, k, pu % upp(f));
    old = record ? NONE : map_get(f, lpn); /* again: the GC that reserve ran may have moved it */
    if (src == SRC_BUF) {
        ops->copy(f->cfg.ctx, at, buf, ub);
    } else if (src == SRC_RMW || src == SRC_COPY) {
        if (old != NONE && !(old & TRIMMED)) {
            rc = fl_read(f, old / upp(f), at, old % upp(f) * ub, ub, 0);
            if (rc != FTL_OK) { /* the slot goes back: nothing was taken after it */
                fsl_set(f, k, fsl_get(f, k) - 1);
                return rc;
            }
        } else {
            ops->fill(f->cfg.ctx, at, 0xFF, ub);
        }
        if (src == SRC_RMW) ops->copy(f->cfg.ctx, at + off, buf, len);
    }
    if (!record) {
        if (old != NONE) invalidate(f, old & ~TRIMMED);
        map_set(f, lpn, src == SRC_TRIM ? (pu | TRIMMED) : pu);
    }
    map_unit(f, pu, tag);
    return fsl_get(f, k) == upp(f) ? commit(f, k) : FTL_OK;
}

/* A slot's tag is a unit of data (not a TRIM or bad-block record, not empty). */
static inline int is_data(const struct ftl* f, uint32_t tag) { return tag < f->lay.lpns; }

/* GC: moves the `n` valid data units in consecutive slots of one page from physical unit src on
 * to frontier k's buffer with one flash read, as many as its page has room for in a row, as a
 * controller reads a victim page once for all it keeps. Returns how many moved, or an error code
 * (nothing moved; the caller then moves them one at a time, which isolates an unreadable one). */
static int copy_run(struct ftl* f, uint32_t k, uint32_t src, uint32_t n) {
    int rc;
    uint32_t j = k, pu = reserve(f, &j, &rc), m = 1;
    if (pu == NONE) return rc;
    for (; m < n && fsl_get(f, j) < upp(f); ++m) fsl_set(f, j, fsl_get(f, j) + 1);
    const uint32_t ub = unit_bytes(f);
    rc = fl_read(f, src / upp(f), slot_buf(f, j, pu % upp(f)), src % upp(f) * ub, m * ub, 0);
    if (rc != FTL_OK) { /* the slots go back: nothing was taken after them */
        fsl_set(f, j, fsl_get(f, j) - m);
        return rc;
    }
    for (uint32_t i = 0; i < m; ++i) {
        uint32_t lpn = rmap_get(f, src + i);
        invalidate(f, src + i);
        map_set(f, lpn, pu + i);
        map_unit(f, pu + i, lpn);
    }
    f->st.gc_copies += m;
    rc = fsl_get(f, j) == upp(f) ? commit(f, j) : FTL_OK;
    return rc == FTL_OK ? (int)m : rc;
}

/* Moves what physical unit *pu holds to frontier k's buffer, if it is valid, and with it the data
 * units in the next slots of its page (one read); *pu goes past them. Returns the units moved,
 * with *unreadable counting those left behind because they read uncorrectable (they stay
 * mapped: reads keep reporting the error), or an error code. */
static int move_next(struct ftl* f, uint32_t* pu, uint32_t k, uint32_t* unreadable) {
    uint32_t at = (*pu)++, tag = rmap_get(f, at);
    if (tag == NONE) return 0;
    if (is_data(f, tag)) {
        uint32_t n = 1;
        while ((at + n) % upp(f) && is_data(f, rmap_get(f, at + n))) ++n;
        int moved = copy_run(f, k, at, n);
        if (moved > 0) {
            *pu = at + (uint32_t)moved;
            return moved;
        }
        if (moved != FTL_E_UNCORRECTABLE) return moved;
    }
    int rc = put_unit(f, k, tag, (tag & TRIMMED) ? SRC_TRIM : SRC_COPY, 0, 0, 0);
    if (rc == FTL_E_UNCORRECTABLE) {
        ++*unreadable;
        return 0;
    }
    if (rc != FTL_OK) return rc;
    if ((tag & ~TRIMMED) >= f->lay.lpns) invalidate(f, at); /* a bad-block record */
    ++f->st.gc_copies;
    return 1;
}

/* Moves every valid unit of block b to frontier k's buffer: the data units of a page that lie in
 * consecutive slots with one read. Returns the number of units left behind unreadable, or an
 * error code. */
static int relocate(struct ftl* f, uint32_t b, uint32_t k) {
    uint32_t unreadable = 0;
    for (uint32_t pu = b * ppb(f) * upp(f), end = pu + ppb(f) * upp(f); pu < end;) {
        int rc = move_next(f, &pu, k, &unreadable);
        if (rc < 0) return rc;
    }
    return (int)unreadable;
}

/* Empties block b (full) through frontier k and erases it; a block with unreadable units is
 * retired instead. */
static int finish(struct ftl* f, uint32_t b, uint32_t k, int unreadable);
static int reclaim(struct ftl* f, uint32_t b, uint32_t k) {
    int unreadable = relocate(f, b, k);
    return unreadable < 0 ? unreadable : finish(f, b, k, unreadable);
}

/* Block b emptied through frontier k: the copies are programmed, then b is erased (retired when
 * units of it were unreadable or the erase failed). */
static int finish(struct ftl* f, uint32_t b, uint32_t k, int unreadable) {
    int rc = settle(f, k);
    if (rc != FTL_OK) return rc;
    if (unreadable == 0) {
        rc = fl_erase(f, b);
        if (rc != FTL_OK || state_get(f, b) != BLK_BAD) return rc;
    }
    mark_bad(f, b); /* unreadable units, or the erase failed */
    return FTL_OK;
}

/* The GC victim: the full block with the fewest valid units (greedy), or with the most
 * (1 - u) * age / (1 + u) (cost-benefit; u its valid fraction, age the writes since it filled);
 * NONE when no full block would give any room. */
static uint32_t pick_victim(const struct ftl* f) {
    const uint32_t all = ppb(f) * upp(f);
    uint32_t victim = NONE, least = all;
    uint64_t best_num = 0, best_den = 1;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        if (state_get(f, b) != BLK_FULL || b == f->gc_victim) continue;
        uint32_t v = valid_get(f, b);
        if (v >= all) continue;
        if (!(f->cfg.gc_policy & FTL_GC_COST_BENEFIT)) {
            if (v < least) victim = b, least = v;
            continue;
        }
        /* Compared as fractions: num / den > best_num / best_den, without a division. Ages are
         * capped at 2^30 writes, so the products fit in 64 bits. */
        uint32_t age = (f->seq - age_get(f, b)) & SEQ_MASK;
        if (age > 0x40000000u) age = 0x40000000u;
        uint64_t num = (uint64_t)(all - v) * (age + 1), den = all + v;
        if (victim == NONE || num * best_den > best_num * den)
            victim = b, best_num = num, best_den = den;
    }
    return victim;
}

/* One step of GC: moves at least gc_rate units (`paced`) or all that are left of the victim under
 * way (picking one when none is) through the GC frontier, and finishes the victim once it is
 * empty. */
static int gc_step(struct ftl* f, int paced) {
    if (f->gc_victim == NONE) {
        uint32_t b = pick_victim(f), all = ppb(f) * upp(f);
        if (b == NONE) return FTL_E_NOSPACE; /* no progress possible */
        ++f->st.gc_victims;
        f->gc_victim = b;
        f->gc_next = b * all;
        f->gc_unreadable = 0;
        /* Units to move per host write so that the victim is empty by the time the host has
         * written the room it gives: v / (all - v), rounded up. */
        f->gc_rate = (all - 1) / (all - valid_get(f, b));
    }
    const uint32_t b = f->gc_victim, end = (b + 1) * ppb(f) * upp(f);
    const uint32_t budget = paced ? f->gc_rate : NONE;
    for (uint32_t moved = 0; f->gc_next < end && moved < budget;) {
        int rc = move_next(f, &f->gc_next, gc_frontier(f), &f->gc_unreadable);
        if (rc < 0) return rc;
        moved += (uint32_t)rc;
    }
    if (f->gc_next < end) return FTL_OK;
    f->gc_victim = NONE;
    return finish(f, b, gc_frontier(f), (int)f->gc_unreadable);
}

/* FTL_GC_PACED, with a write cache: GC keeps pace with the host's writes once fewer than
 * gc_free_blocks + a block per host frontier are free (the host frontiers, striped page by page,
 * fill their blocks together and open new ones in a burst): each write first moves gc_rate units,
 * so that GC does not stop the channel for a whole run of victims when the frontiers open blocks
 * (write-through would pad a GC page per write: there GC runs when needed only). */
static int pace_gc(struct ftl* f) {
    if (!(f->cfg.gc_policy & FTL_GC_PACED) || !f->cfg.write_cache ||
        f->free_blocks >= f->cfg.gc_free_blocks + f->lay.units)
        return FTL_OK;
    int rc = gc_step(f, 1);
    return rc == FTL_E_NOSPACE ? FTL_OK : rc; /* the writes go on while the reserve lasts */
}

/* GC until enough blocks are free (the victim under way first); then the data of a retired
 * block, if any waits; then at most one static wear-levelling migration. */
static int ensure_free(struct ftl* f) {
    while (f->free_blocks < f->cfg.gc_free_blocks) {
        int rc = gc_step(f, 0);
        if (rc != FTL_OK) return rc;
    }
    if (f->pending) { /* one retired block per call; those with unreadable units are passed */
        uint32_t b = 0;
        for (; b < f->lay.blocks; ++b) {
            if (state_get(f, b) != BLK_BAD || !valid_get(f, b)) continue;
            int rc = relocate(f, b, gc_frontier(f));
            if (rc < 0) return rc;
            int settled = settle(f, gc_frontier(f));
            if (settled != FTL_OK) return settled;
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
        if (cold == NONE || cold == f->gc_victim || most - least <= f->cfg.wl_threshold)
            return FTL_OK;
        if (cold == frb_get(f, wl_frontier(f))) {
            /* The WL frontier's own block is the coldest (it opened when nothing free was worn):
             * only migrations fill it, so close it and migrate it like any other (its buffer is
             * empty: every migration settles). */
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

/* The FTL on cfg's tables, as they are. */
static int attach(struct ftl* f, const struct ftl_config* cfg) {
    struct ftl_layout l;
    const int external =
        cfg && cfg->ops && cfg->ops->table_read && cfg->ops->table_write && cfg->ops->table_fill;
    if (!cfg || !cfg->ops || !layout_of(cfg, &l) || cfg->mem_bytes < l.bytes ||
        (external && cfg->mem) ||
        (!external && (!cfg->mem || ((uintptr_t)cfg->mem & 3) || cfg->ops->table_read ||
                       cfg->ops->table_write || cfg->ops->table_fill)))
        return FTL_E_ARG;
    memset(f, 0, sizeof *f);
    f->gc_victim = NONE;
    f->cfg = *cfg;
    f->mem = external ? 0 : (uint8_t*)cfg->mem;
    f->lay = l;
    return FTL_OK;
}

/* The FTL on cfg's tables, emptied. */
static int setup(struct ftl* f, const struct ftl_config* cfg) {
    int rc = attach(f, cfg);
    if (rc != FTL_OK) return rc;
    /* map and rmap NONE (all ones); P/E counts, ages, frontier pages and slots, free counts and
     * valid counts 0; one fill each, since behind DMA a table is filled in bulk. */
    tbl_fill(f, f->lay.off_map, 0xFF, f->lay.off_pe - f->lay.off_map);
    tbl_fill(f, f->lay.off_pe, 0, f->lay.off_state - f->lay.off_pe);
    tbl_fill(f, f->lay.off_saved, 0, SAVED_WORDS * 4); /* a saved state no longer holds */
    for (uint32_t b = 0; b < f->lay.blocks; ++b)
        state_set(f, b, is_esp(f, b) ? BLK_ESP_FREE : BLK_FULL);
    for (uint32_t k = 0; k < frontiers(f); ++k) frb_set(f, k, NONE);
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
 * sequence wins. While scanning, rmap[pu] holds slot pu's page sequence (and TRIMMED for a
 * record), valid[b] the count of block b's written pages, and pe[b] 1 + the slot of b's newest
 * bad-block record; afterwards all three are rebuilt. A block's written part ends at its first
 * erased page (a page torn by the power cut reads uncorrectable: it counts as written and holds
 * nothing). */
int ftl_mount(struct ftl* f, const struct ftl_config* cfg) {
    int rc = setup(f, cfg);
    if (rc != FTL_OK) return rc;
    uint32_t max_seq = 0, meta[FTL_META_WORDS(FTL_MAX_UNITS_PER_PAGE)];
    int any = 0;
    for (uint32_t b = 0; b < f->lay.blocks; ++b) {
        if (is_esp(f, b)) continue;
        uint32_t written = 0;
        for (uint32_t i = 0; i < ppb(f); ++i) {
            uint32_t p = b * ppb(f) + i;
            rc = fl_read(f, p, f->cfg.buffers, 0, 0, meta);
            if (rc == FTL_E_UNCORRECTABLE) { /* a torn or worn page: holds nothing */
                ++written;
                continue;
            }
            if (rc != FTL_OK) return rc;
            if (meta[0] == NONE) break; /* erased: a written page's sequence has bit 31 clear */
            ++written;
            uint32_t seq = meta[0] & SEQ_MASK;
            if (!any || seq > max_seq) max_seq = seq, any = 1;
            for (uint32_t s = 0; s < upp(f); ++s) {
                uint32_t tag = meta[1 + s], lpn = tag & ~TRIMMED, flag = tag & TRIMMED;
                if (tag == NONE) continue; /* padding */
                if (lpn >= f->lay.lpns && !(flag && lpn - f->lay.lpns < f->lay.blocks))
                    continue; /* garbage */
                uint32_t pu = p * upp(f) + s;
                rmap_set(f, pu, seq | flag);
                if (lpn >= f->lay.lpns) { /* a bad-block record */
                    uint32_t x = lpn - f->lay.lpns, cur = pe_get(f, x);
                    if (cur == 0 || seq > (rmap_get(f, cur - 1) & SEQ_MASK)) pe_set(f, x, pu + 1);
                    continue;
                }
                uint32_t cur = map_get(f, lpn);
                if (cur == NONE || seq > (rmap_get(f, cur) & SEQ_MASK)) map_set(f, lpn, pu);
            }
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
        uint32_t pu = map_get(f, lpn);
        if (pu != NONE && (rmap_get(f, pu) & TRIMMED)) map_set(f, lpn, pu | TRIMMED);
    }
    tbl_fill(f, f->lay.off_rmap, 0xFF, f->lay.off_pe - f->lay.off_rmap);
    for (uint32_t lpn = 0; lpn < f->lay.lpns; ++lpn) {
        uint32_t m = map_get(f, lpn);
        if (m != NONE) map_unit(f, m & ~TRIMMED, lpn | (m & TRIMMED));
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) { /* the newest record of each bad block stays */
        uint32_t r = pe_get(f, b);
        if (!r) continue;
        pe_set(f, b, 0);
        map_unit(f, r - 1, TRIMMED | (f->lay.lpns + b));
    }
    for (uint32_t b = 0; b < f->lay.blocks; ++b) { /* what bad blocks hold moves out, one per GC */
        if (state_get(f, b) == BLK_BAD && valid_get(f, b)) ++f->pending;
        if (state_get(f, b) == BLK_FULL) age_set(f, b, 0); /* unknown: as old as can be */
    }
    f->seq = any ? max_seq + 1 : 0;
    return FTL_OK;
}

int ftl_save(struct ftl* f) {
    int rc = flush_all(f);
    if (rc != FTL_OK) return rc;
    const uint32_t w[SAVED_WORDS] = {
        SAVED_IS,          f->lay.lpns,  f->lay.slots, f->lay.blocks, f->seq,
        f->free_blocks,    f->rr,        f->pe_max,    f->pending,    f->st.bad_blocks,
        f->st.bad_records, f->gc_victim, f->gc_next,   f->gc_rate,    f->gc_unreadable};
    tbl_write(f, f->lay.off_saved, w, sizeof w);
    return FTL_OK;
}

int ftl_resume(struct ftl* f, const struct ftl_config* cfg) {
    int rc = attach(f, cfg);
    if (rc != FTL_OK) return rc;
    uint32_t w[SAVED_WORDS];
    tbl_read(f, f->lay.off_saved, w, sizeof w);
    if (w[SAVED_MAGIC] != SAVED_IS || w[SAVED_LPNS] != f->lay.lpns ||
        w[SAVED_SLOTS] != f->lay.slots || w[SAVED_BLOCKS] != f->lay.blocks ||
        w[SAVED_RR] >= f->lay.units || w[SAVED_FREE] > f->lay.blocks ||
        w[SAVED_PENDING] > f->lay.blocks || w[SAVED_BAD_BLOCKS] > f->lay.blocks ||
        (w[SAVED_GC_VICTIM] != NONE && (w[SAVED_GC_VICTIM] >= f->lay.blocks ||
                                        block_of(f, w[SAVED_GC_NEXT]) != w[SAVED_GC_VICTIM])))
        return FTL_E_ARG;
    f->seq = w[SAVED_SEQ];
    f->free_blocks = w[SAVED_FREE];
    f->rr = w[SAVED_RR];
    f->pe_max = w[SAVED_PE_MAX];
    f->pending = w[SAVED_PENDING];
    f->st.bad_blocks = w[SAVED_BAD_BLOCKS];
    f->st.bad_records = w[SAVED_BAD_RECORDS];
    _Static_assert(offsetof(struct ftl, gc_unreadable) == offsetof(struct ftl, gc_victim) + 12 &&
                       SAVED_GC_UNREADABLE == SAVED_GC_VICTIM + 3,
                   "the four gc_ fields lie in a row, as in the record");
    memcpy(&f->gc_victim, &w[SAVED_GC_VICTIM], 4 * sizeof(uint32_t));
    const uint32_t used = 0;
    tbl_write(f, f->lay.off_saved + SAVED_MAGIC * 4, &used, 4);
    return FTL_OK;
}

/* ---- the API ---- */

uint32_t ftl_capacity_units(const struct ftl* f) { return f->lay.lpns; }
uint32_t ftl_unit_bytes(const struct ftl* f) { return unit_bytes(f); }

static int in_unit(const struct ftl* f, uint32_t lpn, uint32_t offset, uint32_t len) {
    uint32_t ub = unit_bytes(f);
    return lpn < f->lay.lpns && offset <= ub && len <= ub - offset;
}

int ftl_read(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len) {
    const uint32_t ub = unit_bytes(f);
    /* ceil((offset + len) / ub) units from lpn on must exist; as a product, so that SPU-OS
     * needs no 64-bit division routine. */
    if (lpn >= f->lay.lpns || offset > ub ||
        (uint64_t)offset + len > (uint64_t)(f->lay.lpns - lpn) * ub)
        return FTL_E_RANGE;
    ++f->st.host_reads;
    uint32_t meta[FTL_META_WORDS(FTL_MAX_UNITS_PER_PAGE)];
    for (; len; offset = 0, ++lpn) {
        uint32_t n = ub - offset < len ? ub - offset : len, m = map_get(f, lpn);
        uint32_t k = m == NONE || (m & TRIMMED) ? NONE : buffered_in(f, m), s = m % upp(f);
        if (m == NONE || (m & TRIMMED)) {
            f->cfg.ops->fill(f->cfg.ctx, buf, 0xFF, n);
        } else if (k != NONE) {
            f->cfg.ops->copy(f->cfg.ctx, buf, slot_buf(f, k, s) + offset, n);
        } else {
            /* The following units in the next slots of the same page come in the same read. */
            uint32_t units = 1;
            while (n < len && s + units < upp(f) && map_get(f, lpn + units) == m + units) {
                n += len - n < ub ? len - n : ub;
                ++units;
            }
            int rc = fl_read(f, m / upp(f), buf, s * ub + offset, n, meta);
            if (rc != FTL_OK) return rc;
            for (uint32_t i = 0; i < units; ++i)
                if (meta[1 + s + i] != lpn + i) return FTL_E_IO; /* the map is wrong */
            lpn += units - 1;
        }
        buf += n;
        len -= n;
    }
    return FTL_OK;
}

/* Write-through: what a host call put in a page buffer is programmed before it returns. */
static int after_host(struct ftl* f) { return f->cfg.write_cache ? FTL_OK : flush_all(f); }

int ftl_write(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len) {
    if (!in_unit(f, lpn, offset, len) || len == 0) return FTL_E_RANGE;
    int whole = offset == 0 && len == unit_bytes(f);
    int rc = pace_gc(f);
    if (rc != FTL_OK) return rc;
    rc = put_unit(f, f->rr, lpn, whole ? SRC_BUF : SRC_RMW, buf, offset, len);
    if (rc == FTL_OK) ++f->st.host_writes;
    return rc == FTL_OK ? after_host(f) : rc;
}

int ftl_trim(struct ftl* f, uint32_t lpn, uint32_t count) {
    if (lpn >= f->lay.lpns || count > f->lay.lpns - lpn) return FTL_E_RANGE;
    for (uint32_t i = lpn; i < lpn + count; ++i) {
        uint32_t m = map_get(f, i);
        if (m == NONE || (m & TRIMMED)) continue; /* no copy to hide, or hidden already */
        int rc = put_unit(f, f->rr, i | TRIMMED, SRC_TRIM, 0, 0, 0);
        if (rc != FTL_OK) return rc;
        ++f->st.trim_records;
    }
    return after_host(f);
}

int ftl_flush(struct ftl* f) {
    ++f->st.flushes;
    return flush_all(f);
}

int ftl_sync(struct ftl* f, uint32_t lpn, uint32_t count) {
    if (lpn >= f->lay.lpns || count > f->lay.lpns - lpn) return FTL_E_RANGE;
    ++f->st.syncs;
    for (uint32_t i = lpn; i < lpn + count; ++i) {
        uint32_t m = map_get(f, i), k = m == NONE ? NONE : buffered_in(f, m & ~TRIMMED);
        int rc = k == NONE ? FTL_OK : commit(f, k);
        if (rc != FTL_OK) return rc;
    }
    return FTL_OK;
}

void ftl_stats(const struct ftl* f, struct ftl_stats* out) {
    *out = f->st;
    out->free_blocks = f->free_blocks;
    out->buffered_units = 0;
    for (uint32_t k = 0; k < frontiers(f); ++k) out->buffered_units += fsl_get(f, k);
    out->wa_num = f->st.flash_programs * upp(f);
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
 * states, frontiers are open blocks whose buffered slots are mapped (and only those), the GC and
 * WL buffers are empty. 0, or a positive number naming the first broken rule. */
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
        for (uint32_t pu = b * ppb(f) * upp(f); pu < (b + 1) * ppb(f) * upp(f); ++pu) {
            uint32_t tag = rmap_get(f, pu);
            if (tag == NONE) continue;
            ++n;
            uint32_t lpn = tag & ~TRIMMED;
            if (lpn >= f->lay.lpns) {
                if (!(tag & TRIMMED) || lpn - f->lay.lpns >= f->lay.blocks ||
                    state_get(f, lpn - f->lay.lpns) != BLK_BAD)
                    return 3;
            } else if (map_get(f, lpn) != (pu | (tag & TRIMMED))) {
                return 4;
            }
        }
        if (n != valid_get(f, b) || n > ppb(f) * upp(f)) return 5;
        uint32_t s = state_get(f, b);
        if ((s == BLK_FREE || s == BLK_ESP_FREE || s == BLK_ESP_USED) && n) return 6;
    }
    for (uint32_t lpn = 0; lpn < f->lay.lpns; ++lpn) {
        uint32_t m = map_get(f, lpn);
        if (m == NONE) continue;
        uint32_t pu = m & ~TRIMMED;
        if (pu >= f->lay.slots || rmap_get(f, pu) != (lpn | (m & TRIMMED))) return 7;
    }
    for (uint32_t k = 0; k < frontiers(f); ++k) {
        uint32_t b = frb_get(f, k), n = fsl_get(f, k);
        if (b == NONE) {
            if (n) return 8;
            continue;
        }
        if (b >= f->lay.blocks || state_get(f, b) != BLK_OPEN || frp_get(f, k) >= ppb(f) ||
            n >= upp(f) || (k == wl_frontier(f) && n) ||
            (k == gc_frontier(f) && n && f->gc_victim == NONE)) /* paced GC's copies wait */
            return 8;
        uint32_t p = b * ppb(f) + frp_get(f, k);
        for (uint32_t s = 0; s < upp(f); ++s)
            if ((rmap_get(f, p * upp(f) + s) == NONE) != (s >= n)) return 9;
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
