/* The C extension, instruction by instruction (RISC-V unprivileged spec, "C" Standard Extension,
 * RV32 forms): each compressed instruction, written with its `c.` mnemonic so that the assembler
 * must encode it in 16 bits, is checked against what its 32-bit expansion computes (the spec's
 * definition), at the edges of its immediate. Then traps (C.EBREAK, reserved encodings),
 * 32-bit instructions on halfword boundaries, and code rewritten in place (the decode cache).
 * A RAM program in the riscv-tests style: TESTNUM 0 through `tohost` is a pass, else the number
 * of the check that failed (gp). Built with -march=rv32imc_zicsr_zifencei. */
#include "tohost.h"

/* Fail unless register `r` holds `v` (clobbers t6). */
    .macro expect r, v
    li      t6, \v
    bne     \r, t6, fail
    .endm
    .macro check n
    li      gp, \n
    .endm

    .section .text.init, "ax", @progbits
    .globl _start
    .option rvc
_start:
    la      t0, trap
    csrw    mtvec, t0
    la      sp, stack_top

    check 1                     /* misa says C (bit 2) */
    csrr    t0, misa
    andi    t0, t0, 4
    expect  t0, 4

    check 2                     /* C.LI: addi rd, x0, imm[5:0], -32 .. 31 */
    c.li    a0, -32
    expect  a0, -32
    c.li    a1, 31
    expect  a1, 31

    check 3                     /* C.ADDI: addi rd, rd, nzimm */
    c.addi  a0, 31
    expect  a0, -1
    c.addi  a1, -32
    expect  a1, -1
    c.nop                       /* C.NOP changes nothing */
    expect  a1, -1

    check 4                     /* C.LUI: lui rd, nzimm[17:12], sign-extended */
    c.lui   a2, 0xfffe0         /* -32 << 12 */
    expect  a2, 0xfffe0000
    c.lui   a3, 31
    expect  a3, 0x1f000
    c.lui   a4, 1
    expect  a4, 0x1000

    check 5                     /* C.ADDI16SP: addi sp, sp, nzimm (x16), -512 .. 496 */
    mv      s1, sp
    c.addi16sp sp, -512
    sub     t0, s1, sp
    expect  t0, 512
    c.addi16sp sp, 496
    sub     t0, s1, sp
    expect  t0, 16
    c.addi16sp sp, 16
    bne     sp, s1, fail

    check 6                     /* C.ADDI4SPN: addi rd', sp, nzuimm (x4), 4 .. 1020 */
    c.addi4spn a0, sp, 1020
    sub     t0, a0, sp
    expect  t0, 1020
    c.addi4spn s0, sp, 4
    sub     t0, s0, sp
    expect  t0, 4

    check 7                     /* C.SLLI, C.SRLI, C.SRAI: shamt 1 .. 31 */
    li      a0, 0x80000001
    mv      a1, a0
    mv      a2, a0
    c.slli  a0, 31
    expect  a0, 0x80000000
    c.srli  a1, 31
    expect  a1, 1
    c.srai  a2, 31
    expect  a2, -1
    li      a3, 0x80000000
    c.srai  a3, 1
    expect  a3, 0xc0000000
    li      t3, 0x12345678      /* rd x28: C.SLLI reaches every register */
    c.slli  t3, 4
    expect  t3, 0x23456780

    check 8                     /* C.ANDI: andi rd', rd', imm[5:0] */
    li      a0, 0x12345678
    c.andi  a0, -32
    expect  a0, 0x12345660
    c.andi  a0, 31
    expect  a0, 0
    li      a1, 0xffff
    c.andi  a1, 9
    expect  a1, 9

    check 9                     /* C.MV, C.ADD, C.SUB, C.XOR, C.OR, C.AND */
    li      s0, 0x0f0f00ff
    li      s1, 0x00ff0f0f
    c.mv    a0, s0
    expect  a0, 0x0f0f00ff
    c.mv    t4, s1              /* rd outside x8-x15 */
    expect  t4, 0x00ff0f0f
    c.add   a0, s1
    expect  a0, 0x100e100e
    c.add   t4, t4
    expect  t4, 0x01fe1e1e
    mv      a1, s0
    c.sub   a1, s1
    expect  a1, 0x0e0ff1f0
    mv      a2, s0
    c.xor   a2, s1
    expect  a2, 0x0ff00ff0
    mv      a3, s0
    c.or    a3, s1
    expect  a3, 0x0fff0fff
    mv      a4, s0
    c.and   a4, s1
    expect  a4, 0x000f000f

    check 10                    /* C.SW, C.LW: offsets 0 .. 124 (x4) from rs1' */
    la      s0, buffer
    li      a5, 0xdeadbeef
    c.sw    a5, 124(s0)
    lw      t0, 124(s0)
    expect  t0, 0xdeadbeef
    li      t0, 0x01234567
    sw      t0, 4(s0)
    c.lw    a4, 4(s0)
    expect  a4, 0x01234567
    c.lw    a3, 124(s0)
    expect  a3, 0xdeadbeef

    check 11                    /* C.SWSP, C.LWSP: offsets 0 .. 252 (x4) from sp */
    c.addi16sp sp, -256
    li      t0, 0xcafef00d
    c.swsp  t0, 252(sp)
    lw      t1, 252(sp)
    expect  t1, 0xcafef00d
    sw      t0, 0(sp)
    c.lwsp  t2, 0(sp)
    expect  t2, 0xcafef00d
    c.lwsp  ra, 252(sp)
    expect  ra, 0xcafef00d
    c.addi16sp sp, 256

    check 12                    /* C.J forwards and backwards */
    li      a0, 0
    c.j     2f
1:  c.addi  a0, 1
    c.j     3f
2:  c.addi  a0, 2
    c.j     1b
3:  expect  a0, 3

    check 13                    /* C.JAL links pc + 2 */
    c.jal   4f
5:  c.j     6f
4:  la      t0, 5b
    bne     ra, t0, fail
    ret
6:
    check 14                    /* C.JR and C.JALR (links pc + 2) */
    la      t0, 7f
    c.jr    t0
    c.j     fail
7:  la      t1, 8f
    c.jalr  t1
9:  c.j     10f
8:  la      t0, 9b
    bne     ra, t0, fail
    c.jr    ra
10:
    check 15                    /* C.BEQZ, C.BNEZ: taken, not taken, both directions */
    li      s0, 5
    li      a0, 0
11: c.addi  a0, 1
    c.addi  s0, -1
    c.bnez  s0, 11b
    expect  a0, 5
    c.beqz  s0, 12f
    c.j     fail
12: li      s1, 1
    c.beqz  s1, fail
    c.bnez  s0, fail

    check 16                    /* 32-bit instructions at pc % 4 == 2, a jump to one */
    .balign 4
    c.nop
    .option norvc
    addi    a0, zero, 7
    jal     ra, 13f
    .option rvc
    c.j     fail
13: expect  a0, 7
    andi    t0, ra, 3
    expect  t0, 2

    check 17                    /* C.EBREAK: a breakpoint, mepc at it, the length 2 */
    li      s10, 0
1:  c.ebreak
    expect  s10, 3              /* mcause */
    la      t0, 1b
    bne     s11, t0, fail       /* mtval: the address */

    check 18                    /* reserved and illegal encodings trap, mtval their 16 bits */
    .irp bad, 0x0000, 0x0004, 0x6101, 0x6081, 0x4002, 0x8002, 0x1086, 0x9085, 0x9c85, 0x6000, 0x2000
    li      s10, 0
    .hword  \bad
    expect  s10, 2
    expect  s11, \bad
    .endr

    check 19                    /* code rewritten: the store drops the decoded instruction */
    jal     ra, patch           /* run once, so that it is decoded */
    expect  a0, 1
    la      t0, patch
    li      t1, 0x4515          /* c.li a0, 5 */
    sh      t1, 0(t0)
    fence.i
    jal     ra, patch
    expect  a0, 5
    c.j     15f
patch:
    c.li    a0, 1
    c.jr    ra
15:
    check 20                    /* a 32-bit instruction across a 64-byte line: rewriting its */
    li      a1, 0               /* second half, in the next line, drops it too (no fence.i: */
    jal     zero, 14f           /* the model drops decodes on stores, docs/iss.md) */
    .balign 64
    .skip 62
straddle:
    .option norvc
    addi    a1, a1, 1           /* 0x00158593 */
    .option rvc
    c.jr    ra
14: jal     ra, straddle
    expect  a1, 1
    la      t0, straddle
    li      t1, 0x0645          /* upper half: addi a1, a1, 100 */
    sh      t1, 2(t0)
    jal     ra, straddle
    expect  a1, 101

    li      t0, 1               /* pass */
    report_tohost t0

fail:
    slli    t0, gp, 1
    ori     t0, t0, 1
    report_tohost t0

/* Records mcause in s10, mtval in s11, steps over the 16-bit instruction that trapped. */
    .balign 4
trap:
    csrr    s10, mcause
    csrr    s11, mtval
    csrr    t5, mepc
    addi    t5, t5, 2
    csrw    mepc, t5
    mret

    tohost_section

    .data
    .balign 16
buffer: .skip 128
stack:  .skip 1024
stack_top:
