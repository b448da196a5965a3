/* SPU start-up: the first instructions at the IMEM base, where the core resets. Sets up gp, sp
 * (top of DMEM) and tp (picolibc's TLS block), copies .data from its image in IMEM, zeroes .bss,
 * points mtvec at the trap entry, runs the constructors and main(), and hands main's return value
 * to _exit(), which writes it to the exit device (exit.c). */
    .section .text.init.enter, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
    la      tp, __tls_base

    /* .data and .tdata: copy their image from IMEM. */
    la      a0, __data_start
    la      a1, __data_source
    la      a2, __data_end
1:  bgeu    a0, a2, 2f
    lw      t0, 0(a1)
    sw      t0, 0(a0)
    addi    a0, a0, 4
    addi    a1, a1, 4
    j       1b

    /* .tbss and .bss: zero. */
2:  la      a0, __bss_start
    la      a1, __bss_end
3:  bgeu    a0, a1, 4f
    sw      zero, 0(a0)
    addi    a0, a0, 4
    j       3b

4:  la      t0, spu_trap_entry
    csrw    mtvec, t0

    call    __libc_init_array
    li      a0, 0               /* argc */
    li      a1, 0               /* argv */
    call    main
    call    _exit
    .size _start, . - _start
