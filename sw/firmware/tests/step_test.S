/* Instructions a debugger must be able to single-step (canopy iss --gdb): an ecall into a trap
 * handler, the handler's mret back, a fence and a breakpoint stepped off in RAM. A RAM program
 * in the riscv-tests style: it ends by writing 1 (pass) to `tohost`. */
#include "tohost.h"

    .section .text.init, "ax", @progbits
    .globl _start
_start:
    la      t0, handler
    csrw    mtvec, t0
    li      s0, 0
    .globl at_ecall
at_ecall:
    ecall                       /* into the handler, which skips it */
    .globl after_ecall
after_ecall:
    addi    s0, s0, 1
    .globl at_fence
at_fence:
    fence
    addi    s0, s0, 1
    li      t0, 2
    bne     s0, t0, fail
    li      t0, 1               /* pass: (0 << 1) | 1 */
    j       report
fail:
    li      t0, 3               /* fail: (1 << 1) | 1 */
report:
    report_tohost t0

    .align 2
    .globl handler
handler:
    csrr    t0, mepc
    addi    t0, t0, 4
    csrw    mepc, t0
    .globl at_mret
at_mret:
    mret

    tohost_section
