/* Each SPU that has a flash window drives its channel's flash controller with the bare devices
 * (no SPU-OS): it programs a page of a pattern from its bank of the SSD's memory with a metadata
 * word, reads it back elsewhere in the bank and compares in DMEM; reads an erased page (ones);
 * stores two raw ESP operands in one block and checks their MWS AND; erases the block and sees
 * ones again; and sends a malformed command, which must be refused. Exit codes: 0 good, 1.. the
 * step that failed. */
#include <stdio.h>
#include <string.h>

#include "flash.h"
#include "spu.h"
#include "spu_hw.h"

#define PAGE 16384u
#define CHUNK 2048u

static uint8_t a[CHUNK], b[CHUNK];

static uint64_t bank(void) { return (uint64_t)spu_node() << 27; /* 1 GiB in 8 banks */ }

static uint8_t pattern(unsigned node, uint32_t i, unsigned which) {
    return (uint8_t)((i * (7 + 2 * which)) ^ (i >> 8) ^ (node * 29 + which * 101));
}

/* Writes the pattern of `which` over a page at `addr` in SSD memory, through DMEM. */
static int fill(uint64_t addr, unsigned which) {
    for (uint32_t off = 0; off < PAGE; off += CHUNK) {
        for (uint32_t i = 0; i < CHUNK; ++i) a[i] = pattern(spu_node(), off + i, which);
        if (spu_dma(SPU_PORT_DMEM, (uint32_t)a, SPU_PORT_DRAM, (uint32_t)(addr + off), CHUNK))
            return -1;
    }
    return 0;
}

/* Compares the page at `addr` with `expect(i)`. */
static int check(uint64_t addr, int (*expect)(uint32_t, uint8_t)) {
    for (uint32_t off = 0; off < PAGE; off += CHUNK) {
        if (spu_dma(SPU_PORT_DRAM, (uint32_t)(addr + off), SPU_PORT_DMEM, (uint32_t)b, CHUNK))
            return -1;
        for (uint32_t i = 0; i < CHUNK; ++i)
            if (!expect(off + i, b[i])) return -1;
    }
    return 0;
}

static int is_pattern0(uint32_t i, uint8_t v) { return v == pattern(spu_node(), i, 0); }
static int is_ones(uint32_t i, uint8_t v) { return (void)i, v == 0xFF; }
static int is_and(uint32_t i, uint8_t v) {
    return v == (pattern(spu_node(), i, 1) & pattern(spu_node(), i, 2));
}

static struct flash_cmd cmd(enum flash_op op, uint32_t block, uint32_t page, uint64_t dram) {
    struct flash_cmd c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.mode = FLASH_TLC;
    c.block = block;
    c.page = page;
    c.dram_addr = dram;
    c.length = PAGE;
    c.tag = page + 1;
    return c;
}

int main(void) {
    const uint64_t src = bank() + 0x10000, dst = bank() + 0x20000;
    struct flash_done d;
    if (fill(src, 0)) return 1;
    struct flash_cmd c = cmd(FLASH_PROGRAM, 1, 0, src);
    c.meta = 0xABCD0000u + spu_node();
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK) return 2;
    c = cmd(FLASH_READ, 1, 0, dst);
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK) return 3;
    if (d.meta != 0xABCD0000u + spu_node()) return 4;
    if (check(dst, is_pattern0)) return 5;
    const uint32_t read_ns = d.latency_ns;
    c = cmd(FLASH_READ, 1, 1, dst); /* erased */
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK || check(dst, is_ones)) return 6;

    /* In-flash AND of two raw ESP operands in block 2. */
    for (unsigned w = 0; w < 2; ++w) {
        if (fill(src, 1 + w)) return 7;
        c = cmd(FLASH_PROGRAM, 2, w, src);
        c.mode = FLASH_ESP;
        c.raw = 1;
        if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK) return 8;
    }
    c = cmd(FLASH_MWS, 0, 0, dst);
    c.mws_count = 1;
    c.mws[0].block = 2;
    c.mws[0].pbm = 3;
    c.mws_flags = 2 | 4 | 8; /* init S, init C, S to C */
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK) return 9;
    if (check(dst, is_and)) return 10;

    c = cmd(FLASH_ERASE, 2, 0, 0);
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK) return 11;
    c = cmd(FLASH_READ, 2, 0, dst);
    c.raw = 1;
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_OK || check(dst, is_ones)) return 12;

    c = cmd(FLASH_READ, 1, 0, dst);
    c.die = 99;
    if (flash_run(&c, &d) != FLASH_CTL_CQ_STATUS_CODE_REFUSED) return 13;
    printf("flash ok, page read %lu ns\n", (unsigned long)read_ns);
    return 0;
}
