/* The block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"; the RPCs are in
 * block_io_abi.h): READ streams a piece of the SPU's non-volatile store straight from the SSD
 * memory into a DATA request to the originating HRE (Willow Figure 3: the DMA moves the data,
 * the processor only sets it up), WRITE streams a request's payload straight into the store.
 * Built twice (sw/firmware/CMakeLists.txt): with BLOCK_IO_KERNEL_ONLY as Base-IO, which serves
 * only the host kernel's HREs, and without it as Direct-IO, which serves user processes and
 * relies on SPU-OS checking every NVM transfer against the originating process's permissions.
 *
 * Direct-IO also serves Append (Willow Section 4.6; block_io_abi.h).
 *
 * Memory: READ and WRITE keep no static data: two handlers may be under way at once (a READ
 * suspended while the host takes its data, and another on the second lane), so everything they
 * keep lives on their lane's stack (a few words). Append's open files are static. */
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

/* WRITE {addr, bytes} + bytes of data: the payload must be exactly that long; with
 * BLOCK_IO_FUA the data is made durable before the response. */
static void block_write(const struct spu_rpc_header* h) {
    struct block_io_write_args a = {0, 0};
    uint32_t r = check_origin(h);
    if (!r && h->length < sizeof a) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_bytes(&a, sizeof a);
    const uint32_t fua = a.bytes & BLOCK_IO_FUA, n = a.bytes & ~BLOCK_IO_FUA;
    if (!r && (bad_length(n) || h->length - sizeof a != n)) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_to_nvm(a.addr, n);
    if (!r && fua) r = nvm_sync(a.addr, n);
    rpc_send_response(r);
}

/* TRIM {addr, bytes}: the store forgets the whole units inside the range. */
static void block_trim(const struct spu_rpc_header* h) {
    struct block_io_write_args a;
    uint32_t r = check_origin(h);
    if (!r && h->length != sizeof a) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_bytes(&a, sizeof a);
    if (!r && a.bytes == 0) r = BLOCK_IO_E_LENGTH;
    if (!r) r = nvm_trim(a.addr, a.bytes);
    rpc_send_response(r);
}

#if BLOCK_IO_KERNEL_ONLY
SPU_APP(SPU_HANDLERS(block_read, block_write, block_trim));
#else
/* Append's open files. Handlers of one app run one at a time between waits, so the counters
 * need no lock; `chunk` carries forwarded data from the payload into a WRITE, never across a
 * wait. */
static struct block_io_append_open files[BLOCK_IO_APPEND_FILES];
static uint32_t reserved[BLOCK_IO_APPEND_FILES], under_way[BLOCK_IO_APPEND_FILES],
    open_file[BLOCK_IO_APPEND_FILES];
static uint8_t chunk[256];

static int file_of(uint32_t handle) {
    for (unsigned i = 0; i < BLOCK_IO_APPEND_FILES; ++i)
        if (open_file[i] && files[i].handle == handle) return (int)i;
    return -1;
}

static void append_open(const struct spu_rpc_header* h) {
    uint32_t r = SPU_OS_PROCESS(h->origin) ? SPU_OS_E_KERNEL_ONLY : SPU_OS_OK;
    if (!r && h->length != sizeof files[0]) r = BLOCK_IO_E_LENGTH;
    unsigned i = 0;
    while (i < BLOCK_IO_APPEND_FILES && open_file[i]) ++i;
    if (!r && i == BLOCK_IO_APPEND_FILES) r = BLOCK_IO_E_HANDLE;
    if (!r) r = rpc_receive_bytes(&files[i], sizeof files[i]);
    if (!r && (files[i].extents > BLOCK_IO_APPEND_EXTENTS || files[i].spus == 0 ||
               files[i].size > files[i].capacity || file_of(files[i].handle) >= 0))
        r = BLOCK_IO_E_LENGTH;
    if (!r) {
        reserved[i] = files[i].size;
        under_way[i] = 0;
        open_file[i] = 1;
    }
    rpc_send_response(r);
}

/* Where file byte x of file f lies: *spu, its NVM address (returned), and in *room the bytes
 * contiguous from there (to the stripe unit's or the extent's end); 0 room: not in the file. */
static uint32_t locate(const struct block_io_append_open* f, uint32_t x, uint32_t* spu,
                       uint32_t* room) {
    *room = 0;
    for (unsigned k = 0; k < f->extents; ++k) {
        const struct block_io_extent* e = &f->extent[k];
        if (x < e->file_offset || x - e->file_offset >= e->bytes) continue;
        const uint32_t in = x - e->file_offset, block = e->start_block + in / BLOCK_IO_BLOCK_BYTES;
        const uint32_t per_unit = BLOCK_IO_STRIPE_BYTES / BLOCK_IO_BLOCK_BYTES;
        const uint32_t unit = block / per_unit;
        const uint32_t at = block % per_unit * BLOCK_IO_BLOCK_BYTES + in % BLOCK_IO_BLOCK_BYTES;
        *spu = unit % f->spus;
        *room = BLOCK_IO_STRIPE_BYTES - at;
        if (*room > e->bytes - in) *room = e->bytes - in;
        return *spu * f->bank_bytes + unit / f->spus * BLOCK_IO_STRIPE_BYTES + at;
    }
    return 0;
}

static void append(const struct spu_rpc_header* h) {
    struct block_io_append_args a;
    uint32_t r = h->length < sizeof a ? BLOCK_IO_E_LENGTH : SPU_OS_OK;
    if (!r) r = rpc_receive_bytes(&a, sizeof a);
    if (!r && (bad_length(a.bytes) || h->length - sizeof a != a.bytes)) r = BLOCK_IO_E_LENGTH;
    const int i = r ? -1 : file_of(a.handle);
    if (!r && i < 0) r = BLOCK_IO_E_HANDLE;
    if (r) {
        rpc_send_response(r);
        return;
    }
    struct block_io_append_open* f = &files[i];
    if (a.bytes > f->capacity - reserved[i]) {
        rpc_send_response(BLOCK_IO_E_FULL);
        return;
    }
    const uint32_t offset = reserved[i];
    reserved[i] += a.bytes;
    ++under_way[i];
    unsigned out = 0;
    for (uint32_t done = 0, spu, room; done < a.bytes && !r; done += room) {
        const uint32_t nvm = locate(f, offset + done, &spu, &room);
        if (room > a.bytes - done) room = a.bytes - done;
        if (room == 0 || out == SPU_OS_MAX_AWAITED) {
            r = BLOCK_IO_E_LENGTH; /* outside the extents, or too many pieces */
        } else if (spu == f->node) {
            r = rpc_receive_to_nvm(nvm, room);
        } else {
            const struct block_io_write_args w = {nvm, room};
            r = rpc_start_request(spu, 0, SPU_OS_RPC_ID(h->rpc_id >> 8, BLOCK_IO_WRITE),
                                  sizeof w + room);
            if (!r) r = rpc_append_request(&w, sizeof w);
            for (uint32_t c = 0, n; c < room && !r; c += n) {
                n = room - c < sizeof chunk ? room - c : sizeof chunk;
                r = rpc_receive_bytes(chunk, n);
                if (!r) r = rpc_append_request(chunk, n);
            }
            if (!r) r = rpc_finish_request();
            if (!r) ++out;
        }
    }
    const uint32_t w = out ? rpc_wait_response() : SPU_OS_OK;
    if (!r) r = w;
    --under_way[i];
    if (r && reserved[i] == offset + a.bytes) reserved[i] = offset; /* the last: given back */
    if (!r && under_way[i] == 0) {
        const uint32_t size[2] = {reserved[i], 0};
        r = nvm_write(f->size_addr, size, sizeof size);
    }
    rpc_send_response(r);
}

static void append_close(const struct spu_rpc_header* h) {
    uint32_t handle = 0, r = SPU_OS_PROCESS(h->origin) ? SPU_OS_E_KERNEL_ONLY : SPU_OS_OK;
    if (!r && h->length != sizeof handle) r = BLOCK_IO_E_LENGTH;
    if (!r) r = rpc_receive_bytes(&handle, sizeof handle);
    const int i = r ? -1 : file_of(handle);
    if (!r && i < 0) r = BLOCK_IO_E_HANDLE;
    if (!r && under_way[i]) r = SPU_OS_E_STATE;
    if (!r) open_file[i] = 0;
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(block_read, block_write, block_trim, append_open, append, append_close));
#endif
