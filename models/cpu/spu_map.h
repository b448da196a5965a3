/* The memory map of a storage processing unit (Willow's SPU: 32 KiB instruction memory, 32 KiB
 * data memory, devices above), declared once as data for the model, the firmware and the docs.
 * Plain C so that both the C++ models and the rv32 firmware include it. The CLINT offsets are
 * SiFive's, which debuggers and the RISC-V tests know. */
#ifndef CANOPY_SPU_MAP_H
#define CANOPY_SPU_MAP_H

#define SPU_IMEM_BASE 0x00000000u
#define SPU_IMEM_SIZE 0x00010000u /* 64 KiB (Willow: 32 KiB; ours also holds the FTL and 6 app slots) */
#define SPU_DMEM_BASE 0x00010000u
#define SPU_DMEM_SIZE 0x0000C000u /* 48 KiB (Willow: 32 KiB) */

/* Core-local interruptor: software interrupt, timer compare, timer. */
#define SPU_CLINT_BASE 0x02000000u
#define SPU_CLINT_MSIP 0x0000u     /* 32-bit: bit 0 raises the machine software interrupt */
#define SPU_CLINT_MTIMECMP 0x4000u /* 64-bit */
#define SPU_CLINT_MTIME 0xBFF8u    /* 64-bit, counts at SPU_MTIME_HZ */
#define SPU_CLINT_SIZE 0x10000u
#define SPU_MTIME_HZ 1000000u      /* 1 MHz: mtime counts microseconds */

/* Console: each byte written to TX is appended to the core's log line; '\n' ends the line. */
#define SPU_CONSOLE_BASE 0x10000000u
#define SPU_CONSOLE_TX 0x0u
#define SPU_CONSOLE_SIZE 0x100u

/* Exit device: writing code C to EXIT ends the program with exit code C. */
#define SPU_EXIT_BASE 0x10000100u
#define SPU_EXIT_CODE 0x0u
#define SPU_EXIT_SIZE 0x100u

/* Willow SPU devices (models/ssd; their registers are declared as data in the models/ssd register blocks
 * and generated into spu_regs.h): the SPU's control block (identity, segment registers,
 * interrupt status, performance counters), the network interface, the DMA controller and the
 * flash controller. */
#define SPU_CTL_BASE 0x10001000u
#define SPU_NI_BASE 0x10002000u
#define SPU_DMA_BASE 0x10003000u
#define SPU_DEV_SIZE 0x100u
/* The flash controller of the SPU's channel (SPU i drives channel i, when the SSD has NAND). */
#define SPU_FLASH_BASE 0x10004000u
#define SPU_FLASH_SIZE 0x200u

#endif
