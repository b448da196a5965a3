/* Firmware self-test: exercises the ISA through ordinary C (CRC-32 with shifts and xors, an
 * insertion sort with loads, stores and branches, multiplies and divides with their corner
 * cases, a heap allocation, the counters and mtime) and prints each result over the console.
 * Exits 0 when every check holds, else the number of failed checks. The simulator's tests read
 * both. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spu.h"

static int failures;

static void check(const char* what, uint32_t got, uint32_t want) {
    int ok = got == want;
    printf("%s: 0x%08lx %s\n", what, (unsigned long)got, ok ? "ok" : "FAIL");
    if (!ok) {
        printf("  expected 0x%08lx\n", (unsigned long)want);
        ++failures;
    }
}

static uint32_t crc32(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1u));
    }
    return ~crc;
}

/* Initialised data (copied from IMEM by crt0) and bss (zeroed by crt0). */
static int32_t values[] = {42, -7, 1000000, 0, -2147483647 - 1, 13, 13, 2147483647, -1, 5};
static uint32_t zeroed[64];

static void sort(int32_t* v, int n) {
    for (int i = 1; i < n; ++i) {
        int32_t x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; --j) v[j + 1] = v[j];
        v[j + 1] = x;
    }
}

/* volatile: keep the compiler from folding the arithmetic at build time. */
static volatile int32_t s_a = -1234567, s_b = 89, s_min = -2147483647 - 1, s_m1 = -1, s_zero = 0;
static volatile uint32_t u_a = 0xdeadbeefu, u_b = 0x10001u;

int main(void) {
    const uint64_t t0 = spu_mtime();
    puts("canopy firmware self-test");

    check("crc32(\"123456789\")", crc32((const uint8_t*)"123456789", 9), 0xcbf43926u);

    sort(values, (int)(sizeof values / sizeof *values));
    int sorted = 1;
    for (size_t i = 1; i < sizeof values / sizeof *values; ++i)
        sorted &= values[i - 1] <= values[i];
    check("sort: sorted", (uint32_t)sorted, 1);
    check("sort: first", (uint32_t)values[0], 0x80000000u);
    check("sort: last", (uint32_t)values[9], 0x7fffffffu);

    uint32_t any = 0;
    for (int i = 0; i < 64; ++i) any |= zeroed[i];
    check("bss zeroed", any, 0);

    check("mul", (uint32_t)(s_a * s_b), (uint32_t)-109876463);
    check("mulh", (uint32_t)(((int64_t)s_a * s_min) >> 32), 0x00096b43u);
    check("mulhu", (uint32_t)(((uint64_t)u_a * u_b) >> 32), 0x0000deaeu);
    check("mulhsu", (uint32_t)(((int64_t)s_m1 * (uint64_t)u_a) >> 32), 0xffffffffu);
    check("div", (uint32_t)(s_a / s_b), (uint32_t)-13871);
    check("rem", (uint32_t)(s_a % s_b), (uint32_t)-48);
    check("divu", u_a / u_b, 0x0000deacu);
    check("remu", u_a % u_b, 0x0000e043u);
    check("div by zero", (uint32_t)(s_a / s_zero), 0xffffffffu);
    check("rem by zero", (uint32_t)(s_a % s_zero), (uint32_t)s_a);
    check("div overflow", (uint32_t)(s_min / s_m1), 0x80000000u);
    check("rem overflow", (uint32_t)(s_min % s_m1), 0);

    char* heap = malloc(100);
    check("malloc", heap != NULL, 1);
    if (heap) {
        strcpy(heap, "heap");
        check("heap in DMEM", (uint32_t)(uintptr_t)heap - SPU_DMEM_BASE < SPU_DMEM_SIZE, 1);
        free(heap);
    }

    uint64_t c0 = spu_cycles(), i0 = spu_instret();
    uint64_t c1 = spu_cycles(), i1 = spu_instret();
    check("counters advance", c1 > c0 && i1 > i0, 1);
    /* printf is slow enough on a 125 MHz core that whole microseconds have passed. */
    check("mtime advances", spu_mtime() > t0 + 10, 1);

    printf("self-test %s: %d failed\n", failures ? "FAILED" : "passed", failures);
    return failures;
}
