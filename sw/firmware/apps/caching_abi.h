/* The RPCs of the Caching SSD App (Willow Section 4.4; apps/caching.c; host libraries
 * sw/host/ssd_cache): Willow as a caching SSD in front of a disk. "Caching tracks dirty data in
 * the cache, provides recovery, and tracks statistics about hot data to guide replacement. It
 * serves cache accesses directly from user space through Direct-IO's OS-bypass interface; on a
 * miss, Caching invokes a kernel-based cache manager (based on Bankshot)." The disk is cut into
 * 4 KiB blocks and the host puts block b on SPU b % spus; each SPU caches its blocks, fully
 * associatively, in frames of a region of its store that the host kernel gives the app
 * (CACHE_SETUP, kernel only). A user process READs and WRITEs cached blocks on its own HRE; a
 * block that is not there answers CACHE_E_MISS, and the user library asks the kernel's cache
 * manager (a system call), which picks a frame (VICTIM: a clock over per-frame hit counters),
 * writes a dirty victim back to the disk (WRITEBACK hands its data over, CLEAN marks it clean
 * unless it was written meanwhile), reads the missing block from the disk and INSTALLs it. The
 * management RPCs are kernel only.
 *
 * The store: a header at the region's start, then a table of entries (one per frame: the disk
 * block it holds, the next frame of its hash chain, valid and dirty), the hash index (two buckets
 * per frame, bucket = (block / spus) % buckets, each the chain's first frame and the block it
 * holds, so that a hit at a chain's head costs one store read), then the frames. The
 * entries and the index are the persistent metadata (dirty blocks survive a reboot: CACHE_SETUP
 * without formatting loads them); DMEM keeps each frame's valid and dirty bits and its hit
 * counter (4 bits a frame). Plain C with fixed-width fields, included by the rv32 app and the
 * host libraries. */
#ifndef CANOPY_CACHING_ABI_H
#define CANOPY_CACHING_ABI_H

#include <stdint.h>

/* Handlers (RPC ID = app << 8 | handler). */
#define CACHE_SETUP 0 /* struct cache_setup_args (kernel HREs only) */
#define CACHE_READ                                                                             \
    1                 /* struct cache_read_args -> hit: DATA (struct cache_data + bytes), then \
                         CACHE_OK; miss: CACHE_E_MISS, no DATA */
#define CACHE_WRITE 2 /* struct cache_write_args + bytes -> CACHE_OK or CACHE_E_MISS */
#define CACHE_VICTIM                                                       \
    3 /* struct cache_victim_args (kernel) -> DATA (struct cache_data: the \
         frame to fill next, the block it holds and its flags; no bytes) */
#define CACHE_WRITEBACK                                                                    \
    4                   /* struct cache_writeback_args (kernel) -> DATA of the first dirty \
                           frame at or after `frame` (its block and all its bytes), then   \
                           CACHE_OK; CACHE_E_CLEAN when there is none */
#define CACHE_INSTALL 5 /* struct cache_install_args + CACHE_BLOCK_BYTES (kernel) -> CACHE_OK */
#define CACHE_CLEAN 6   /* struct cache_clean_args (kernel): written back since WRITEBACK */
#define CACHE_STATS 7   /* struct cache_stats_args (kernel) -> the counter's value */
#define CACHE_GRANT 8   /* struct cache_grant_args (kernel): a process's blocks */
#define CACHE_DATA 0x80

#define CACHE_BLOCK_BYTES 0x1000u /* a cache block: a frame, a disk block */
#define CACHE_MAX_FRAMES 0x800u   /* per SPU: 2,048 x 4 bits of state in DMEM */
#define CACHE_INDEX 128u          /* buckets the app keeps in DMEM (of 2 per frame) */
#define CACHE_HEADER_BYTES 0x1000u
#define CACHE_MAGIC 0x43414348u /* "CACH" */

/* Frame flags (struct cache_entry, struct cache_data). */
#define CACHE_VALID 1u
#define CACHE_DIRTY 2u

struct cache_setup_args {
    uint32_t base;        /* the region: NVM addresses of this SPU, 4 KiB aligned ... */
    uint32_t frames;      /* ... of CACHE_REGION_BYTES(frames), 1 .. CACHE_MAX_FRAMES */
    uint32_t node, spus;  /* this SPU holds the disk blocks b with b % spus == node */
    uint32_t disk_blocks; /* blocks of the disk */
    uint32_t format;      /* 1: start empty; 0: load the metadata the region holds */
};
struct cache_read_args {
    uint32_t block;
    uint16_t offset, bytes; /* inside the block: 1 .. CACHE_BLOCK_BYTES bytes */
    uint32_t cookie;        /* names the DATA request */
};
struct cache_write_args {
    uint32_t block;
    uint16_t offset, bytes;
};
struct cache_victim_args {
    uint32_t cookie;
};
struct cache_writeback_args {
    uint32_t frame; /* where the search for a dirty frame starts */
    uint32_t cookie;
};
struct cache_install_args {
    uint32_t block;
    uint32_t frame; /* the frame to fill: any that holds no dirty block */
    uint32_t flags; /* CACHE_DIRTY: the data is newer than the disk's */
};
struct cache_clean_args {
    uint32_t block;
};
/* Caching's own permission entries [Willow 4.4: "a specialized permission mechanism based on
 * large, fixed-size cache blocks ... the kernel module uses a privileged kernel-only RPC to
 * install special permission entries"]: process `process` may READ (SPU_OS_PERM_READ) and WRITE
 * (SPU_OS_PERM_WRITE) the disk blocks [first, first + blocks) this SPU caches. The same process
 * and first replace an entry; blocks 0 removes it. The kernel gives the app its region with
 * SPU-OS's APP_REGION, so a user's hit costs this table's check, not SPU-OS's per-process lookup
 * on each store access. */
struct cache_grant_args {
    uint32_t process;
    uint32_t first, blocks;
    uint32_t rights;
};
#define CACHE_MAX_GRANTS 16 /* per SPU */
/* Whether entry g lets `process` reach `block` with all of `rights` (the app's check, and the
 * kernel's on its own records). */
static inline int cache_grant_covers(const struct cache_grant_args* g, uint32_t process,
                                     uint32_t block, uint32_t rights) {
    return g->process == process && block - g->first < g->blocks && (g->rights & rights) == rights;
}

struct cache_stats_args {
    uint32_t which; /* CACHE_STAT_* */
};
struct cache_data {
    uint32_t cookie;
    uint32_t block, frame, flags;
    uint16_t offset, bytes; /* the bytes that follow */
};

#define CACHE_STAT_HITS 0       /* READs and WRITEs that found their block */
#define CACHE_STAT_MISSES 1     /* ... that did not */
#define CACHE_STAT_INSTALLS 2   /* blocks installed */
#define CACHE_STAT_EVICTIONS 3  /* ... into a frame that held another block */
#define CACHE_STAT_WRITEBACKS 4 /* dirty blocks CLEAN marked clean */
#define CACHE_STAT_DIRTY 5      /* frames holding a dirty block now */
#define CACHE_STAT_VALID 6      /* frames holding a block now */
#define CACHE_STAT_FRAMES 7
#define CACHE_STATS_COUNT 8

/* In the store: the header, one entry per frame, the buckets, then the frames, each part 4 KiB
 * aligned. */
struct cache_header {
    uint32_t magic, frames, node, spus;
};
struct cache_entry {
    uint32_t block;
    uint32_t next;  /* the next frame + 1 in the block's hash chain (0: the last) */
    uint32_t flags; /* CACHE_VALID | CACHE_DIRTY */
};
struct cache_bucket {
    uint32_t head;  /* the chain's first frame + 1 (0: empty) */
    uint32_t block; /* ... and the block it holds */
};
#define CACHE_BUCKETS(frames) (2u * (frames))
#define CACHE_ALIGN(n) (((n) + CACHE_BLOCK_BYTES - 1) & ~(CACHE_BLOCK_BYTES - 1))
#define CACHE_ENTRIES_AT CACHE_HEADER_BYTES
#define CACHE_BUCKETS_AT(frames) \
    (CACHE_ENTRIES_AT + CACHE_ALIGN((frames) * (uint32_t)sizeof(struct cache_entry)))
#define CACHE_FRAMES_AT(frames) \
    (CACHE_BUCKETS_AT(frames) + \
     CACHE_ALIGN(CACHE_BUCKETS(frames) * (uint32_t)sizeof(struct cache_bucket)))
#define CACHE_REGION_BYTES(frames) (CACHE_FRAMES_AT(frames) + (frames)*CACHE_BLOCK_BYTES)

#define CACHE_OK 0u
#define CACHE_E_ARGS 0x600u    /* malformed request */
#define CACHE_E_RANGE 0x601u   /* a block outside the disk or not this SPU's, a frame too far */
#define CACHE_E_MISS 0x602u    /* READ, WRITE, CLEAN: the block is not in the cache */
#define CACHE_E_STATE 0x603u   /* not set up, or the region holds no cache */
#define CACHE_E_PRESENT 0x604u /* INSTALL: the block is cached already */
#define CACHE_E_DIRTY 0x605u   /* INSTALL: the frame holds a dirty block (write it back first) */
#define CACHE_E_DIRTIED 0x606u /* CLEAN: written since WRITEBACK took its data; stays dirty */
#define CACHE_E_CLEAN 0x607u   /* WRITEBACK: no dirty frame from there on */
#define CACHE_E_CORRUPT 0x608u /* SETUP: the metadata's chains are broken (nothing loaded) */
#define CACHE_E_DENIED 0x609u  /* READ, WRITE: the process holds no grant for the block */
#define CACHE_E_GRANTS 0x60Au  /* GRANT: the table is full */

#endif
