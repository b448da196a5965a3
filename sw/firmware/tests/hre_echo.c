/* A bare-device responder for the host-to-SSD path (no SPU-OS): SPU 0 serves requests arriving
 * from the PCIe bridge. Handler 1 answers with the payload's checksum. Handler 2 additionally
 * sends the payload back, reversed, as a request to the originating HRE (through the bridge) and
 * answers only once the host has answered that request, with the host's result. Handler 3 ends
 * the program (exit code 0). Other SPUs exit at once. Exit codes above 0: the step that failed. */
#include "spu.h"
#include "spu_hw.h"

#define MAX_PAYLOAD 4096

static uint8_t buf[MAX_PAYLOAD];

static uint32_t checksum(const uint8_t* p, uint32_t n) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) s = s * 31 + p[i];
    return s;
}

int main(void) {
    if (spu_node() != 0) return 0;
    SPU_REG(SPU_CTL_BASE, SPU_CTL_IRQ_ENABLE_OFFSET) =
        SPU_CTL_IRQ_ENABLE_NI_REQUEST_MASK | SPU_CTL_IRQ_ENABLE_NI_RESPONSE_MASK;
    __asm__ volatile("csrs mie, %0" ::"r"(1u << 11)); /* wfi wakes on MEIP; no trap taken */
    for (unsigned tag = 1;; ++tag) {
        while (!ni_request_pending()) __asm__ volatile("wfi");
        struct ni_header h;
        ni_request_header(&h);
        const unsigned handler = h.rpc_id & 0xff;
        if (h.length > MAX_PAYLOAD) return 1;
        if (h.length && spu_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, (uint32_t)buf, h.length)) return 2;
        ni_pop_request();
        if (handler == 3) {
            ni_send_response(h.src, h.tag, 0);
            return 0;
        }
        uint32_t result = checksum(buf, h.length);
        if (handler == 2) {
            for (uint32_t i = 0; i < h.length / 2; ++i) {
                const uint8_t t = buf[i];
                buf[i] = buf[h.length - 1 - i];
                buf[h.length - 1 - i] = t;
            }
            ni_set_origin(h.origin); /* the request is made on the origin's behalf */
            if (ni_begin_request(spu_bridge_node(), h.origin & 0x3ff, 0x0909, tag, h.length))
                return 3;
            if (spu_dma(SPU_PORT_DMEM, (uint32_t)buf, SPU_PORT_NI_TX, 0, h.length)) return 4;
            if (ni_finish_request()) return 5;
            while (!ni_response_pending()) __asm__ volatile("wfi");
            unsigned src, rtag;
            ni_take_response(&src, &rtag, &result);
            if (rtag != tag) return 6;
        }
        if (ni_send_response(h.src, h.tag, result)) return 7;
    }
}
