/* The Willow devices of an SPU as SPU-OS drives them: the DMA controller (local memory, the SSD's
 * memory, the network interface) and the network interface's RPC headers and commands. Register
 * offsets and fields come from the headers `canopy regs` generates from the models' maps
 * (spu_ctl_regs.h, spu_ni_regs.h, spu_dma_regs.h), addresses from spu_map.h. */
#ifndef CANOPY_SPU_HW_H
#define CANOPY_SPU_HW_H

#include <stdint.h>

#include "spu_ctl_regs.h"
#include "spu_dma_regs.h"
#include "spu_map.h"
#include "spu_ni_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPU_REG(base, offset) (*(volatile uint32_t*)((base) + (offset)))
#define SPU_FIELD(value, reg, field) (((value)&reg##_##field##_MASK) >> reg##_##field##_SHIFT)

/* This SPU's ring node, the number of SPUs, the bridge's node; whether a flash controller
 * answers in its flash window (an SPU beyond the array's channels has none). */
unsigned spu_node(void);
unsigned spu_count(void);
unsigned spu_bridge_node(void);
int spu_has_flash(void);

/* The segment registers confining the SSD App in user mode (SPU-OS sets them at dispatch), and
 * the interrupt sources (SPU_CTL_IRQ_ENABLE_*_MASK) that raise the core's external interrupt. */
void spu_set_segments(uint32_t code_base, uint32_t code_size, uint32_t data_base,
                      uint32_t data_size);
void spu_irq_enable(uint32_t sources);

/* DMA ports (control.src_port / dst_port). */
enum spu_port {
    SPU_PORT_DMEM = SPU_DMA_CONTROL_SRC_PORT_DMEM,
    SPU_PORT_DRAM = SPU_DMA_CONTROL_SRC_PORT_DRAM,
    SPU_PORT_NI_RX = SPU_DMA_CONTROL_SRC_PORT_NI_RX,
    SPU_PORT_NI_TX = SPU_DMA_CONTROL_SRC_PORT_NI_TX,
};
/* Moves `len` bytes and waits for the end; returns the error code (SPU_DMA_ERROR_CODE_CODE_*,
 * 0 on success). DMEM addresses are SPU addresses (pointers). */
uint32_t spu_dma(enum spu_port src, uint32_t src_addr, enum spu_port dst, uint32_t dst_addr,
                 uint32_t len);

/* The header of a received request. */
struct ni_header {
    unsigned src, dst_hre, rpc_id, tag;
    uint32_t origin, length;
};
/* Sending: each returns the command's status (SPU_NI_TX_STATUS_CODE_*, 0 = ok). */
uint32_t ni_begin_request(unsigned dst, unsigned dst_hre, unsigned rpc_id, unsigned tag,
                          uint32_t length);
uint32_t ni_finish_request(void);
/* Drops the open request (begun, not finished) and frees its response slot. */
uint32_t ni_abort_request(void);
/* A request is open (begun, not finished). */
int ni_request_open(void);
uint32_t ni_send_response(unsigned dst, unsigned tag, uint32_t result);
/* The originating HRE stamped on this SPU's requests from now on (SPU-OS, on dispatch). */
void ni_set_origin(uint32_t hre);

/* Receiving. */
int ni_request_pending(void);
void ni_request_header(struct ni_header* h);
void ni_pop_request(void);
int ni_response_pending(void);
/* The head response's sender, tag and result; then pops it. Returns 1 when it is a NACK (the
 * receiver dropped the request; *result is then 0), else 0. */
int ni_take_response(unsigned* src, unsigned* tag, uint32_t* result);

#ifdef __cplusplus
}
#endif

#endif
