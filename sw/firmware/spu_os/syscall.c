/* Running SSD App code and serving its system calls (Willow Section 3.1 "RPC interface": the
 * RPC library calls RPCReceiveBytes, RPCCreateResponse/RPCSendResponse, RPCStartRequest,
 * RPCAppendRequest, RPCFinishRequest and data transfers by DMA; "Protection and sharing": code
 * and data segments, the permission check on every NVM transfer, faults reported to the host
 * kernel, and calls between apps through the call table). An app runs in user mode confined to
 * its slot's segments; it reaches SPU-OS only by ecall, and every buffer it names must lie in its
 * data segment, so a bad pointer fails the call and never reaches SPU-OS's memory. A watchdog
 * (the CLINT timer) ends a handler that runs too long, as a fault. Simple cooperative
 * multithreading [Willow 3.1: "SPU-OS provides simple multithreading"]: a handler waiting for a
 * synchronous RPC's response is suspended (its frame kept, its request taken off the network
 * interface) and other requests run on other lanes until the response resumes it. */
#include "nvm.h"
#include "perm.h"
#include "spu.h"
#include "spu_os.h"

#define MSTATUS_MPIE (1u << 7)
#define MSTATUS_MPP (3u << 11)
#define CAUSE_ECALL_U 8u
#define WATCHDOG_US 20000u /* a handler's time budget; assumed, Willow gives none */

#define THREADS 3 /* suspended handlers at once */

/* A handler's request state and registers: one for each suspended handler and one for the
 * running one, which keep their place from dispatch to the handler's end. */
static struct context {
    struct rpc_state rpc;
    struct spu_os_frame frame;
} contexts[THREADS + 1];
static struct context* running = &contexts[0];
struct rpc_state* spu_os_rpc = &contexts[0].rpc;

/* The handler's frame (its context's), and the called function's during an inter-app call. */
static struct spu_os_frame call_frame;
static struct {
    unsigned slot, lane;
    struct spu_os_frame* frame;
} level[2] = {{0, 0, &contexts[0].frame}, {0, 0, &call_frame}};
static unsigned depth;
static enum run_outcome outcome;

/* Suspended handlers. */
static struct thread {
    uint8_t used, ready, slot, lane, app_id;
    uint32_t result;
    uint64_t deadline; /* mtime by which the response must come */
    struct context* ctx;
} threads[THREADS];
static unsigned suspended; /* threads used: the scans below skip their loops when none is */

static void run_in(struct context* c) {
    running = c;
    spu_os_rpc = &c->rpc;
    level[0].frame = &c->frame;
}

/* A context no suspended handler holds (there are THREADS + 1). */
static struct context* free_context(void) {
    for (unsigned c = 0; c < THREADS; ++c) {
        int held = 0;
        for (unsigned t = 0; t < THREADS; ++t)
            held |= threads[t].used && threads[t].ctx == &contexts[c];
        if (!held) return &contexts[c];
    }
    return &contexts[THREADS];
}

static void enter_segments(unsigned slot) {
    spu_set_segments(slot_code_base(slot), SPU_OS_CODE_SLOT_SIZE, slot_data_base(slot),
                     SPU_OS_DATA_SLOT_SIZE);
}

static void arm_watchdog(void) { spu_set_timer(spu_mtime() + WATCHDOG_US); }

/* The frame to run next in user mode, with the timer as its only interrupt (mstatus.MIE comes
 * from MPIE at mret). */
static struct spu_os_frame* resume(struct spu_os_frame* f) {
    __asm__ volatile("csrw mie, %0" ::"r"(MIE_MTIE));
    return f;
}

static uint32_t slot_top(unsigned slot) { return slot_data_base(slot) + SPU_OS_DATA_SLOT_SIZE; }

/* Starts `pc` of `slot` at the given level on `lane`'s stack, with argument a0. */
static struct spu_os_frame* start(unsigned lv, unsigned slot, unsigned lane, uint32_t pc,
                                  uint32_t a0) {
    struct spu_os_frame* f = level[lv].frame;
    /* Nothing of SPU-OS's or another handler's reaches the app: 32 stores, not a loop. */
#pragma GCC unroll 32
    for (unsigned i = 0; i < 32; ++i) f->x[i] = 0;
    f->x[REG_SP] = slot_top(slot) - SPU_OS_HEADER_AREA - lane * SPU_OS_LANE_STACK;
    f->x[REG_RA] = spu_os_slots[slot].table.done_stub;
    f->x[REG_A0] = a0;
    f->pc = pc;
    level[lv].slot = slot;
    level[lv].lane = lane;
    depth = lv;
    enter_segments(slot);
    return resume(f);
}

/* Runs level 0's frame in user mode until the handler is over or suspended. */
static enum run_outcome run(void) {
    arm_watchdog();
    /* mret enters user mode (MPP = U) with interrupts on (MPIE) for the watchdog. */
    __asm__ volatile("csrc mstatus, %0" ::"r"(MSTATUS_MPP));
    __asm__ volatile("csrs mstatus, %0" ::"r"(MSTATUS_MPIE));
    outcome = RUN_DONE;
    spu_os_enter(resume(level[0].frame));
    __asm__ volatile("csrw mie, zero");
    return outcome;
}

enum run_outcome spu_os_run_handler(unsigned slot, unsigned lane, unsigned h) {
    const struct rpc_state* r = spu_os_rpc;
    /* The header copy the handler gets (Willow: SPU-OS passes the header buffer). */
    struct spu_rpc_header* uh =
        (struct spu_rpc_header*)(slot_top(slot) - (lane + 1) * sizeof(struct spu_rpc_header));
    uh->src = r->h.src;
    uh->rpc_id = r->h.rpc_id;
    uh->tag = r->h.tag;
    uh->origin = r->h.origin;
    uh->length = r->h.length;
    uh->dispatch_cycle = r->dispatch_cycle;
    start(0, slot, lane, spu_os_slots[slot].table.handlers[h], (uint32_t)uh);
    spu_os_stats[SPU_OS_STAT_DISPATCH_CYCLES] = read_mcycle() - r->dispatch_cycle;
    return run();
}

int spu_os_free_lane(unsigned slot, int busy) {
    for (unsigned lane = 0; lane < SPU_OS_LANES; ++lane) {
        int held = (int)lane == busy;
        for (unsigned t = 0; t < THREADS && suspended; ++t)
            held |= threads[t].used && threads[t].slot == slot && threads[t].lane == lane;
        if (!held) return (int)lane;
    }
    return -1;
}

/* A response to one of r's awaited requests, folded into r->result; 0 when it is not one. */
static int accept(struct rpc_state* r, unsigned tag, uint32_t result) {
    for (unsigned i = 0; i < r->awaiting; ++i)
        if (r->tags[i] == tag && !((r->answered >> i) & 1)) {
            r->answered |= (uint8_t)(1u << i);
            if (r->result == SPU_OS_OK) r->result = result;
            return 1;
        }
    return 0;
}

static int all_answered(const struct rpc_state* r) {
    return r->answered == (uint8_t)((1u << r->awaiting) - 1);
}

void spu_os_route_response(unsigned tag, uint32_t result) {
    for (unsigned t = 0; t < THREADS && suspended; ++t)
        if (threads[t].used && !threads[t].ready && accept(&threads[t].ctx->rpc, tag, result)) {
            threads[t].ready = all_answered(&threads[t].ctx->rpc);
            threads[t].result = threads[t].ctx->rpc.result;
            return;
        }
}

uint64_t spu_os_expire_threads(void) {
    if (!suspended) return 0;
    const uint64_t now = spu_mtime();
    uint64_t next = 0;
    for (unsigned i = 0; i < THREADS; ++i) {
        struct thread* t = &threads[i];
        if (!t->used || t->ready) continue;
        if (now >= t->deadline) {
            t->ready = 1;
            t->result = SPU_OS_E_TIMEOUT;
            ++spu_os_stats[SPU_OS_STAT_WAIT_TIMEOUTS];
        } else if (next == 0 || t->deadline < next) {
            next = t->deadline;
        }
    }
    return next;
}

int spu_os_ready_thread(void) {
    for (unsigned t = 0; t < THREADS && suspended; ++t)
        if (threads[t].used && threads[t].ready) return (int)t;
    return -1;
}

enum run_outcome spu_os_resume(int i) {
    struct thread* t = &threads[i];
    t->used = 0;
    --suspended;
    run_in(t->ctx);
    spu_os_rpc->awaiting = 0; /* the wait is over, answered or timed out */
    ni_set_origin(spu_os_rpc->h.origin);
    const struct app_slot* a = &spu_os_slots[t->slot];
    if (a->state != SLOT_ACTIVE || a->app_id != t->app_id) return RUN_GONE;
    level[0].slot = t->slot;
    level[0].lane = t->lane;
    level[0].frame->x[REG_A0] = t->result;
    depth = 0;
    enter_segments(t->slot);
    return run();
}

/* [ptr, ptr + n) inside the running app's data segment (n may be 0). */
static int user_buffer(uint32_t ptr, uint32_t n) {
    const uint32_t base = slot_data_base(level[depth].slot);
    return ptr >= base && n <= SPU_OS_DATA_SLOT_SIZE && ptr - base <= SPU_OS_DATA_SLOT_SIZE - n;
}

static void record_max(unsigned last, unsigned max, uint32_t value) {
    spu_os_stats[last] = value;
    if (value > spu_os_stats[max]) spu_os_stats[max] = value;
}

/* The permission check on an NVM transfer for the request's originating process; a miss is
 * reported to the host kernel [Willow 3.1: "a permission miss ... SPU-OS sends an RPC to the
 * kernel"]. The host kernel itself (process 0) may reach everything, and the running app its own
 * region (APP_REGION: one range test, where a process's entries take a splay-tree lookup). 0
 * bytes: the rights on the byte at addr. */
static int nvm_allowed(uint32_t addr, uint32_t bytes, uint32_t rights) {
    const uint32_t n = bytes ? bytes : 1;
    const uint32_t process = SPU_OS_PROCESS(spu_os_rpc->h.origin);
    if (process == 0) return 1;
    const struct app_slot* a = &spu_os_slots[level[depth].slot];
    if (addr - a->region_start < a->region_bytes && n <= a->region_bytes - (addr - a->region_start))
        return 1;
    const uint32_t t0 = read_mcycle(), i0 = read_minstret();
    const int ok = perm_check(process, addr, n, rights);
    const uint32_t i1 = read_minstret(), t1 = read_mcycle();
    record_max(SPU_OS_STAT_PERM_CHECK_LAST, SPU_OS_STAT_PERM_CHECK_MAX, t1 - t0);
    record_max(SPU_OS_STAT_PERM_CHECK_INSNS_LAST, SPU_OS_STAT_PERM_CHECK_INSNS_MAX, i1 - i0);
    if (!ok) {
        const struct spu_os_perm_miss_notice m = {
            spu_node(), process, spu_os_slots[level[depth].slot].app_id, addr, n, rights};
        spu_os_notice(SPU_OS_RPC_NOTIFY_PERM_MISS, &m, sizeof m);
    }
    return ok;
}

uint32_t spu_os_denied(uint32_t result, uint32_t what, uint32_t a, uint32_t b) {
    const struct spu_os_denied_notice d = {spu_node(),
                                           SPU_OS_PROCESS(spu_os_rpc->h.origin),
                                           spu_os_slots[level[depth].slot].app_id,
                                           what,
                                           a,
                                           b};
    ++spu_os_stats[SPU_OS_STAT_DENIED];
    spu_os_notice(SPU_OS_RPC_NOTIFY_DENIED, &d, sizeof d);
    return result;
}

/* After a store operation on [addr, addr + n) that returned r. */
static uint32_t nvm_done(uint32_t r, uint32_t addr, uint32_t n) {
    /* The watchdog budgets the handler's own time, not the flash's (GC may take milliseconds). */
    if (nvm_waited()) arm_watchdog();
    /* Outside the store: the kernel's requests pass the permission check, not this one. */
    return r == SPU_OS_E_RANGE ? spu_os_denied(r, SPU_OS_DENIED_RANGE, addr, n) : r;
}

/* A transfer between the SSD memory and app data or the network interface. */
static uint32_t nvm(uint32_t addr, uint32_t ptr, uint32_t n, int to_nvm, enum spu_port other) {
    if (other == SPU_PORT_DMEM && !user_buffer(ptr, n)) return SPU_OS_E_BAD_POINTER;
    /* A transfer of 0 bytes only checks the rights (on the byte at addr). */
    if (!nvm_allowed(addr, n, to_nvm ? SPU_OS_PERM_WRITE : SPU_OS_PERM_READ))
        return SPU_OS_E_PERMISSION;
    if (n == 0) return SPU_OS_OK;
    return nvm_done(
        other == SPU_PORT_DRAM ? nvm_copy(addr, ptr, n) : nvm_transfer(addr, other, ptr, n, to_nvm),
        addr, n);
}

/* Takes the responses that arrived: the running handler's awaited ones into its state, the
 * others to the suspended handlers they belong to; 1 when all of its own have come. */
static int take_responses(struct rpc_state* r) {
    while (ni_response_pending()) {
        unsigned src, tag;
        uint32_t res;
        if (ni_take_response(&src, &tag, &res)) res = SPU_OS_E_DROPPED;
        if (!accept(r, tag, res)) spu_os_route_response(tag, res);
    }
    return all_answered(r);
}

__attribute__((noinline)) static struct spu_os_frame* wait_response(struct spu_os_frame* f) {
    struct rpc_state* r = spu_os_rpc;
    if (!r->awaiting) {
        f->x[REG_A0] = SPU_OS_E_STATE;
        return resume(f);
    }
    if (take_responses(r)) {
        r->awaiting = 0;
        f->x[REG_A0] = r->result;
        return resume(f);
    }
    /* Suspend: the handler keeps its lane; its request leaves the network interface so that
     * the ones behind it can be served. */
    struct thread* t = 0;
    for (unsigned i = 0; i < THREADS && depth == 0 && !t; ++i)
        if (!threads[i].used) t = &threads[i];
    if (t) {
        if (ni_request_open()) ni_abort_request();
        if (!r->popped) ni_pop_request();
        r->popped = 1;
        t->used = 1;
        ++suspended;
        t->ready = 0;
        t->slot = (uint8_t)level[0].slot;
        t->lane = (uint8_t)level[0].lane;
        t->app_id = spu_os_slots[level[0].slot].app_id;
        t->ctx = running;
        run_in(free_context()); /* the next request's */
        t->deadline = spu_mtime() + SPU_OS_WAIT_TIMEOUT_US;
        ++spu_os_stats[SPU_OS_STAT_SUSPENDED];
        outcome = RUN_SUSPENDED;
        return 0;
    }
    /* Inside an inter-app call, or no room to suspend: wait here, on responses only (the
     * request being served keeps the request interrupt up). */
    spu_irq_enable(SPU_CTL_IRQ_ENABLE_NI_RESPONSE_MASK);
    for (;;) {
        __asm__ volatile("csrw mie, %0" ::"r"(MIE_MEIE));
        if (!ni_response_pending()) __asm__ volatile("wfi");
        __asm__ volatile("csrw mie, zero");
        if (take_responses(r)) break;
    }
    r->awaiting = 0;
    f->x[REG_A0] = r->result;
    return resume(f);
}

/* Inter-app call: function `fn` of app `callee`, if the caller's grants allow it. */
__attribute__((noinline)) static struct spu_os_frame* call(struct spu_os_frame* f) {
    const uint32_t callee = f->x[REG_A0], fn = f->x[REG_A1];
    const struct app_slot* caller = &spu_os_slots[level[depth].slot];
    const int s = depth == 0 ? spu_os_find_app(callee) : -1; /* one level deep */
    int allowed = 0;
    for (unsigned g = 0; g < CALL_GRANTS; ++g)
        allowed |= caller->grants[g].callee == callee && fn < 32 &&
                   ((caller->grants[g].functions >> fn) & 1);
    if (s < 0 || !allowed || spu_os_slots[s].state != SLOT_ACTIVE ||
        fn >= spu_os_slots[s].table.n_functions) {
        f->x[REG_A0] =
            s >= 0 && spu_os_slots[s].state == SLOT_DISABLED ? SPU_OS_E_DISABLED : SPU_OS_E_NO_CALL;
        return resume(f);
    }
    /* The callee runs on one of its lanes no suspended handler holds. */
    const int lane =
        spu_os_free_lane((unsigned)s, s == (int)level[0].slot ? (int)level[0].lane : -1);
    if (lane < 0) {
        f->x[REG_A0] = SPU_OS_E_STATE;
        return resume(f);
    }
    return start(1, (unsigned)s, (unsigned)lane, spu_os_slots[s].table.functions[fn], f->x[REG_A2]);
}

/* Back from a called function to its caller with `result` in a0. */
static struct spu_os_frame* call_return(uint32_t result) {
    depth = 0;
    level[0].frame->x[REG_A0] = result;
    enter_segments(level[0].slot);
    return resume(level[0].frame);
}

static struct spu_os_frame* syscall(struct spu_os_frame* f) {
    const uint32_t a0 = f->x[REG_A0], a1 = f->x[REG_A1], a2 = f->x[REG_A2], a3 = f->x[REG_A3];
    uint32_t r;
    f->pc += 4;
    switch (f->x[REG_A7]) {
        case SPU_SYS_DONE:
            if (depth > 0) return call_return(a0);
            return 0;
        case SPU_SYS_RECEIVE:
            r = user_buffer(a0, a1) ? spu_os_dma(SPU_PORT_NI_RX, 0, SPU_PORT_DMEM, a0, a1)
                                    : SPU_OS_E_BAD_POINTER;
            break;
        case SPU_SYS_RESPOND:
            r = spu_os_respond(a0);
            break;
        case SPU_SYS_START_REQUEST: {
            /* An app's requests carry its own id [Willow 3.1 "Limiting access to RPCs"]: none
             * reaches SPU-OS's kernel RPCs (app 0) or passes for another app's, so a request
             * under app X's id from an SPU is X's own (its peers can trust it). */
            if (a2 >> 8 != spu_os_slots[level[depth].slot].app_id) {
                r = spu_os_denied(SPU_OS_E_PERMISSION, SPU_OS_DENIED_RPC_ID, a0, a2);
                break;
            }
            const unsigned tag = spu_os_next_tag();
            r = ni_begin_request(a0, a1, a2, tag, a3) ? SPU_OS_E_NETWORK : SPU_OS_OK;
            if (r == SPU_OS_OK) spu_os_rpc->open_tag = tag;
            break;
        }
        case SPU_SYS_APPEND:
            r = user_buffer(a0, a1) ? spu_os_dma(SPU_PORT_DMEM, a0, SPU_PORT_NI_TX, 0, a1)
                                    : SPU_OS_E_BAD_POINTER;
            break;
        case SPU_SYS_FINISH:
            if (spu_os_rpc->awaiting == SPU_OS_MAX_AWAITED) {
                r = SPU_OS_E_STATE; /* wait for the others first */
                break;
            }
            r = ni_finish_request() ? SPU_OS_E_NETWORK : SPU_OS_OK;
            if (r == SPU_OS_OK) {
                struct rpc_state* q = spu_os_rpc;
                if (q->awaiting == 0) q->answered = 0, q->result = SPU_OS_OK;
                q->tags[q->awaiting++] = (uint16_t)q->open_tag;
            }
            break;
        case SPU_SYS_NVM_READ:
            r = nvm(a0, a1, a2, 0, SPU_PORT_DMEM);
            break;
        case SPU_SYS_NVM_WRITE:
            r = nvm(a0, a1, a2, 1, SPU_PORT_DMEM);
            break;
        case SPU_SYS_NVM_TO_REQUEST:
            r = nvm(a0, 0, a1, 0, SPU_PORT_NI_TX);
            break;
        case SPU_SYS_RECEIVE_TO_NVM:
            r = nvm(a0, 0, a1, 1, SPU_PORT_NI_RX);
            break;
        case SPU_SYS_NVM_COPY:
            r = nvm_allowed(a1, a2, SPU_OS_PERM_READ) ? nvm(a0, a1, a2, 1, SPU_PORT_DRAM)
                                                      : SPU_OS_E_PERMISSION;
            break;
        case SPU_SYS_NVM_TRIM:
            r = nvm_allowed(a0, a1, SPU_OS_PERM_WRITE) ? nvm_done(nvm_trim(a0, a1), a0, a1)
                                                       : SPU_OS_E_PERMISSION;
            break;
        case SPU_SYS_NVM_FLUSH: /* no rights needed: it changes no data */
            r = nvm_done(nvm_flush(a0, a1), a0, a1);
            break;
        case SPU_SYS_PUTS:
            if ((r = user_buffer(a0, a1) ? SPU_OS_OK : SPU_OS_E_BAD_POINTER) == SPU_OS_OK)
                for (uint32_t i = 0; i < a1; ++i) spu_putc(((const char*)a0)[i]);
            break;
        case SPU_SYS_WAIT_RESPONSE:
            return wait_response(f);
        case SPU_SYS_CALL:
            return call(f);
        case SPU_SYS_FC:
            r = user_buffer(a1, sizeof(struct spu_fc_cmd))
                    ? nvm_fc(a0, (struct spu_fc_cmd*)a1, a2, SPU_OS_PROCESS(spu_os_rpc->h.origin))
                    : SPU_OS_E_BAD_POINTER;
            if (nvm_waited()) arm_watchdog();
            break;
        default:
            r = SPU_OS_E_UNKNOWN_SYSCALL;
            break;
    }
    f->x[REG_A0] = r;
    return resume(f);
}

/* The app faulted [Willow 3.1: an access outside its segments raises an exception, and SPU-OS
 * tells the kernel by an RPC]: it is disabled, and the host kernel hears which app, why, where. */
__attribute__((noinline, cold)) static struct spu_os_frame* fault(struct spu_os_frame* f,
                                                                  uint32_t mcause, uint32_t mtval) {
    struct app_slot* a = &spu_os_slots[level[depth].slot];
    a->state = SLOT_DISABLED;
    ++spu_os_stats[SPU_OS_STAT_FAULTS];
    const uint32_t words[] = {a->app_id, mcause, f->pc, mtval};
    static const char* const text[] = {"spu-os: app ", " disabled: mcause 0x", " at pc 0x",
                                       ", mtval 0x"};
    for (unsigned i = 0; i < 4; ++i) {
        spu_write(text[i]);
        spu_write_uint(words[i], i ? 16 : 10, 1);
    }
    spu_putc('\n');
    const struct spu_os_fault_notice n = {spu_node(), a->app_id, mcause,
                                          mtval,      f->pc,     spu_os_rpc->h.origin};
    spu_os_notice(SPU_OS_RPC_NOTIFY_FAULT, &n, sizeof n);
    /* A called function's fault is its own: the caller gets an error and goes on. */
    if (depth > 0) return call_return(SPU_OS_E_APP_FAULT);
    outcome = RUN_FAULT;
    return 0;
}

struct spu_os_frame* spu_os_trap(struct spu_os_frame* f, uint32_t mcause, uint32_t mtval) {
    __asm__ volatile("csrw mie, zero");
    if (mcause == CAUSE_ECALL_U) return syscall(f);
    return fault(f, mcause, mtval); /* exceptions and the watchdog's timer interrupt */
}
