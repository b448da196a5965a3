/* A program in the style of the RISC-V ISA tests (riscv-tests, env/p): linked in RAM at
 * 0x80000000 rather than in the SPU map, without the support library, it reports its result by
 * writing (TESTNUM << 1) | 1 to the `tohost` word, then spins; TESTNUM 0 is a pass. Built twice:
 * TESTNUM 0 (tohost_pass.elf) and TESTNUM 5 (tohost_fail.elf). */
#include "tohost.h"

#ifndef TESTNUM
#define TESTNUM 0
#endif

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    la      t1, counter         /* some work on data in RAM first */
    li      t0, 10
1:  lw      t2, 0(t1)
    addi    t2, t2, 3
    sw      t2, 0(t1)
    addi    t0, t0, -1
    bnez    t0, 1b
    li      t0, (TESTNUM << 1) | 1
    report_tohost t0

    tohost_section

    .data
counter: .word 0
