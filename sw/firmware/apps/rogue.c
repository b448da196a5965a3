/* A malicious (or broken) test SSD App (Willow Section 3.1 "Code and Data Protection"): its
 * handlers reach outside their segments, execute a privileged instruction or never finish, so
 * SPU-OS must stop it, disable it and report it, and serve the other apps on. Function 0 is a
 * well-behaved service other apps may call (composition); function 1 faults. Handler 5 checks
 * the registers SPU-OS hands back from a system call. */
#include "spu_app.h"

static volatile uint32_t sink;

/* 0: behaves: 42. */
static void fine(const struct spu_rpc_header* h) {
    (void)h;
    rpc_send_response(42);
}
/* 1: stores into SPU-OS's data (store access fault). */
static void poke(const struct spu_rpc_header* h) {
    (void)h;
    *(volatile uint32_t*)0x10010 = 0xbad;
    rpc_send_response(0);
}
/* 2: jumps into SPU-OS's code (instruction access fault). */
static void jump(const struct spu_rpc_header* h) {
    (void)h;
    ((void (*)(void))0x100)();
}
/* 3: never returns (the watchdog). */
static void spin(const struct spu_rpc_header* h) {
    (void)h;
    for (;;) ++sink;
}
/* 4: takes over the trap vector (illegal instruction in user mode). */
static void privileged(const struct spu_rpc_header* h) {
    (void)h;
    __asm__ volatile("csrw mtvec, zero");
}

/* regs_after(n, out): every register but x0 and a0 set to 0xC0DE00 + its number, system call
 * n, then x1..x31 as they came back into out[1..31] (tp, which the call keeps, holds out). */
void regs_after(uint32_t n, uint32_t* out);
__asm__(
    ".text\n"
    "regs_after:\n"
    "addi sp, sp, -64\n"
    "sw ra, 0(sp)\n sw s0, 4(sp)\n sw s1, 8(sp)\n sw s2, 12(sp)\n sw s3, 16(sp)\n"
    "sw s4, 20(sp)\n sw s5, 24(sp)\n sw s6, 28(sp)\n sw s7, 32(sp)\n sw s8, 36(sp)\n"
    "sw s9, 40(sp)\n sw s10, 44(sp)\n sw s11, 48(sp)\n sw tp, 52(sp)\n sw gp, 56(sp)\n"
    "mv tp, a1\n mv a7, a0\n"
    ".irp r, 1,3,5,6,7,8,9,11,12,13,14,15,16,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "li x\\r, 0xC0DE00 + \\r\n"
    ".endr\n"
    "ecall\n"
    ".irp r, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,"
    "30,31\n"
    "sw x\\r, 4 * \\r(tp)\n"
    ".endr\n"
    "lw ra, 0(sp)\n lw s0, 4(sp)\n lw s1, 8(sp)\n lw s2, 12(sp)\n lw s3, 16(sp)\n"
    "lw s4, 20(sp)\n lw s5, 24(sp)\n lw s6, 28(sp)\n lw s7, 32(sp)\n lw s8, 36(sp)\n"
    "lw s9, 40(sp)\n lw s10, 44(sp)\n lw s11, 48(sp)\n lw tp, 52(sp)\n lw gp, 56(sp)\n"
    "addi sp, sp, 64\n"
    "ret\n");

/* The registers that broke the system-call contract (spu_os_abi.h) after call n: bit r for xr.
 * A quick call keeps ra, sp, gp, tp and s0-s11 and gives a1-a7 and t0-t6 back zero; a switching
 * one keeps them all. */
static uint32_t broken_after(uint32_t n, int quick) {
    static uint32_t out[32];
    regs_after(n, out);
    uint32_t bad = 0;
    for (uint32_t r = 1; r < 32; ++r) {
        const int callee_keeps = r <= 4 || (r >= 8 && r <= 9) || (r >= 18 && r <= 27);
        const int fixed = r == 2 || r == 4 || r == 10 || (r == 17 && !quick);
        if (fixed) continue; /* sp, tp (the buffer), a0 (the result), a7 (the number) */
        const uint32_t want = quick && !callee_keeps ? 0 : 0xC0DE00 + r;
        if (out[r] != want) bad |= 1u << r;
    }
    return bad;
}
/* 5: SPU-OS's register contract: 0 when kept, else the broken registers' bits (bit 0 set: after
 * the switching call). */
static void registers(const struct spu_rpc_header* h) {
    (void)h;
    uint32_t bad = broken_after(SPU_SYS_PUTS, 1);
    if (!bad && (bad = broken_after(SPU_SYS_WAIT_RESPONSE, 0))) bad |= 1;
    rpc_send_response(bad);
}

static uint32_t twice(uint32_t x) { return 2 * x; }
static uint32_t peek(uint32_t x) { return *(volatile uint32_t*)x; }

SPU_APP(SPU_HANDLERS(fine, poke, jump, spin, privileged, registers), SPU_FUNCTIONS(twice, peek));
