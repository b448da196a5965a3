/* The flash controller of this SPU's channel as firmware drives it
 * (models/ssd/flash_controller.hpp; registers in flash_ctl_regs.h, generated from the model's map;
 * window at SPU_FLASH_BASE): a command is written into the registers and submitted; completions
 * come back in the order the commands end, each with its tag. Data moves between the flash and the
 * SSD's memory, never through DMEM. */
#ifndef CANOPY_FLASH_H
#define CANOPY_FLASH_H

#include <stdint.h>

#include "flash_ctl_regs.h"
#include "spu_map.h"

#ifdef __cplusplus
extern "C" {
#endif

enum flash_op {
    FLASH_READ = FLASH_CTL_COMMAND_OP_READ,
    FLASH_PROGRAM = FLASH_CTL_COMMAND_OP_PROGRAM,
    FLASH_ERASE = FLASH_CTL_COMMAND_OP_ERASE,
    FLASH_MWS = FLASH_CTL_COMMAND_OP_MWS,
    FLASH_XOR = FLASH_CTL_COMMAND_OP_XOR,
    FLASH_ACCUMULATE = FLASH_CTL_COMMAND_OP_ACCUMULATE,
    FLASH_ACC_OUT = FLASH_CTL_COMMAND_OP_ACC_OUT,
};
enum flash_mode {
    FLASH_SLC = FLASH_CTL_COMMAND_MODE_SLC,
    FLASH_MLC = FLASH_CTL_COMMAND_MODE_MLC,
    FLASH_TLC = FLASH_CTL_COMMAND_MODE_TLC,
    FLASH_ESP = FLASH_CTL_COMMAND_MODE_ESP,
};

#define FLASH_MWS_SLOTS 8

struct flash_cmd {
    enum flash_op op;
    enum flash_mode mode; /* programs */
    unsigned raw;         /* no randomiser, no ECC */
    unsigned planes;      /* 0 or 1: one plane */
    unsigned mws_flags;   /* ISCM flags of an MWS */
    unsigned tag;
    uint32_t die, plane, block, page, column, length;
    uint32_t pages; /* reads: 0 or 1, or consecutive pages by cache read */
    uint64_t dram_addr, meta;
    uint64_t meta_addr; /* 0: meta above; else the whole spare metadata in SSD memory there */
    uint32_t acc; /* accumulate, acc_out: the acc register (FLASH_CTL_ACC_*) */
    unsigned mws_count;
    struct {
        uint32_t block;
        uint64_t pbm;
    } mws[FLASH_MWS_SLOTS];
};

struct flash_done {
    unsigned tag;
    uint32_t status; /* FLASH_CTL_CQ_STATUS_CODE_* */
    uint32_t corrected, uncorrectable, latency_ns;
    uint64_t meta;
};

/* Queues the command; returns 0, or -1 when the queue is full (nothing queued). */
int flash_submit(const struct flash_cmd* c);
/* Takes the oldest completion into *d; returns 1, or 0 when none waits. */
int flash_poll(struct flash_done* d);
/* Submits and waits for this command's completion (others that end first are dropped: use it
 * only when nothing else is in flight); returns its status. */
uint32_t flash_run(const struct flash_cmd* c, struct flash_done* d);

#ifdef __cplusplus
}
#endif

#endif
