/* SPU-OS's way into and out of SSD Apps (Willow Section 3.1 "Code and Data Protection": the
 * trusted dispatch mechanism that sets the segment registers and runs a handler confined to
 * them). spu_os_enter() saves SPU-OS's callee-saved registers and enters the user frame with
 * mret; every trap from user mode lands in spu_os_trap_entry, which saves the app's registers
 * into its frame (mscratch holds the frame's address while an app runs, 0 while SPU-OS runs)
 * and calls spu_os_trap() on SPU-OS's stack. That returns the frame to resume (after a system
 * call, or another app's frame for an inter-app call) or 0, and then spu_os_enter() returns to
 * its caller as if the app had been a function call. Frame layout: x0..x31 (x0 unused), pc.
 * A system call that returns to its caller (not in SPU_OS_SWITCHING_SYSCALLS) takes a quick path:
 * like a function call it keeps only what a callee must keep (the C code keeps s0-s11), so just
 * ra, sp, gp, tp, the arguments and pc are saved, and a1-a7 and t0-t6 go back zero, so that
 * nothing of SPU-OS's reaches the app. */
#include "spu_os_abi.h"

    .equ FRAME_PC, 128
    .equ CAUSE_ECALL_U, 8

/* Into frame a0: mscratch, mepc and the registers every return restores (ra, sp, gp, tp). */
    .macro enter_frame
    csrw    mscratch, a0
    lw      t0, FRAME_PC(a0)
    csrw    mepc, t0
    lw      x1, 4(a0)
    lw      x2, 8(a0)
    lw      x3, 12(a0)
    lw      x4, 16(a0)
    .endm

    .section .text.spu_os_switch, "ax", @progbits

/* void spu_os_enter(struct spu_os_frame* f) */
    .globl spu_os_enter
    .type spu_os_enter, @function
spu_os_enter:
    la      t0, spu_os_kctx
    sw      ra, 0(t0)
    sw      sp, 4(t0)
    sw      gp, 8(t0)
    sw      tp, 12(t0)
    sw      s0, 16(t0)
    sw      s1, 20(t0)
    sw      s2, 24(t0)
    sw      s3, 28(t0)
    sw      s4, 32(t0)
    sw      s5, 36(t0)
    sw      s6, 40(t0)
    sw      s7, 44(t0)
    sw      s8, 48(t0)
    sw      s9, 52(t0)
    sw      s10, 56(t0)
    sw      s11, 60(t0)
    /* a0: the frame to run. */
resume:
    enter_frame
    lw      x5, 20(a0)
    lw      x6, 24(a0)
    lw      x7, 28(a0)
    lw      x8, 32(a0)
    lw      x9, 36(a0)
    lw      x11, 44(a0)
    lw      x12, 48(a0)
    lw      x13, 52(a0)
    lw      x14, 56(a0)
    lw      x15, 60(a0)
    lw      x16, 64(a0)
    lw      x17, 68(a0)
    lw      x18, 72(a0)
    lw      x19, 76(a0)
    lw      x20, 80(a0)
    lw      x21, 84(a0)
    lw      x22, 88(a0)
    lw      x23, 92(a0)
    lw      x24, 96(a0)
    lw      x25, 100(a0)
    lw      x26, 104(a0)
    lw      x27, 108(a0)
    lw      x28, 112(a0)
    lw      x29, 116(a0)
    lw      x30, 120(a0)
    lw      x31, 124(a0)
    lw      x10, 40(a0)
    /* A name for the debugger: `break *spu_os_mret` stops where the app is entered. */
    .globl spu_os_mret
spu_os_mret:
    mret
    .size spu_os_enter, . - spu_os_enter

/* mtvec. */
    .globl spu_os_trap_entry
    .type spu_os_trap_entry, @function
    .p2align 2
spu_os_trap_entry:
    csrrw   t6, mscratch, t6
    beqz    t6, from_machine
    sw      x30, 120(t6)
    csrr    t5, mcause
    addi    t5, t5, -CAUSE_ECALL_U
    bnez    t5, save_all
    li      t5, SPU_OS_SWITCHING_SYSCALLS
    srl     t5, t5, a7
    andi    t5, t5, 1
    bnez    t5, save_all
    /* The quick path: what spu_os_trap reads (a0-a3, a7, pc) and what the C code does not keep. */
    sw      x1, 4(t6)
    sw      x2, 8(t6)
    sw      x3, 12(t6)
    sw      x4, 16(t6)
    sw      x10, 40(t6)
    sw      x11, 44(t6)
    sw      x12, 48(t6)
    sw      x13, 52(t6)
    sw      x17, 68(t6)
    csrr    t5, mepc
    sw      t5, FRAME_PC(t6)
    csrw    mscratch, zero
    la      t5, spu_os_kctx
    lw      sp, 4(t5)
    lw      gp, 8(t5)
    lw      tp, 12(t5)
    mv      a0, t6
    li      a1, CAUSE_ECALL_U
    call    spu_os_trap
    /* a0: the same frame. */
    enter_frame
    li      x5, 0
    li      x6, 0
    li      x7, 0
    li      x11, 0
    li      x12, 0
    li      x13, 0
    li      x14, 0
    li      x15, 0
    li      x16, 0
    li      x17, 0
    li      x28, 0
    li      x29, 0
    li      x30, 0
    li      x31, 0
    lw      x10, 40(a0)
    mret

save_all:
    sw      x1, 4(t6)
    sw      x2, 8(t6)
    sw      x3, 12(t6)
    sw      x4, 16(t6)
    sw      x5, 20(t6)
    sw      x6, 24(t6)
    sw      x7, 28(t6)
    sw      x8, 32(t6)
    sw      x9, 36(t6)
    sw      x10, 40(t6)
    sw      x11, 44(t6)
    sw      x12, 48(t6)
    sw      x13, 52(t6)
    sw      x14, 56(t6)
    sw      x15, 60(t6)
    sw      x16, 64(t6)
    sw      x17, 68(t6)
    sw      x18, 72(t6)
    sw      x19, 76(t6)
    sw      x20, 80(t6)
    sw      x21, 84(t6)
    sw      x22, 88(t6)
    sw      x23, 92(t6)
    sw      x24, 96(t6)
    sw      x25, 100(t6)
    sw      x26, 104(t6)
    sw      x27, 108(t6)
    sw      x28, 112(t6)
    sw      x29, 116(t6)
    csrr    t0, mscratch
    sw      t0, 124(t6)
    csrr    t0, mepc
    sw      t0, FRAME_PC(t6)
    csrw    mscratch, zero
    /* SPU-OS's own sp, gp and tp: the app may have left anything in them. */
    la      t0, spu_os_kctx
    lw      sp, 4(t0)
    lw      gp, 8(t0)
    lw      tp, 12(t0)
    mv      a0, t6
    csrr    a1, mcause
    csrr    a2, mtval
    call    spu_os_trap
    bnez    a0, resume
    /* The handler is over: back to spu_os_enter's caller. */
    la      t0, spu_os_kctx
    lw      ra, 0(t0)
    lw      s0, 16(t0)
    lw      s1, 20(t0)
    lw      s2, 24(t0)
    lw      s3, 28(t0)
    lw      s4, 32(t0)
    lw      s5, 36(t0)
    lw      s6, 40(t0)
    lw      s7, 44(t0)
    lw      s8, 48(t0)
    lw      s9, 52(t0)
    lw      s10, 56(t0)
    lw      s11, 60(t0)
    ret

    /* A trap in SPU-OS itself is a bug: the library's handler reports it and exits. */
from_machine:
    csrrw   t6, mscratch, t6
    j       spu_trap_entry
    .size spu_os_trap_entry, . - spu_os_trap_entry

    .section .bss.spu_os_kctx, "aw", @nobits
    .p2align 2
    .globl spu_os_kctx
spu_os_kctx:
    .space 64
