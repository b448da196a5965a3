/* The RPCs of the count_records SSD App (count_records.c), shared with its host program
 * (../count_client). Records are 16 bytes; the host stores them in the region of each SPU's
 * store the kernel granted its process, and the app filters them near the data. */
#ifndef COUNT_RECORDS_ABI_H
#define COUNT_RECORDS_ABI_H

#include <stdint.h>

struct record {
    uint32_t key, value, sequence, reserved;
};

/* Handlers (RPC ID = app << 8 | handler). */
#define CR_STORE 0    /* struct cr_store + records: writes them at `address` of the store */
#define CR_COUNT 1    /* struct cr_count -> the number of records whose key is `key` */
#define CR_CHECKSUM 2 /* struct cr_checksum -> the CRC-32 of the bytes, from the ring's CRC unit \
                       */

struct cr_store {
    uint32_t address; /* then the records, to the end of the payload */
};
struct cr_count {
    uint32_t address, records, key;
};
struct cr_checksum {
    uint32_t address, bytes, crc_node; /* the CRC unit's ring node */
};

/* Results: a count or a CRC, or (CR_STORE, CR_COUNT) SPU-OS's error code of the failed NVM call
 * with this bit set. */
#define CR_ERROR 0x80000000u

#endif
