/* The SPU's store (nvm.h; docs/spu_os.md "The store"). On the flash, the FTL of this SPU's
 * channel serves each NVM transfer one logical unit (4 KiB) piece at a time through a staging
 * buffer in SSD memory: a write moves the bytes there by DMA and the FTL puts them in its write
 * buffer (a piece smaller than a unit merges with the unit's bytes inside the FTL), which it
 * programs a page at a time; a read has the FTL read the piece there and the DMA moves it on.
 * Pages' spare metadata (the sequence and the units' tags) moves between DMEM and the flash
 * controller through a small buffer in SSD memory (meta_addr) when it is longer than the meta
 * register. The FTL's tables are too big for the 32 KiB DMEM: they live in SSD memory and the
 * FTL reaches them through a small write-back cache of table lines in DMEM, filled and written
 * back by DMA. Flash commands go one at a time; SPU-OS sleeps on flash_done meanwhile. */
#include "nvm.h"

#include <stddef.h>
#include <string.h>

#include "flash.h"
#include "ftl.h"
#include "spu.h"
#include "spu_os.h"
#include "store_attach.h"

#define LINE 32u  /* bytes per cached table line */
#define LINES 32u /* 1 KiB of DMEM */
#define SINK 64u  /* SSD memory for the byte a metadata-only read transfers */
#define META 64u  /* SSD memory for a page's spare metadata (the controller's meta_bytes <= 64) */
#define GEO(r) SPU_REG(SPU_FLASH_BASE, FLASH_CTL_GEO_##r##_OFFSET)

static struct {
    int attached, waited, write_through;
    uint32_t nvm_base, page_bytes, unit_bytes, meta_bytes, mode, units;
    uint64_t bytes;                       /* logical bytes the store offers */
    uint32_t tables, staging, sink, meta; /* SSD memory addresses */
    unsigned tag;
    uint32_t misses, wait_us;
} st;
static struct ftl ftl;

/* In-flash computing's owners (docs/spu_os.md "Protection"): the process that allocated each
 * ESP block, 1 + its id (0: free), and the process whose command last filled each plane's latches
 * (a flash command of the store fills them for nobody: NOBODY). */
#define ESP_UNITS 16u /* dies x planes of a channel */
#define ESP_PER_UNIT 8u
#define NOBODY 0xFFFFu
static uint16_t esp_owner[ESP_UNITS][ESP_PER_UNIT];
static uint16_t latch_owner[ESP_UNITS];
static uint32_t fc_process = NOBODY; /* while nvm_fc's commands run */

static uint8_t line_data[LINES][LINE] __attribute__((aligned(4)));
static uint32_t line_tag[LINES]; /* table offset of the line + 1; 0: empty */
static uint8_t line_dirty[LINES];

/* n bytes of SSD memory at dst set to `byte`: a line from DMEM, then doubling copies. */
static void dram_fill(uint32_t dst, uint8_t byte, uint32_t n) {
    static uint8_t pattern[LINE] __attribute__((aligned(4)));
    memset(pattern, byte, sizeof pattern);
    uint32_t done = n < LINE ? n : LINE;
    spu_os_dma(SPU_PORT_DMEM, (uint32_t)pattern, SPU_PORT_DRAM, dst, done);
    while (done < n) {
        const uint32_t k = n - done < done ? n - done : done;
        spu_os_dma(SPU_PORT_DRAM, dst, SPU_PORT_DRAM, dst + done, k);
        done += k;
    }
}

/* ---- the flash ---- */

/* A plane's index among the channel's ESP units (the geometry as the FTL took it at attach). */
static unsigned unit(uint32_t die, uint32_t plane) {
    return (die * ftl.cfg.geo.planes_per_die + plane) % ESP_UNITS;
}

static int flash_wait(struct flash_cmd* c, uint64_t* meta) {
    c->tag = ++st.tag & 0xFFFFu;
    latch_owner[unit(c->die, c->plane)] = (uint16_t)fc_process;
    if (flash_submit(c)) return FTL_E_IO; /* one command at a time: the queue is never full */
    st.waited = 1;
    const uint64_t t0 = spu_mtime();
    struct flash_done d;
    spu_irq_enable(SPU_CTL_IRQ_ENABLE_FLASH_DONE_MASK);
    for (;;) {
        if (flash_poll(&d)) {
            if (d.tag == c->tag) break;
            continue;
        }
        __asm__ volatile("csrw mie, %0" ::"r"(MIE_MEIE));
        if (SPU_REG(SPU_FLASH_BASE, FLASH_CTL_CQ_COUNT_OFFSET) == 0) __asm__ volatile("wfi");
        __asm__ volatile("csrw mie, zero");
    }
    st.wait_us += (uint32_t)(spu_mtime() - t0);
    if (meta) *meta = d.meta;
    switch (d.status) {
        case FLASH_CTL_CQ_STATUS_CODE_OK:
            return FTL_OK;
        case FLASH_CTL_CQ_STATUS_CODE_UNCORRECTABLE:
            return FTL_E_UNCORRECTABLE;
        case FLASH_CTL_CQ_STATUS_CODE_FAILED:
            return FTL_E_FAILED;
        default:
            return FTL_E_IO;
    }
}

/* Every field flash_submit reads, set one by one: a memset and a struct copy of the 208-byte
 * command (byte loops here) cost some 1,900 instructions, 15 us per flash command. */
static void command(struct flash_cmd* c, enum flash_op op, uint32_t die, uint32_t plane,
                    uint32_t block, uint32_t page) {
    c->op = op;
    c->mode = FLASH_SLC;
    c->raw = 0;
    c->planes = 1;
    c->mws_flags = 0;
    c->die = die;
    c->plane = plane;
    c->block = block;
    c->page = page;
    c->column = c->length = c->pages = 0;
    c->dram_addr = c->meta = c->meta_addr = 0;
    c->acc = c->mws_count = 0;
}

/* Metadata of up to two words rides in the meta register; longer, through SSD memory. */
static uint32_t meta_buf[META / 4];

static int op_program(void* ctx, const struct ftl_ppa* a, uint64_t buf, const uint32_t* meta,
                      uint32_t words) {
    (void)ctx;
    struct flash_cmd c;
    command(&c, FLASH_PROGRAM, a->die, a->plane, a->block, a->page);
    c.mode = (enum flash_mode)st.mode;
    c.dram_addr = buf;
    c.length = st.page_bytes;
    if (words <= 2) {
        c.meta = meta[0] | (uint64_t)(words > 1 ? meta[1] : 0) << 32;
    } else {
        memset(meta_buf, 0, sizeof meta_buf);
        memcpy(meta_buf, meta, words * 4);
        spu_os_dma(SPU_PORT_DMEM, (uint32_t)meta_buf, SPU_PORT_DRAM, st.meta, st.meta_bytes);
        c.meta_addr = st.meta;
    }
    return flash_wait(&c, 0);
}

static int op_read(void* ctx, const struct ftl_ppa* a, uint64_t buf, uint32_t offset, uint32_t len,
                   uint32_t* meta, uint32_t words) {
    (void)ctx;
    struct flash_cmd c;
    uint64_t m = 0;
    command(&c, FLASH_READ, a->die, a->plane, a->block, a->page);
    /* A metadata-only read still transfers one byte (the controller moves at least one). */
    c.dram_addr = len ? buf : st.sink;
    c.column = len ? offset : 0;
    c.length = len ? len : 1;
    if (words > 2) c.meta_addr = st.meta;
    const int rc = flash_wait(&c, &m);
    if (words <= 2) {
        meta[0] = (uint32_t)m;
        if (words > 1) meta[1] = (uint32_t)(m >> 32);
    } else {
        spu_os_dma(SPU_PORT_DRAM, st.meta, SPU_PORT_DMEM, (uint32_t)meta_buf, words * 4);
        memcpy(meta, meta_buf, words * 4);
    }
    return rc;
}

static int op_erase(void* ctx, uint32_t die, uint32_t plane, uint32_t block) {
    (void)ctx;
    struct flash_cmd c;
    command(&c, FLASH_ERASE, die, plane, block, 0);
    return flash_wait(&c, 0);
}

static void op_copy(void* ctx, uint64_t dst, uint64_t src, uint32_t len) {
    (void)ctx;
    spu_os_dma(SPU_PORT_DRAM, (uint32_t)src, SPU_PORT_DRAM, (uint32_t)dst, len);
}

static void op_fill(void* ctx, uint64_t dst, uint8_t byte, uint32_t len) {
    (void)ctx;
    dram_fill((uint32_t)dst, byte, len);
}

/* ---- the FTL's tables: SSD memory behind a direct-mapped write-back cache ---- */

static void line_flush(unsigned i) {
    if (line_tag[i] && line_dirty[i])
        spu_os_dma(SPU_PORT_DMEM, (uint32_t)line_data[i], SPU_PORT_DRAM,
                   st.tables + line_tag[i] - 1, LINE);
    line_dirty[i] = 0;
}

static uint8_t* line(uint32_t off, int write) {
    const uint32_t base = off & ~(LINE - 1), i = (base / LINE) % LINES;
    if (line_tag[i] != base + 1) {
        line_flush(i);
        spu_os_dma(SPU_PORT_DRAM, st.tables + base, SPU_PORT_DMEM, (uint32_t)line_data[i], LINE);
        line_tag[i] = base + 1;
        ++st.misses;
    }
    line_dirty[i] |= (uint8_t)write;
    return line_data[i] + (off - base);
}

/* The bytes [off, off + n) line by line: copied out (dst) or in (src). */
static void table_access(uint32_t off, uint8_t* dst, const uint8_t* src, uint32_t n) {
    while (n) {
        uint32_t k = LINE - (off & (LINE - 1));
        if (k > n) k = n;
        uint8_t* p = line(off, src != 0);
        if (src) {
            memcpy(p, src, k);
            src += k;
        } else {
            memcpy(dst, p, k);
            dst += k;
        }
        off += k;
        n -= k;
    }
}

static void table_read(void* ctx, uint32_t off, void* dst, uint32_t n) {
    (void)ctx;
    table_access(off, dst, 0, n);
}

static void table_write(void* ctx, uint32_t off, const void* src, uint32_t n) {
    (void)ctx;
    table_access(off, 0, src, n);
}

/* Bulk fills (format and mount) go straight to SSD memory; cached lines are written back and
 * dropped first so that none holds stale bytes. */
static void table_fill(void* ctx, uint32_t off, uint8_t byte, uint32_t n) {
    (void)ctx;
    for (unsigned i = 0; i < LINES; ++i) {
        line_flush(i);
        line_tag[i] = 0;
    }
    dram_fill(st.tables + off, byte, n);
}

static const struct ftl_ops ops = {op_program, op_read,    op_erase,    op_copy,
                                   op_fill,    table_read, table_write, table_fill};

static uint32_t result_of(int rc) {
    return rc == FTL_OK                ? SPU_OS_OK
           : rc == FTL_E_UNCORRECTABLE ? SPU_OS_E_MEDIA
           : rc == FTL_E_RANGE         ? SPU_OS_E_RANGE
           : rc == FTL_E_ARG           ? SPU_OS_E_BAD_ARG
                                       : SPU_OS_E_IO;
}

/* ---- SPU-OS's side ---- */

uint32_t nvm_attach(void) {
    struct spu_os_store_attach a;
    if (spu_os_rpc->h.length != sizeof a ||
        spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, (uint32_t)&a, sizeof a) != 0)
        return SPU_OS_E_BAD_ARG;
    if (st.attached) return SPU_OS_E_STATE;
    /* An SPU beyond the array's channels has no flash controller: its window would fault. */
    if (!spu_has_flash()) return SPU_OS_E_STATE;
    const uint32_t blocks = GEO(BLOCKS), page_bytes = GEO(PAGE_BYTES);
    const uint32_t bank = spu_node() * a.bank_bytes;
    const uint32_t meta_bytes = GEO(META_BYTES);
    const uint32_t upp = a.unit_bytes && a.unit_bytes <= page_bytes ? page_bytes / a.unit_bytes : 1;
    if (a.blocks_per_plane == 0 || a.blocks_per_plane > blocks || a.cell_mode > FLASH_TLC ||
        a.format > SPU_OS_STORE_RESUME || (a.bank_bytes & (LINE - 1)) ||
        a.esp_blocks > ESP_PER_UNIT || (a.esp_blocks && GEO(DIES) * GEO(PLANES) > ESP_UNITS) ||
        meta_bytes > META || 4 * FTL_META_WORDS(upp) > meta_bytes)
        return SPU_OS_E_BAD_ARG;
    struct ftl_config c;
    spu_os_store_ftl_config(&a, GEO(DIES), GEO(PLANES), GEO(PAGES), page_bytes, &c);
    st.write_through = !a.write_cache;
    c.ops = &ops;
    const uint32_t need = ftl_mem_bytes(&c), buffers = ftl_buffer_bytes(&c);
    /* SSD memory: the tables, the write buffer, the transfer page, the sink, the metadata. */
    const uint32_t tables_bytes = (need + LINE - 1) & ~(LINE - 1);
    if (need == 0 || buffers == 0 ||
        (uint64_t)tables_bytes + buffers + page_bytes + SINK + META > a.bank_bytes)
        return SPU_OS_E_BAD_ARG;
    c.mem_bytes = need;
    c.buffers = bank + tables_bytes;
    st.tables = bank;
    st.staging = (uint32_t)c.buffers + buffers;
    st.sink = st.staging + page_bytes;
    st.meta = st.sink + SINK;
    st.meta_bytes = meta_bytes;
    st.nvm_base = bank;
    st.page_bytes = page_bytes;
    st.mode = a.cell_mode;
    memset(line_tag, 0, sizeof line_tag);
    SPU_REG(SPU_FLASH_BASE, FLASH_CTL_IRQ_ENABLE_OFFSET) = 1;
    const int rc = a.format == SPU_OS_STORE_RESUME ? ftl_resume(&ftl, &c)
                   : a.format                      ? ftl_format(&ftl, &c)
                                                   : ftl_mount(&ftl, &c);
    if (rc != FTL_OK) return result_of(rc);
    st.unit_bytes = ftl_unit_bytes(&ftl);
    st.units = ftl_capacity_units(&ftl);
    st.bytes = (uint64_t)st.units * st.unit_bytes;
    if (st.bytes > a.bank_bytes) { /* the rest has no NVM address */
        st.bytes = a.bank_bytes;
        st.units = a.bank_bytes / st.unit_bytes;
    }
    st.attached = 1;
    return SPU_OS_OK;
}

/* After a store change that returned r: write-through (no write cache) flushes the FTL's buffer
 * before the call answers, so that what it acknowledged is on the flash. */
static uint32_t durable(uint32_t r) {
    return r == SPU_OS_OK && st.write_through ? result_of(ftl_flush(&ftl)) : r;
}

/* [addr, addr + n) inside the store: what the FTL offers, or before the flash is attached, the
 * SPU's bank of SSD memory (the store_* registers; not another SPU's bank or beyond). */
static int in_store(uint32_t addr, uint32_t n) {
    static uint64_t bank_base, bank_bytes; /* the registers, read at the first transfer */
    if (!st.attached && !bank_bytes) {
        bank_base = SPU_REG(SPU_CTL_BASE, SPU_CTL_STORE_BASE_OFFSET) |
                    (uint64_t)SPU_REG(SPU_CTL_BASE, SPU_CTL_STORE_BASE_OFFSET + 4) << 32;
        bank_bytes = SPU_REG(SPU_CTL_BASE, SPU_CTL_STORE_BYTES_OFFSET) |
                     (uint64_t)SPU_REG(SPU_CTL_BASE, SPU_CTL_STORE_BYTES_OFFSET + 4) << 32;
    }
    const uint64_t base = st.attached ? st.nvm_base : bank_base;
    const uint64_t bytes = st.attached ? st.bytes : bank_bytes;
    return addr >= base && addr - base + n <= bytes;
}

uint32_t nvm_transfer(uint32_t addr, enum spu_port other, uint32_t ptr, uint32_t n, int to_nvm) {
    st.waited = 0;
    if (!in_store(addr, n)) return SPU_OS_E_RANGE;
    if (!st.attached)
        return to_nvm ? spu_os_dma(other, ptr, SPU_PORT_DRAM, addr, n)
                      : spu_os_dma(SPU_PORT_DRAM, addr, other, ptr, n);
    uint32_t rel = addr - st.nvm_base;
    while (n) {
        /* A write piece is a unit's; a read piece up to the staging page, as the FTL reads the
         * units of one flash page together. */
        const uint32_t lpn = rel / st.unit_bytes, off = rel % st.unit_bytes;
        const uint32_t room = to_nvm ? st.unit_bytes - off : st.page_bytes;
        const uint32_t len = n < room ? n : room;
        uint32_t r;
        if (to_nvm) {
            r = spu_os_dma(other, ptr, SPU_PORT_DRAM, st.staging, len);
            if (r == SPU_OS_OK) r = result_of(ftl_write(&ftl, lpn, st.staging, off, len));
        } else {
            r = result_of(ftl_read(&ftl, lpn, st.staging, off, len));
            if (r == SPU_OS_OK) r = spu_os_dma(SPU_PORT_DRAM, st.staging, other, ptr, len);
        }
        if (r != SPU_OS_OK) return r;
        if (other == SPU_PORT_DMEM) ptr += len;
        rel += len;
        n -= len;
    }
    return to_nvm ? durable(SPU_OS_OK) : SPU_OS_OK;
}

uint32_t nvm_copy(uint32_t dst, uint32_t src, uint32_t n) {
    st.waited = 0;
    if (!in_store(dst, n) || !in_store(src, n)) return SPU_OS_E_RANGE;
    if (!st.attached) return spu_os_dma(SPU_PORT_DRAM, src, SPU_PORT_DRAM, dst, n);
    uint32_t s = src - st.nvm_base, d = dst - st.nvm_base, r = SPU_OS_OK;
    while (n && r == SPU_OS_OK) {
        /* A piece within one unit at both ends: one read and one write. */
        const uint32_t u = st.unit_bytes;
        uint32_t len = u - s % u;
        if (len > u - d % u) len = u - d % u;
        if (len > n) len = n;
        r = result_of(ftl_read(&ftl, s / u, st.staging, s % u, len));
        if (r == SPU_OS_OK) r = result_of(ftl_write(&ftl, d / u, st.staging, d % u, len));
        s += len;
        d += len;
        n -= len;
    }
    return durable(r);
}

/* The unit boundary at store address addr + n, rounded down or up; in 32 bits (addr + n may be
 * 4 GiB), so that SPU-OS needs no 64-bit division routine. */
static uint32_t unit_of(uint32_t addr, uint32_t n, int up) {
    const uint32_t rel = addr - st.nvm_base, u = st.unit_bytes, rest = rel % u + n % u;
    return rel / u + n / u + (rest + (up ? u - 1 : 0)) / u;
}

uint32_t nvm_trim(uint32_t addr, uint32_t n) {
    st.waited = 0;
    if (!in_store(addr, n)) return SPU_OS_E_RANGE;
    if (!st.attached || n == 0) return SPU_OS_OK;
    const uint32_t first = unit_of(addr, 0, 1), end = unit_of(addr, n, 0);
    if (end <= first) return SPU_OS_OK; /* no whole unit inside */
    return durable(result_of(ftl_trim(&ftl, first, end - first)));
}

int nvm_waited(void) { return st.waited; }

uint32_t nvm_flush(uint32_t addr, uint32_t n) {
    st.waited = 0;
    if (n && !in_store(addr, n)) return SPU_OS_E_RANGE;
    if (!st.attached) return SPU_OS_OK;
    if (!n) return result_of(ftl_flush(&ftl));
    /* Every unit the range touches, the partial ones at either end too. */
    const uint32_t first = unit_of(addr, 0, 0), end = unit_of(addr, n, 1);
    return result_of(ftl_sync(&ftl, first, end - first));
}

/* ---- in-flash computing on the ESP region ---- */

_Static_assert(SPU_FC_ACC_XOR == FLASH_CTL_ACC_OP_XOR && SPU_FC_ACC_OR == FLASH_CTL_ACC_OP_OR &&
                   SPU_FC_ACC_AND == FLASH_CTL_ACC_OP_AND &&
                   SPU_FC_ACC_INVERT == FLASH_CTL_ACC_INVERT_MASK &&
                   SPU_FC_ACC_COMPLEMENT == FLASH_CTL_ACC_COMPLEMENT_MASK,
               "SPU_FC_ACC_* are the acc register's bits");

/* ESP block `block` of a's plane: its owner's slot (the block is one of the ESP region's). */
static uint16_t* owner(const struct spu_fc_cmd* a, uint32_t block) {
    return &esp_owner[unit(a->die, a->plane)][block - (ftl.cfg.geo.blocks_per_plane - ftl.lay.esp)];
}

/* Whether `process` may use ESP block `block` of a's plane for op: SPU_OS_E_RANGE when nobody
 * holds it, SPU_OS_E_PERMISSION (reported) when another process does. */
static uint32_t check_block(uint32_t op, const struct spu_fc_cmd* a, uint32_t block,
                            uint32_t process) {
    if (!ftl_esp_used(&ftl, a->die, a->plane, block)) return SPU_OS_E_RANGE;
    if (process == 0 || *owner(a, block) == process + 1) return SPU_OS_OK;
    return spu_os_denied(SPU_OS_E_PERMISSION, SPU_OS_DENIED_ESP, op,
                         a->die << 24 | a->plane << 16 | block);
}

static uint32_t fc_run(uint32_t op, struct spu_fc_cmd* a, uint32_t n, uint32_t process);

uint32_t nvm_fc(uint32_t op, struct spu_fc_cmd* a, uint32_t n, uint32_t process) {
    st.waited = 0;
    /* Owners are 16-bit: a process beyond gets no in-flash computing. */
    if (!st.attached || ftl.lay.esp == 0 || process >= NOBODY) return SPU_OS_E_STATE;
    if (n > st.page_bytes) return SPU_OS_E_BAD_ARG;
    if (op == SPU_FC_ALLOC) {
        const uint32_t r = result_of(ftl_esp_alloc(&ftl, a->die, a->plane, &a->block));
        if (r == SPU_OS_OK) *owner(a, a->block) = (uint16_t)(process + 1);
        return r;
    }
    if (op == SPU_FC_RELEASE) {
        const uint32_t r = check_block(op, a, a->block, process);
        return r ? r : result_of(ftl_esp_release(&ftl, a->die, a->plane, a->block));
    }
    fc_process = process;
    const uint32_t r = fc_run(op, a, n, process);
    fc_process = NOBODY;
    return r;
}

/* The commands of one SPU_SYS_FC other than ALLOC and RELEASE. */
static uint32_t fc_run(uint32_t op, struct spu_fc_cmd* a, uint32_t n, uint32_t process) {
    struct flash_cmd c;
    command(&c, FLASH_READ, a->die, a->plane, a->block, a->page);
    c.raw = 1;
    c.dram_addr = st.staging;
    c.length = n;
    uint32_t r = SPU_OS_OK;
    if (op == SPU_FC_MWS) {
        if (a->slots == 0 || a->slots > SPU_FC_MAX_BLOCKS || a->flags > 15) return SPU_OS_E_BAD_ARG;
        c.op = FLASH_MWS;
        c.mws_flags = a->flags;
        c.mws_count = a->slots;
        for (unsigned i = 0; i < a->slots; ++i) {
            if ((r = check_block(op, a, a->slot[i].block, process)) != SPU_OS_OK) return r;
            c.mws[i].block = a->slot[i].block;
            c.mws[i].pbm = a->slot[i].pbm_lo | (uint64_t)a->slot[i].pbm_hi << 32;
        }
    } else if (op == SPU_FC_XOR) {
        if (a->die >= GEO(DIES) || a->plane >= GEO(PLANES)) return SPU_OS_E_RANGE;
        /* XOR reads the latches out: only what this process's own commands put there. */
        if (process && latch_owner[unit(a->die, a->plane)] != process)
            return spu_os_denied(SPU_OS_E_PERMISSION, SPU_OS_DENIED_ESP, op,
                                 a->die << 24 | a->plane << 16);
        c.op = FLASH_XOR;
    } else if (op == SPU_FC_PROGRAM || op == SPU_FC_READ || op == SPU_FC_ACC) {
        if ((r = check_block(op, a, a->block, process)) != SPU_OS_OK) return r;
        if (a->page >= GEO(PAGES)) return SPU_OS_E_RANGE;
        if (op == SPU_FC_PROGRAM) {
            c.op = FLASH_PROGRAM;
            c.mode = FLASH_ESP;
            r = spu_os_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DRAM, st.staging, n);
        }
        if (op == SPU_FC_ACC) {
            c.op = FLASH_ACCUMULATE;
            c.acc = a->flags & 15u;
            if (a->flags > SPU_FC_ACC_OUT + 15u) return SPU_OS_E_BAD_ARG;
        }
    } else {
        return SPU_OS_E_BAD_ARG;
    }
    /* The controller moves at least one byte: a latch operation without a transfer moves none. */
    if (n == 0 && op != SPU_FC_MWS && op != SPU_FC_XOR) return SPU_OS_E_BAD_ARG;
    if (r == SPU_OS_OK) r = result_of(flash_wait(&c, 0));
    if (r == SPU_OS_OK && op == SPU_FC_ACC && (a->flags & SPU_FC_ACC_OUT)) {
        c.op = FLASH_ACC_OUT;
        r = result_of(flash_wait(&c, 0));
    } else if (op == SPU_FC_ACC) {
        n = 0; /* the result stays in the accelerator */
    }
    if (r == SPU_OS_OK && op != SPU_FC_PROGRAM && n)
        r = spu_os_dma(SPU_PORT_DRAM, st.staging, SPU_PORT_NI_TX, 0, n);
    return r;
}

/* The SPU_OS_STAT_STORE_* counters struct ftl_stats holds: 1 + the offset of the field, whose
 * low word is the statistic (RV32 is little-endian), by id from SPU_OS_STAT_STORE_UNITS; 0 for
 * the others. A table rather than a switch: SPU-OS's IMEM is tight. */
#define FTL_STAT(id, field) [(id)-SPU_OS_STAT_STORE_UNITS] = offsetof(struct ftl_stats, field) + 1
static const uint8_t ftl_stat_at[] = {
    FTL_STAT(SPU_OS_STAT_STORE_HOST_WRITES, host_writes),
    FTL_STAT(SPU_OS_STAT_STORE_HOST_READS, host_reads),
    FTL_STAT(SPU_OS_STAT_STORE_PROGRAMS, flash_programs),
    FTL_STAT(SPU_OS_STAT_STORE_GC_COPIES, gc_copies),
    FTL_STAT(SPU_OS_STAT_STORE_GC_VICTIMS, gc_victims),
    FTL_STAT(SPU_OS_STAT_STORE_ERASES, erases),
    FTL_STAT(SPU_OS_STAT_STORE_FREE_BLOCKS, free_blocks),
    FTL_STAT(SPU_OS_STAT_STORE_BAD_BLOCKS, bad_blocks),
    FTL_STAT(SPU_OS_STAT_STORE_BUFFER_HITS, buffer_hits),
    FTL_STAT(SPU_OS_STAT_STORE_PADDED_UNITS, padded_units),
    FTL_STAT(SPU_OS_STAT_STORE_FLUSHES, flushes),
    FTL_STAT(SPU_OS_STAT_STORE_BUFFERED_UNITS, buffered_units),
    FTL_STAT(SPU_OS_STAT_STORE_TRIM_RECORDS, trim_records),
    FTL_STAT(SPU_OS_STAT_STORE_SYNCS, syncs),
};
_Static_assert(sizeof(struct ftl_stats) < 255, "ftl_stat_at offsets fit a byte");

int nvm_stat(uint32_t which, uint32_t* value) {
    struct ftl_stats s;
    memset(&s, 0, sizeof s);
    if (st.attached) ftl_stats(&ftl, &s);
    const uint32_t i = which - SPU_OS_STAT_STORE_UNITS;
    if (i < sizeof ftl_stat_at && ftl_stat_at[i]) {
        memcpy(value, (const uint8_t*)&s + ftl_stat_at[i] - 1, 4);
        return 1;
    }
    if (which == SPU_OS_STAT_STORE_UNITS)
        *value = st.units;
    else if (which == SPU_OS_STAT_STORE_UNIT_BYTES)
        *value = st.unit_bytes;
    else if (which == SPU_OS_STAT_STORE_UNITS_PER_PAGE)
        *value = st.unit_bytes ? st.page_bytes / st.unit_bytes : 0;
    else if (which == SPU_OS_STAT_STORE_TABLE_MISSES)
        *value = st.misses;
    else if (which == SPU_OS_STAT_STORE_FLASH_WAIT_US)
        *value = st.wait_us;
    else
        return 0;
    return 1;
}
