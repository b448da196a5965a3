/* The RPCs of the Flash-Cosmos SSD App (Flash-Cosmos Section 6.2 "fc_write / fc_read";
 * apps/flash_cosmos.c; host library sw/host/flash_cosmos). Operands are bit vectors cut into
 * page-sized pieces; the host library puts piece i of every operand of a computation on the same
 * SPU and plane ("unit"), so that in-flash operations stay plane-local. On a unit, the operands
 * of one group fill the wordlines of the group's ESP blocks in order (operand `seq` at wordline
 * seq % wordlines of the group's block seq / wordlines), so that an AND of a group's operands is
 * an intra-block MWS [Flash-Cosmos 6.2: the application groups operands into blocks].
 *
 * FC_READ computes, on one unit, an expression over operands named (group, seq) and sends the
 * result in a DATA request to the originating HRE (as block_io's READ does):
 *   FC_OP_SOP:  OR over terms of the AND of the term's operands (operand.term numbers them);
 *               AND is one term, OR one term per operand, KCS's (v1 & .. & vk) | c two terms;
 *   FC_OP_NSOP: its complement (NAND, NOR);
 *   FC_OP_XOR, FC_OP_XNOR: of all operands (term ignored);
 *   FC_OP_READ: the one operand's stored page (inverted if it was written so): OSP's path.
 * The app plans the MWS commands from where the operands are (docs/flash_cosmos.md):
 * intra-block AND first, single-block terms packed into inter-block MWS up to the power cap,
 * terms over several blocks accumulated in the S-latch, terms ORed in the C-latch; operands
 * written inverted serve NOR/NAND/OR by De Morgan. FC_SERIAL plans ParaBit's way instead: one
 * wordline per sensing, accumulated in the latches [ParaBit, Flash-Cosmos 3.3]; FC_ISP the ISP
 * baseline's way: each page read out into the controller's accelerator. Plain C with
 * fixed-width fields, included by the rv32 app and the host library. */
#ifndef CANOPY_FLASH_COSMOS_ABI_H
#define CANOPY_FLASH_COSMOS_ABI_H

#include <stdint.h>

/* Handlers (RPC ID = app << 8 | handler). */
#define FC_WRITE 0   /* struct fc_write_args + the page's bytes -> ESP-programmed */
#define FC_READ 1    /* struct fc_read_args + n x struct fc_operand -> DATA, then the result */
#define FC_RELEASE 2 /* struct fc_release_args: the group's blocks on the unit go back */
#define FC_DATA 0x80 /* the request FC_READ sends, payload struct fc_data + bytes */

/* What one SPU keeps (its data segment is 2 KiB). */
#define FC_GROUPS 8        /* groups per unit */
#define FC_UNITS 16        /* units (die x planes + plane) per SPU */
#define FC_GROUP_BLOCKS 2  /* ESP blocks per group and unit */
#define FC_MAX_OPERANDS 64 /* per FC_READ */
#define FC_MAX_WORDLINES 64

#define FC_INVERTED 1u /* fc_write_args.flags: the page holds the operand's complement */

#define FC_OP_SOP 0u
#define FC_OP_NSOP 1u
#define FC_OP_XOR 2u
#define FC_OP_XNOR 3u
#define FC_OP_READ 4u
#define FC_SERIAL 0x10u /* fc_read_args.op: ParaBit's plan, one wordline per sensing */
#define FC_ISP                                                                     \
    0x20u /* fc_read_args.op: the ISP baseline, each operand page read into the    \
           * channel's bitwise accelerator and folded there (SOP: every term after \
           * the first a single operand) */

struct fc_write_args {
    uint8_t group, seq, unit, flags;
    uint8_t die, plane, wordlines, pad;
};
struct fc_release_args {
    uint8_t group, unit, die, plane;
};
struct fc_read_args {
    uint8_t op, n, unit, wordlines;
    uint8_t die, plane;
    uint16_t bytes; /* of the result: 1 .. a page */
    uint32_t cookie;
};
struct fc_operand {
    uint8_t group, seq, term, pad;
};
struct fc_data {
    uint32_t cookie, bytes, sensings; /* sensings: the MWS commands the plan took */
};

/* Results besides SPU-OS's (SPU_OS_E_IO: no ESP block left; SPU_OS_E_STATE: no ESP region). */
#define FC_OK 0u
#define FC_E_ARGS 0x300u  /* a malformed request, or a group/unit/operand out of range */
#define FC_E_ORDER 0x301u /* FC_WRITE: seq is not the group's next operand on the unit */
#define FC_E_PLAN 0x302u  /* FC_READ: an expression the latches cannot compute (see above) */

#endif
