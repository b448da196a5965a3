/* The FTL configuration a STORE_ATTACH gives a channel (docs/spu_os.md "The store"): one
 * function, so that SPU-OS (nvm.c) and the host (the store's capacity, preconditioning) build
 * the same struct ftl_config from the same payload and the flash controller's geometry. */
#ifndef SPU_OS_STORE_ATTACH_H
#define SPU_OS_STORE_ATTACH_H

#include <string.h>

#include "ftl.h"
#include "spu_os_abi.h"

/* Everything but the callbacks, the memory and the buffers. Write-through is the FTL's write
 * buffer flushed after each NVM write (the units of one transfer share pages), so the FTL
 * always runs with its write cache; the caller keeps `a->write_cache`. */
static inline void spu_os_store_ftl_config(const struct spu_os_store_attach* a, uint32_t dies,
                                           uint32_t planes, uint32_t pages_per_block,
                                           uint32_t page_bytes, struct ftl_config* c) {
    memset(c, 0, sizeof *c);
    c->geo.dies = dies;
    c->geo.planes_per_die = planes;
    c->geo.blocks_per_plane = a->blocks_per_plane;
    c->geo.pages_per_block = pages_per_block;
    c->geo.page_bytes = page_bytes;
    c->geo.unit_bytes = a->unit_bytes;
    c->op_permille = a->op_permille;
    c->gc_free_blocks = a->gc_free_blocks;
    c->wl_threshold = a->wl_threshold;
    c->esp_blocks = a->esp_blocks;
    c->write_cache = 1;
    c->gc_policy = a->gc_policy;
}

#endif
