/* SPU-OS's permission table for the non-volatile storage (Willow Section 3.1 "Non-volatile
 * storage protection"): extents (start, length, read/write rights) per host process (the high
 * bits of the originating HRE), kept as one splay tree per process to keep checks short, in a
 * fixed pool of PERM_ENTRIES entries; when the pool is full an entry is evicted (clock order),
 * and an access it would have allowed becomes a permission miss the host kernel resolves. */
#ifndef SPU_OS_PERM_H
#define SPU_OS_PERM_H

#include <stdint.h>

#define PERM_ENTRIES 768 /* Willow 3.2: 768 entries */
#define PERM_PROCESSES 64

void perm_init(void);
/* Adds (or, for the same process and start, replaces) an extent. 0 or an SPU_OS_E_* code. */
uint32_t perm_add(uint32_t process, uint32_t start, uint32_t length, uint32_t rights);
/* Removes the extent starting at `start`; 0 or SPU_OS_E_BAD_ARG when there is none. */
uint32_t perm_remove(uint32_t process, uint32_t start);
/* Whether one extent of `process` covers [addr, addr + n) with all of `rights` (n > 0). */
int perm_check(uint32_t process, uint32_t addr, uint32_t n, uint32_t rights);

uint32_t perm_entries(void);
uint32_t perm_evictions(void);

#endif
