#include "spu_hw.h"

#define CTL(r) SPU_REG(SPU_CTL_BASE, SPU_CTL_##r##_OFFSET)
#define NI(r) SPU_REG(SPU_NI_BASE, SPU_NI_##r##_OFFSET)
#define DMA(r) SPU_REG(SPU_DMA_BASE, SPU_DMA_##r##_OFFSET)

unsigned spu_node(void) { return SPU_FIELD(CTL(ID), SPU_CTL_ID, NODE); }
unsigned spu_count(void) { return SPU_FIELD(CTL(ID), SPU_CTL_ID, SPU_COUNT); }
unsigned spu_bridge_node(void) { return SPU_FIELD(CTL(ID), SPU_CTL_ID, BRIDGE_NODE); }
int spu_has_flash(void) { return SPU_FIELD(CTL(ID), SPU_CTL_ID, FLASH) != 0; }

void spu_set_segments(uint32_t code_base, uint32_t code_size, uint32_t data_base,
                      uint32_t data_size) {
    CTL(CODE_BASE) = code_base;
    CTL(CODE_SIZE) = code_size;
    CTL(DATA_BASE) = data_base;
    CTL(DATA_SIZE) = data_size;
}

void spu_irq_enable(uint32_t sources) { CTL(IRQ_ENABLE) = sources; }

uint32_t spu_dma(enum spu_port src, uint32_t src_addr, enum spu_port dst, uint32_t dst_addr,
                 uint32_t len) {
    DMA(SRC_ADDR) = src_addr;
    SPU_REG(SPU_DMA_BASE, SPU_DMA_SRC_ADDR_OFFSET + 4) = 0;
    DMA(DST_ADDR) = dst_addr;
    SPU_REG(SPU_DMA_BASE, SPU_DMA_DST_ADDR_OFFSET + 4) = 0;
    DMA(LENGTH) = len;
    DMA(CONTROL) = SPU_DMA_CONTROL_START_MASK | ((uint32_t)src << SPU_DMA_CONTROL_SRC_PORT_SHIFT) |
                   ((uint32_t)dst << SPU_DMA_CONTROL_DST_PORT_SHIFT);
    uint32_t status;
    while ((status = DMA(STATUS)) & SPU_DMA_STATUS_BUSY_MASK) {
    }
    DMA(STATUS) = SPU_DMA_STATUS_DONE_MASK | SPU_DMA_STATUS_ERROR_MASK; /* W1C */
    return (status & SPU_DMA_STATUS_ERROR_MASK) ? DMA(ERROR_CODE) : 0;
}

static uint32_t ni_command(uint32_t bits) {
    NI(TX_COMMAND) = bits;
    return SPU_FIELD(NI(TX_STATUS), SPU_NI_TX_STATUS, CODE);
}

uint32_t ni_begin_request(unsigned dst, unsigned dst_hre, unsigned rpc_id, unsigned tag,
                          uint32_t length) {
    NI(TX_DST) = (dst << SPU_NI_TX_DST_NODE_SHIFT) | (dst_hre << SPU_NI_TX_DST_DST_HRE_SHIFT);
    NI(TX_RPC) = (rpc_id << SPU_NI_TX_RPC_RPC_ID_SHIFT) | (tag << SPU_NI_TX_RPC_TAG_SHIFT);
    NI(TX_LENGTH) = length;
    return ni_command(SPU_NI_TX_COMMAND_BEGIN_REQUEST_MASK);
}

uint32_t ni_finish_request(void) { return ni_command(SPU_NI_TX_COMMAND_FINISH_REQUEST_MASK); }

uint32_t ni_abort_request(void) { return ni_command(SPU_NI_TX_COMMAND_ABORT_REQUEST_MASK); }

int ni_request_open(void) { return (NI(TX_STATUS) & SPU_NI_TX_STATUS_OPEN_MASK) != 0; }

uint32_t ni_send_response(unsigned dst, unsigned tag, uint32_t result) {
    NI(TX_DST) = dst << SPU_NI_TX_DST_NODE_SHIFT;
    NI(TX_RPC) = tag << SPU_NI_TX_RPC_TAG_SHIFT;
    NI(TX_RESULT) = result;
    return ni_command(SPU_NI_TX_COMMAND_SEND_RESPONSE_MASK);
}

void ni_set_origin(uint32_t hre) { NI(ORIGIN) = hre; }

int ni_request_pending(void) { return (NI(RX_STATUS) & SPU_NI_RX_STATUS_REQUEST_MASK) != 0; }

void ni_request_header(struct ni_header* h) {
    const uint32_t src = NI(RX_SRC), rpc = NI(RX_RPC);
    h->src = SPU_FIELD(src, SPU_NI_RX_SRC, NODE);
    h->dst_hre = SPU_FIELD(src, SPU_NI_RX_SRC, DST_HRE);
    h->rpc_id = SPU_FIELD(rpc, SPU_NI_RX_RPC, RPC_ID);
    h->tag = SPU_FIELD(rpc, SPU_NI_RX_RPC, TAG);
    h->origin = NI(RX_ORIGIN);
    h->length = NI(RX_LENGTH);
}

void ni_pop_request(void) { NI(RX_POP) = SPU_NI_RX_POP_REQUEST_MASK; }

int ni_response_pending(void) { return (NI(RX_STATUS) & SPU_NI_RX_STATUS_RESPONSE_MASK) != 0; }

int ni_take_response(unsigned* src, unsigned* tag, uint32_t* result) {
    const uint32_t s = NI(RESP_SRC);
    *src = SPU_FIELD(s, SPU_NI_RESP_SRC, NODE);
    *tag = SPU_FIELD(s, SPU_NI_RESP_SRC, TAG);
    *result = NI(RESP_RESULT);
    NI(RX_POP) = SPU_NI_RX_POP_RESPONSE_MASK;
    return SPU_FIELD(s, SPU_NI_RESP_SRC, NACK) != 0;
}
