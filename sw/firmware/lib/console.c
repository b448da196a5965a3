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

static int console_put(char c, FILE* f) {
    (void)f;
    spu_putc(c);
    return (unsigned char)c;
}

static FILE console = FDEV_SETUP_STREAM(console_put, NULL, NULL, _FDEV_SETUP_WRITE);
FILE* const stdin = NULL;
FILE* const stdout = &console;
FILE* const stderr = &console;
