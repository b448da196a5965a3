/* The Caching SSD App (Willow Section 4.4; RPCs and store layout in caching_abi.h): a fully
 * associative cache of 4 KiB disk blocks in a region of the SPU's store. A lookup reads the
 * block's bucket, which names the chain's first frame and its block (a hit there is one store
 * read), then one entry per further step of the chain; data moves by DMA between the
 * frames and the network interface, never through DMEM. DMEM holds 4 bits per frame: valid,
 * dirty and a 2-bit hit counter, which the replacement clock reads (VICTIM: the hand passes
 * frames, taking one hit off each, and stops at a free frame or one whose counter is 0; a hit
 * adds one, up to 3): frequently hit blocks survive several turns of the hand, a block hit once
 * only one.
 *
 * Crash consistency rests on the order of single NVM writes: a block leaves its chain (one
 * 4-byte write) before its frame is refilled, and a filled frame joins a chain (its entry, then
 * the head) only after its data is in place; a block turns dirty (its entry's flags) before a
 * WRITE's data lands. So every frame a chain reaches holds the block its entry names, and a
 * reboot (CACHE_SETUP without formatting) walks the chains to rebuild DMEM's state: a frame no
 * chain reaches is free, whatever its entry says. A frame reached twice, or an entry in the
 * wrong chain, is CACHE_E_CORRUPT.
 *
 * Handlers run to completion except READ, VICTIM and WRITEBACK, which wait for the host's
 * answer to their DATA only after their last store access. WRITEBACK arms a guard for its frame
 * that any WRITE of the frame disarms: CLEAN then refuses (CACHE_E_DIRTIED), so a write that
 * came after the data left stays dirty. A user process reaches only the blocks the kernel granted
 * it (CACHE_GRANT, Willow 4.4's special permission entries, a table in DMEM); the app's store
 * accesses lie in the region the kernel gave the app itself (SPU-OS's APP_REGION), so SPU-OS
 * does not look up the process's own entries on each of them. */
#include <stddef.h>

#include "caching_abi.h"
#include "spu_app.h"

#define ST_COUNT 3u /* DMEM state of a frame: the hit counter ... */
#define ST_DIRTY 4u
#define ST_VALID 8u
#define HEADS 32u /* buckets read at once while loading */

static struct {
    uint32_t base, frames, node, spus, disk_blocks, ready;
    uint32_t hand;                         /* the clock's */
    uint32_t wb_frame, wb_block, wb_armed; /* the last WRITEBACK, until CLEAN or a WRITE */
    uint32_t stat[CACHE_STATS_COUNT];
} c;
static uint8_t st[CACHE_MAX_FRAMES / 2]; /* 4 bits a frame; all zero: the zeros a format writes */
static struct cache_grant_args grants[CACHE_MAX_GRANTS]; /* blocks 0: unused */
static struct cache_entry e;                             /* the entry the last chain step read */
static struct cache_bucket bk;                           /* the bucket the last walk read */
/* Buckets at hand in DMEM, direct-mapped by bucket number and written through, so that a hit at
 * a chain's head (the hot blocks, which the clock keeps) reads nothing from the store. */
static struct ix_entry {
    uint16_t tag, head; /* tag: the bucket + 1 (0: empty); its head */
    uint32_t block;
} ix[CACHE_INDEX];

static uint32_t state(uint32_t f) { return st[f >> 1] >> (f & 1) * 4 & 15u; }
static void set_state(uint32_t f, uint32_t v) {
    const uint32_t shift = (f & 1) * 4;
    st[f >> 1] = (uint8_t)((st[f >> 1] & ~(15u << shift)) | v << shift);
}
static uint32_t entry_at(uint32_t f) { return c.base + CACHE_ENTRIES_AT + f * sizeof e; }
static uint32_t bucket(uint32_t block) { return block / c.spus % CACHE_BUCKETS(c.frames); }
static uint32_t bucket_at(uint32_t block) {
    return c.base + CACHE_BUCKETS_AT(c.frames) + sizeof bk * bucket(block);
}
/* Bucket b's place in the index, and bk kept there as bucket b. */
static struct ix_entry* ix_at(uint32_t b) { return &ix[b % CACHE_INDEX]; }
static void remember(uint32_t b) {
    struct ix_entry* x = ix_at(b);
    x->tag = (uint16_t)(b + 1);
    x->head = (uint16_t)bk.head;
    x->block = bk.block;
}
/* The block's bucket into bk: from the index, else from the store (and into the index). */
static uint32_t read_bucket(uint32_t block) {
    const uint32_t b = bucket(block);
    const struct ix_entry* x = ix_at(b);
    if (x->tag == b + 1) {
        bk.head = x->head;
        bk.block = x->block;
        return CACHE_OK;
    }
    const uint32_t r = nvm_read(bucket_at(block), &bk, sizeof bk);
    if (!r && bk.head <= c.frames) remember(b); /* a corrupt head stays for the walk to see */
    return r;
}
/* bk as the block's bucket, in the store and the index (which forgets it if the write failed). */
static uint32_t write_bucket(uint32_t block) {
    const uint32_t b = bucket(block), r = nvm_write(bucket_at(block), &bk, sizeof bk);
    if (r)
        ix_at(b)->tag = 0;
    else
        remember(b);
    return r;
}
static uint32_t frame_at(uint32_t f) {
    return c.base + CACHE_FRAMES_AT(c.frames) + f * CACHE_BLOCK_BYTES;
}

/* A frame's DMEM state, and the counters of valid and dirty frames, from its flags. */
static void account(uint32_t f, uint32_t flags) {
    const uint32_t old = state(f);
    const uint32_t now = (flags & CACHE_VALID ? ST_VALID | (old & ST_COUNT) : 0) |
                         (flags & CACHE_DIRTY ? ST_DIRTY : 0);
    c.stat[CACHE_STAT_VALID] += !!(now & ST_VALID) - !!(old & ST_VALID);
    c.stat[CACHE_STAT_DIRTY] += !!(now & ST_DIRTY) - !!(old & ST_DIRTY);
    set_state(f, now);
}

/* Frame f's persistent flags, then its state. */
static uint32_t mark(uint32_t f, uint32_t flags) {
    const uint32_t r = nvm_write(entry_at(f) + offsetof(struct cache_entry, flags), &flags, 4);
    if (!r) account(f, flags);
    return r;
}

/* Frame f's flags, as its entry holds them. */
static uint32_t flags_of(uint32_t f) {
    const uint32_t s = state(f);
    return (s & ST_VALID ? CACHE_VALID : 0) | (s & ST_DIRTY ? CACHE_DIRTY : 0);
}

static void touch(uint32_t f) {
    const uint32_t s = state(f);
    if ((s & ST_COUNT) < ST_COUNT) set_state(f, s + 1);
}

/* Walks `block`'s chain to the frame holding it (want 0) or to frame want - 1. Returns that
 * frame + 1 (0: not there, or *r says why not) and *link, the NVM address of the word pointing
 * at it: the bucket's head, or the `next` of the entry before (whose entry `e` then holds; a
 * block at the chain's head is found by its bucket alone). */
static uint32_t walk(uint32_t block, uint32_t want, uint32_t* link, uint32_t* r) {
    *link = bucket_at(block);
    *r = read_bucket(block);
    if (!*r && !want && bk.head && bk.head <= c.frames && bk.block == block &&
        state(bk.head - 1) & ST_VALID)
        return bk.head;
    for (uint32_t f = bk.head, steps = 0; !*r && f; ++steps, f = e.next) {
        if (f > c.frames || steps == c.frames) {
            *r = CACHE_E_CORRUPT;
            break;
        }
        const uint32_t at = entry_at(f - 1);
        *r = nvm_read(at, &e, sizeof e);
        if (!*r && (want ? f == want : (e.flags & CACHE_VALID) && e.block == block)) return f;
        *link = at + offsetof(struct cache_entry, next);
    }
    return 0;
}

/* Handler prologue: the arguments (the first n payload bytes), from a kernel HRE if `kernel`. */
static uint32_t args(const struct spu_rpc_header* h, void* p, uint32_t n, int kernel) {
    if (kernel && SPU_OS_PROCESS(h->origin)) return SPU_OS_E_KERNEL_ONLY;
    if (!c.ready) return CACHE_E_STATE;
    if (h->length < n) return CACHE_E_ARGS;
    return rpc_receive_bytes(p, n);
}

/* Whether the request's process may reach the block with `rights` (the kernel: any). */
static uint32_t allowed(const struct spu_rpc_header* h, uint32_t block, uint32_t rights) {
    const uint32_t p = SPU_OS_PROCESS(h->origin);
    if (!p) return CACHE_OK;
    for (uint32_t i = 0; i < CACHE_MAX_GRANTS; ++i)
        if (cache_grant_covers(&grants[i], p, block, rights)) return CACHE_OK;
    return CACHE_E_DENIED;
}

/* Whether this SPU caches the block. */
static uint32_t mine(uint32_t block) {
    return block < c.disk_blocks && block % c.spus == c.node ? CACHE_OK : CACHE_E_RANGE;
}

/* The cached block's frame + 1 for the request's process, which needs `rights` on it (0: a
 * miss, counted, *r = CACHE_E_MISS, or *r says why not); a hit is counted. */
static uint32_t lookup(const struct spu_rpc_header* h, uint32_t block, uint32_t rights,
                       uint32_t* r) {
    uint32_t link, f = 0;
    *r = mine(block);
    if (!*r) *r = allowed(h, block, rights);
    if (!*r) f = walk(block, 0, &link, r);
    if (!*r) {
        ++c.stat[f ? CACHE_STAT_HITS : CACHE_STAT_MISSES];
        if (!f) *r = CACHE_E_MISS;
    }
    return f;
}

/* A DATA request to the asking node for the originating HRE: d, then d's bytes of frame f;
 * the result once the host has answered it. */
static uint32_t send_data(const struct spu_rpc_header* h, const struct cache_data* d, uint32_t f) {
    uint32_t r = rpc_start_request(h->src, h->origin, SPU_OS_RPC_ID(h->rpc_id >> 8, CACHE_DATA),
                                   sizeof *d + d->bytes);
    if (!r) r = rpc_append_request(d, sizeof *d);
    if (!r && d->bytes) r = nvm_to_request(frame_at(f) + d->offset, d->bytes);
    if (!r) r = rpc_finish_request();
    if (!r) r = rpc_wait_response();
    return r;
}

static uint32_t send_frame(const struct spu_rpc_header* h, uint32_t cookie, uint32_t block,
                           uint32_t f, uint32_t offset, uint32_t bytes) {
    struct cache_data d;
    d.cookie = cookie;
    d.block = block;
    d.frame = f;
    d.flags = flags_of(f);
    d.offset = (uint16_t)offset;
    d.bytes = (uint16_t)bytes;
    return send_data(h, &d, f);
}

/* After a reboot: every frame a chain reaches, in its own bucket and once, holds its block; a
 * bucket names its chain's first. */
static uint32_t load(void) {
    static struct cache_bucket heads[HEADS];
    uint32_t r = CACHE_OK;
    const uint32_t buckets = CACHE_BUCKETS(c.frames);
    for (uint32_t b = 0; !r && b < buckets; b += HEADS) {
        const uint32_t n = buckets - b < HEADS ? buckets - b : HEADS;
        r = nvm_read(c.base + CACHE_BUCKETS_AT(c.frames) + sizeof bk * b, heads, n * sizeof bk);
        for (uint32_t i = 0; !r && i < n; ++i)
            for (uint32_t f = heads[i].head; !r && f; f = e.next) {
                if (f > c.frames || state(f - 1)) {
                    r = CACHE_E_CORRUPT;
                    break;
                }
                r = nvm_read(entry_at(f - 1), &e, sizeof e);
                if (!r && (!(e.flags & CACHE_VALID) || mine(e.block) || bucket(e.block) != b + i ||
                           (f == heads[i].head && e.block != heads[i].block)))
                    r = CACHE_E_CORRUPT;
                if (!r) account(f - 1, e.flags);
            }
    }
    return r;
}

/* CACHE_SETUP (kernel only): the region, formatted or with its metadata loaded. */
static void setup(const struct spu_rpc_header* h) {
    struct cache_setup_args s;
    struct cache_header hd;
    if (SPU_OS_PROCESS(h->origin)) { /* and the cache stays as it is */
        rpc_send_response(SPU_OS_E_KERNEL_ONLY);
        return;
    }
    uint32_t r = h->length != sizeof s ? CACHE_E_ARGS : CACHE_OK;
    if (!r) r = rpc_receive_bytes(&s, sizeof s);
    if (!r && (s.frames == 0 || s.frames > CACHE_MAX_FRAMES || s.base & (CACHE_BLOCK_BYTES - 1) ||
               s.spus == 0 || s.node >= s.spus || s.disk_blocks == 0))
        r = CACHE_E_ARGS;
    c.ready = 0;
    if (r) {
        rpc_send_response(r);
        return;
    }
    c.base = s.base;
    c.frames = s.frames;
    c.node = s.node;
    c.spus = s.spus;
    c.disk_blocks = s.disk_blocks;
    c.hand = c.wb_armed = 0;
    for (uint32_t i = 0; i < CACHE_STATS_COUNT; ++i) c.stat[i] = 0;
    c.stat[CACHE_STAT_FRAMES] = s.frames;
    for (uint32_t i = 0; i < sizeof st; ++i) st[i] = 0;
    for (uint32_t i = 0; i < CACHE_INDEX; ++i) ix[i].tag = 0; /* another region, or a format */
    if (s.format) {
        const uint32_t end = CACHE_FRAMES_AT(s.frames);
        for (uint32_t off = CACHE_ENTRIES_AT; !r && off < end; off += sizeof st)
            r = nvm_write(c.base + off, st, end - off < sizeof st ? end - off : sizeof st);
        hd.magic = CACHE_MAGIC;
        hd.frames = s.frames;
        hd.node = s.node;
        hd.spus = s.spus;
        if (!r) r = nvm_write(c.base, &hd, sizeof hd);
    } else {
        r = nvm_read(c.base, &hd, sizeof hd);
        if (!r && (hd.magic != CACHE_MAGIC || hd.frames != s.frames || hd.node != s.node ||
                   hd.spus != s.spus))
            r = CACHE_E_STATE;
        if (!r) r = load();
    }
    c.ready = !r;
    rpc_send_response(r);
}

/* CACHE_READ: a hit's bytes in a DATA request (as block_io's READ), then CACHE_OK once the host
 * holds them. */
static void read(const struct spu_rpc_header* h) {
    struct cache_read_args a;
    uint32_t r = args(h, &a, sizeof a, 0);
    if (!r && (h->length != sizeof a || a.bytes == 0 || a.offset + a.bytes > CACHE_BLOCK_BYTES))
        r = CACHE_E_ARGS;
    const uint32_t f = r ? 0 : lookup(h, a.block, SPU_OS_PERM_READ, &r);
    if (!r) {
        touch(f - 1);
        r = send_frame(h, a.cookie, a.block, f - 1, a.offset, a.bytes);
    }
    rpc_send_response(r);
}

/* CACHE_WRITE: into a hit's frame, which turns dirty first. */
static void write(const struct spu_rpc_header* h) {
    struct cache_write_args a;
    uint32_t r = args(h, &a, sizeof a, 0);
    if (!r &&
        (a.bytes == 0 || a.offset + a.bytes > CACHE_BLOCK_BYTES || h->length != sizeof a + a.bytes))
        r = CACHE_E_ARGS;
    const uint32_t f = r ? 0 : lookup(h, a.block, SPU_OS_PERM_WRITE, &r);
    if (!r) {
        touch(f - 1);
        if (c.wb_frame == f - 1) c.wb_armed = 0;
        if (!(state(f - 1) & ST_DIRTY)) r = mark(f - 1, CACHE_VALID | CACHE_DIRTY);
        if (!r) r = rpc_receive_to_nvm(frame_at(f - 1) + a.offset, a.bytes);
    }
    rpc_send_response(r);
}

/* CACHE_VICTIM (kernel only): the frame the clock picks, and what it holds. */
static void victim(const struct spu_rpc_header* h) {
    struct cache_victim_args a;
    uint32_t f = 0, s = 0, r = args(h, &a, sizeof a, 1);
    if (!r && h->length != sizeof a) r = CACHE_E_ARGS;
    if (!r) {
        for (;;) { /* ends within four turns: each takes a hit off every valid frame */
            f = c.hand;
            c.hand = f + 1 == c.frames ? 0 : f + 1;
            s = state(f);
            if (!(s & ST_VALID) || !(s & ST_COUNT)) break;
            set_state(f, s - 1);
        }
        e.block = 0;
        if (s & ST_VALID) r = nvm_read(entry_at(f), &e, sizeof e);
        if (!r) r = send_frame(h, a.cookie, e.block, f, 0, 0);
    }
    rpc_send_response(r);
}

/* CACHE_WRITEBACK (kernel only): the first dirty frame from a.frame on, its data to the host. */
static void writeback(const struct spu_rpc_header* h) {
    struct cache_writeback_args a;
    uint32_t f = 0, r = args(h, &a, sizeof a, 1);
    if (!r && h->length != sizeof a) r = CACHE_E_ARGS;
    if (!r) {
        for (f = a.frame; f < c.frames && !(state(f) & ST_DIRTY); ++f) continue;
        if (f >= c.frames) r = CACHE_E_CLEAN;
    }
    if (!r) r = nvm_read(entry_at(f), &e, sizeof e);
    if (!r) {
        c.wb_frame = f;
        c.wb_block = e.block;
        c.wb_armed = 1;
        r = send_frame(h, a.cookie, e.block, f, 0, CACHE_BLOCK_BYTES);
    }
    rpc_send_response(r);
}

/* Unlinks the frame whose entry `e` holds from its chain, `link` pointing at it: a bucket gets
 * the next frame and its block. */
static uint32_t unlink(uint32_t link, uint32_t block) {
    uint32_t r = CACHE_OK;
    if (link != bucket_at(block)) return nvm_write(link, &e.next, 4);
    bk.head = e.next;
    bk.block = 0;
    if (bk.head) r = nvm_read(entry_at(bk.head - 1), &bk.block, 4); /* its first word */
    if (!r) r = write_bucket(block);
    return r;
}

/* CACHE_INSTALL (kernel only): the block's data into a frame that holds nothing dirty. */
static void install(const struct spu_rpc_header* h) {
    struct cache_install_args a;
    uint32_t link, s = 0, r = args(h, &a, sizeof a, 1);
    if (!r && (h->length != sizeof a + CACHE_BLOCK_BYTES || a.flags & ~CACHE_DIRTY))
        r = CACHE_E_ARGS;
    if (!r) r = mine(a.block);
    if (!r && a.frame >= c.frames) r = CACHE_E_RANGE;
    if (!r && walk(a.block, 0, &link, &r)) r = CACHE_E_PRESENT;
    const uint32_t f = a.frame;
    if (!r) s = state(f);
    if (!r && (s & ST_DIRTY)) r = CACHE_E_DIRTY;
    if (!r && (s & ST_VALID)) { /* the old block leaves its chain first: from then on it is gone */
        r = nvm_read(entry_at(f), &e, sizeof e);
        const uint32_t old = e.block;
        if (!r && walk(old, f + 1, &link, &r)) r = unlink(link, old);
        if (!r) {
            ++c.stat[CACHE_STAT_EVICTIONS];
            account(f, 0);
        }
    }
    if (!r) r = rpc_receive_to_nvm(frame_at(f), CACHE_BLOCK_BYTES);
    if (!r) r = read_bucket(a.block);
    if (!r) { /* the entry, then the bucket names it: the frame joins the chain at its head */
        e.block = a.block;
        e.next = bk.head;
        e.flags = CACHE_VALID | a.flags;
        r = nvm_write(entry_at(f), &e, sizeof e);
    }
    bk.head = f + 1;
    bk.block = a.block;
    if (!r) r = write_bucket(a.block);
    if (!r) {
        account(f, e.flags);
        touch(f);
        ++c.stat[CACHE_STAT_INSTALLS];
    }
    rpc_send_response(r);
}

/* CACHE_CLEAN (kernel only): the block WRITEBACK handed over is on the disk. */
static void clean(const struct spu_rpc_header* h) {
    struct cache_clean_args a;
    uint32_t link, f = 0, r = args(h, &a, sizeof a, 1);
    if (!r && h->length != sizeof a) r = CACHE_E_ARGS;
    if (!r) r = mine(a.block);
    if (!r) f = walk(a.block, 0, &link, &r);
    if (!r && !f) r = CACHE_E_MISS;
    if (!r && (state(f - 1) & ST_DIRTY)) {
        if (!c.wb_armed || c.wb_frame != f - 1 || c.wb_block != a.block) r = CACHE_E_DIRTIED;
        if (!r) r = mark(f - 1, CACHE_VALID);
        if (!r) {
            c.wb_armed = 0;
            ++c.stat[CACHE_STAT_WRITEBACKS];
        }
    }
    rpc_send_response(r);
}

/* CACHE_STATS (kernel only): one counter. */
static void stats(const struct spu_rpc_header* h) {
    struct cache_stats_args a;
    uint32_t r = args(h, &a, sizeof a, 1);
    if (!r && (h->length != sizeof a || a.which >= CACHE_STATS_COUNT)) r = CACHE_E_ARGS;
    rpc_send_response(r ? r : c.stat[a.which]);
}

/* CACHE_GRANT (kernel only): a process's entry, in place of the one with its first block. */
static void grant(const struct spu_rpc_header* h) {
    struct cache_grant_args a;
    uint32_t r = args(h, &a, sizeof a, 1);
    if (!r && (h->length != sizeof a || a.process == 0 ||
               a.rights & ~(SPU_OS_PERM_READ | SPU_OS_PERM_WRITE) || (a.blocks && !a.rights)))
        r = CACHE_E_ARGS;
    struct cache_grant_args* slot = 0;
    for (uint32_t i = 0; !r && i < CACHE_MAX_GRANTS; ++i) {
        struct cache_grant_args* g = &grants[i];
        if (g->blocks && g->process == a.process && g->first == a.first) {
            slot = g;
            break;
        }
        if (!g->blocks && !slot) slot = g;
    }
    if (!r && !slot) r = a.blocks ? CACHE_E_GRANTS : CACHE_OK;
    if (!r) { /* by fields: the app links no memcpy */
        slot->process = a.process;
        slot->first = a.first;
        slot->blocks = a.blocks;
        slot->rights = a.rights;
    }
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(setup, read, write, victim, writeback, install, clean, stats, grant));
