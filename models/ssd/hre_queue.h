/* The memory structures a host RPC endpoint (HRE) shares with Willow's PCIe bridge (Willow
 * Section 3.2 "bridge": per HRE a downstream and an upstream queue, NVMe-like), declared once for
 * the bridge's model and the host's HRE library. Plain C, little-endian, packed by construction.
 *
 * Per HRE the host kernel allocates one pinned DMA window in host memory holding:
 *   - the submission queue (downstream): hre_sq_entry[sq_entries]; the host writes entries and
 *     rings the SQ tail doorbell; the bridge fetches them by DMA;
 *   - the completion queue (upstream): hre_cq_entry[cq_entries]; the bridge writes responses to
 *     the host's requests and requests from SPUs; an entry is new when its phase bit equals the
 *     pass the host is on (it flips every time the queue wraps, starting at 1); the host returns
 *     entries by writing the CQ head doorbell;
 *   - the receive buffer: rx_bytes of payload space for requests SPUs send to the HRE, used as a
 *     ring of contiguous pieces (a piece that does not fit before the end starts at 0); the host
 *     returns space by writing the RX head doorbell (bytes consumed, as a running offset);
 *   - payload buffers: a request whose payload does not fit inline names it by host address,
 *     which must lie inside the window (the bridge refuses anything else: a process cannot make
 *     the SSD read memory that is not its own).
 * Doorbells live in one 4 KiB page per HRE, so the kernel can map each process its own.
 *
 * Coherent queues (the bridge's qp_control.coherent, over CCIX): the host rings no doorbells. An
 * SQ entry is new when its HRE_FLAG_PHASE equals the pass the host is on over the SQ (1 on the
 * first, flipping when the queue wraps), as the CQ's phase bit; the bridge watches the next
 * slot's line in its coherent cache. The host keeps its CQ and RX heads (running counts) in the window's
 * shadow line (hre_shadow offsets below) with ordinary stores; the bridge reads them when it runs
 * out of room. The SQ head still reads back from the doorbell page. */
#ifndef CANOPY_HRE_QUEUE_H
#define CANOPY_HRE_QUEUE_H

#include <stdint.h>

#define HRE_SQ_ENTRY_BYTES 64u
#define HRE_CQ_ENTRY_BYTES 32u
#define HRE_INLINE_BYTES 40u

/* hre_sq_entry.kind and hre_cq_entry.kind */
#define HRE_KIND_REQUEST 1u
#define HRE_KIND_RESPONSE 2u

/* hre_sq_entry.flags */
#define HRE_FLAG_INLINE 1u /* the payload is in inline_payload (length <= HRE_INLINE_BYTES) */
#define HRE_FLAG_PHASE 0x8000u /* coherent queues: the host's pass over the SQ (see above) */

/* hre_cq_entry.status for responses the bridge itself makes */
#define HRE_STATUS_OK 0u
#define HRE_STATUS_NACK 1u       /* the SPU had no room: the request was dropped */
#define HRE_STATUS_BAD_ENTRY 2u  /* the entry was malformed (kind, node, length) */
#define HRE_STATUS_BAD_ADDRESS 3u /* its payload lies outside the HRE's DMA window */

struct hre_sq_entry {
    uint8_t kind;     /* HRE_KIND_REQUEST, or HRE_KIND_RESPONSE to an SPU's request */
    uint8_t node;     /* destination SPU (ring node) */
    uint16_t rpc_id;  /* requests: app << 8 | handler */
    uint16_t tag;     /* requests: the host's tag, echoed in the completion; responses: the
                         SPU request's tag */
    uint16_t flags;   /* HRE_FLAG_INLINE */
    uint32_t length;  /* requests: payload bytes */
    uint32_t result;  /* responses: the result */
    uint64_t payload_addr; /* requests without HRE_FLAG_INLINE: host address of the payload */
    uint8_t inline_payload[HRE_INLINE_BYTES];
};

struct hre_cq_entry {
    uint8_t kind;     /* HRE_KIND_RESPONSE to the host's request, or HRE_KIND_REQUEST from an SPU */
    uint8_t node;     /* the SPU it comes from */
    uint16_t tag;     /* responses: the host's tag; requests: the SPU's (answer with it) */
    uint16_t rpc_id;  /* requests */
    uint16_t phase;   /* bit 0: the pass of the queue this entry was written in */
    uint32_t result;  /* responses: the SPU's result, or HRE_STATUS_* from the bridge */
    uint32_t length;  /* requests: payload bytes, at rx_offset in the receive buffer */
    uint32_t rx_offset;
    uint32_t origin;  /* requests: the originating HRE */
    uint32_t status;  /* HRE_STATUS_OK, or why the bridge failed the host's request */
    uint32_t reserved;
};

/* The doorbell page of one HRE (offsets in its 4 KiB page). */
#define HRE_DOORBELL_PAGE_BYTES 4096u
#define HRE_DOORBELL_SQ_TAIL 0x0u /* the next free SQ slot after the host's new entries */
#define HRE_DOORBELL_CQ_HEAD 0x4u /* the next CQ slot the host has not consumed */
#define HRE_DOORBELL_RX_HEAD 0x8u /* running count of receive-buffer bytes the host consumed */
#define HRE_DOORBELL_SQ_HEAD 0xCu /* read-only: the next SQ slot the bridge will fetch (a full
                                     ring's writer reads it to learn which slots are free) */

/* Coherent queues: the shadow line (64 B, line-aligned in the window) of the host's heads. */
#define HRE_SHADOW_BYTES 64u
#define HRE_SHADOW_CQ_HEAD 0x0u /* running count (32-bit, wrapping) of CQ entries consumed: read
                                   lazily, a slot could not tell a full pass from none */
#define HRE_SHADOW_RX_HEAD 0x4u /* as HRE_DOORBELL_RX_HEAD */

#ifdef __cplusplus
static_assert(sizeof(struct hre_sq_entry) == HRE_SQ_ENTRY_BYTES, "SQ entry layout");
static_assert(sizeof(struct hre_cq_entry) == HRE_CQ_ENTRY_BYTES, "CQ entry layout");
#else
_Static_assert(sizeof(struct hre_sq_entry) == HRE_SQ_ENTRY_BYTES, "SQ entry layout");
_Static_assert(sizeof(struct hre_cq_entry) == HRE_CQ_ENTRY_BYTES, "CQ entry layout");
#endif

#endif
