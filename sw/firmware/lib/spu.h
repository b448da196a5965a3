/* The SPU firmware support library: console output, exit, time and the default trap handler.
 * printf, puts and putchar of picolibc's stdio go to the console device; returning from main
 * or calling exit() ends the program through the exit device. Device addresses come from
 * models/cpu/spu_map.h, the one description of the SPU memory map. */
#ifndef CANOPY_SPU_H
#define CANOPY_SPU_H

#include <stdint.h>

#include "spu_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of the default trap handler: SPU_TRAP_EXIT_EXCEPTION + mcause for an exception
 * (130 for an illegal instruction, 133 for a load access fault), SPU_TRAP_EXIT_INTERRUPT + the
 * interrupt number for an interrupt nobody handles. */
#define SPU_TRAP_EXIT_EXCEPTION 128
#define SPU_TRAP_EXIT_INTERRUPT 160

/* One byte to the console; a '\n' ends the line. */
void spu_putc(char c);
/* A string without adding a newline. */
void spu_write(const char* s);
/* v in base 10 or 16 (lower case, no prefix, zero-padded to min_digits), without printf's
 * 2 KiB of code (SPU-OS shares IMEM with the FTL and the apps). */
void spu_write_uint(uint32_t v, unsigned base, unsigned min_digits);
/* Ends the program with `code` (the exit device). Does not return. */
__attribute__((noreturn)) void spu_exit(int code);

/* The CLINT's mtime (microseconds, SPU_MTIME_HZ) and the hart's cycle and retired-instruction
 * counters. */
uint64_t spu_mtime(void);
/* The timer interrupt (mip.MTIP) becomes pending once mtime reaches `at` (mtimecmp). */
void spu_set_timer(uint64_t at);
uint64_t spu_cycles(void);
uint64_t spu_instret(void);

/* Called by the trap entry with the trap's CSRs; returns the pc to resume at. The default one
 * prints "trap: mcause=... mepc=... mtval=..." with the cause's name on the console and exits
 * with the code above; firmware that handles traps defines its own. */
uint32_t spu_trap_handler(uint32_t mcause, uint32_t mepc, uint32_t mtval);

#ifdef __cplusplus
}
#endif

#endif
