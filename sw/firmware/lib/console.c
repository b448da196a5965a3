/* Console output: picolibc's stdio (stdout, stderr) writes each character to the console
 * device's TX register. */
#include <stdio.h>

#include "spu.h"

void spu_putc(char c) {
    *(volatile uint8_t*)(uintptr_t)(SPU_CONSOLE_BASE + SPU_CONSOLE_TX) = (uint8_t)c;
}

void spu_write(const char* s) {
    while (*s) spu_putc(*s++);
}

void spu_write_uint(uint32_t v, unsigned base, unsigned min_digits) {
    char d[33];
    unsigned n = 0;
    do {
        const unsigned x = v % base;
        d[n++] = (char)(x < 10 ? '0' + x : 'a' + x - 10);
        v /= base;
    } while ((v || n < min_digits) && n < sizeof d);
    while (n) spu_putc(d[--n]);
}

static int console_put(char c, FILE* f) {
    (void)f;
    spu_putc(c);
    return (unsigned char)c;
}

static FILE console = FDEV_SETUP_STREAM(console_put, NULL, NULL, _FDEV_SETUP_WRITE);
FILE* const stdin = NULL;
FILE* const stdout = &console;
FILE* const stderr = &console;
