/* The SPU's non-volatile store, as SPU-OS's NVM system calls reach it (docs/spu_os.md "The
 * store"): until the host attaches the flash it is the SPU's bank of SSD memory (Willow's PCM
 * emulation, Section 3.2); after SPU_OS_RPC_STORE_ATTACH it is the channel's flash behind the
 * FTL (sw/firmware/ftl), with the FTL's tables and page buffers in SSD memory. */
#ifndef SPU_OS_NVM_H
#define SPU_OS_NVM_H

#include <stdint.h>

#include "spu_hw.h"
#include "spu_os_abi.h"

/* STORE_ATTACH with its payload (struct spu_os_store_attach); the response's result. */
uint32_t nvm_attach(void);
/* Moves n bytes between NVM address addr and `other` (DMEM at ptr, or the network interface);
 * the permission check is done; a range outside the store (the SPU's bank of SSD memory, or
 * what the FTL offers) is SPU_OS_E_RANGE. SPU_OS_OK or an SPU_OS_E_* code. */
uint32_t nvm_transfer(uint32_t addr, enum spu_port other, uint32_t ptr, uint32_t n, int to_nvm);
/* Copies n bytes from NVM address src to dst (both checked by the caller); SPU_OS_OK or an
 * SPU_OS_E_* code. */
uint32_t nvm_copy(uint32_t dst, uint32_t src, uint32_t n);
/* SPU_SYS_FC: in-flash computing op `op` (SPU_FC_*) described by *a, moving n bytes between
 * the network interface and the flash, for host process `process`: only the process that
 * allocated an ESP block (or the kernel, process 0) may use it, and XOR only latches that
 * process filled last (else reported, SPU_OS_E_PERMISSION). SPU_OS_OK or an SPU_OS_E_* code. */
uint32_t nvm_fc(uint32_t op, struct spu_fc_cmd* a, uint32_t n, uint32_t process);
/* The FTL's write buffer to the flash (SPU_SYS_NVM_FLUSH, SPU_OS_RPC_STORE_FLUSH): n == 0 all of
 * it; else only the pages holding units of [addr, addr + n) (a FUA write's), SPU_OS_E_RANGE
 * outside the store. SPU_OS_OK at once while the store is SSD memory. */
uint32_t nvm_flush(uint32_t addr, uint32_t n);
/* Unmaps the store's whole units inside [addr, addr + n) (the permission check is done; the
 * SSD-memory store has no map and keeps its bytes); outside the store SPU_OS_E_RANGE. */
uint32_t nvm_trim(uint32_t addr, uint32_t n);
/* 1 when the last transfer waited for the flash (SPU-OS then restarts the handler's watchdog). */
int nvm_waited(void);
/* A SPU_OS_STAT_STORE_* statistic into *value; 0 when `which` is not one. */
int nvm_stat(uint32_t which, uint32_t* value);

#endif
