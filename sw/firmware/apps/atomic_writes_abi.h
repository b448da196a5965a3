/* The RPCs of the Atomic-Writes SSD App (Willow Section 4.3: MARS's editable atomic writes;
 * apps/atomic_writes.c; host library sw/host/atomic_writes). A process groups writes into a
 * transaction: LOGWRITE (or VECTORLOGWRITE, several in one RPC) puts each write's data in the
 * redo log of the SPU that owns the target, and COMMIT makes them all happen or none. Every SPU
 * keeps, per active transaction, a redo log in a region of its store (AW_SETUP, kernel only):
 * the log's data, and an array of entries (target address, length, where the data lies in the
 * log) that becomes persistent, with the transaction's state, in one NVM write. COMMIT goes to
 * one participant, which the host library picks as the coordinator: two-phase commit over the
 * ring. The coordinator has every other participant PREPARE (make its log persistent, vote),
 * then makes its own log persistent as COMMITTED (the commit point), applies it, has the others
 * APPLY theirs, and frees it. After a power loss the host kernel sets the app up without
 * formatting (the SPUs load their persistent logs), then sends RECOVER phase 1 to every SPU
 * (coordinators of committed transactions apply and have their participants apply) and phase 2
 * (prepared logs no coordinator committed are dropped): every transaction is then either wholly
 * applied or wholly absent. A transaction is named by the process's HRE and a 32-bit id the
 * library chooses; Atomic-Writes gives atomicity and durability, not isolation (the application
 * locks). Plain C with fixed-width fields, included by the rv32 app and the host library. */
#ifndef CANOPY_ATOMIC_WRITES_ABI_H
#define CANOPY_ATOMIC_WRITES_ABI_H

#include <stdint.h>

/* Handlers (RPC ID = app << 8 | handler). */
#define AW_SETUP 0          /* struct aw_setup_args (kernel HREs only) */
#define AW_LOGWRITE 1       /* struct aw_write_args + bytes of data */
#define AW_VECTORLOGWRITE 2 /* struct aw_vector_args + count x (struct aw_write_args + data) */
#define AW_COMMIT 3         /* struct aw_commit_args: this SPU coordinates (of a transaction
                               committed already: finishes applying it) */
#define AW_LOGWRITECOMMIT 4 /* struct aw_commit_args + struct aw_write_args + data */
#define AW_ABORT 5          /* struct aw_tx_args: drops this SPU's log of the transaction */
#define AW_PREPARE 6        /* struct aw_tx_args, from the coordinator SPU only */
#define AW_APPLY 7          /* struct aw_tx_args, from the coordinator SPU only */
#define AW_RECOVER 8        /* struct aw_recover_args (kernel HREs only) */

#define AW_SLOTS 6u             /* transactions in flight per SPU */
#define AW_MAX_ENTRIES 16u      /* writes per transaction per SPU */
#define AW_MAX_WRITE 0x2000u    /* bytes of one write (a stripe unit) */
#define AW_RECORD_BYTES 0x1000u /* the start of each log slot: its persistent record */
#define AW_MAGIC 0x41575354u    /* "AWST" */

struct aw_setup_args {
    uint32_t base, bytes; /* the region: NVM addresses of this SPU, 4 KiB aligned */
    uint32_t node, spus;  /* this SPU's ring node; SPUs are nodes 0 .. spus - 1 */
    uint32_t format;      /* 1: start empty; 0: load the persistent logs (after a reboot) */
};
struct aw_write_args {
    uint32_t tx;
    uint32_t addr, bytes; /* the target: NVM addresses of this SPU */
};
struct aw_vector_args {
    uint32_t count; /* LOGWRITEs in one RPC (each names its transaction) */
};
struct aw_commit_args {
    uint32_t tx;
    uint32_t participants; /* bit n: SPU n holds a log of the transaction (this one included) */
};
struct aw_tx_args {
    uint32_t tx;
    uint32_t origin; /* from the coordinator: the transaction's HRE (the host's is its own) */
};
struct aw_recover_args {
    uint32_t phase; /* 1: finish committed transactions; 2: drop the rest */
};

/* In the store: the header at the region's start, then AW_SLOTS log slots of slot_bytes each
 * from base + AW_RECORD_BYTES: the slot's record (struct aw_record, then `entries` entries) in
 * its first AW_RECORD_BYTES, the logged data after. */
struct aw_header {
    uint32_t magic, slots, slot_bytes, reserved;
};
#define AW_FREE 0u
#define AW_ACTIVE 1u    /* in DMEM only: logging */
#define AW_PREPARED 2u  /* persistent: voted to commit; the coordinator decides */
#define AW_COMMITTED 3u /* persistent, at the coordinator: the commit point */
struct aw_record {
    uint32_t state;
    uint32_t origin, tx;    /* the transaction: its process's HRE and the library's id */
    uint32_t peer;          /* PREPARED: the coordinator's node; COMMITTED: the participants */
    uint32_t entries, used; /* entries; bytes of the slot's data area in use */
};
struct aw_entry {
    uint32_t addr, bytes, at; /* target; the data at slot data + at */
};

#define AW_OK 0u
#define AW_E_ARGS 0x500u    /* malformed request, or a write outside the SPU's store */
#define AW_E_UNKNOWN 0x501u /* no such transaction on this SPU */
#define AW_E_BUSY 0x502u    /* every log slot is in use */
#define AW_E_FULL 0x503u    /* the transaction's log on this SPU has no room */
#define AW_E_STATE 0x504u   /* not set up, or the region holds no log; or not now */
#define AW_E_PEER 0x505u    /* PREPARE or APPLY not from an SPU */
#define AW_E_ABORTED 0x506u /* COMMIT: a participant voted no; the transaction is dropped */
/* COMMIT: committed, but applying failed somewhere (e.g. a permission entry SPU-OS evicted: the
 * kernel grants it again); COMMIT again finishes it, as RECOVER would after a reboot. */
#define AW_E_INCOMPLETE 0x507u

#endif
