/* SPU-OS's interface to SSD Apps and to the host (Willow Section 3.1 "Building an SSD App",
 * "RPC interface", "Protection and sharing"): the memory layout the host kernel allocates app
 * slots from, the system calls an app makes (ecall), the kernel-only RPCs of the built-in
 * kernel app (app 0) the host driver sends, the RPCs SPU-OS sends to the host kernel, and the
 * result codes. Plain C with fixed-width fields only, so that the rv32 firmware and the
 * 64-bit C++ host driver include the same file. docs/spu_os.md explains each item. */
#ifndef CANOPY_SPU_OS_ABI_H
#define CANOPY_SPU_OS_ABI_H

#define SPU_OS_ABI_VERSION 2u /* 2: system calls return a1-a7 and t0-t6 zero (see below) */

/* --- System calls: ecall with the number in a7, arguments in a0..a3, result in a0 -------- *
 * A system call is a function call (the RISC-V calling convention, ra kept too): it keeps ra, sp,
 * gp, tp and s0-s11, and a1-a7 and t0-t6 come back zero, except from the calls in
 * SPU_OS_SWITCHING_SYSCALLS, which keep every register (switch.S includes this part). */
#define SPU_SYS_DONE 0           /* the handler is finished (its return lands here) */
#define SPU_SYS_RECEIVE 1        /* RPCReceiveBytes(ptr, n): next n payload bytes -> app data */
#define SPU_SYS_RESPOND 2        /* RPCCreateResponse + RPCSendResponse(result) */
#define SPU_SYS_START_REQUEST 3  /* RPCStartRequest(node, dst_hre, rpc_id, length) */
#define SPU_SYS_APPEND 4         /* RPCAppendRequest(ptr, n): app data -> open request */
#define SPU_SYS_FINISH 5         /* RPCFinishRequest() */
#define SPU_SYS_NVM_READ 6       /* (nvm_addr, ptr, n): SSD memory -> app data; n = 0: the \
                                  * rights check alone (as for 7-9) */
#define SPU_SYS_NVM_WRITE 7      /* (nvm_addr, ptr, n): app data -> SSD memory */
#define SPU_SYS_NVM_TO_REQUEST 8 /* (nvm_addr, n): SSD memory -> open request (bulk read) */
#define SPU_SYS_RECEIVE_TO_NVM 9 /* (nvm_addr, n): payload -> SSD memory (bulk write) */
#define SPU_SYS_PUTS 10          /* (ptr, n): console */
#define SPU_SYS_WAIT_RESPONSE                                                          \
    11 /* (): waits for the responses to every request finished since the last wait (one: a \
        * synchronous RPC; up to SPU_OS_MAX_AWAITED: a fan-out); SPU_OS_OK when all were,  \
        * else the first other response to arrive. Other RPCs run meanwhile, and the rest  \
        * of this request's payload is dropped */
#define SPU_OS_MAX_AWAITED 8u /* FINISH beyond it, before a wait: SPU_OS_E_STATE */
#define SPU_SYS_CALL 12 /* (app_id, function, arg): inter-app call; returns its a0 */
#define SPU_SYS_FC 13   /* (SPU_FC_* op, struct spu_fc_cmd*, bytes): in-flash computing */
#define SPU_SYS_NVM_COPY 14 /* (dst, src, n): NVM -> NVM (read rights on src, write on dst) */
#define SPU_SYS_NVM_FLUSH 15 /* (nvm_addr, n): the store's write buffer to the flash: what the \
                                store has acknowledged (of the range; n = 0: of everything) \
                                survives power loss (docs/spu_os.md "The store") */
#define SPU_SYS_NVM_TRIM 16 /* (nvm_addr, n): the store forgets the whole units in the range \
                               (write rights; docs/spu_os.md "The store") */
#define SPU_SYS_COUNT 17
/* Calls that may run other handlers before they return: for them (and for faults) the trap
 * entry saves every register; for the others only what a callee keeps (switch.S). */
#define SPU_OS_SWITCHING_SYSCALLS \
    ((1 << SPU_SYS_DONE) | (1 << SPU_SYS_WAIT_RESPONSE) | (1 << SPU_SYS_CALL))

#ifndef __ASSEMBLER__ /* the rest is C */
#include <stdint.h>

/* --- Memory layout (one source: the firmware's CMake parses these lines) ------------------
 * IMEM: SPU-OS code at 0, then SPU_OS_SLOTS app code slots. DMEM: SPU-OS data (with the
 * permission table) and stack, then the app data slots. The host kernel allocates slots
 * statically [Willow 3.1]: an app is linked for one slot (sw/firmware/apps/app.ld.in). */
#define SPU_OS_IMEM_SIZE 0x8800u      /* SPU-OS code (with the FTL) and read-only data: 34 KiB */
#define SPU_OS_DMEM_SIZE 0x6000u      /* SPU-OS data, permission table and stack: 24 KiB */
#define SPU_OS_STACK_SIZE 0x800u      /* of which the stack: 2 KiB */
#define SPU_OS_SLOTS 6u               /* app slots */
#define SPU_OS_CODE_SLOT_BASE 0x8800u /* slot k's code: BASE + k * SIZE */
#define SPU_OS_CODE_SLOT_SIZE 0x1400u /* 5 KiB */
#define SPU_OS_DATA_SLOT_BASE 0x16000u
#define SPU_OS_DATA_SLOT_SIZE 0x1000u /* 4 KiB: data, bss, stack, request header */
/* Up to SPU_OS_LANES handlers of one app may be under way at once (one running, the others
 * waiting for the response to a synchronous RPC). Each lane has a request header (struct
 * spu_rpc_header, written by SPU-OS at dispatch) at the top of the data slot, lane l's at
 * top - 32 (l + 1), and a stack below the headers, lane l's from top - HEADER_AREA - l *
 * LANE_STACK down. */
#define SPU_OS_LANES 2u
#define SPU_OS_HEADER_AREA 0x40u
#define SPU_OS_LANE_STACK 0x200u
#define SPU_OS_APP_STACK_SIZE 0x400u /* all lanes' stacks, reserved by the app linker script */

/* --- Identities ------------------------------------------------------------------------- */
/* HRE IDs whose bits above the low 10 are zero are the host kernel's; the high bits name the
 * process [Willow 3.1 "Tracking responsibility", models/ssd/ring_message.hpp]. */
#define SPU_OS_HRE_INDEX_BITS 10u
#define SPU_OS_PROCESS(hre) ((uint32_t)(hre) >> SPU_OS_HRE_INDEX_BITS)
#define SPU_OS_RPC_ID(app, handler) ((uint16_t)(((app) << 8) | (handler)))
#define SPU_OS_KERNEL_APP 0u /* app 0: SPU-OS's own kernel RPCs */
#define SPU_OS_MAX_HANDLERS 16u

/* --- Result codes (responses and system call returns) ------------------------------------
 * 0 is success. SPU-OS's own codes are 0x100..0x1ff; apps define theirs outside that range.
 * A request the receiver dropped for want of room comes back as SPU_OS_E_DROPPED (the ring's
 * NACK is a flag of its own, so it takes no result value). */
#define SPU_OS_OK 0u
#define SPU_OS_E_NO_APP 0x101u      /* no active app with that id */
#define SPU_OS_E_NO_HANDLER 0x102u  /* the app has no such handler */
#define SPU_OS_E_KERNEL_ONLY 0x103u /* a kernel-only RPC from a user HRE */
#define SPU_OS_E_APP_FAULT 0x104u   /* the handler faulted; the app is now disabled */
#define SPU_OS_E_DISABLED 0x105u    /* the app faulted earlier and is disabled */
#define SPU_OS_E_NO_RESPONSE 0x106u /* the handler returned without responding */
#define SPU_OS_E_BAD_POINTER 0x107u /* a buffer outside the app's data segment */
#define SPU_OS_E_PERMISSION 0x108u  /* no permission table entry allows the NVM access */
#define SPU_OS_E_BAD_ARG 0x109u     /* malformed arguments or payload */
#define SPU_OS_E_STATE 0x10au       /* not now: responded twice, slot busy, no request open */
#define SPU_OS_E_NETWORK 0x10bu     /* the network interface refused the command */
#define SPU_OS_E_DMA 0x10cu         /* the DMA controller reported an error */
#define SPU_OS_E_NO_CALL 0x10du     /* inter-app call not allowed by the call table */
#define SPU_OS_E_UNKNOWN_SYSCALL 0x10eu
#define SPU_OS_E_DROPPED 0x10fu /* the receiver had no room: the request was dropped (NACK) */
#define SPU_OS_E_RANGE 0x110u   /* an NVM range outside the store */
#define SPU_OS_E_MEDIA 0x111u   /* the flash could not return the data (uncorrectable) */
#define SPU_OS_E_IO 0x112u      /* the flash failed otherwise (no free block, refused command) */
#define SPU_OS_E_TIMEOUT 0x113u /* WAIT_RESPONSE: no response within SPU_OS_WAIT_TIMEOUT_US */

/* A handler suspended in WAIT_RESPONSE resumes with SPU_OS_E_TIMEOUT when no response came
 * within this time (assumed: Willow gives none); a later response is dropped. */
#define SPU_OS_WAIT_TIMEOUT_US 100000u

/* --- Kernel RPCs: app 0, handler below; all but PING need an origin HRE of the kernel ------
 * Payloads are little-endian uint32_t words. */
#define SPU_OS_RPC_PING 0x00         /* -> SPU_OS_ABI_VERSION (anyone may ask) */
#define SPU_OS_RPC_INSTALL_CODE 0x01 /* {slot, offset, bytes...} into the slot's IMEM */
#define SPU_OS_RPC_INSTALL_DATA 0x02 /* {slot, offset, bytes...} into the slot's DMEM */
#define SPU_OS_RPC_ACTIVATE 0x03     /* {app_id, slot}: reads the entry table at the slot */
#define SPU_OS_RPC_REMOVE 0x04       /* {app_id}: frees its slot (and zeroes its data) */
#define SPU_OS_RPC_PERM_ADD 0x05     /* {process, start, length, rights} x n */
#define SPU_OS_RPC_PERM_REMOVE 0x06  /* {process, start} x n */
#define SPU_OS_RPC_STAT 0x07         /* {which}: -> the statistic (SPU_OS_STAT_*) */
#define SPU_OS_RPC_CALL_ALLOW 0x08   /* {caller app, callee app, function mask} */
#define SPU_OS_RPC_STORE_ATTACH 0x09 /* struct spu_os_store_attach: the store on the flash */
#define SPU_OS_RPC_STORE_FLUSH 0x0A  /* the store's write buffer to the flash (SPU_SYS_NVM_FLUSH) */
#define SPU_OS_RPC_APP_REGION 0x0B   /* {app_id, start, length}: the app's own region (0: none) */

#define SPU_OS_PERM_READ 1u
#define SPU_OS_PERM_WRITE 2u

#define SPU_OS_STAT_PERM_CHECK_MAX 0  /* cycles of the slowest permission check */
#define SPU_OS_STAT_PERM_CHECK_LAST 1 /* cycles of the last permission check */
#define SPU_OS_STAT_PERM_ENTRIES 2    /* entries in the table */
#define SPU_OS_STAT_PERM_EVICTIONS 3  /* entries evicted for room */
#define SPU_OS_STAT_DISPATCHED 4      /* requests dispatched to apps */
#define SPU_OS_STAT_FAULTS 5          /* app faults */
#define SPU_OS_STAT_NOTIFY_DROPPED 6  /* notifications to the kernel that could not be sent */
#define SPU_OS_STAT_DISPATCH_CYCLES 7 /* cycles from reading a header to entering the handler */
#define SPU_OS_STAT_SUSPENDED 8       /* handlers suspended waiting for a response */
#define SPU_OS_STAT_PERM_CHECK_INSNS_MAX 9   /* instructions of the longest permission check */
#define SPU_OS_STAT_PERM_CHECK_INSNS_LAST 10 /* instructions of the last permission check */
#define SPU_OS_STAT_WAIT_TIMEOUTS 11         /* suspended handlers resumed by the timeout */
#define SPU_OS_STAT_DENIED 12                /* refusals reported by NOTIFY_DENIED */
/* The store on the flash (after STORE_ATTACH; 0 while the store is SSD memory). Counts are the
 * low 32 bits of the FTL's (sw/firmware/ftl/ftl.h struct ftl_stats). */
#define SPU_OS_STAT_STORE_UNITS 32         /* logical units (mapping units) the FTL offers */
#define SPU_OS_STAT_STORE_UNIT_BYTES 33    /* bytes per logical unit */
#define SPU_OS_STAT_STORE_HOST_WRITES 34   /* units written for NVM writes */
#define SPU_OS_STAT_STORE_HOST_READS 35    /* unit reads for NVM reads */
#define SPU_OS_STAT_STORE_PROGRAMS 36      /* pages programmed (host, GC, records, padding) */
#define SPU_OS_STAT_STORE_GC_COPIES 37     /* valid units moved by GC and wear levelling */
#define SPU_OS_STAT_STORE_GC_VICTIMS 38    /* blocks reclaimed by GC */
#define SPU_OS_STAT_STORE_ERASES 39        /* blocks erased */
#define SPU_OS_STAT_STORE_FREE_BLOCKS 40   /* free blocks now */
#define SPU_OS_STAT_STORE_BAD_BLOCKS 41    /* blocks retired */
#define SPU_OS_STAT_STORE_TABLE_MISSES 42  /* FTL table lines fetched from SSD memory */
#define SPU_OS_STAT_STORE_FLASH_WAIT_US 43 /* time SPU-OS waited for the flash */
#define SPU_OS_STAT_STORE_UNITS_PER_PAGE 44 /* logical units a page holds */
#define SPU_OS_STAT_STORE_BUFFER_HITS 45    /* unit writes replacing one still in the buffer */
#define SPU_OS_STAT_STORE_PADDED_UNITS 46   /* page slots programmed empty (flushes, GC rounds) */
#define SPU_OS_STAT_STORE_FLUSHES 47        /* write buffer flushes (asked for, or after each \
                                               write when write-through) */
#define SPU_OS_STAT_STORE_BUFFERED_UNITS 48 /* units in the write buffer now, not programmed */
#define SPU_OS_STAT_STORE_TRIM_RECORDS 49   /* TRIM records written (a unit each) */
#define SPU_OS_STAT_STORE_SYNCS 50          /* flushes of a range (FUA writes; SPU_SYS_NVM_FLUSH) */

/* --- RPCs SPU-OS sends to the host kernel (bridge node, dst_hre 0), app 0 ---------------- */
#define SPU_OS_RPC_NOTIFY_FAULT 0x10     /* struct spu_os_fault_notice */
#define SPU_OS_RPC_NOTIFY_PERM_MISS 0x11 /* struct spu_os_perm_miss_notice */
#define SPU_OS_RPC_NOTIFY_DENIED 0x12    /* struct spu_os_denied_notice */

/* What NOTIFY_DENIED reports an app tried (docs/spu_os.md "Protection"): a request under
 * another app's id (a = dst node, b = rpc_id); SPU_SYS_FC on another process's ESP block or
 * latches (a = op, b = die << 24 | plane << 16 | block); an NVM transfer outside the store (a =
 * addr, b = bytes). */
#define SPU_OS_DENIED_RPC_ID 1
#define SPU_OS_DENIED_ESP 2
#define SPU_OS_DENIED_RANGE 3

/* STORE_ATTACH: puts the SPU's store on its channel's flash behind the FTL (docs/spu_os.md
 * "The store"). SPU n's NVM address n x bank_bytes + x is logical byte x; the FTL keeps its
 * tables, its write buffer (a page per write frontier) and two page buffers at the start of SSD
 * memory bank n (from n x bank_bytes), which the store no longer needs. Answers SPU_OS_OK,
 * SPU_OS_E_BAD_ARG (a configuration the FTL refuses, a bank too small for the tables, or RESUME
 * without a saved state of this configuration), SPU_OS_E_STATE (attached already) or
 * SPU_OS_E_IO / SPU_OS_E_MEDIA (the flash failed during format or mount).
 * `format` says how the FTL starts: MOUNT rebuilds its tables from the flash (after a power
 * loss); FORMAT erases every block and starts empty; RESUME carries on from the tables and the
 * state ftl_save recorded at the bank's start, reading nothing from the flash (what
 * --precondition leaves there, docs/storage.md). */
#define SPU_OS_STORE_MOUNT 0
#define SPU_OS_STORE_FORMAT 1
#define SPU_OS_STORE_RESUME 2
struct spu_os_store_attach {
    uint32_t format;           /* SPU_OS_STORE_MOUNT, _FORMAT or _RESUME */
    uint32_t bank_bytes;       /* NVM and SSD-memory bytes per SPU */
    uint32_t blocks_per_plane; /* the FTL's blocks in every plane, from block 0 */
    uint32_t op_permille, gc_free_blocks, wl_threshold, esp_blocks;
    uint32_t cell_mode;   /* FLASH_CTL_COMMAND_MODE_* of data pages */
    uint32_t unit_bytes;  /* the FTL's mapping unit (0: a page); its page's slot tags must fit
                             the controller's metadata (4 + 4 x units per page bytes) */
    uint32_t write_cache; /* 1: writes acknowledged in the write buffer, durable at a flush or
                             when their page fills; 0: write-through */
    uint32_t gc_policy;   /* FTL_GC_GREEDY (0) or FTL_GC_COST_BENEFIT (1), | FTL_GC_PACED (2) */
};

/* SPU_SYS_FC: in-flash computing on the store's ESP region (Flash-Cosmos Sections 4-6;
 * docs/spu_os.md "In-flash computing"). Needs the store on the flash with esp_blocks > 0
 * (else SPU_OS_E_STATE); every block named must be one the app holds from SPU_FC_ALLOC
 * (else SPU_OS_E_RANGE). Pages are raw: neither randomised nor ECC-protected, so that MWS can
 * combine them in the array; ESP keeps them error-free [Flash-Cosmos 4.2]. */
#define SPU_FC_ALLOC 0   /* erases a free ESP block of (die, plane): its number into `block` */
#define SPU_FC_RELEASE 1 /* gives (die, plane, block) back */
#define SPU_FC_PROGRAM                                                    \
    2 /* the next `bytes` of the request's payload, ESP-programmed raw at \
       * (die, plane, block, page); the page's rest is 0xFF */
#define SPU_FC_MWS                                                                           \
    3                 /* MWS of `slots` (1..SPU_FC_MAX_BLOCKS) on (die, plane) with the ISCM \
                       * `flags`; with bytes > 0 the C-latch's first bytes go to the open    \
                       * request */
#define SPU_FC_XOR 4  /* C-latch ^= S-latch on (die, plane); bytes as for MWS */
#define SPU_FC_READ 5 /* (die, plane, block, page) read raw, its first bytes to the open request \
                       */
/* SPU_FC_ACC, ISP: (die, plane, block, page) read raw, its first `bytes` combined into the
 * channel accelerator's buffer as `flags` says (FLASH_CTL_ACC_* bits: op, invert, complement);
 * with SPU_FC_ACC_OUT in `flags` the buffer's first `bytes` then go to the open request. */
#define SPU_FC_ACC 6
#define SPU_FC_ACC_OUT 0x10u
#define SPU_FC_ACC_COPY 0u       /* the acc register's op field: buffer = page */
#define SPU_FC_ACC_AND 1u        /* buffer &= page */
#define SPU_FC_ACC_OR 2u         /* buffer |= page */
#define SPU_FC_ACC_XOR 3u        /* buffer ^= page */
#define SPU_FC_ACC_INVERT 4u     /* the page's bytes complemented first */
#define SPU_FC_ACC_COMPLEMENT 8u /* the buffer complemented after */
#define SPU_FC_OPS 7
/* The power cap on inter-block MWS [Flash-Cosmos 5.2: at most 4 blocks at once]. */
#define SPU_FC_MAX_BLOCKS 4u
#define SPU_FC_INVERSE 1u  /* ISCM flags (nand::iscm): sense inverted (needs INIT_S) */
#define SPU_FC_INIT_S 2u   /* S-latch = the sensing (else S &= sensing) */
#define SPU_FC_INIT_C 4u   /* C-latch = 0 first */
#define SPU_FC_TRANSFER 8u /* C-latch |= S-latch after */
struct spu_fc_cmd {
    uint32_t die, plane, block, page;
    uint32_t flags, slots;
    struct {
        uint32_t block, pbm_lo, pbm_hi; /* wordlines sensed: bit w of pbm_hi:pbm_lo */
    } slot[SPU_FC_MAX_BLOCKS];
};

struct spu_os_fault_notice {
    uint32_t node, app_id, mcause, mtval, mepc, origin;
};
struct spu_os_perm_miss_notice {
    uint32_t node, process, app_id, addr, length, rights;
};
struct spu_os_denied_notice {
    uint32_t node, process, app_id, what, a, b; /* what: SPU_OS_DENIED_* */
};

/* The header SPU-OS copies to the top of the app's data segment at dispatch; the handler gets
 * a pointer to it in a0. */
struct spu_rpc_header {
    uint32_t src;    /* sender's ring node */
    uint32_t rpc_id; /* app << 8 | handler */
    uint32_t tag;
    uint32_t origin;         /* originating HRE */
    uint32_t length;         /* payload bytes */
    uint32_t dispatch_cycle; /* mcycle (low word) when SPU-OS read the header */
    uint32_t reserved[2];
};

/* The entry table at the start of an app's code slot (as words; sw/firmware/apps/spu_app.h
 * builds it). Every address must lie inside the slot. */
#define SPU_APP_MAGIC 0x57494c4fu /* "WILO" */
struct spu_app_table {
    uint32_t magic;
    uint32_t n_handlers;  /* 1..SPU_OS_MAX_HANDLERS */
    uint32_t done_stub;   /* the handlers' return address: ecall SPU_SYS_DONE */
    uint32_t n_functions; /* functions other apps may call (SPU_SYS_CALL) */
    uint32_t handlers[SPU_OS_MAX_HANDLERS];
    uint32_t functions[SPU_OS_MAX_HANDLERS];
};

#endif /* __ASSEMBLER__ */

#endif
