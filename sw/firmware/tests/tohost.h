/* The riscv-tests way to end (env/p): write (result << 1) | 1 to the 64-bit `tohost` word,
 * which the harness watches, then spin. Included by the RAM programs here. */
    .macro report_tohost reg
    la      t1, tohost
1:  sw      \reg, 0(t1)
    sw      zero, 4(t1)
    j       1b
    .endm

    .macro tohost_section
    .section .tohost, "aw", @progbits
    .align 6
    .globl tohost
tohost: .dword 0
    .align 6
    .globl fromhost
fromhost: .dword 0
    .endm
