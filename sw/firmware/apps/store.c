/* A test SSD App exercising SPU-OS's RPC interface (Willow Section 3.1 "RPC interface", Figure
 * 3's read handler): echo, NVM write and read through the permission check, a bad pointer, a
 * handler that forgets to respond, the dispatch cost, a synchronous RPC to another SPU, and a call
 * into another app, a slow handler, a probe of the in-flash computing call (SPU_SYS_FC), an
 * NVM-to-NVM copy, a fan-out of requests awaited together, a relay of any request (the
 * attacker of the protection tests), and a TRIM.
 * Handlers respond with a result the host test checks. */
#include "spu_app.h"

#define BUF 256

static uint8_t buf[BUF];
static uint32_t args[4];

static uint32_t checksum(const uint8_t* p, uint32_t n) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; ++i) s = s * 31 + p[i];
    return s;
}

/* 0: payload (<= 256 B) -> its checksum. */
static void echo(const struct spu_rpc_header* h) {
    const uint32_t n = h->length < BUF ? h->length : BUF;
    const uint32_t r = rpc_receive_bytes(buf, n);
    rpc_send_response(r ? r : checksum(buf, n));
}

/* 1: {addr, n, bytes[n]} -> stored at addr in the SSD memory; the call's result. */
static void store(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t r = rpc_receive_bytes(args, 8);
    if (!r && args[1] > BUF) r = SPU_OS_E_BAD_ARG;
    if (!r) r = rpc_receive_bytes(buf, args[1]);
    if (!r) r = nvm_write(args[0], buf, args[1]);
    rpc_send_response(r);
}

/* 2: {addr, n} -> the checksum of n bytes at addr, or the error. */
static void load(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t r = rpc_receive_bytes(args, 8);
    if (!r && args[1] > BUF) r = SPU_OS_E_BAD_ARG;
    if (!r) r = nvm_read(args[0], buf, args[1]);
    rpc_send_response(r ? r : checksum(buf, args[1]));
}

/* 3: buffers outside the app's data segment: SPU-OS's data, another slot, a wrapping range. The
 * result has bit i set when call i was refused with SPU_OS_E_BAD_POINTER. */
static void bad_pointer(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t bits = 0;
    bits |= (rpc_receive_bytes((void*)0x10000, 4) == SPU_OS_E_BAD_POINTER) << 0;
    bits |= (nvm_read(0, (void*)(SPU_OS_DATA_SLOT_BASE + SPU_OS_DATA_SLOT_SIZE), 4) ==
             SPU_OS_E_BAD_POINTER)
            << 1;
    bits |= (rpc_receive_bytes(buf, 0xfffffff0u) == SPU_OS_E_BAD_POINTER) << 2;
    bits |= (spu_syscall(SPU_SYS_PUTS, 0x100, 8, 0, 0) == SPU_OS_E_BAD_POINTER) << 3;
    rpc_send_response(bits);
}

/* 4: returns without a response (SPU-OS answers SPU_OS_E_NO_RESPONSE). */
static void forgetful(const struct spu_rpc_header* h) { (void)h; }

/* 5: cycles from SPU-OS reading the header to here. */
static void dispatch_cost(const struct spu_rpc_header* h) {
    rpc_send_response(spu_rdcycle() - h->dispatch_cycle);
}

/* 6: {node, rpc_id}: a synchronous RPC with a 16-byte payload to another SPU; its result. */
static void forward(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t r = rpc_receive_bytes(args, 8);
    for (unsigned i = 0; i < 16; ++i) buf[i] = (uint8_t)(i + 1);
    if (!r) r = rpc_start_request(args[0], 0, args[1], 16);
    if (!r) r = rpc_append_request(buf, 16);
    if (!r) r = rpc_finish_request();
    if (!r) r = rpc_wait_response();
    rpc_send_response(r);
}

/* 7: {app, fn, arg}: an inter-app call; its result. */
static void call(const struct spu_rpc_header* h) {
    (void)h;
    const uint32_t r = rpc_receive_bytes(args, 12);
    rpc_send_response(r ? r : spu_call(args[0], args[1], args[2]));
}

/* 8: a line on the console. */
static void hello(const struct spu_rpc_header* h) {
    (void)h;
    rpc_send_response(spu_puts("hello from the store app\n"));
}

/* 9: {node, dst_hre, value}: asks the host (a synchronous RPC to an HRE) and answers its result
 * plus one. While it waits SPU-OS serves other requests. */
static void ask_host(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t r = rpc_receive_bytes(args, 12);
    if (!r) r = rpc_start_request(args[0], args[1], SPU_OS_RPC_ID(h->rpc_id >> 8, 0x20), 4);
    if (!r) r = rpc_append_request(&args[2], 4);
    if (!r) r = rpc_finish_request();
    rpc_send_response(r ? r : rpc_wait_response() + 1);
}

/* 10: {cycles}: busy for that many cycles with its request still in the network interface's
 * receive buffer (a slow handler, so that requests behind it find the buffer full), then the
 * checksum of the first 256 B of its payload after the argument. */
static void slow_echo(const struct spu_rpc_header* h) {
    uint32_t r = rpc_receive_bytes(args, 4);
    const uint32_t start = spu_rdcycle();
    while (!r && spu_rdcycle() - start < args[0]) {
    }
    const uint32_t n = h->length - 4 < BUF ? h->length - 4 : BUF;
    if (!r) r = rpc_receive_bytes(buf, n);
    rpc_send_response(r ? r : checksum(buf, n));
}

/* 11: {op, die, plane, block, page, slots, flags, bytes, bad_pointer}: one SPU_SYS_FC call with
 * every slot on `block` (wordline 0); its result, or for a successful call 0x80000000 | the
 * command's block (what ALLOC handed out). */
static void fc_probe(const struct spu_rpc_header* h) {
    (void)h;
    static uint32_t w[9];
    static struct spu_fc_cmd c;
    uint32_t r = rpc_receive_bytes(w, sizeof w);
    c.die = w[1];
    c.plane = w[2];
    c.block = w[3];
    c.page = w[4];
    c.slots = w[5];
    c.flags = w[6];
    for (unsigned i = 0; i < SPU_FC_MAX_BLOCKS; ++i) {
        c.slot[i].block = w[3];
        c.slot[i].pbm_lo = 1;
        c.slot[i].pbm_hi = 0;
    }
    if (!r) r = spu_syscall(SPU_SYS_FC, w[0], w[8] ? 0x100u : (uint32_t)&c, w[7], 0);
    rpc_send_response(r ? r : 0x80000000u | c.block);
}

/* 12: {dst, src, n} -> NVM_COPY's result. */
static void copy(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t r = rpc_receive_bytes(args, 12);
    if (!r) r = nvm_copy(args[0], args[1], args[2]);
    rpc_send_response(r);
}

/* 13: {node, n, bad}: n requests to SPU `node` at once, STOREs of nothing (SPU_OS_OK) but for
 * request `bad`, a LOAD of too much (SPU_OS_E_BAD_ARG); then one wait for all (a fan-out). */
static void fan_out(const struct spu_rpc_header* h) {
    uint32_t r = rpc_receive_bytes(args, 12), words[2] = {0, 0};
    for (uint32_t i = 0; i < args[1] && !r; ++i) {
        words[1] = i == args[2] ? BUF + 1 : 0;
        r = rpc_start_request(args[0], 0, SPU_OS_RPC_ID(h->rpc_id >> 8, i == args[2] ? 2 : 1), 8);
        if (!r) r = rpc_append_request(words, 8);
        if (!r) r = rpc_finish_request();
    }
    if (!r) r = rpc_wait_response();
    rpc_send_response(r);
}

/* 14: {node, rpc_id, bytes...}: the bytes (<= 256) as a request to that node and RPC, waited
 * for; its result. What a hostile app would send in the name of the request it serves. */
static void relay(const struct spu_rpc_header* h) {
    const uint32_t n = h->length - 8;
    uint32_t r = h->length < 8 || n > BUF ? SPU_OS_E_BAD_ARG : rpc_receive_bytes(args, 8);
    if (!r) r = rpc_receive_bytes(buf, n);
    if (!r) r = rpc_start_request(args[0], 0, args[1], n);
    if (!r) r = rpc_append_request(buf, n);
    if (!r) r = rpc_finish_request();
    if (!r) r = rpc_wait_response();
    rpc_send_response(r);
}

/* 15: {addr, n}: the store forgets the whole units in [addr, addr + n); {addr, n, 1}: what it
 * acknowledged of the range goes to the flash (nvm_sync; n = 0: all, nvm_flush). The call's
 * result. */
static void trim(const struct spu_rpc_header* h) {
    uint32_t r = rpc_receive_bytes(args, h->length == 12 ? 12 : 8);
    if (!r && h->length == 12)
        r = args[1] ? nvm_sync(args[0], args[1]) : nvm_flush();
    else if (!r)
        r = nvm_trim(args[0], args[1]);
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(echo, store, load, bad_pointer, forgetful, dispatch_cost, forward, call, hello,
                     ask_host, slow_echo, fc_probe, copy, fan_out, relay, trim));
