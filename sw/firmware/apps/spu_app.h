/* The SSD App side of SPU-OS (Willow Section 3.1 "Building an SSD App"): the RPC library an app's
 * handlers call (RPCReceiveBytes, RPCSendResponse, RPCStartRequest, RPCAppendRequest,
 * RPCFinishRequest, NVM transfers), each an ecall into SPU-OS (spu_os_abi.h), and SPU_APP(),
 * which puts the app's entry table at the start of its code slot. Apps are C without the
 * standard library's I/O; they allocate memory only statically [Willow 3.1]. */
#ifndef CANOPY_SPU_APP_H
#define CANOPY_SPU_APP_H

#include <stdint.h>

#include "spu_os_abi.h"

typedef void (*spu_handler_fn)(const struct spu_rpc_header* h);
typedef uint32_t (*spu_function_fn)(uint32_t arg);

static inline uint32_t spu_syscall(uint32_t n, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3) {
    register uint32_t r0 __asm__("a0") = a0;
    register uint32_t r1 __asm__("a1") = a1;
    register uint32_t r2 __asm__("a2") = a2;
    register uint32_t r3 __asm__("a3") = a3;
    register uint32_t r7 __asm__("a7") = n;
    /* A function call's registers (spu_os_abi.h): a1-a7 and t0-t6 are not kept. */
    __asm__ volatile("ecall"
                     : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r7)
                     :
                     : "memory", "a4", "a5", "a6", "t0", "t1", "t2", "t3", "t4", "t5", "t6");
    return r0;
}

static inline uint32_t rpc_receive_bytes(void* p, uint32_t n) {
    return spu_syscall(SPU_SYS_RECEIVE, (uint32_t)p, n, 0, 0);
}
static inline uint32_t rpc_send_response(uint32_t result) {
    return spu_syscall(SPU_SYS_RESPOND, result, 0, 0, 0);
}
static inline uint32_t rpc_start_request(unsigned node, unsigned dst_hre, unsigned rpc_id,
                                         uint32_t length) {
    return spu_syscall(SPU_SYS_START_REQUEST, node, dst_hre, rpc_id, length);
}
static inline uint32_t rpc_append_request(const void* p, uint32_t n) {
    return spu_syscall(SPU_SYS_APPEND, (uint32_t)p, n, 0, 0);
}
static inline uint32_t rpc_finish_request(void) { return spu_syscall(SPU_SYS_FINISH, 0, 0, 0, 0); }
static inline uint32_t rpc_wait_response(void) {
    return spu_syscall(SPU_SYS_WAIT_RESPONSE, 0, 0, 0, 0);
}
static inline uint32_t nvm_read(uint32_t addr, void* p, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_READ, addr, (uint32_t)p, n, 0);
}
static inline uint32_t nvm_write(uint32_t addr, const void* p, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_WRITE, addr, (uint32_t)p, n, 0);
}
static inline uint32_t nvm_to_request(uint32_t addr, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_TO_REQUEST, addr, n, 0, 0);
}
static inline uint32_t rpc_receive_to_nvm(uint32_t addr, uint32_t n) {
    return spu_syscall(SPU_SYS_RECEIVE_TO_NVM, addr, n, 0, 0);
}
static inline uint32_t nvm_copy(uint32_t dst, uint32_t src, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_COPY, dst, src, n, 0);
}
/* What this SPU's store has acknowledged survives power loss once this returns SPU_OS_OK. */
static inline uint32_t nvm_flush(void) { return spu_syscall(SPU_SYS_NVM_FLUSH, 0, 0, 0, 0); }
/* The same for what it acknowledged of [nvm_addr, nvm_addr + n) only (n > 0): the rest of the
 * write buffer stays, as for a write with NVMe's FUA bit. */
static inline uint32_t nvm_sync(uint32_t nvm_addr, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_FLUSH, nvm_addr, n, 0, 0);
}
/* The store forgets the whole units inside [nvm_addr, nvm_addr + n) (write rights needed):
 * on the flash they read as 0xFF bytes from then on. */
static inline uint32_t nvm_trim(uint32_t nvm_addr, uint32_t n) {
    return spu_syscall(SPU_SYS_NVM_TRIM, nvm_addr, n, 0, 0);
}
static inline uint32_t spu_puts(const char* s) {
    uint32_t n = 0;
    while (s[n]) ++n;
    return spu_syscall(SPU_SYS_PUTS, (uint32_t)s, n, 0, 0);
}
/* Function `fn` of app `app_id`, as the call table allows; its result or SPU_OS_E_NO_CALL. */
static inline uint32_t spu_call(unsigned app_id, unsigned fn, uint32_t arg) {
    return spu_syscall(SPU_SYS_CALL, app_id, fn, arg, 0);
}
static inline uint32_t spu_rdcycle(void) {
    uint32_t c;
    __asm__ volatile("rdcycle %0" : "=r"(c));
    return c;
}

/* The entry table's layout as an app builds it (the words of struct spu_app_table). */
struct spu_app_entry_table {
    uint32_t magic, n_handlers;
    void (*done_stub)(void);
    uint32_t n_functions;
    spu_handler_fn handlers[SPU_OS_MAX_HANDLERS];
    spu_function_fn functions[SPU_OS_MAX_HANDLERS];
};
_Static_assert(sizeof(struct spu_app_entry_table) == sizeof(struct spu_app_table),
               "entry table layout");

void spu_app_done(void); /* app_rt.c: where handlers return */

#define SPU_APP_COUNT(type, ...) (sizeof((type[]){__VA_ARGS__}) / sizeof(type))
/* SPU_APP(SPU_HANDLERS(h0, h1, ...)[, SPU_FUNCTIONS(f0, ...)]): handler i serves RPC
 * app << 8 | i; function i is what other apps reach with spu_call(app, i, arg). */
#define SPU_HANDLERS(...) \
    .n_handlers = SPU_APP_COUNT(spu_handler_fn, __VA_ARGS__), .handlers = {__VA_ARGS__}
#define SPU_FUNCTIONS(...) \
    .n_functions = SPU_APP_COUNT(spu_function_fn, __VA_ARGS__), .functions = {__VA_ARGS__}
#define SPU_APP(...)                                   \
    __attribute__((section(".spu_app_table"), used))   \
    const struct spu_app_entry_table spu_app_table = { \
        .magic = SPU_APP_MAGIC, .done_stub = spu_app_done, __VA_ARGS__}

#endif
