/* Two SPUs talk over the ring with the bare devices (no SPU-OS yet): SPU 0 sends SPU 1 a request
 * whose 1 KiB payload it streams from DMEM into the network interface by DMA; SPU 1 sleeps in
 * wfi until the request's interrupt, reads the payload out by DMA, stores it into its bank of the
 * SSD's memory, and answers with the payload's checksum; SPU 0 checks the answer. Other SPUs exit
 * at once. Exit codes: 0 good, 1.. the step that failed. */
#include <stdio.h>

#include "spu.h"
#include "spu_hw.h"

#define PAYLOAD 1024
#define RPC_ID 0x0102 /* app 1, handler 2 */
#define TAG 77
#define DRAM_OFFSET 0x1000 /* inside SPU 1's bank */

static uint8_t buf[PAYLOAD];

static uint32_t checksum(const uint8_t* p, uint32_t n) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) s = s * 31 + p[i];
    return s;
}

static int sender(void) {
    for (uint32_t i = 0; i < PAYLOAD; ++i) buf[i] = (uint8_t)(i * 7 + 3);
    if (ni_begin_request(1, 0, RPC_ID, TAG, PAYLOAD) != 0) return 1;
    if (spu_dma(SPU_PORT_DMEM, (uint32_t)buf, SPU_PORT_NI_TX, 0, PAYLOAD) != 0) return 2;
    if (ni_finish_request() != 0) return 3;
    while (!ni_response_pending()) {
    }
    unsigned src, tag;
    uint32_t result;
    ni_take_response(&src, &tag, &result);
    if (src != 1 || tag != TAG) return 4;
    if (result != checksum(buf, PAYLOAD)) return 5;
    printf("round trip ok, checksum %08lx\n", (unsigned long)result);
    return 0;
}

static int receiver(void) {
    SPU_REG(SPU_CTL_BASE, SPU_CTL_IRQ_ENABLE_OFFSET) = SPU_CTL_IRQ_ENABLE_NI_REQUEST_MASK;
    /* MEIE: wfi wakes on the external interrupt (mstatus.MIE stays 0: no trap is taken) */
    __asm__ volatile("csrs mie, %0" ::"r"(1u << 11));
    while (!ni_request_pending()) __asm__ volatile("wfi");
    struct ni_header h;
    ni_request_header(&h);
    if (h.src != 0 || h.rpc_id != RPC_ID || h.tag != TAG || h.length != PAYLOAD) return 11;
    if (spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, (uint32_t)buf, h.length) != 0) return 12;
    /* Reading past the payload is refused. */
    if (spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, (uint32_t)buf, 16) !=
        SPU_DMA_ERROR_CODE_CODE_NETWORK)
        return 13;
    ni_pop_request();
    const uint32_t bank = 1u << 27; /* 1 GiB in 8 banks: SPU 1's bank starts at 128 MiB */
    if (spu_dma(SPU_PORT_DMEM, (uint32_t)buf, SPU_PORT_DRAM, bank + DRAM_OFFSET, h.length) != 0)
        return 14;
    if (ni_send_response(h.src, h.tag, checksum(buf, h.length)) != 0) return 15;
    return 0;
}

int main(void) {
    switch (spu_node()) {
        case 0: return sender();
        case 1: return receiver();
        default: return 0;
    }
}
