/* Programs with no trap handler (mtvec stays 0, where the IMEM holds zeros: an illegal
 * instruction) that fault at once, one way each: the core is caught in a trap loop that only
 * the harness can end (`canopy iss` exit status 4). Built once per FAULT below. */
    .section .text.init, "ax", @progbits
    .option norvc               /* 4-byte instructions: the tests name their addresses */
    .globl _start
_start:
    nop
#if defined(FAULT_MISALIGNED)
    .globl _start_plus_1        /* the entry point: misaligned (odd: with C, +2 is not) */
    .set _start_plus_1, _start + 1
    nop
#elif defined(FAULT_ILLEGAL)
    .word 0                     /* all zeros: illegal */
#elif defined(FAULT_ECALL)
    ecall
#elif defined(FAULT_EBREAK)
    ebreak
#elif defined(FAULT_JUMP0)
    jr      zero
#elif defined(FAULT_UNMAPPED)
    li      t0, 0x40000000      /* nothing is mapped there */
    lw      t1, 0(t0)
#else
#error "FAULT_* not defined"
#endif
1:  j       1b
