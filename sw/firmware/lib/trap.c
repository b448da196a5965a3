/* The default trap handler: a trap nobody expected is a firmware fault. It prints the cause,
 * the faulting pc and mtval on the console and ends the program with a code that says which
 * trap it was (spu.h). */
#include "spu.h"

static const char* cause_name(uint32_t mcause) {
    static const char* const exceptions[] = {"instruction address misaligned",
                                             "instruction access fault",
                                             "illegal instruction",
                                             "breakpoint",
                                             "load address misaligned",
                                             "load access fault",
                                             "store address misaligned",
                                             "store access fault",
                                             "environment call from U-mode",
                                             "environment call from S-mode",
                                             "reserved",
                                             "environment call from M-mode",
                                             "instruction page fault",
                                             "load page fault",
                                             "reserved",
                                             "store page fault"};
    static const char* const interrupts[] = {
        "reserved", "supervisor software interrupt", "reserved", "machine software interrupt",
        "reserved", "supervisor timer interrupt",    "reserved", "machine timer interrupt",
        "reserved", "supervisor external interrupt", "reserved", "machine external interrupt"};
    uint32_t code = mcause & 0x7fffffffu;
    if (mcause & 0x80000000u)
        return code < sizeof interrupts / sizeof *interrupts ? interrupts[code] : "interrupt";
    return code < sizeof exceptions / sizeof *exceptions ? exceptions[code] : "exception";
}

__attribute__((weak)) uint32_t spu_trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval) {
    /* Straight to the device: the fault may have come from inside stdio. */
    spu_write("trap: ");
    spu_write(cause_name(mcause));
    const uint32_t words[] = {mcause, mepc, mtval};
    static const char* const names[] = {" (mcause=0x", " mepc=0x", " mtval=0x"};
    for (unsigned i = 0; i < 3; ++i) {
        spu_write(names[i]);
        spu_write_uint(words[i], 16, 8);
    }
    spu_write(")\n");
    int interrupt = (mcause & 0x80000000u) != 0;
    spu_exit((interrupt ? SPU_TRAP_EXIT_INTERRUPT : SPU_TRAP_EXIT_EXCEPTION) +
             (int)(mcause & 0x1fu));
}
