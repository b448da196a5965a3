/* The flash translation layer of one channel (docs/ftl.md): maps logical units (LPNs: a page, or
 * a fraction of it, 4 KiB on 16 KiB pages) to slots of physical pages; a write buffer packs the
 * units written into whole pages, one page buffer per write frontier, programmed when full or
 * flushed (a volatile write cache, or write-through); out-of-place writes striped round-robin
 * over the channel's (die, plane) units page by page; greedy or cost-benefit garbage collection,
 * dynamic and static wear levelling, bad-block retirement, TRIM, and recovery of the map from the
 * flash alone (each page's spare metadata holds a global write sequence and the LPN of each of its
 * slots). Portable C99: no allocation, no stdio; the caller gives the memory for the tables and
 * buffers and the flash operations (synchronous callbacks). Data buffers are opaque 64-bit
 * addresses: the FTL never touches data bytes itself, only through the callbacks. */
#ifndef FTL_H
#define FTL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes: FTL_OK or a negative code. The flash callbacks return the first three. */
#define FTL_OK 0
#define FTL_E_UNCORRECTABLE (-1) /* the page's data could not be corrected */
#define FTL_E_FAILED (-2)        /* program or erase reported FAIL: the block is worn out */
#define FTL_E_IO (-3)            /* any other flash error (refused command, bus error) */
#define FTL_E_RANGE (-4)         /* LPN, offset or length out of range */
#define FTL_E_ARG (-5)           /* bad geometry or configuration, or memory too small */
#define FTL_E_NOSPACE (-6)       /* no free block left (too many bad blocks) */

struct ftl_geometry {
    uint32_t dies, planes_per_die, blocks_per_plane;
    uint32_t pages_per_block; /* wordlines; at most 65535 */
    uint32_t page_bytes;      /* data area */
    /* The mapping unit (one LPN): page_bytes divided by 1 .. FTL_MAX_UNITS_PER_PAGE; 0: a page. */
    uint32_t unit_bytes;
};

#define FTL_MAX_UNITS_PER_PAGE 8
/* Words of spare metadata a page carries: the write sequence, then each slot's tag. */
#define FTL_META_WORDS(units_per_page) (1u + (units_per_page))

struct ftl_ppa {
    uint32_t die, plane, block, page;
};

/* The flash, as the caller provides it; all calls synchronous, 0 or an FTL_E_* code. Spare
 * metadata is `words` 32-bit words (FTL_META_WORDS of the units per page), little-endian in the
 * spare area: with one unit per page the two words are the 64-bit word seq | lpn << 32. */
struct ftl_ops {
    /* Programs a whole page from `buf` with the metadata `meta` in its spare area. */
    int (*program)(void* ctx, const struct ftl_ppa* ppa, uint64_t buf, const uint32_t* meta,
                   uint32_t words);
    /* Reads `len` bytes at `offset` of the page into `buf` and the page's metadata into meta
     * (all ones when the page is erased); len == 0 reads only the metadata. */
    int (*read)(void* ctx, const struct ftl_ppa* ppa, uint64_t buf, uint32_t offset, uint32_t len,
                uint32_t* meta, uint32_t words);
    int (*erase)(void* ctx, uint32_t die, uint32_t plane, uint32_t block);
    /* Buffer helpers: the buffers are opaque to the FTL (SSD memory on the SPU). */
    void (*copy)(void* ctx, uint64_t dst, uint64_t src, uint32_t len);
    void (*fill)(void* ctx, uint64_t dst, uint8_t byte, uint32_t len);
    /* Optional, all three or none: the tables live outside the CPU's address space (on the SPU,
     * SSD memory behind DMA) and the FTL reaches table byte `off` only through these; cfg.mem is
     * then unused (0), cfg.mem_bytes still the room there is. */
    void (*table_read)(void* ctx, uint32_t off, void* dst, uint32_t n);
    void (*table_write)(void* ctx, uint32_t off, const void* src, uint32_t n);
    void (*table_fill)(void* ctx, uint32_t off, uint8_t byte, uint32_t n);
};

#define FTL_GC_GREEDY 0       /* the victim with the fewest valid units */
#define FTL_GC_COST_BENEFIT 1 /* the most (1 - u) age / (1 + u) (Kawaguchi et al., USENIX 1995) */
/* Or'ed into gc_policy, with the write cache: GC keeps pace with the host's writes (each moves a
 * few units of the victim under way once the free blocks run low) instead of running whole
 * victims when a frontier needs a block (docs/ftl.md "GC"). */
#define FTL_GC_PACED 2

struct ftl_config {
    struct ftl_geometry geo;
    uint32_t op_permille;    /* over-provisioning: user capacity = usable units * (1 - op) */
    uint32_t gc_free_blocks; /* GC runs while fewer blocks are free (at least 2) */
    uint32_t wl_threshold;   /* static wear levelling when max - min P/E exceeds it; 0: off */
    uint32_t esp_blocks;     /* per plane, the last blocks: Flash-Cosmos operands, not data */
    uint32_t gc_policy;      /* FTL_GC_GREEDY or FTL_GC_COST_BENEFIT, | FTL_GC_PACED */
    /* 1: a write or TRIM is acknowledged once in the write buffer (a volatile write cache: lost
     * at power loss unless flushed, ftl_flush); 0: write-through, programmed before it returns
     * (a page holding fewer units than it can is padded). */
    uint32_t write_cache;
    const struct ftl_ops* ops;
    void* ctx; /* passed to every callback */
    void* mem; /* the tables (ftl_mem_bytes), 4-byte aligned; 0 with the table callbacks */
    uint32_t mem_bytes;
    /* The write buffer: ftl_buffer_bytes(cfg) bytes, a page buffer per write frontier. */
    uint64_t buffers;
};

struct ftl_stats {
    uint64_t host_writes;    /* units written by ftl_write (a sub-unit write counts one) */
    uint64_t host_reads;     /* ftl_read calls */
    uint64_t flash_programs; /* pages programmed: host writes, GC copies, records, padding */
    uint64_t padded_units;   /* slots programmed empty (a flush or a GC round of part a page) */
    uint64_t buffer_hits;    /* writes and TRIMs that replaced a unit still in the buffer */
    uint64_t flushes;        /* ftl_flush calls */
    uint64_t syncs;          /* ftl_sync calls */
    uint32_t buffered_units; /* units in the write buffer now, not programmed yet */
    uint64_t gc_copies;      /* valid units moved (GC, static wear levelling, bad blocks) */
    uint64_t gc_victims;     /* blocks reclaimed by GC */
    uint64_t wl_migrations;  /* blocks emptied by static wear levelling */
    uint64_t erases;         /* blocks erased (not counting ftl_format) */
    uint64_t trim_records;   /* TRIM records written (a unit each) */
    uint32_t program_failures, erase_failures, bad_blocks;
    uint32_t bad_records; /* bad-block record pages programmed */
    uint32_t free_blocks;
    /* Write amplification = wa_num / wa_den: flash units programmed (pages x units per page)
     * per unit the host wrote. */
    uint64_t wa_num, wa_den;
    /* P/E counts over the data blocks that are not bad; mean = pe_sum / pe_blocks. P/E counts
     * live in memory only: ftl_mount restarts them at zero (docs/ftl.md). */
    uint32_t pe_min, pe_max, pe_blocks;
    uint64_t pe_sum;
};

/* Where a configuration's tables lie (private to ftl.c, as struct ftl's fields). */
struct ftl_layout {
    uint32_t units, blocks, pages, upp, slots, lpns, esp, bytes;
    uint32_t off_map, off_rmap, off_pe, off_age, off_frb, off_frp, off_fsl, off_ufree, off_valid,
        off_state, off_saved;
};

/* One FTL; its fields are private (ftl.c). Zero-initialise or not: format or mount sets it up. */
struct ftl {
    struct ftl_config cfg;
    uint8_t* mem;
    struct ftl_layout lay;
    uint32_t seq, free_blocks, rr, pe_max, pending, borrowed;
    /* The GC victim under way (NONE: none), the next of its units to look at, the units to move
     * per host write, and those of it left behind unreadable. */
    uint32_t gc_victim, gc_next, gc_rate, gc_unreadable;
    struct ftl_stats st;
};

/* Bytes of table memory the configuration needs; 0 when the configuration is invalid. */
uint32_t ftl_mem_bytes(const struct ftl_config* cfg);
/* Bytes of write buffer (cfg.buffers) it needs: a page per write frontier; 0 when invalid. */
uint32_t ftl_buffer_bytes(const struct ftl_config* cfg);
/* Logical units a configuration offers (what ftl_capacity_units() will say); 0 when invalid. */
uint32_t ftl_config_capacity_units(const struct ftl_config* cfg);
/* Erases every block and starts with empty tables: all LPNs unmapped. */
int ftl_format(struct ftl* f, const struct ftl_config* cfg);
/* Rebuilds the tables from the flash (after power loss): reads every written page's metadata. */
int ftl_mount(struct ftl* f, const struct ftl_config* cfg);
/* Flushes the write buffer, then records the FTL's own state beside its tables. ftl_resume
 * carries on from exactly there (P/E counts, block ages, frontiers) without reading the flash:
 * what a controller keeps across a clean shutdown, and what preconditioning hands SPU-OS
 * (docs/storage.md "Preconditioning"). */
int ftl_save(struct ftl* f);
/* Carries on from the state ftl_save recorded in the tables `cfg` gives (cfg.mem or the table
 * callbacks), for the same configuration; the record is used up. FTL_E_ARG when the tables hold
 * none, or one of another configuration. Statistics start at zero, as after a mount. */
int ftl_resume(struct ftl* f, const struct ftl_config* cfg);

/* Logical units the FTL offers: valid LPNs are 0 .. ftl_capacity_units() - 1. */
uint32_t ftl_capacity_units(const struct ftl* f);
/* Bytes per logical unit. */
uint32_t ftl_unit_bytes(const struct ftl* f);
/* Reads len bytes from byte `offset` (at most a unit) of unit `lpn` on, through the following
 * units, into buf; an unmapped (never written or trimmed) unit reads as 0xFF bytes, like erased
 * flash. Units in consecutive slots of one page come in one flash read. FTL_E_UNCORRECTABLE
 * passes through. */
int ftl_read(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len);
/* Writes buf's `len` bytes at `offset` of unit `lpn`; less than a whole unit merges with its
 * current bytes (an unmapped unit's other bytes become 0xFF). A write to a unit still in the
 * write buffer replaces it there. Returns FTL_OK once the unit is in the write buffer
 * (write_cache: durable after the next ftl_flush, or when its page fills) or programmed. */
int ftl_write(struct ftl* f, uint32_t lpn, uint64_t buf, uint32_t offset, uint32_t len);
/* Unmaps `count` LPNs from `lpn`; each mapped one costs a TRIM record (a unit), so that the TRIM
 * survives power loss; durable as writes are. */
int ftl_trim(struct ftl* f, uint32_t lpn, uint32_t count);
/* Programs every page of the write buffer holding units (the empty slots padded): every write
 * and TRIM acknowledged before it survives power loss. */
int ftl_flush(struct ftl* f);
/* Programs only the pages of the write buffer that hold one of the `count` units from `lpn` on
 * (the empty slots padded): what was acknowledged of those units survives power loss, the rest
 * of the buffer stays (a write with NVMe's FUA bit). FTL_E_RANGE past the capacity. */
int ftl_sync(struct ftl* f, uint32_t lpn, uint32_t count);
void ftl_stats(const struct ftl* f, struct ftl_stats* out);
/* Debug aid: cross-checks the tables (O(pages)); 0 when consistent, else the broken rule's number.
 */
int ftl_check(const struct ftl* f);

/* The ESP region (Flash-Cosmos operands): cfg.esp_blocks blocks at the end of every plane,
 * outside the map. ftl_esp_alloc erases a free one of (die, plane) and hands its block number
 * out; the caller programs it raw (ESP) and gives it back with ftl_esp_release. Which ESP blocks
 * are in use is not recovered by ftl_mount: the owner of the operands keeps that. */
int ftl_esp_alloc(struct ftl* f, uint32_t die, uint32_t plane, uint32_t* block);
int ftl_esp_release(struct ftl* f, uint32_t die, uint32_t plane, uint32_t block);
/* 1 when (die, plane, block) is an ESP block handed out and not released. */
int ftl_esp_used(const struct ftl* f, uint32_t die, uint32_t plane, uint32_t block);

#ifdef __cplusplus
}
#endif

#endif
