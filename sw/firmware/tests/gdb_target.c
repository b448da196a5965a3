/* A small program for debugger sessions: a global to read and write, a function to break at,
 * a loop to step through. main returns `counter`, so a debugger that changes it changes the
 * exit code. */
#include <stdint.h>
#include <stdio.h>

#include "spu.h"

volatile uint32_t counter = 0;
volatile uint32_t magic = 0xc0ffee00u;

__attribute__((noinline)) uint32_t bump(uint32_t by) {
    counter += by;
    return counter;
}

int main(void) {
    if (magic != 0xc0ffee00u) return 99;  // initialised data reached DMEM (and keeps `magic` linked)
    for (uint32_t i = 1; i <= 5; ++i) bump(i);
    printf("counter=%lu\n", (unsigned long)counter);
    return (int)counter;
}
