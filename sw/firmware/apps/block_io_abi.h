/* The RPCs of the block I/O SSD Apps (Willow Section 4.1 "Base-IO", 4.2 "Direct-IO"): Base-IO,
 * the block device the host kernel's file system stores on, and Direct-IO, the same transfers
 * offered to user processes through their own HREs (OS bypass) and checked by SPU-OS's
 * permission table. Both are built from apps/block_io.c; they differ in who may call them:
 * Base-IO answers only the host kernel's HREs (high bits 0), Direct-IO anyone, since SPU-OS
 * checks every NVM transfer against the originating process's permissions. Addresses are SSD
 * memory addresses (bank i, SPU i's, at i x bank size). Striping: device offset o lives on SPU
 * (o / STRIPE) % spus at row o / (STRIPE x spus) of its bank, so a contiguous device range is
 * contiguous in every bank it touches (one permission entry per SPU). Plain C with fixed-width
 * fields, included by the rv32 apps and by the host library (sw/host/block_io). */
#ifndef CANOPY_BLOCK_IO_ABI_H
#define CANOPY_BLOCK_IO_ABI_H

#include <stdint.h>

#define BLOCK_IO_STRIPE_BYTES 0x2000u /* 8 KiB striping across SPUs [Willow 4.1] */
#define BLOCK_IO_MAX_BYTES 0x2000u    /* the most one READ or WRITE moves: one stripe unit */

/* Handlers (RPC ID = app << 8 | handler). */
/* READ {addr, bytes, cookie} -> a DATA request to the originating HRE, then the response:
 * BLOCK_IO_OK once the host took the data. */
#define BLOCK_IO_READ 0
/* WRITE {addr, bytes} + bytes of data -> stored; the response. With BLOCK_IO_FUA set in the
 * bytes word (where NVMe's Write has its FUA bit, beside the length) the data is on the flash
 * before the response, whatever the store's write cache holds besides (SPU_SYS_NVM_FLUSH of the
 * range). */
#define BLOCK_IO_WRITE 1
#define BLOCK_IO_FUA 0x40000000u
/* TRIM {addr, bytes} (struct block_io_write_args, no data; bytes > 0, any length within the
 * store): the store forgets the whole mapping units inside the range (the NVMe Deallocate and
 * ATA TRIM a host's discard becomes). On the flash they read as erased (0xFF bytes) from then
 * on, across power loss; the partial units at either end keep their data; the SSD-memory store
 * has no map and keeps everything. Needs write rights on the range. */
#define BLOCK_IO_TRIM 2

/* The request a READ sends to its originating HRE (through the READ's sender, the bridge),
 * payload struct block_io_data + bytes. The host answers it 0 once it has the data (any other
 * answer becomes the READ's result). A READ whose transfer is refused sends no DATA at all: the
 * open request is aborted and the READ answers the error. */
#define BLOCK_IO_DATA 0x80

struct block_io_read_args {
    uint32_t addr, bytes, cookie;
};
struct block_io_write_args {
    uint32_t addr, bytes;
};
struct block_io_data {
    uint32_t cookie, addr, bytes;
};

/* Append (Willow Section 4.6 "File system offload"; the Direct-IO build only): a process appends
 * to a file from user space and the SPU updates the file's size in its inode. The host kernel
 * opens the file for appending on the SPU that holds the inode (APPEND_OPEN: where the size lies,
 * the file's extents and the striping), after granting the process write rights on the 8 bytes
 * of the size. Each APPEND {handle, bytes} + data takes the next `bytes` of the file (so
 * concurrent appenders never overlap), writes them where the file's blocks lie (here, or by a
 * WRITE to the SPU that holds them, all at once), and once no append of the file is under way
 * writes the new size into the inode: a size never covers data not yet written. APPEND_CLOSE
 * ends it; the kernel then reads the inode back. */
#define BLOCK_IO_APPEND_OPEN 3  /* struct block_io_append_open (kernel HREs only) */
#define BLOCK_IO_APPEND 4       /* struct block_io_append_args + bytes of data */
#define BLOCK_IO_APPEND_CLOSE 5 /* {handle} (kernel HREs only) */
#define BLOCK_IO_APPEND_FILES 4u
#define BLOCK_IO_APPEND_EXTENTS 8u
#define BLOCK_IO_BLOCK_BYTES 4096u /* extents count file-system blocks */

struct block_io_extent {
    uint32_t file_offset, start_block, bytes;
};
struct block_io_append_open {
    uint32_t handle;
    uint32_t size_addr;              /* NVM address, on this SPU, of the inode's 64-bit size */
    uint32_t size, capacity;         /* the file's bytes now; the bytes its extents hold */
    uint32_t node, spus, bank_bytes; /* this SPU's ring node; the striping */
    uint32_t extents;
    struct block_io_extent extent[BLOCK_IO_APPEND_EXTENTS];
};
struct block_io_append_args {
    uint32_t handle, bytes;
};

/* Results besides SPU-OS's (SPU_OS_E_PERMISSION for a transfer the table does not allow,
 * SPU_OS_E_KERNEL_ONLY for Base-IO called by a user HRE, SPU_OS_E_DROPPED when the host had
 * no room for the data). */
#define BLOCK_IO_OK 0u
/* BLOCK_IO_E_LENGTH: 0 bytes, more than BLOCK_IO_MAX_BYTES, or a payload of another length. */
#define BLOCK_IO_E_LENGTH 0x200u
#define BLOCK_IO_E_FULL 0x201u   /* APPEND: the file's blocks have no room for it */
#define BLOCK_IO_E_HANDLE 0x202u /* APPEND, APPEND_CLOSE: no file open so; APPEND_OPEN: no room */

#endif
