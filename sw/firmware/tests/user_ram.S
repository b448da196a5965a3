/* User mode in the RAM of `canopy iss`, the way the riscv-tests' p environment enters its tests:
 * clear mstatus.MPP, mret to the test in user mode, which stores and loads a word of RAM and
 * ends with an ecall. Passes (tohost 1) when the ecall arrives from user mode with the word
 * right; any other trap ends with exit code mcause + 10 (11: the user fetch was refused). */
#include "tohost.h"

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    la      t0, handler
    csrw    mtvec, t0
    li      t0, 0x1800          /* mstatus.MPP = 0: mret enters user mode */
    csrc    mstatus, t0
    la      t0, user
    csrw    mepc, t0
    mret

    .globl user
user:
    la      t1, word
    li      t2, 0x5a5a1234
    sw      t2, 0(t1)
    lw      a0, 0(t1)
    ecall

    .align 2
handler:
    csrr    t0, mcause
    li      t1, 8               /* ecall from user mode */
    bne     t0, t1, fail
    li      t2, 0x5a5a1234
    bne     a0, t2, fail_data
    li      t0, 1               /* pass */
    j       report
fail_data:
    li      t0, 9               /* exit code 4: the word came back wrong */
    j       report
fail:
    addi    t0, t0, 10
    slli    t0, t0, 1
    ori     t0, t0, 1
report:
    report_tohost t0

    .data
    .align 2
word: .word 0

    tohost_section
