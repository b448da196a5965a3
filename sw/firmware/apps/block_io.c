/* The block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"; the RPCs are in
 * block_io_abi.h): READ streams a piece of the SPU's non-volatile store straight from the SSD
 * memory into a DATA request to the originating HRE (Willow Figure 3: the DMA moves the data,
 * the processor only sets it up), WRITE streams a request's payload straight into the store.
 * Built twice (sw/firmware/CMakeLists.txt): with BLOCK_IO_KERNEL_ONLY as Base-IO, which serves
 * only the host kernel's HREs, and without it as Direct-IO, which serves user processes and
 * relies on SPU-OS checking every NVM transfer against the originating process's permissions.
 *
 * Memory: no static data at all. Two handlers may be under way at once (a READ suspended while
 * the host takes its data, and another on the second lane), so everything a handler keeps lives
 * on its lane's stack (a few words). */
#include "block_io_abi.h"
#include "spu_app.h"

#ifndef BLOCK_IO_KERNEL_ONLY
#define BLOCK_IO_KERNEL_ONLY 0
#endif

/* Base-IO is the kernel's block device: a user's HRE gets nothing, not even a length check. */
static uint32_t check_origin(const struct spu_rpc_header* h) {
    return BLOCK_IO_KERNEL_ONLY && SPU_OS_PROCESS(h->origin) != 0 ? SPU_OS_E_KERNEL_ONLY
                                                                  : SPU_OS_OK;
}

static int bad_length(uint32_t bytes) { return bytes == 0 || bytes > BLOCK_IO_MAX_BYTES; }

/* READ {addr, bytes, cookie}. The DATA request goes back to the sender (for a host's READ the
 * bridge: an app cannot read the SPU count, but the header's `src` is the node that asked) and to
 * the originating HRE, under this app's id. The NVM transfer is checked (SPU_OS_E_PERMISSION)
 * only once the request is open, since it streams into it; on any failure the handler answers the
 * error and returns with the request still open, and SPU-OS aborts it (the network interface
 * builds a request locally and sends nothing before RPCFinishRequest): the host sees either a
 * whole DATA request followed by BLOCK_IO_OK or no DATA and the error. The response waits for the
 * host's answer to DATA, so BLOCK_IO_OK means the host holds the data; SPU-OS serves other
 * requests while this handler waits. */
static void block_read(const struct spu_rpc_header* h) {
    struct block_io_read_args a;
    uint32_t r = check_origin(h);
    if (!r && h->length != sizeof a) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_bytes(&a, sizeof a);
    if (!r && bad_length(a.bytes)) r = BLOCK_IO_E_LENGTH;
    if (!r) {
        const struct block_io_data d = {a.cookie, a.addr, a.bytes};
        r = rpc_start_request(h->src, h->origin, SPU_OS_RPC_ID(h->rpc_id >> 8, BLOCK_IO_DATA),
                              sizeof d + a.bytes);
        if (!r) r = rpc_append_request(&d, sizeof d);
        if (!r) r = nvm_to_request(a.addr, a.bytes);
        if (!r) r = rpc_finish_request();
        if (!r) r = rpc_wait_response();
    }
    rpc_send_response(r);
}

/* WRITE {addr, bytes} + bytes of data: the payload must be exactly that long. */
static void block_write(const struct spu_rpc_header* h) {
    struct block_io_write_args a;
    uint32_t r = check_origin(h);
    if (!r && h->length < sizeof a) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_bytes(&a, sizeof a);
    if (!r && (bad_length(a.bytes) || h->length - sizeof a != a.bytes)) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_to_nvm(a.addr, a.bytes);
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(block_read, block_write));
