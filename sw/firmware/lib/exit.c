/* Program end and time: the exit device, the CLINT's mtime, the hart's counters. */
#include "spu.h"

void spu_exit(int code) {
    *(volatile uint32_t*)(uintptr_t)(SPU_EXIT_BASE + SPU_EXIT_CODE) = (uint32_t)code;
    /* The simulator stops the hart at the write; should it not, stay here. */
    for (;;) __asm__ volatile("wfi");
}

/* picolibc's exit() ends here after running the atexit handlers; crt0 calls it with main's
 * return value. */
void _exit(int code) { spu_exit(code); }

uint64_t spu_mtime(void) {
    volatile uint32_t* t = (volatile uint32_t*)(uintptr_t)(SPU_CLINT_BASE + SPU_CLINT_MTIME);
    uint32_t hi, lo;
    do {
        hi = t[1];
        lo = t[0];
    } while (t[1] != hi);
    return ((uint64_t)hi << 32) | lo;
}

void spu_set_timer(uint64_t at) {
    volatile uint32_t* cmp = (volatile uint32_t*)(uintptr_t)(SPU_CLINT_BASE + SPU_CLINT_MTIMECMP);
    cmp[1] = 0xffffffffu; /* no spurious match while the halves change */
    cmp[0] = (uint32_t)at;
    cmp[1] = (uint32_t)(at >> 32);
}

#define READ_CSR64(lo_name, hi_name)                              \
    do {                                                          \
        uint32_t hi, lo, again;                                   \
        do {                                                      \
            __asm__ volatile("csrr %0, " #hi_name : "=r"(hi));    \
            __asm__ volatile("csrr %0, " #lo_name : "=r"(lo));    \
            __asm__ volatile("csrr %0, " #hi_name : "=r"(again)); \
        } while (hi != again);                                    \
        return ((uint64_t)hi << 32) | lo;                         \
    } while (0)

uint64_t spu_cycles(void) { READ_CSR64(mcycle, mcycleh); }
uint64_t spu_instret(void) { READ_CSR64(minstret, minstreth); }
