/* A malicious (or broken) test SSD App (Willow Section 3.1 "Code and Data Protection"): its
 * handlers reach outside their segments, execute a privileged instruction or never finish, so
 * SPU-OS must stop it, disable it and report it, and serve the other apps on. Function 0 is a
 * well-behaved service other apps may call (composition); function 1 faults. */
#include "spu_app.h"

static volatile uint32_t sink;

/* 0: behaves: 42. */
static void fine(const struct spu_rpc_header* h) {
    (void)h;
    rpc_send_response(42);
}
/* 1: stores into SPU-OS's data (store access fault). */
static void poke(const struct spu_rpc_header* h) {
    (void)h;
    *(volatile uint32_t*)0x10010 = 0xbad;
    rpc_send_response(0);
}
/* 2: jumps into SPU-OS's code (instruction access fault). */
static void jump(const struct spu_rpc_header* h) {
    (void)h;
    ((void (*)(void))0x100)();
}
/* 3: never returns (the watchdog). */
static void spin(const struct spu_rpc_header* h) {
    (void)h;
    for (;;) ++sink;
}
/* 4: takes over the trap vector (illegal instruction in user mode). */
static void privileged(const struct spu_rpc_header* h) {
    (void)h;
    __asm__ volatile("csrw mtvec, zero");
}

static uint32_t twice(uint32_t x) { return 2 * x; }
static uint32_t peek(uint32_t x) { return *(volatile uint32_t*)x; }

SPU_APP(SPU_HANDLERS(fine, poke, jump, spin, privileged), SPU_FUNCTIONS(twice, peek));
