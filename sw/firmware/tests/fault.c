/* A firmware that faults, for the trap path: FAULT_ILLEGAL executes an illegal instruction,
 * FAULT_UNMAPPED loads from an address nothing is mapped at. The default trap handler reports
 * it on the console and exits with 128 + mcause. */
#include <stdio.h>

#include "spu.h"

int main(void) {
    puts("about to fault");
#if defined(FAULT_ILLEGAL)
    __asm__ volatile(".word 0x00000000"); /* all zeros: defined to be illegal */
#elif defined(FAULT_UNMAPPED)
    volatile uint32_t* nowhere = (volatile uint32_t*)(uintptr_t)0x40000000u;
    printf("read 0x%08lx\n", (unsigned long)*nowhere);
#endif
    puts("still running: the fault was not taken");
    return 0;
}
