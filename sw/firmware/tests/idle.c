/* A firmware that waits for an interrupt that never comes (no timer set, none enabled): the
 * simulator must notice that nothing can wake the core and end the run. */
#include <stdio.h>

#include "spu.h"

int main(void) {
    puts("waiting for an interrupt nobody sends");
    __asm__ volatile("csrw mie, zero");
    for (;;) __asm__ volatile("wfi");
}
