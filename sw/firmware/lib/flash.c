#include "flash.h"

#include "spu_hw.h"

#define FC(r) SPU_REG(SPU_FLASH_BASE, FLASH_CTL_##r##_OFFSET)

/* A 64-bit register from 32-bit firmware: two halves, low first. */
static void write64(uint32_t offset, uint64_t v) {
    SPU_REG(SPU_FLASH_BASE, offset) = (uint32_t)v;
    SPU_REG(SPU_FLASH_BASE, offset + 4) = (uint32_t)(v >> 32);
}

int flash_submit(const struct flash_cmd* c) {
    if (FC(SQ_FREE) == 0) return -1;
    FC(DIE) = c->die;
    FC(PLANE) = c->plane;
    FC(BLOCK) = c->block;
    FC(PAGE) = c->page;
    FC(COLUMN) = c->column;
    FC(LENGTH) = c->length;
    FC(PAGES) = c->pages;
    FC(ACC) = c->acc;
    write64(FLASH_CTL_DRAM_ADDR_OFFSET, c->dram_addr);
    write64(FLASH_CTL_META_OFFSET, c->meta);
    write64(FLASH_CTL_META_ADDR_OFFSET, c->meta_addr);
    if (c->op == FLASH_MWS) {
        FC(MWS_COUNT) = c->mws_count;
        for (unsigned i = 0; i < c->mws_count && i < FLASH_MWS_SLOTS; ++i) {
            SPU_REG(SPU_FLASH_BASE, FLASH_CTL_MWS_BLOCK0_OFFSET + 16 * i) = c->mws[i].block;
            write64(FLASH_CTL_MWS_PBM0_OFFSET + 16 * i, c->mws[i].pbm);
        }
    }
    FC(COMMAND) = ((uint32_t)c->op << FLASH_CTL_COMMAND_OP_SHIFT) |
                  ((uint32_t)c->mode << FLASH_CTL_COMMAND_MODE_SHIFT) |
                  (c->raw ? FLASH_CTL_COMMAND_RAW_MASK : 0) |
                  ((uint32_t)c->planes << FLASH_CTL_COMMAND_PLANES_SHIFT) |
                  ((uint32_t)c->mws_flags << FLASH_CTL_COMMAND_MWS_FLAGS_SHIFT) |
                  ((uint32_t)c->tag << FLASH_CTL_COMMAND_TAG_SHIFT);
    FC(SUBMIT) = 1;
    return 0;
}

int flash_poll(struct flash_done* d) {
    if (FC(CQ_COUNT) == 0) return 0;
    d->tag = FC(CQ_TAG);
    d->status = SPU_FIELD(FC(CQ_STATUS), FLASH_CTL_CQ_STATUS, CODE);
    d->corrected = FC(CQ_CORRECTED);
    d->uncorrectable = FC(CQ_UNCORRECTABLE);
    d->latency_ns = FC(CQ_LATENCY_NS);
    d->meta = FC(CQ_META) | (uint64_t)SPU_REG(SPU_FLASH_BASE, FLASH_CTL_CQ_META_OFFSET + 4) << 32;
    FC(CQ_POP) = 1;
    return 1;
}

uint32_t flash_run(const struct flash_cmd* c, struct flash_done* d) {
    while (flash_submit(c) != 0) {
    }
    do {
        while (!flash_poll(d)) {
        }
    } while (d->tag != (c->tag & 0xFFFFu));
    return d->status;
}
