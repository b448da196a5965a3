/* SPU-OS internals shared by its parts (Willow Section 3.1 "SPU architecture": the small
 * operating system on every SPU that dispatches RPCs to SSD Apps and enforces protection):
 * the app slots, the request being served, the user frames and the notices to the host kernel. */
#ifndef SPU_OS_H
#define SPU_OS_H

#include <stdint.h>

#include "spu_hw.h"
#include "spu_os_abi.h"

/* An app's registers while SPU-OS runs (switch.S). */
struct spu_os_frame {
    uint32_t x[32]; /* x0 unused */
    uint32_t pc;
};
enum { REG_RA = 1, REG_SP = 2, REG_A0 = 10, REG_A1, REG_A2, REG_A3, REG_A7 = 17 };

void spu_os_enter(struct spu_os_frame* f);
void spu_os_trap_entry(void);
/* Called by the trap entry for a trap from user mode; returns the frame to resume or 0 when
 * the handler is over (spu_os_enter then returns). */
struct spu_os_frame* spu_os_trap(struct spu_os_frame* f, uint32_t mcause, uint32_t mtval);

enum slot_state { SLOT_FREE, SLOT_ACTIVE, SLOT_DISABLED };
#define CALL_GRANTS 4

struct app_slot {
    uint8_t state;
    uint8_t app_id;
    struct spu_app_table table; /* checked copy of the slot's entry table */
    struct {
        uint8_t callee;     /* app id; 0: unused */
        uint32_t functions; /* bit f: may call function f */
    } grants[CALL_GRANTS];
    /* The store region the kernel gave the app itself (APP_REGION): its transfers there pass
     * for any process, and the app decides who may reach what (Willow 4.4: Caching's own
     * permission entries on its cache blocks). */
    uint32_t region_start, region_bytes;
};
extern struct app_slot spu_os_slots[SPU_OS_SLOTS];

static inline uint32_t slot_code_base(unsigned s) {
    return SPU_OS_CODE_SLOT_BASE + s * SPU_OS_CODE_SLOT_SIZE;
}
static inline uint32_t slot_data_base(unsigned s) {
    return SPU_OS_DATA_SLOT_BASE + s * SPU_OS_DATA_SLOT_SIZE;
}
int spu_os_find_app(unsigned app_id); /* its slot, or -1 */

/* The request being served. */
struct rpc_state {
    struct ni_header h;
    uint32_t dispatch_cycle;
    int responded;
    int popped;        /* taken off the network interface (a suspended handler's request is) */
    unsigned open_tag; /* the request the handler is building (START_REQUEST's tag) */
    /* Requests finished since the handler last waited, whose responses it awaits (a fan-out):
     * their tags, which have been answered (bit i: tags[i]), and SPU_OS_OK while every answer
     * so far was, else the first other answer. */
    uint8_t awaiting, answered;
    uint16_t tags[SPU_OS_MAX_AWAITED];
    uint32_t result;
};
/* The running handler's: each handler's state and frame stay where they are while it is
 * suspended, and SPU-OS points at the one it runs (a copy per suspend and resume cost about 280
 * instructions per Base-IO read). */
extern struct rpc_state* spu_os_rpc;
uint32_t spu_os_respond(uint32_t result); /* once per request */
unsigned spu_os_next_tag(void);

/* A DMA transfer as a system call's result: SPU_OS_OK (also for n == 0) or SPU_OS_E_DMA. */
static inline uint32_t spu_os_dma(enum spu_port src, uint32_t s, enum spu_port dst, uint32_t d,
                                  uint32_t n) {
    return n == 0 || spu_dma(src, s, dst, d, n) == 0 ? SPU_OS_OK : SPU_OS_E_DMA;
}

/* Statistics (SPU_OS_STAT_*). */
#define SPU_OS_STATS 16
extern uint32_t spu_os_stats[SPU_OS_STATS];

/* Notices to the host kernel wait until the handler is over (the network interface holds one
 * open request at a time, and the app may have one open). */
void spu_os_notice(unsigned handler, const void* words, uint32_t bytes);
void spu_os_send_notices(void);

/* Reports to the host kernel (NOTIFY_DENIED) that the running app, for the request's process,
 * tried `what` (SPU_OS_DENIED_*, with a and b) and was refused; returns `result`. */
uint32_t spu_os_denied(uint32_t result, uint32_t what, uint32_t a, uint32_t b);

/* The kernel app's RPCs (kernel_rpc.c): returns the response's result. */
uint32_t spu_os_kernel_rpc(unsigned handler);

/* How a handler's run in user mode ended. */
enum run_outcome {
    RUN_DONE,      /* it returned */
    RUN_FAULT,     /* it faulted; its app is disabled */
    RUN_SUSPENDED, /* it waits for a response; its request is off the network interface */
    RUN_GONE,      /* a suspended handler whose app was disabled or removed meanwhile */
};
/* Runs handler `h` of the app in `slot` on `lane` (its stack and header) in user mode. */
enum run_outcome spu_os_run_handler(unsigned slot, unsigned lane, unsigned h);
/* A lane of `slot` no suspended handler holds, other than `busy` (-1: none), or -1. */
int spu_os_free_lane(unsigned slot, int busy);
/* A response arrived: a suspended handler's becomes ready to resume, others are dropped. */
void spu_os_route_response(unsigned tag, uint32_t result);
/* A suspended handler whose response came, or -1; spu_os_resume() runs it on. */
int spu_os_ready_thread(void);
/* Makes ready, with SPU_OS_E_TIMEOUT, the suspended handlers that waited SPU_OS_WAIT_TIMEOUT_US
 * by now (mtime, read only while one is suspended); returns the earliest deadline of the others
 * (0: none waits). */
uint64_t spu_os_expire_threads(void);
enum run_outcome spu_os_resume(int thread);

/* mie bits: SPU-OS sleeps on the external interrupt (the network interface) and lets only the
 * timer (the watchdog) interrupt apps. */
#define MIE_MEIE (1u << 11)
#define MIE_MTIE (1u << 7)

static inline uint32_t read_minstret(void) {
    uint32_t c;
    __asm__ volatile("csrr %0, minstret" : "=r"(c));
    return c;
}
static inline uint32_t read_mcycle(void) {
    uint32_t c;
    __asm__ volatile("csrr %0, mcycle" : "=r"(c));
    return c;
}

#endif
